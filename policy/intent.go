package policy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// IntentTool is the name of the tool the model calls to choose the turn's
// intent in intent mode. The caller offers it and routes its calls to
// SelectIntent; it never goes through Decide.
const IntentTool = "select_intent"

// Turn is the intent-mode state of one turn. The zero value has no intent
// chosen. The caller resets it at each new user message, on retry and on
// cancel, so that an intent never outlives the request it was chosen for.
// Turn is not safe for concurrent use.
type Turn struct {
	// Intent is the intent chosen in this turn, "" while none is.
	Intent string
}

// Reset forgets the turn's intent.
func (t *Turn) Reset() { t.Intent = "" }

// SelectIntent records intent as turn's intent. The error, meant for the
// model, says what to do instead: intent mode is off, the name is not one of
// cfg.Intents, or the turn already has an intent, which holds until the
// user's next message. turn must not be nil.
func SelectIntent(cfg Config, turn *Turn, intent string) error {
	if !cfg.IntentMode {
		return errors.New("intent mode is off: call the tools you need directly")
	}
	if turn.Intent != "" {
		return fmt.Errorf("intent %q is already selected for this turn and cannot change: "+
			"use only what it allows (%s); the user's next message starts a new turn",
			turn.Intent, strings.Join(cfg.Intents[turn.Intent], ", "))
	}
	if _, ok := cfg.Intents[intent]; !ok {
		return fmt.Errorf("unknown intent %q: call %s with one of: %s",
			intent, IntentTool, strings.Join(intentNames(cfg), ", "))
	}
	turn.Intent = intent
	return nil
}

// intentRule returns the rule that denies t under the turn's intent, or ""
// when intent mode is off or the intent allows t's group.
func intentRule(cfg Config, t Tool, turn *Turn) string {
	if !cfg.IntentMode {
		return ""
	}
	var chosen string
	if turn != nil {
		chosen = turn.Intent
	}
	if chosen == "" {
		return "intent mode: call " + IntentTool + " first with one of: " + strings.Join(intentNames(cfg), ", ")
	}
	groups, ok := cfg.Intents[chosen]
	if !ok {
		// The config changed under a running turn.
		return fmt.Sprintf("intent mode: intent %q is no longer configured; the user's next message starts a new turn", chosen)
	}
	if slices.Contains(groups, t.Group) {
		return ""
	}
	var allowing []string
	for _, name := range intentNames(cfg) {
		if slices.Contains(cfg.Intents[name], t.Group) {
			allowing = append(allowing, name)
		}
	}
	hint := "no intent allows " + t.Group
	if len(allowing) > 0 {
		hint = "intents that allow " + t.Group + ": " + strings.Join(allowing, ", ")
	}
	return fmt.Sprintf("intent mode: tool %s is in group %s, which intent %q (%s) does not allow; %s; "+
		"the intent holds until the user's next message, so finish with what %q allows or tell the user which intent the request needs",
		t.Key(), t.Group, chosen, strings.Join(groups, ", "), hint, chosen)
}

// intentNames returns the configured intents, sorted.
func intentNames(cfg Config) []string {
	return slices.Sorted(maps.Keys(cfg.Intents))
}

// validateIntents reports an intent Decide could not use.
func (c Config) validateIntents() error {
	if c.IntentMode && len(c.Intents) == 0 {
		return errors.New("intent mode is on but no intents are configured")
	}
	for _, name := range intentNames(c) {
		if strings.TrimSpace(name) == "" {
			return errors.New("intent with an empty name")
		}
		groups := c.Intents[name]
		if len(groups) == 0 {
			return fmt.Errorf("intent %s allows no groups", name)
		}
		if slices.Contains(groups, "") {
			return fmt.Errorf("intent %s: empty group name", name)
		}
	}
	return nil
}
