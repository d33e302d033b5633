package ax

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/ax/atspi"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type findArgs struct {
	Role      string `json:"role,omitempty" jsonschema:"the element's role: button, text, check box, combo box, menu item, list item, page tab, ... (as ax_get_ui_state shows them)"`
	Name      string `json:"name,omitempty" jsonschema:"words of its name, case-insensitive"`
	Value     string `json:"value,omitempty" jsonschema:"words of its value (a field's text), case-insensitive"`
	App       string `json:"app,omitempty" jsonschema:"the app: \"focused\" (default), its name, a window title, or its pid"`
	Limit     int    `json:"limit,omitempty" jsonschema:"the most matches to return"`
	TimeoutMS int    `json:"timeout_ms,omitempty" jsonschema:"the longest to wait for the app, in milliseconds"`
}

func (a *findArgs) Validate() error {
	if strings.TrimSpace(a.Role+a.Name+a.Value) == "" {
		return errors.New("give at least one of role, name and value")
	}
	return nil
}

func (s *Server) findTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_find",
		"Find elements in an app by role, name or value, anywhere in its tree (also out of sight or past ax_get_ui_state's cut), with refs to act on.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in findArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) { return d.find(ctx, in) })
		},
		mcpkit.Title("Find elements"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetInt(sc, "limit", 1, 500, 20)
			mcpkit.SetInt(sc, "timeout_ms", 100, 30000, 3000)
		}))
}

// roleAliases map the names models use to AT-SPI roles.
var roleAliases = map[string][]string{
	"button":    {"push button", "toggle button", "push button menu"},
	"textbox":   {"text", "entry", "password text"},
	"textfield": {"text", "entry", "password text"},
	"input":     {"text", "entry", "password text", "spin button"},
	"checkbox":  {"check box", "check menu item"},
	"radio":     {"radio button", "radio menu item"},
	"combobox":  {"combo box"},
	"dropdown":  {"combo box"},
	"select":    {"combo box"},
	"tab":       {"page tab"},
	"menuitem":  {"menu item", "check menu item", "radio menu item"},
	"listitem":  {"list item"},
	"option":    {"list item", "menu item"},
	"row":       {"list item", "table row", "tree item"},
	"treeitem":  {"tree item"},
	"window":    {"frame", "dialog", "window", "alert"},
	"switch":    {"switch", "toggle button"},
}

// roleMatches reports whether role is what want names.
func roleMatches(want, role string) bool {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(want)), " ", "")
	key = strings.ReplaceAll(key, "_", "")
	if strings.ReplaceAll(role, " ", "") == key {
		return true
	}
	return slices.Contains(roleAliases[key], role)
}

func (d *Desktop) find(ctx context.Context, in findArgs) (string, error) {
	r, err := d.readApp(ctx, in.App, atspi.Limits{MaxNodes: 20000, MaxDepth: 200}, in.TimeoutMS)
	if err != nil {
		return "", err
	}
	target := r.app
	name, value := strings.ToLower(in.Name), strings.ToLower(in.Value)
	max := cmp.Or(in.Limit, 20)
	var lines []string
	more := 0
	v := &view{refs: &d.refs, app: target}
	var visit func(n *atspi.Node, window string)
	visit = func(n *atspi.Node, window string) {
		if n.Role == "frame" || n.Role == "dialog" || n.Role == "window" || n.Role == "alert" {
			window = fmt.Sprintf("%s %q", n.Role, n.Name)
		}
		shown := displayName(n)
		if n.Role != "" && n.Role != "application" &&
			(in.Role == "" || roleMatches(in.Role, n.Role)) &&
			(name == "" || strings.Contains(strings.ToLower(shown), name)) &&
			(value == "" || strings.Contains(strings.ToLower(n.Value), value)) {
			if len(lines) < max {
				line := v.line(n, shown, true, n.States.Has(atspi.StateShowing))
				if window != "" && !strings.HasPrefix(line, "- "+window) {
					line += " in " + window
				}
				lines = append(lines, line)
			} else {
				more++
			}
		}
		for _, k := range n.Children {
			// A row's label is found as the row.
			if k != onlyLabel(n) || n.Name != "" {
				visit(k, window)
			}
		}
	}
	visit(r.tree, "")
	var b strings.Builder
	switch {
	case len(lines) == 0:
		fmt.Fprintf(&b, "No element of %s matches", target)
	default:
		fmt.Fprintf(&b, "%d elements of %s match", len(lines)+more, target)
	}
	var crit []string
	for _, c := range [][2]string{{"role", in.Role}, {"name", in.Name}, {"value", in.Value}} {
		if c[1] != "" {
			crit = append(crit, fmt.Sprintf("%s %q", c[0], c[1]))
		}
	}
	b.WriteString(" " + strings.Join(crit, ", ") + ":\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if more > 0 {
		fmt.Fprintf(&b, "- … %d more: narrow the search or raise limit.\n", more)
	}
	if r.hung {
		b.WriteString(r.partial())
	} else if r.truncated {
		fmt.Fprintf(&b, "- … searched the first %d elements only.\n", r.count)
	}
	return b.String(), nil
}

