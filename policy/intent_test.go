package policy

import (
	"strings"
	"testing"
)

var intentConfig = Config{
	IntentMode: true,
	Intents: map[string][]string{
		"read":    {"files.read", "memory.read", "web"},
		"write":   {"files.read", "files.write"},
		"operate": {"input", "files.write"},
		"plan":    {"memory.read"},
	},
	Groups: map[string]GroupPolicy{"files.read": PolicyAlways, "files.write": PolicyAsk, "input": PolicyOff},
}

func TestSelectIntent(t *testing.T) {
	off := intentConfig
	off.IntentMode = false
	tests := []struct {
		name       string
		cfg        Config
		before     string // the turn's intent before the call
		intent     string
		wantIntent string // the turn's intent after the call
		wantErr    string
	}{
		{name: "first choice", cfg: intentConfig, intent: "read", wantIntent: "read"},
		{name: "unknown", cfg: intentConfig, intent: "browse",
			wantErr: `unknown intent "browse": call select_intent with one of: operate, plan, read, write`},
		{name: "empty", cfg: intentConfig, intent: "", wantErr: `unknown intent "": call select_intent with one of: `},
		{name: "case matters", cfg: intentConfig, intent: "Read", wantErr: `unknown intent "Read"`},
		{name: "second choice", cfg: intentConfig, before: "read", intent: "write", wantIntent: "read",
			wantErr: `intent "read" is already selected for this turn and cannot change: use only what it allows (files.read, memory.read, web); the user's next message starts a new turn`},
		{name: "same choice again", cfg: intentConfig, before: "read", intent: "read", wantIntent: "read",
			wantErr: "already selected"},
		{name: "intent mode off", cfg: off, intent: "read", wantErr: "intent mode is off: call the tools you need directly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := &Turn{Intent: tt.before}
			err := SelectIntent(tt.cfg, turn, tt.intent)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("SelectIntent = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("SelectIntent = %v, want error containing %q", err, tt.wantErr)
			}
			if turn.Intent != tt.wantIntent {
				t.Errorf("turn's intent = %q, want %q", turn.Intent, tt.wantIntent)
			}
		})
	}
}

func TestTurnReset(t *testing.T) {
	var turn Turn
	if err := SelectIntent(intentConfig, &turn, "plan"); err != nil {
		t.Fatal(err)
	}
	read := Tool{Server: "files", Name: "read_text_file", Group: "files.read", Risk: RiskSafe}
	if d := Decide(intentConfig, read, nil, &turn, false); d.Verdict != Deny {
		t.Fatalf("files.read under intent plan: %+v, want deny", d)
	}
	// A new user message, a retry or a cancel: the next turn chooses anew.
	turn.Reset()
	if turn != (Turn{}) {
		t.Errorf("after Reset: %+v, want the zero Turn", turn)
	}
	if d := Decide(intentConfig, read, nil, &turn, false); d.Verdict != Deny || !strings.Contains(d.Rule, "call select_intent first") {
		t.Errorf("after Reset, before choosing: %+v, want deny asking for select_intent", d)
	}
	if err := SelectIntent(intentConfig, &turn, "read"); err != nil {
		t.Fatalf("choosing again after Reset: %v", err)
	}
	if d := Decide(intentConfig, read, nil, &turn, false); d.Verdict != Allow {
		t.Errorf("files.read under intent read: %+v, want allow", d)
	}
}

func TestDecideIntentRules(t *testing.T) {
	read := Tool{Server: "files", Name: "read_text_file", Group: "files.read", Risk: RiskSafe}
	write := Tool{Server: "files", Name: "write_file", Group: "files.write", Risk: RiskCaution}
	del := Tool{Server: "files", Name: "delete_file", Group: "files.write", Risk: RiskDestructive}
	keys := Tool{Server: "ax", Name: "ax_keyboard", Group: "input", Risk: RiskDangerous}
	github := ThirdParty("github", "create_issue")
	stale := intentConfig
	stale.Intents = map[string][]string{"plan": {"memory.read"}}
	tests := []struct {
		name   string
		cfg    Config
		tool   Tool
		intent string
		once   bool
		want   Decision
	}{
		{"none chosen", intentConfig, read, "", false,
			Decision{Deny, "intent mode: call select_intent first with one of: operate, plan, read, write"}},
		{"none chosen, allowed once", intentConfig, read, "", true,
			Decision{Deny, "intent mode: call select_intent first with one of: operate, plan, read, write"}},
		{"allowing", intentConfig, read, "read", false, Decision{Allow, "group files.read is always allowed"}},
		{"allowing, group asks", intentConfig, write, "write", false, Decision{Ask, "group files.write asks"}},
		{"allowing, destructive asks", intentConfig, del, "write", false, Decision{Ask, "destructive tools always ask"}},
		{"not allowing", intentConfig, write, "read", false, Decision{Deny, `intent mode: tool files/write_file is in group files.write, ` +
			`which intent "read" (files.read, memory.read, web) does not allow; intents that allow files.write: operate, write; ` +
			`the intent holds until the user's next message, so finish with what "read" allows or tell the user which intent the request needs`}},
		{"not allowing, no intent would", intentConfig, github, "read", false, Decision{Deny, `intent mode: tool github/create_issue is in group mcp.github, ` +
			`which intent "read" (files.read, memory.read, web) does not allow; no intent allows mcp.github; ` +
			`the intent holds until the user's next message, so finish with what "read" allows or tell the user which intent the request needs`}},
		{"off group before intent", intentConfig, keys, "read", false, Decision{Deny, "group input is off"}},
		{"intent gone from config", stale, read, "read", false,
			Decision{Deny, `intent mode: intent "read" is no longer configured; the user's next message starts a new turn`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.cfg, tt.tool, nil, &Turn{Intent: tt.intent}, tt.once); got != tt.want {
				t.Errorf("Decide =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
	// A nil turn is a turn with no intent chosen.
	if got := Decide(intentConfig, read, nil, nil, false); got.Verdict != Deny {
		t.Errorf("nil turn in intent mode: %+v, want deny", got)
	}
}
