package policy

import (
	"fmt"
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
}

// expected states DESIGN.md's rules as conditions on the inputs rather than
// as Decide's ordered chain: deny when blocked, allow when confirmed or
// permitted, ask otherwise.
func (c matrixCase) expected() Verdict {
	memoryBlocked := strings.HasPrefix(c.group, "memory.") && !c.memory
	off := c.groupPol == PolicyOff || c.override == PolicyOff
	if memoryBlocked || off {
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
									cases = append(cases, matrixCase{
										name: fmt.Sprintf("mode=%q/%s/group=%q/tool=%q/risk=%q/grant=%s/once=%t/memory=%t",
											mode, group, gp, op, risk, grant, once, memory),
										mode: mode, group: group, groupPol: gp, override: op,
										risk: risk, grant: grant, once: once, memory: memory,
									})
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
	cfg := Config{Mode: c.mode, MemoryEnabled: c.memory, Groups: map[string]GroupPolicy{}, Tools: map[string]GroupPolicy{}}
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
		got := Decide(cfg, tool, grantsFor(tt.grant, tt.group), tt.once)
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
			if got := Decide(tt.cfg, tt.tool, nil, tt.once); got != tt.want {
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
				if d := Decide(cfg, tt.tool, g, false); d.Verdict != Ask {
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
		{"full", Config{Mode: ModeAuto, Groups: map[string]GroupPolicy{"web": PolicyAlways}, Tools: map[string]GroupPolicy{"a/b": PolicyOff}}, ""},
		{"bad mode", Config{Mode: "yolo"}, `unknown permission mode "yolo"`},
		{"bad group policy", Config{Groups: map[string]GroupPolicy{"web": "Off"}}, `group web: unknown policy "Off"`},
		{"bad tool policy", Config{Tools: map[string]GroupPolicy{"a/b": "yes"}}, `tool a/b: unknown policy "yes"`},
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

func FuzzNeverAllowsOffOrUnconfirmedDestructive(f *testing.F) {
	// mode, group, group policy, tool override, risk, memory switch,
	// grant state, earlier answer, once
	f.Add("auto", "files.write", "always", "", "destructive", true, uint8(1), uint8(3), false)
	f.Add("auto", "files.write", "off", "always", "safe", true, uint8(1), uint8(3), true)
	f.Add("smart", "web", "always", "off", "safe", true, uint8(1), uint8(2), true)
	f.Add("", "memory.read", "always", "always", "safe", false, uint8(1), uint8(3), true)
	f.Add("manual", "mcp.github", "", "", "dangerous", false, uint8(2), uint8(2), false)
	f.Add("Auto", "files.write", "Off", "", "Destructive", true, uint8(1), uint8(3), false)
	f.Add("smart", "files.write", "ask", "always", "", true, uint8(1), uint8(2), false)
	f.Fuzz(func(t *testing.T, mode, group, groupPol, override, risk string, memory bool, grant, answer uint8, once bool) {
		tool := Tool{Server: "srv", Name: "tool", Group: group, Risk: Risk(risk)}
		cfg := Config{
			Mode:          Mode(mode),
			Groups:        map[string]GroupPolicy{group: GroupPolicy(groupPol)},
			Tools:         map[string]GroupPolicy{tool.Key(): GroupPolicy(override)},
			MemoryEnabled: memory,
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
		d := Decide(cfg, tool, g, once)
		if d.Rule == "" {
			t.Errorf("no rule for %+v", d)
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
		}
	})
}
