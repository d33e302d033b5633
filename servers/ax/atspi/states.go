package atspi

import "strings"

// States is an AT-SPI2 state set: bit n of the 64-bit set is state n of
// AtspiStateType (at-spi2-core's atspi-constants.h).
type States uint64

// The states Domo shows or acts on.
const (
	StateActive        States = 1 << 1
	StateArmed         States = 1 << 2
	StateChecked       States = 1 << 4
	StateCollapsed     States = 1 << 5
	StateDefunct       States = 1 << 6
	StateEditable      States = 1 << 7
	StateEnabled       States = 1 << 8
	StateExpandable    States = 1 << 9
	StateExpanded      States = 1 << 10
	StateFocusable     States = 1 << 11
	StateFocused       States = 1 << 12
	StateModal         States = 1 << 16
	StateMultiLine     States = 1 << 17
	StatePressed       States = 1 << 20
	StateSelectable    States = 1 << 22
	StateSelected      States = 1 << 23
	StateSensitive     States = 1 << 24
	StateShowing       States = 1 << 25
	StateVisible       States = 1 << 30
	StateIndeterminate States = 1 << 32
	StateRequired      States = 1 << 33
	StateCheckable     States = 1 << 41
	StateReadOnly      States = 1 << 43
)

func statesOf(bits []uint32) States {
	var s States
	for i, b := range bits {
		if i > 1 {
			break
		}
		s |= States(b) << (32 * i)
	}
	return s
}

// Has reports whether every state of x is set.
func (s States) Has(x States) bool { return s&x == x }

var stateNames = []struct {
	s    States
	name string
}{
	{StateChecked, "checked"}, {StateIndeterminate, "mixed"}, {StateExpanded, "expanded"},
	{StateFocused, "focused"}, {StateSelected, "selected"}, {StatePressed, "pressed"}, {StateRequired, "required"},
	{StateReadOnly, "readonly"},
}

// Disabled reports whether the element is neither enabled nor sensitive.
func (s States) Disabled() bool { return !s.Has(StateEnabled) && !s.Has(StateSensitive) }

// String lists the states worth showing, and "disabled" for an element
// that is not enabled.
func (s States) String() string {
	var out []string
	if s.Disabled() {
		out = append(out, "disabled")
	}
	for _, n := range stateNames {
		if s.Has(n.s) {
			out = append(out, n.name)
		}
	}
	return strings.Join(out, " ")
}
