package policy

// Verdict is the outcome of a decision.
type Verdict string

// The verdicts.
const (
	Allow Verdict = "allow"
	Deny  Verdict = "deny"
	Ask   Verdict = "ask"
)

// Decision is a verdict and the rule that produced it, readable enough to show
// the user and to write to the audit log.
type Decision struct {
	Verdict Verdict
	Rule    string
}

// Decide decides one call of t. once means the user has answered "allow once"
// for this very call. g may be nil; turn may be nil, meaning no intent has
// been chosen.
//
// The rules apply in order: memory groups with the switch off are denied; an
// off group or tool override is denied without asking; in intent mode, a
// call before the turn's intent is chosen, or outside the groups it allows,
// is denied; a destructive tool asks unless allowed once, in every mode; an
// allow-once allows; auto mode allows; an always policy allows in smart
// mode; a session grant allows; everything else asks. Intent mode only
// denies: it never turns an ask into an allow.
func Decide(cfg Config, t Tool, g *Grants, turn *Turn, once bool) Decision {
	if isMemoryGroup(t.Group) && !cfg.MemoryEnabled {
		return Decision{Deny, "memory is disabled (memory.enabled=false)"}
	}
	override, hasOverride := cfg.Tools[t.Key()]
	group, hasGroup := cfg.Groups[t.Group]
	if hasOverride && override == PolicyOff {
		return Decision{Deny, "tool " + t.Key() + " is off"}
	}
	if hasGroup && group == PolicyOff {
		return Decision{Deny, "group " + t.Group + " is off"}
	}
	if rule := intentRule(cfg, t, turn); rule != "" {
		return Decision{Deny, rule}
	}
	if t.Risk.destructive() {
		if once {
			return Decision{Allow, "destructive tool allowed once by the user"}
		}
		return Decision{Ask, "destructive tools always ask"}
	}
	if once {
		return Decision{Allow, "allowed once by the user"}
	}
	mode := cfg.Mode.effective()
	if mode == ModeAuto {
		return Decision{Allow, "mode auto allows everything not off"}
	}
	// The per-tool override, when present, replaces the group's policy.
	policy, source := PolicyAsk, "group "+t.Group+" has no policy; unknown groups ask"
	switch {
	case hasOverride:
		policy, source = override, "tool "+t.Key()
	case hasGroup:
		policy, source = group, "group "+t.Group
	}
	if mode == ModeSmart && policy == PolicyAlways {
		return Decision{Allow, source + " is always allowed"}
	}
	if g.Has(t.Group) {
		return Decision{Allow, "group " + t.Group + " allowed for this session"}
	}
	if mode == ModeManual {
		return Decision{Ask, "mode manual asks for everything not off"}
	}
	if policy == PolicyAsk && (hasOverride || hasGroup) {
		return Decision{Ask, source + " asks"}
	}
	if hasOverride || hasGroup {
		return Decision{Ask, source + " has unknown policy " + string(policy) + "; asking"}
	}
	return Decision{Ask, source}
}

// Blocked reports whether every call of t is denied whatever the user
// answers: its group or tool is off, or it is a memory tool with memory
// disabled. The host does not offer such tools to the model.
func Blocked(cfg Config, t Tool) bool {
	if isMemoryGroup(t.Group) && !cfg.MemoryEnabled {
		return true
	}
	return cfg.Tools[t.Key()] == PolicyOff || cfg.Groups[t.Group] == PolicyOff
}
