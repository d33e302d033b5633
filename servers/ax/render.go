package ax

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/domo-agent/domo/servers/ax/atspi"
)

// interactiveRoles are the roles a model acts on; they get refs.
var interactiveRoles = map[string]bool{
	"push button": true, "toggle button": true, "check box": true, "radio button": true, "switch": true,
	"menu item": true, "check menu item": true, "radio menu item": true, "tearoff menu item": true,
	"text": true, "entry": true, "password text": true, "spin button": true, "slider": true, "combo box": true,
	"list item": true, "tree item": true, "table cell": true, "page tab": true, "link": true, "toggle": true,
	"icon": true, "color chooser": true, "date editor": true, "scroll bar": true, "menu": true,
	"terminal": true, "document text": true, "editbar": true, "push button menu": true,
}

// plainRoles are containers that only group: without a name or ref they
// are left out and their children shown in their place.
var plainRoles = map[string]bool{
	"filler": true, "panel": true, "viewport": true, "scroll pane": true, "unknown": true, "section": true,
	"layered pane": true, "glass pane": true, "root pane": true, "split pane": true, "redundant object": true,
	"box": true, "grouping": true, "separator": true, "internal frame": true, "option pane": true,
}

// textRoles show their name as plain text.
var textRoles = map[string]bool{"label": true, "static": true, "caption": true, "heading": true, "paragraph": true}

// onlyLabel is n's child when that is its only child and a plain label.
func onlyLabel(n *atspi.Node) *atspi.Node {
	if len(n.Children) == 1 && textRoles[n.Children[0].Role] && len(n.Children[0].Children) == 0 {
		return n.Children[0]
	}
	return nil
}

// displayName is an element's name as shown: an unnamed element with only
// a label (a list row) is named by the label's text.
func displayName(n *atspi.Node) string {
	if label := onlyLabel(n); n.Name == "" && label != nil {
		return label.Name
	}
	return n.Name
}

// interactive reports whether n gets a ref.
func interactive(n *atspi.Node) bool {
	if n.Name == "" && (n.Role == "menu" || plainRoles[n.Role]) {
		return false // a combo box's own popup; a scrolled window
	}
	if n.Name != "" && n.Role == "panel" {
		return true // an event box: it may take clicks
	}
	return interactiveRoles[n.Role] || n.States.Has(atspi.StateFocusable) || n.States.Has(atspi.StateSelectable) ||
		n.States.Has(atspi.StateEditable)
}

// view renders one app's tree as one line per element.
type view struct {
	refs            *refTable
	app             *app
	interactiveOnly bool
	bounds          bool
	lines           []string
}

func (v *view) tree(root *atspi.Node) {
	for _, w := range root.Children {
		v.node(w, 0, true)
	}
}

// node renders n at depth, and its children below it.
func (v *view) node(n *atspi.Node, depth int, top bool) {
	if !top && !n.States.Has(atspi.StateVisible) && n.Err == nil {
		return
	}
	showing := top || n.States.Has(atspi.StateShowing)
	name, kids := n.Name, n.Children
	// A label that names its parent (a list row's) or repeats the
	// parent's name goes.
	if label := onlyLabel(n); label != nil && (name == "" || label.Name == name) {
		name, kids = label.Name, nil
	}
	ref := interactive(n) && n.Err == nil
	line := ""
	switch {
	case n.Err != nil && n.Role == "":
		line = "- (not answering)"
	case !ref && !showing:
		// Out of sight and nothing to act on: left out.
	case !ref && plainRoles[n.Role] && name == "":
	case !ref && v.interactiveOnly && !top:
	default:
		line = v.line(n, name, ref, showing)
	}
	if line != "" {
		if v.interactiveOnly {
			depth = 0
			if top {
				line = "# " + strings.TrimPrefix(line, "- ")
			}
		}
		v.lines = append(v.lines, strings.Repeat("  ", depth)+line)
		depth++
	}
	for _, k := range kids {
		v.node(k, depth, false)
	}
}

// line renders one element: - role "name" @e12 [states]: value (x,y w×h)
func (v *view) line(n *atspi.Node, name string, ref, showing bool) string {
	var b strings.Builder
	b.WriteString("- ")
	b.WriteString(n.Role)
	if name != "" {
		fmt.Fprintf(&b, " %q", clip(name, 120))
	}
	if ref {
		e := v.refs.give(v.app, n)
		fmt.Fprintf(&b, " @e%d", e.n)
	}
	if st := stateText(n, showing); st != "" {
		b.WriteString(" [" + st + "]")
	}
	if val := valueText(n); val != "" {
		b.WriteString(": " + val)
	}
	if v.bounds && !n.Bounds.Empty() && showing {
		fmt.Fprintf(&b, " (%d,%d %dx%d)", n.Bounds.X, n.Bounds.Y, n.Bounds.W, n.Bounds.H)
	}
	return b.String()
}

// stateText lists the states worth showing.
func stateText(n *atspi.Node, showing bool) string {
	s := n.States.String()
	if n.States.Has(atspi.StateExpandable) && !n.States.Has(atspi.StateExpanded) {
		s = strings.TrimSpace(s + " collapsed")
	}
	if n.States.Has(atspi.StateActive) && (n.Role == "frame" || n.Role == "dialog" || n.Role == "window") {
		s = strings.TrimSpace(s + " active")
	}
	if !showing {
		s = strings.TrimSpace(s + " offscreen")
	}
	if n.Err != nil {
		s = strings.TrimSpace(s + " partial")
	}
	return s
}

// valueText is a field's value as shown: passwords masked, long text cut.
func valueText(n *atspi.Node) string {
	if n.Value == "" {
		return ""
	}
	if n.Role == "password text" {
		return strings.Repeat("•", min(utf8.RuneCountInString(n.Value), 12))
	}
	v := strings.ReplaceAll(n.Value, "\n", "⏎")
	if utf8.RuneCountInString(n.Value) >= atspi.MaxValue {
		v += "…"
	}
	return fmt.Sprintf("%q", v)
}

// clip cuts s to n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
