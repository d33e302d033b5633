package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// grantState is how the session's grants stand for the tool's group.
type grantState int

const (
	grantNone grantState = iota
	grantCurrent
	grantOtherEpoch
)

func (s grantState) String() string {
	return [...]string{"none", "current", "other-epoch"}[s]
}

// grantsFor builds session grants in state s for group.
func grantsFor(s grantState, group string) *Grants {
	g := &Grants{Epoch: 3}
	switch s {
	case grantCurrent:
		g.Grant(group)
	case grantOtherEpoch:
		g.Grant(group)
		g.Epoch++ // the grant was made in the previous epoch
	}
	return g
}

// intentState is how intent mode stands for the tool's group.
type intentState int

const (
	intentOff         intentState = iota // mode off; the turn's intent, which would not allow the group, is ignored
	intentNone                           // mode on, no intent chosen
	intentAllowing                       // mode on, the chosen intent allows the group
	intentNotAllowing                    // mode on, the chosen intent does not
)

func (s intentState) String() string {
	return [...]string{"off", "none-chosen", "allowing", "not-allowing"}[s]
}

// testIntents allows every group the matrix uses in "write" and none of them
// in "read".
var testIntents = map[string][]string{
	"read":  {"files.read", "memory.read"},
	"write": {"files.write", "memory.write"},
}

// turnFor builds the turn for intent state s.
func turnFor(s intentState) *Turn {
	switch s {
	case intentOff, intentNotAllowing:
		return &Turn{Intent: "read"}
	case intentAllowing:
		return &Turn{Intent: "write"}
	}
	return nil
}

type matrixCase struct {
	name     string
	mode     Mode
	group    string
	groupPol GroupPolicy // "" means the group has no policy
	override GroupPolicy // "" means no per-tool override
	risk     Risk
	grant    grantState
	once     bool
	memory   bool
	intent   intentState
}

// expected states DESIGN.md's rules as conditions on the inputs rather than
// as Decide's ordered chain: deny when blocked or outside the turn's
// intent, allow when confirmed or permitted, ask otherwise.
func (c matrixCase) expected() Verdict {
	memoryBlocked := strings.HasPrefix(c.group, "memory.") && !c.memory
	off := c.groupPol == PolicyOff || c.override == PolicyOff
	outsideIntent := c.intent == intentNone || c.intent == intentNotAllowing
	if memoryBlocked || off || outsideIntent {
		return Deny
	}
	destructive := c.risk != RiskSafe && c.risk != RiskCaution && c.risk != RiskDangerous
	mode := c.mode
	if mode == "" {
		mode = ModeSmart
	} else if mode != ModeSmart && mode != ModeAuto {
		mode = ModeManual // manual, or a typo that must not loosen anything
	}
	effective := c.override
	if effective == "" {
		effective = c.groupPol
	}
	permitted := mode == ModeAuto ||
		(mode == ModeSmart && effective == PolicyAlways) ||
		c.grant == grantCurrent
	if c.once || (!destructive && permitted) {
		return Allow
	}
	return Ask
}

func matrix() []matrixCase {
	var cases []matrixCase
	for _, mode := range []Mode{"", ModeManual, ModeSmart, ModeAuto, "Auto"} {
		for _, group := range []string{"files.write", "memory.write"} {
			for _, gp := range []GroupPolicy{"", PolicyOff, PolicyAsk, PolicyAlways} {
				for _, op := range []GroupPolicy{"", PolicyOff, PolicyAsk, PolicyAlways} {
					for _, risk := range []Risk{RiskSafe, RiskDangerous, RiskDestructive, ""} {
						for _, grant := range []grantState{grantNone, grantCurrent, grantOtherEpoch} {
							for _, once := range []bool{false, true} {
								for _, memory := range []bool{false, true} {
									for _, intent := range []intentState{intentOff, intentNone, intentAllowing, intentNotAllowing} {
										cases = append(cases, matrixCase{
											name: fmt.Sprintf("mode=%q/%s/group=%q/tool=%q/risk=%q/grant=%s/once=%t/memory=%t/intent=%s",
												mode, group, gp, op, risk, grant, once, memory, intent),
											mode: mode, group: group, groupPol: gp, override: op,
											risk: risk, grant: grant, once: once, memory: memory, intent: intent,
										})
									}
								}
							}
						}
					}
				}
			}
		}
	}
	return cases
}