type actionArgs struct {
	Ref    string  `json:"ref" jsonschema:"the element's ref from ax_get_ui_state or ax_find, e.g. @e12"`
	Action string  `json:"action,omitempty" jsonschema:"what to do: press or activate (click a button, activate an item), toggle (a check box or toggle button), set_value (replace a field's text or a spin button's or slider's number, choose a combo box item), select (a list or tab item; or, on a list or combo box, the item named by value), expand, collapse, focus (bring its window forward and give it the keyboard focus), scroll_into_view"`
	Value  *string `json:"value,omitempty" jsonschema:"for set_value: the text, number or item name; for select on a list or combo box: the item's name"`
}

// actions are ax_action's verbs; the first is the default.
var actions = []string{"press", "activate", "toggle", "set_value", "select", "expand", "collapse", "focus", "scroll_into_view"}

func (a *actionArgs) Validate() error {
	if a.Action == "set_value" && a.Value == nil {
		return errors.New("set_value needs value: the text, number or item name to set")
	}
	return nil
}

func (s *Server) actionTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_action",
		"Act on an element by its ref through its accessible action (press, toggle, set_value, select, expand, collapse, focus, scroll_into_view). "+
			"An element without one is clicked at its centre. Returns what changed in the element. Refused with \"target app lost focus\" when its app no longer has the focused window.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in actionArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) { return d.act(ctx, in) })
		},
		mcpkit.Title("Act on an element"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetEnum(sc, "action", actions...) }))
}

// act runs one ax_action: it checks the ref and the context lock, acts,
// reads the element back and says what changed.
func (d *Desktop) act(ctx context.Context, in actionArgs) (string, error) {
	action := cmp.Or(in.Action, "press")
	e, before, err := d.resolve(ctx, in.Ref, action == "press" || action == "activate")
	if err != nil {
		return "", err
	}
	if action != "focus" && action != "scroll_into_view" {
		if before.States.Disabled() {
			return "", fmt.Errorf("%s is disabled, so nothing was done; take a new ax_get_ui_state to see what is enabled", e)
		}
		if err := d.lock(ctx, e.app); err != nil {
			return "", err
		}
	}
	actx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	var did string
	switch action {
	case "press", "activate":
		did, err = d.press(actx, e, before)
	case "toggle":
		did, err = d.toggle(actx, e, before)
	case "set_value":
		did, err = d.setValue(actx, e, before, *in.Value)
	case "select":
		did, err = d.selectItem(actx, e, before, in.Value)
	case "expand", "collapse":
		did, err = d.expand(actx, e, before, action == "expand")
	case "focus":
		did, err = d.focus(actx, e)
	case "scroll_into_view":
		did, err = d.scrollIntoView(actx, e)
	default:
		return "", fmt.Errorf("unknown action %q: use one of %s", action, strings.Join(actions, ", "))
	}
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return "", fmt.Errorf("%s: %w", action, notAnswering(e.app, d.o.Timeout))
		}
		return "", fmt.Errorf("%s %s: %w", action, e, err)
	}
	d.target = e.app
	return did + " " + d.readBack(ctx, e, before, action), nil
}

// expectChange lists the actions that should change the element itself:
// their read-back waits a little for the app to catch up.
var expectChange = map[string]bool{"toggle": true, "set_value": true, "expand": true, "collapse": true, "select": true}

// readBack reads the element after an action and says how it changed.
func (d *Desktop) readBack(ctx context.Context, e *refEntry, before *atspi.Node, action string) string {
	after, err := d.settle(ctx, e, func(n *atspi.Node) bool {
		return !expectChange[action] || describeChange(before, n) != ""
	})
	switch {
	case errors.Is(err, atspi.ErrGone):
		return "The element is gone now (its window may have closed)."
	case err != nil:
		return fmt.Sprintf("It could not be read back: %v.", err)
	}
	if change := describeChange(before, after); change != "" {
		return change
	}
	return "The element itself shows no change; take ax_get_ui_state to see the rest of the app."
}

