// Package policy owns the permission decision for a tool call: given the
// configuration, the tool's group and risk, the session's grants, the turn's
// intent and whether the user has just allowed this very call, it says
// allow, deny or ask, and why. It must do no I/O, read no clock and import
// nothing else from Domo: loading config, prompting and auditing belong to
// its callers.
package policy

import (
	"fmt"
	"strings"
)

// Mode is the global permission mode.
type Mode string

// The modes. The zero Mode means ModeSmart.
const (
	ModeManual Mode = "manual" // ask for everything not off
	ModeSmart  Mode = "smart"  // group policies apply
	ModeAuto   Mode = "auto"   // allow everything not off, except destructive
)

// effective maps the zero Mode to the default and an unrecognised one to
// manual, so that a typo in config makes Domo ask more, never less.
func (m Mode) effective() Mode {
	switch m {
	case "":
		return ModeSmart
	case ModeManual, ModeSmart, ModeAuto:
		return m
	}
	return ModeManual
}

// GroupPolicy says what happens to calls in a group (or to one tool).
type GroupPolicy string

// The group policies. A group without one asks.
const (
	PolicyOff    GroupPolicy = "off"    // hard block, no prompt
	PolicyAsk    GroupPolicy = "ask"    // prompt unless granted for the session
	PolicyAlways GroupPolicy = "always" // allow in smart mode
)

// Risk is how much harm a tool call can do.
type Risk string

// The risks. Only RiskDestructive changes a decision: it always asks.
// An unrecognised or empty risk counts as destructive, so a tool whose
// mapping is missing or misspelt asks rather than slipping through.
const (
	RiskSafe        Risk = "safe"
	RiskCaution     Risk = "caution"
	RiskDangerous   Risk = "dangerous"
	RiskDestructive Risk = "destructive"
)

// destructive reports whether r must be confirmed for every call.
func (r Risk) destructive() bool {
	switch r {
	case RiskSafe, RiskCaution, RiskDangerous:
		return false
	}
	return true
}

// Tool is what policy needs to know about a tool.
type Tool struct {
	Server string
	Name   string
	Group  string
	Risk   Risk
	// Known is true for tools mapped explicitly in Domo's default config.
	Known bool
}

// ThirdParty describes a tool Domo has no mapping for: it goes in its
// server's group and counts as dangerous, whatever its annotations claim.
func ThirdParty(server, name string) Tool {
	return Tool{Server: server, Name: name, Group: "mcp." + server, Risk: RiskDangerous}
}

// Key is the tool's key in Config.Tools: "server/tool".
func (t Tool) Key() string { return t.Server + "/" + t.Name }

// isMemoryGroup reports whether group belongs to the memory master switch.
func isMemoryGroup(group string) bool {
	return group == "memory" || strings.HasPrefix(group, "memory.")
}

// Config is the permission part of Domo's configuration.
type Config struct {
	Mode Mode
	// Groups holds each group's policy; a group not listed asks.
	Groups map[string]GroupPolicy
	// Tools overrides the group policy for single tools, keyed "server/tool".
	// An off in either the override or the group blocks the tool.
	Tools map[string]GroupPolicy
	// MemoryEnabled is the master switch for memory.* groups.
	MemoryEnabled bool
	// IntentMode makes the model choose one of Intents with IntentTool
	// before any other call in a turn, and denies calls outside it.
	IntentMode bool
	// Intents maps each intent's name to the groups it allows.
	Intents map[string][]string
}

// Validate reports a mode or policy value that Decide would not recognise,
// and an intent that could allow nothing.
func (c Config) Validate() error {
	switch c.Mode {
	case "", ModeManual, ModeSmart, ModeAuto:
	default:
		return fmt.Errorf("unknown permission mode %q (want manual, smart or auto)", c.Mode)
	}
	for _, m := range []struct {
		what string
		ps   map[string]GroupPolicy
	}{{"group", c.Groups}, {"tool", c.Tools}} {
		for k, p := range m.ps {
			switch p {
			case PolicyOff, PolicyAsk, PolicyAlways:
			default:
				return fmt.Errorf("%s %s: unknown policy %q (want off, ask or always)", m.what, k, p)
			}
		}
	}
	return c.validateIntents()
}