func (c matrixCase) config() (Config, Tool) {
	t := Tool{Server: "files", Name: "write_file", Group: c.group, Risk: c.risk, Known: true}
	cfg := Config{
		Mode: c.mode, MemoryEnabled: c.memory, Groups: map[string]GroupPolicy{}, Tools: map[string]GroupPolicy{},
		IntentMode: c.intent != intentOff, Intents: testIntents,
	}
	if c.groupPol != "" {
		cfg.Groups[c.group] = c.groupPol
	}
	if c.override != "" {
		cfg.Tools[t.Key()] = c.override
	}
	return cfg, t
}

func TestDecideMatrix(t *testing.T) {
	for _, tt := range matrix() {
		cfg, tool := tt.config()
		got := Decide(cfg, tool, grantsFor(tt.grant, tt.group), turnFor(tt.intent), tt.once)
		if want := tt.expected(); got.Verdict != want {
			t.Errorf("%s: Decide = %v (%s), want %v", tt.name, got.Verdict, got.Rule, want)
		}
		if got.Rule == "" {
			t.Errorf("%s: Decide gave no rule", tt.name)
		}
	}
}

func TestDecideRules(t *testing.T) {
	files := Tool{Server: "files", Name: "write_file", Group: "files.write", Risk: RiskCaution, Known: true}
	del := Tool{Server: "files", Name: "delete", Group: "files.write", Risk: RiskDestructive, Known: true}
	mem := Tool{Server: "memory", Name: "remember", Group: "memory.write", Risk: RiskSafe, Known: true}
	tests := []struct {
		name string
		cfg  Config
		tool Tool
		once bool
		want Decision
	}{
		{"memory switch", Config{Mode: ModeAuto}, mem, true, Decision{Deny, "memory is disabled (memory.enabled=false)"}},
		{"group off", Config{Groups: map[string]GroupPolicy{"files.write": PolicyOff}}, files, true, Decision{Deny, "group files.write is off"}},
		{"tool off", Config{Mode: ModeAuto, Tools: map[string]GroupPolicy{"files/write_file": PolicyOff}}, files, false, Decision{Deny, "tool files/write_file is off"}},
		{"destructive in auto", Config{Mode: ModeAuto, Groups: map[string]GroupPolicy{"files.write": PolicyAlways}}, del, false, Decision{Ask, "destructive tools always ask"}},
		{"destructive once", Config{}, del, true, Decision{Allow, "destructive tool allowed once by the user"}},
		{"always", Config{Groups: map[string]GroupPolicy{"files.write": PolicyAlways}}, files, false, Decision{Allow, "group files.write is always allowed"}},
		{"tool override asks", Config{Groups: map[string]GroupPolicy{"files.write": PolicyAlways}, Tools: map[string]GroupPolicy{"files/write_file": PolicyAsk}}, files, false, Decision{Ask, "tool files/write_file asks"}},
		{"manual ignores always", Config{Mode: ModeManual, Groups: map[string]GroupPolicy{"files.write": PolicyAlways}}, files, false, Decision{Ask, "mode manual asks for everything not off"}},
		{"unknown group", Config{}, ThirdParty("github", "create_issue"), false, Decision{Ask, "group mcp.github has no policy; unknown groups ask"}},
		{"auto", Config{Mode: ModeAuto}, files, false, Decision{Allow, "mode auto allows everything not off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.cfg, tt.tool, nil, nil, tt.once); got != tt.want {
				t.Errorf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestThirdParty(t *testing.T) {
	got := ThirdParty("github", "create_issue")
	want := Tool{Server: "github", Name: "create_issue", Group: "mcp.github", Risk: RiskDangerous}
	if got != want {
		t.Errorf("ThirdParty = %+v, want %+v", got, want)
	}
}

func TestGrants(t *testing.T) {
	var g Grants
	g.Grant("web")
	if !g.Has("web") || g.Has("browser") {
		t.Fatalf("after Grant(web): Has(web)=%t Has(browser)=%t", g.Has("web"), g.Has("browser"))
	}
	shown := g.Epoch
	g.Reset()
	if g.Has("web") {
		t.Error("grant survived Reset")
	}
	g.GrantIn("web", shown) // a prompt shown before /new, answered after it
	if g.Has("web") {
		t.Error("grant made in a previous epoch counts in the current one")
	}
	var nilGrants *Grants
	if nilGrants.Has("web") {
		t.Error("nil Grants has a grant")
	}
}

func TestApply(t *testing.T) {
	web := Tool{Server: "web", Name: "fetch", Group: "web", Risk: RiskCaution, Known: true}
	del := Tool{Server: "files", Name: "delete", Group: "files.write", Risk: RiskDestructive, Known: true}
	tests := []struct {
		name        string
		answer      Answer
		tool        Tool
		wantVerdict Verdict
		wantPersist bool
		wantGrant   bool
	}{
		{"once", AnswerOnce, web, Allow, false, false},
		{"session", AnswerSession, web, Allow, false, true},
		{"always", AnswerAlways, web, Allow, true, true},
		{"deny", AnswerDeny, web, Deny, false, false},
		{"cancel", AnswerCancel, web, Deny, false, false},
		{"unknown answer", Answer(0), web, Deny, false, false},
		{"session for destructive", AnswerSession, del, Allow, false, false},
		{"always for destructive", AnswerAlways, del, Allow, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Grants{}
			persist, verdict := Apply(tt.answer, tt.tool, g)
			if verdict != tt.wantVerdict {
				t.Errorf("verdict = %v, want %v", verdict, tt.wantVerdict)
			}
			if (persist != nil) != tt.wantPersist || (persist != nil && *persist != PolicyAlways) {
				t.Errorf("persist = %v, want always: %t", persist, tt.wantPersist)
			}
			if got := g.Has(tt.tool.Group); got != tt.wantGrant {
				t.Errorf("granted %s = %t, want %t", tt.tool.Group, got, tt.wantGrant)
			}
			// Whatever the answer, the next destructive call asks again.
			cfg := Config{}
			if persist != nil {
				cfg.Groups = map[string]GroupPolicy{tt.tool.Group: *persist}
			}
			if tt.tool.Risk == RiskDestructive {
				if d := Decide(cfg, tt.tool, g, nil, false); d.Verdict != Ask {
					t.Errorf("next call after %v: %+v, want ask", tt.answer, d)
				}
			}
		})
	}
	if _, v := Apply(AnswerSession, web, nil); v != Allow {
		t.Errorf("Apply with nil grants = %v, want allow", v)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"zero", Config{}, ""},
		{"full", Config{
			Mode: ModeAuto, Groups: map[string]GroupPolicy{"web": PolicyAlways}, Tools: map[string]GroupPolicy{"a/b": PolicyOff},
			IntentMode: true, Intents: map[string][]string{"read": {"web", "mcp.github"}},
		}, ""},
		{"intents kept while intent mode is off", Config{Intents: map[string][]string{"read": {"web"}}}, ""},
		{"bad mode", Config{Mode: "yolo"}, `unknown permission mode "yolo"`},
		{"bad group policy", Config{Groups: map[string]GroupPolicy{"web": "Off"}}, `group web: unknown policy "Off"`},
		{"bad tool policy", Config{Tools: map[string]GroupPolicy{"a/b": "yes"}}, `tool a/b: unknown policy "yes"`},
		{"intent mode without intents", Config{IntentMode: true}, "intent mode is on but no intents are configured"},
		{"intent without a name", Config{Intents: map[string][]string{" ": {"web"}}}, "intent with an empty name"},
		{"intent without groups", Config{IntentMode: true, Intents: map[string][]string{"read": {"web"}, "plan": nil}}, "intent plan allows no groups"},
		{"intent with an empty group", Config{Intents: map[string][]string{"read": {"web", ""}}}, "intent read: empty group name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

// fuzzIntents parses "name=group,group;name=group" into Config.Intents.
func fuzzIntents(spec string) map[string][]string {
	intents := map[string][]string{}
	for entry := range strings.SplitSeq(spec, ";") {
		name, groups, _ := strings.Cut(entry, "=")
		intents[name] = strings.Split(groups, ",")
	}
	return intents
}

func FuzzNeverAllowsOffOrUnconfirmedDestructive(f *testing.F) {
	// mode, group, group policy, tool override, risk, memory switch,
	// grant state, earlier answer, once, intent mode, intents, chosen intent
	f.Add("auto", "files.write", "always", "", "destructive", true, uint8(1), uint8(3), false, false, "", "")
	f.Add("auto", "files.write", "off", "always", "safe", true, uint8(1), uint8(3), true, false, "", "")
	f.Add("smart", "web", "always", "off", "safe", true, uint8(1), uint8(2), true, false, "", "")
	f.Add("", "memory.read", "always", "always", "safe", false, uint8(1), uint8(3), true, false, "", "")
	f.Add("manual", "mcp.github", "", "", "dangerous", false, uint8(2), uint8(2), false, false, "", "")
	f.Add("Auto", "files.write", "Off", "", "Destructive", true, uint8(1), uint8(3), false, false, "", "")
	f.Add("smart", "files.write", "ask", "always", "", true, uint8(1), uint8(2), false, false, "", "")
	f.Add("auto", "files.write", "always", "", "safe", true, uint8(1), uint8(3), true, true, "read=files.read,web;write=files.write", "read")
	f.Add("auto", "files.write", "always", "", "safe", true, uint8(1), uint8(3), true, true, "read=files.read,web;write=files.write", "")
	f.Add("auto", "web", "always", "", "destructive", true, uint8(1), uint8(3), false, true, "read=files.read,web", "read")
	f.Add("smart", "web", "off", "", "safe", true, uint8(1), uint8(3), true, true, "read=files.read,web", "read")
	f.Add("auto", "web", "always", "", "safe", true, uint8(1), uint8(3), true, true, "read=files.read,web", "gone")
	f.Fuzz(func(t *testing.T, mode, group, groupPol, override, risk string, memory bool, grant, answer uint8, once, intentMode bool, intents, chosen string) {
		tool := Tool{Server: "srv", Name: "tool", Group: group, Risk: Risk(risk)}
		cfg := Config{
			Mode:          Mode(mode),
			Groups:        map[string]GroupPolicy{group: GroupPolicy(groupPol)},
			Tools:         map[string]GroupPolicy{tool.Key(): GroupPolicy(override)},
			MemoryEnabled: memory,
			IntentMode:    intentMode,
			Intents:       fuzzIntents(intents),
		}
		g := &Grants{}
		// An earlier prompt for this tool may have granted or persisted
		// something; neither may unlock what the rules forbid.
		if persist, _ := Apply(Answer(answer%6), tool, g); persist != nil && groupPol != "off" {
			cfg.Groups[group] = *persist
		}
		switch grant % 3 {
		case 1:
			g.Grant(group)
		case 2:
			g.Grant(group)
			g.Reset()
			g.GrantIn(group, g.Epoch-1)
		}
		// The turn's intent is set directly, so it may name an intent the
		// config no longer has.
		turn := &Turn{Intent: chosen}
		d := Decide(cfg, tool, g, turn, once)
		if d.Rule == "" {
			t.Errorf("no rule for %+v", d)
		}
		// Intent mode only ever adds denials.
		without := cfg
		without.IntentMode = false
		if base := Decide(without, tool, g, turn, once); d.Verdict != Deny && d.Verdict != base.Verdict {
			t.Errorf("intent mode changed %v to %v: %+v", base.Verdict, d.Verdict, d)
		}
		if d.Verdict != Allow {
			return
		}
		switch {
		case groupPol == "off":
			t.Errorf("allowed tool in off group: %+v", d)
		case override == "off":
			t.Errorf("allowed tool with off override: %+v", d)
		case risk == "destructive" && !once:
			t.Errorf("allowed destructive tool without once: %+v", d)
		case (group == "memory" || strings.HasPrefix(group, "memory.")) && !memory:
			t.Errorf("allowed memory tool with memory disabled: %+v", d)
		case intentMode && !slices.Contains(cfg.Intents[chosen], group):
			t.Errorf("allowed group %q outside intent %q (%v): %+v", group, chosen, cfg.Intents[chosen], d)
		case intentMode && chosen == "":
			t.Errorf("allowed a call before an intent was chosen: %+v", d)
		}
	})
}

func TestBlockedAgreesWithDecide(t *testing.T) {
	for _, mem := range []bool{false, true} {
		for _, gp := range []GroupPolicy{"", PolicyOff, PolicyAsk, PolicyAlways} {
			for _, tp := range []GroupPolicy{"", PolicyOff, PolicyAsk, PolicyAlways} {
				for _, group := range []string{"files.read", "memory.write"} {
					cfg := Config{Mode: ModeAuto, Groups: map[string]GroupPolicy{}, Tools: map[string]GroupPolicy{}, MemoryEnabled: mem}
					if gp != "" {
						cfg.Groups[group] = gp
					}
					tool := Tool{Server: "s", Name: "t", Group: group, Risk: RiskSafe}
					if tp != "" {
						cfg.Tools[tool.Key()] = tp
					}
					// A call allowed once is denied only by what no answer can lift.
					d := Decide(cfg, tool, nil, nil, true)
					if got, want := Blocked(cfg, tool), d.Verdict == Deny; got != want {
						t.Errorf("memory=%v group %s=%q tool=%q: Blocked=%v, Decide=%s (%s)", mem, group, gp, tp, got, d.Verdict, d.Rule)
					}
				}
			}
		}
	}
}
