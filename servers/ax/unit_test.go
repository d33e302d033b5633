package ax

import (
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/domo-agent/domo/servers/ax/atspi"
	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

func TestToolSchemas(t *testing.T) {
	s := NewServer(New(Options{}))
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckAnnotations(t, srv)
	mcpkittest.Snapshot(t, srv)
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]int{"@e12": 12, "e12": 12, "12": 12, " @e7 ": 7} {
		if got, err := parseRef(in); err != nil || got != want {
			t.Errorf("parseRef(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "@e", "@e0", "@e-3", "Save", "@x12", "e1.5"} {
		if _, err := parseRef(in); err == nil || !strings.Contains(err.Error(), "is not a ref") {
			t.Errorf("parseRef(%q): %v", in, err)
		}
	}
}

func TestRoleMatches(t *testing.T) {
	for _, tc := range []struct {
		want, role string
		ok         bool
	}{
		{"button", "push button", true}, {"Button", "toggle button", true}, {"push button", "push button", true},
		{"pushbutton", "push button", true}, {"textbox", "text", true}, {"check_box", "check box", true},
		{"tab", "page tab", true}, {"button", "check box", false}, {"text", "label", false},
	} {
		if got := roleMatches(tc.want, tc.role); got != tc.ok {
			t.Errorf("roleMatches(%q, %q) = %v", tc.want, tc.role, got)
		}
	}
}

// node builds a visible, showing, enabled element.
func node(role, name string, kids ...*atspi.Node) *atspi.Node {
	return &atspi.Node{Role: role, Name: name, Children: kids,
		States: atspi.StateVisible | atspi.StateShowing | atspi.StateEnabled | atspi.StateSensitive}
}

func TestViewRendersTheTree(t *testing.T) {
	row := node("list item", "", node("label", "Item 1"))
	far := node("list item", "", node("label", "Item 2"))
	far.States &^= atspi.StateShowing
	hidden := node("label", "Hidden details")
	hidden.States &^= atspi.StateVisible
	pw := node("password text", "Password")
	pw.Value = "hunter2"
	exp := node("toggle button", "Details", hidden)
	exp.States |= atspi.StateExpandable
	off := node("push button", "Off")
	off.States &^= atspi.StateEnabled | atspi.StateSensitive
	frame := node("frame", "Main", node("filler", "",
		node("label", "Title"), node("push button", "Save"), pw, exp, off,
		node("panel", "Area", node("label", "Area")),
		node("scroll pane", "", node("list box", "", row, far)),
		node("label", "Scrolled away"), node("separator", "")))
	frame.Children[0].Children[7].States &^= atspi.StateShowing
	v := &view{refs: &refTable{byN: map[int]*refEntry{}, byObj: map[atspi.Ref]*refEntry{}}, app: &app{Bus: ":1.1", PID: 1, Name: "x"}}
	// Give each node a distinct object path, as an app would.
	var number func(n *atspi.Node, path string)
	number = func(n *atspi.Node, path string) {
		n.Ref = atspi.Ref{Bus: ":1.1", Path: dbus.ObjectPath(path)}
		for i, k := range n.Children {
			number(k, path+"_"+string(rune('a'+i)))
		}
	}
	number(frame, "/p")
	v.tree(&atspi.Node{Children: []*atspi.Node{frame}})
	got := strings.Join(v.lines, "\n")
	want := `- frame "Main"
  - label "Title"
  - push button "Save" @e1
  - password text "Password" @e2: •••••••
  - toggle button "Details" @e3 [collapsed]
  - push button "Off" @e4 [disabled]
  - panel "Area" @e5
  - list box
    - list item "Item 1" @e6
    - list item "Item 2" @e7 [offscreen]`
	if got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
	// The same elements keep their refs in the next snapshot.
	v.lines = nil
	v.tree(&atspi.Node{Children: []*atspi.Node{frame}})
	if again := strings.Join(v.lines, "\n"); again != want {
		t.Errorf("a second snapshot renumbered:\n%s", again)
	}
}

func TestDescribeChange(t *testing.T) {
	before := node("check box", "Subscribe")
	after := node("check box", "Subscribe")
	if got := describeChange(before, after); got != "" {
		t.Errorf("no change described as %q", got)
	}
	after.States |= atspi.StateChecked
	after.Value = "x"
	if got := describeChange(before, after); got != `Now: [checked] (was []); value "x".` {
		t.Errorf("describeChange = %q", got)
	}
}