// settle reads the element until done says the app has caught up, for up
// to half a second: apps handle actions and keys after the call that sent
// them returns. It returns the last reading.
func (d *Desktop) settle(ctx context.Context, e *refEntry, done func(*atspi.Node) bool) (*atspi.Node, error) {
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		rctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
		n, err := d.a11y.Read(rctx, e.obj, false)
		cancel()
		if err != nil || done(n) || time.Now().After(deadline) {
			return n, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// describeChange says how an element changed, or "" when it did not.
func describeChange(before, after *atspi.Node) string {
	var parts []string
	if b, a := stateText(before, true), stateText(after, true); b != a {
		parts = append(parts, fmt.Sprintf("[%s] (was [%s])", a, b))
	}
	if before.Value != after.Value {
		parts = append(parts, "value "+cmp.Or(valueText(after), `""`))
	}
	if before.Name != after.Name {
		parts = append(parts, fmt.Sprintf("name %q", after.Name))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Now: " + strings.Join(parts, "; ") + "."
}

// doNamed runs the first of the element's actions named in prefer, or its
// first action when any is allowed. It returns the action's name, or ""
// when the element offers none that fits.
func (d *Desktop) doNamed(ctx context.Context, e *refEntry, any bool, prefer ...string) (string, error) {
	acts, err := d.a11y.Actions(ctx, e.obj)
	if errors.Is(err, atspi.ErrNoInterface) {
		return "", nil
	}
	if err != nil {
		// Gone, or not answering: clicking where it was could hit
		// something else.
		return "", err
	}
	for _, p := range prefer {
		for i, a := range acts {
			if strings.EqualFold(a.Name, p) {
				return a.Name, d.a11y.DoAction(ctx, e.obj, i)
			}
		}
	}
	if any {
		return acts[0].Name, d.a11y.DoAction(ctx, e.obj, 0)
	}
	return "", nil
}

// press runs the element's accessible action, or clicks its centre.
func (d *Desktop) press(ctx context.Context, e *refEntry, n *atspi.Node) (string, error) {
	name, err := d.doNamed(ctx, e, true, "click", "press", "activate", "jump", "open", "toggle", "select")
	if err != nil {
		return "", err
	}
	if name != "" {
		return fmt.Sprintf("Pressed %s (its %q action).", e, name), nil
	}
	if err := d.clickCentre(ctx, e, n); err != nil {
		return "", err
	}
	return fmt.Sprintf("Clicked %s at its centre (it offers no accessible action).", e), nil
}

// clickCentre clicks the centre of the element's extents through XTEST.
func (d *Desktop) clickCentre(ctx context.Context, e *refEntry, n *atspi.Node) error {
	r := n.Bounds
	if r.Empty() {
		var err error
		if r, err = d.a11y.Extents(ctx, e.obj); err != nil {
			return fmt.Errorf("it offers no accessible action and its position cannot be read: %w", err)
		}
	}
	if !n.States.Has(atspi.StateShowing) || r.Empty() {
		return errors.New("it offers no accessible action and is not on screen to click; use scroll_into_view first")
	}
	x, err := d.display()
	if err != nil {
		return fmt.Errorf("it offers no accessible action, and clicking it needs X: %w", err)
	}
	return x.Click(r.X+r.W/2, r.Y+r.H/2, 1, 1)
}

var checkable = []string{"check box", "toggle button", "radio button", "check menu item", "radio menu item", "switch", "toggle"}

func (d *Desktop) toggle(ctx context.Context, e *refEntry, n *atspi.Node) (string, error) {
	if !slices.Contains(checkable, n.Role) && !n.States.Has(atspi.StateCheckable) {
		return "", errors.New("it is not a check box, toggle button or switch; use press")
	}
	name, err := d.doNamed(ctx, e, true, "toggle", "click", "press", "activate")
	if err != nil {
		return "", err
	}
	if name == "" {
		if err := d.clickCentre(ctx, e, n); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Toggled %s.", e), nil
}

func (d *Desktop) setValue(ctx context.Context, e *refEntry, n *atspi.Node, value string) (string, error) {
	ifaces, err := d.a11y.Interfaces(ctx, e.obj)
	if err != nil {
		return "", err
	}
	// A spin button is editable text too, but its number only changes
	// through Value.
	switch {
	case slices.Contains(ifaces, "Value"):
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return "", fmt.Errorf("%q is not a number, and %s holds a number", value, n.Role)
		}
		r, err := d.a11y.Value(ctx, e.obj)
		if err != nil {
			return "", err
		}
		if r.Max > r.Min && (f < r.Min || f > r.Max) {
			return "", fmt.Errorf("%v is outside %v–%v", f, r.Min, r.Max)
		}
		if err := d.a11y.SetValue(ctx, e.obj, f); err != nil {
			return "", err
		}
		return fmt.Sprintf("Set %s to %v.", e, f), nil
	case slices.Contains(ifaces, "EditableText"):
		if n.States.Has(atspi.StateReadOnly) || !n.States.Has(atspi.StateEditable) {
			return "", errors.New("the field is read-only")
		}
		if err := d.a11y.SetText(ctx, e.obj, value); err != nil {
			return "", err
		}
		return fmt.Sprintf("Set the text of %s.", e), nil
	case n.Role == "combo box" || n.Role == "list box" || n.Role == "list" || n.Role == "page tab list":
		v := value
		return d.selectItem(ctx, e, n, &v)
	}
	return "", fmt.Errorf("it holds no value to set: set_value works on text fields, spin buttons, sliders and combo boxes")
}

// selectItem selects the element, or, given name on a list or combo box,
// its item of that name.
func (d *Desktop) selectItem(ctx context.Context, e *refEntry, n *atspi.Node, name *string) (string, error) {
	if name != nil && *name != "" {
		tree, _, _ := d.a11y.Walk(ctx, e.obj, atspi.Limits{MaxDepth: 4, MaxNodes: 5000})
		var found *atspi.Node
		var names []string
		var visit func(k *atspi.Node)
		visit = func(k *atspi.Node) {
			if k != tree && (k.States.Has(atspi.StateSelectable) || strings.Contains(k.Role, "item") || k.Role == "page tab") {
				label := displayName(k)
				if strings.EqualFold(strings.TrimSpace(label), strings.TrimSpace(*name)) && found == nil {
					found = k
				}
				names = append(names, strconv.Quote(label))
			}
			for _, c := range k.Children {
				visit(c)
			}
		}
		visit(tree)
		if found == nil {
			return "", fmt.Errorf("it has no item named %q (items: %s)", *name, strings.Join(names[:min(len(names), 20)], ", "))
		}
		item := d.refs.give(e.app, found)
		if _, err := d.selectItem(ctx, item, found, nil); err != nil {
			return "", err
		}
		return fmt.Sprintf("Selected %q in %s.", *name, e), nil
	}
	// A menu item (a combo box's choice) is chosen by activating it;
	// other items through their container's Selection.
	if !strings.Contains(n.Role, "menu item") {
		if parent, err := d.a11y.Parent(ctx, e.obj); err == nil {
			if ifaces, err := d.a11y.Interfaces(ctx, parent); err == nil && slices.Contains(ifaces, "Selection") {
				if i, err := d.a11y.IndexInParent(ctx, e.obj); err == nil {
					if err := d.a11y.SelectChild(ctx, parent, i); err == nil {
						return fmt.Sprintf("Selected %s.", e), nil
					}
				}
			}
		}
	}
	name2, err := d.doNamed(ctx, e, false, "select", "click", "activate", "press")
	if err != nil {
		return "", err
	}
	if name2 == "" {
		return "", errors.New("it cannot be selected: it is not an item of a list, and offers no select or click action")
	}
	return fmt.Sprintf("Selected %s (its %q action).", e, name2), nil
}

func (d *Desktop) expand(ctx context.Context, e *refEntry, n *atspi.Node, open bool) (string, error) {
	verb := map[bool]string{true: "expanded", false: "collapsed"}[open]
	if !n.States.Has(atspi.StateExpandable) && n.Role != "combo box" {
		return "", errors.New("it cannot expand or collapse")
	}
	// A combo box says expanded only while its popup shows.
	if n.States.Has(atspi.StateExpanded) == open && (n.States.Has(atspi.StateExpandable) || !open) {
		return fmt.Sprintf("%s is already %s; nothing was done.", e, verb), nil
	}
	name, err := d.doNamed(ctx, e, true, "expand or contract", "expand or collapse", "activate", "toggle", "press", "click")
	if err != nil {
		return "", err
	}
	if name == "" {
		if err := d.clickCentre(ctx, e, n); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%s %s.", map[bool]string{true: "Expanded", false: "Collapsed"}[open], e), nil
}

// focus brings the element's window forward and gives it the keyboard
// focus: the way back after "target app lost focus".
func (d *Desktop) focus(ctx context.Context, e *refEntry) (string, error) {
	note := d.raise(e.app.PID)
	if err := d.a11y.GrabFocus(ctx, e.obj); err != nil {
		return "", err
	}
	return fmt.Sprintf("Focused %s.%s", e, note), nil
}

func (d *Desktop) scrollIntoView(ctx context.Context, e *refEntry) (string, error) {
	if err := d.a11y.ScrollTo(ctx, e.obj); err != nil {
		// Toolkits without ScrollTo scroll to the focused element.
		if ferr := d.a11y.GrabFocus(ctx, e.obj); ferr != nil {
			return "", fmt.Errorf("it could not be scrolled to (%v) or focused (%v)", err, ferr)
		}
		return fmt.Sprintf("Focused %s to bring it into view.", e), nil
	}
	return fmt.Sprintf("Scrolled %s into view.", e), nil
}
