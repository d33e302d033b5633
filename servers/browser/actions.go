package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// snapOptions are the page script's snapshot options.
type snapOptions struct {
	MaxNodes int    `json:"maxNodes"`
	MaxDepth int    `json:"maxDepth"`
	Viewport bool   `json:"viewport"`
	Root     string `json:"root"`
	URLs     bool   `json:"urls"`
	Next     int    `json:"next"`
}

// snapshot is the page script's answer.
type snapshot struct {
	Text      string `json:"text"`
	Next      int    `json:"next"`
	Shown     int    `json:"shown"`
	Total     int    `json:"total"`
	Truncated bool   `json:"truncated"`
}

// Default bounds of a snapshot: enough for an ordinary page whole, and a
// short look at what an action changed.
const (
	defaultMaxNodes = 400
	defaultMaxDepth = 30
	changeLines     = 40
	newPageLines    = 80
)

// snapshot takes a snapshot of the tab and records its refs.
func (t *Tab) snapshot(ctx context.Context, o snapOptions) (snapshot, error) {
	if o.MaxNodes <= 0 {
		o.MaxNodes = defaultMaxNodes
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = defaultMaxDepth
	}
	o.Next = t.b.nextRef
	cctx, cancel := t.callCtx(ctx, t.b.opts.ActionTimeout)
	defer cancel()
	var s snapshot
	if _, err := t.call(cctx, "snapshot", o, &s); err != nil {
		if o.Root != "" {
			return s, t.refError(o.Root, err)
		}
		return s, err
	}
	t.b.claimRefs(t, s.Next)
	if o.Root == "" && !o.Viewport {
		t.last = strings.Split(s.Text, "\n")
	}
	return s, nil
}

// findOptions are the page script's find options.
type findOptions struct {
	Text string `json:"text"`
	Role string `json:"role"`
	Name string `json:"name"`
	Max  int    `json:"max"`
	Next int    `json:"next"`
}

type found struct {
	Text    string `json:"text"`
	Matches int    `json:"matches"`
	Next    int    `json:"next"`
}

func (t *Tab) find(ctx context.Context, o findOptions) (found, error) {
	o.Next = t.b.nextRef
	cctx, cancel := t.callCtx(ctx, t.b.opts.ActionTimeout)
	defer cancel()
	var f found
	if _, err := t.call(cctx, "find", o, &f); err != nil {
		return f, err
	}
	t.b.claimRefs(t, f.Next)
	return f, nil
}

// line is the one snapshot line of a ref's element, for messages.
func (t *Tab) line(ctx context.Context, ref string) string {
	var s string
	if _, err := t.call(ctx, "line", ref, &s); err != nil {
		return ref
	}
	return strings.TrimPrefix(strings.TrimSpace(s), "- ")
}

// callOn runs a function on an element (this = the element) in Domo's
// world and decodes its JSON result.
func callOn[T any](ctx context.Context, obj runtime.RemoteObjectID, fn string, args ...any) (T, error) {
	var out T
	params := runtime.CallFunctionOnParams{FunctionDeclaration: fn, ObjectID: obj, ReturnByValue: new(true), AwaitPromise: new(true), Silent: new(true)}
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return out, err
		}
		params.Arguments = append(params.Arguments, &runtime.CallArgument{Value: b})
	}
	res, err := chromedp.Call(ctx, runtime.CallFunctionOn, params)
	if err != nil {
		return out, err
	}
	if res.ExceptionDetails != nil {
		return out, errors.New(excText(res.ExceptionDetails))
	}
	if res.Result != nil && len(res.Result.Value) > 0 {
		err = json.Unmarshal(res.Result.Value, &out)
	}
	return out, err
}

// elementState is what actions check before acting.
type elementState struct {
	Tag      string `json:"tag"`
	Type     string `json:"type"`
	Disabled bool   `json:"disabled"`
	Editable bool   `json:"editable"`
	Checked  *bool  `json:"checked"`
	Select   bool   `json:"select"`
	Multiple bool   `json:"multiple"`
	Nav      bool   `json:"nav"` // a link or a submit button: a click likely navigates
}

const stateFn = `function() {
  const tag = this.localName || '';
  const type = (this.getAttribute && (this.getAttribute('type') || '')).toLowerCase();
  const role = (this.getAttribute && this.getAttribute('role')) || '';
  let checked = null;
  if (tag === 'input' && (type === 'checkbox' || type === 'radio')) checked = this.checked;
  else if (/^(checkbox|radio|switch|menuitemcheckbox|menuitemradio)$/.test(role)) checked = this.getAttribute('aria-checked') === 'true';
  const textInput = tag === 'textarea' || (tag === 'input' && !/^(checkbox|radio|submit|button|reset|image|file|range|color|hidden)$/.test(type));
  const disabled = !!this.disabled || (this.closest && !!this.closest('[aria-disabled="true"],fieldset[disabled]'));
  const nav = (tag === 'a' && this.hasAttribute('href')) || (this.form && (type === 'submit' || type === 'image' || (tag === 'button' && type !== 'button' && type !== 'reset')));
  return {tag, type, disabled, nav: !!nav, editable: (textInput && !this.readOnly) || this.isContentEditable || role === 'textbox' || role === 'searchbox' || role === 'combobox' && textInput,
    checked, select: tag === 'select', multiple: !!this.multiple};
}`

func (t *Tab) state(ctx context.Context, obj runtime.RemoteObjectID) (elementState, error) {
	return callOn[elementState](ctx, obj, stateFn)
}

// element resolves ref and reads its state. With verb (e.g. "clicked") a
// disabled element is refused, saying it cannot be verb now.
func (t *Tab) element(ctx context.Context, ref, verb string) (runtime.RemoteObjectID, elementState, error) {
	obj, err := t.resolve(ctx, ref)
	if err != nil {
		return "", elementState{}, err
	}
	st, err := t.state(ctx, obj)
	if err != nil {
		return "", st, t.wrap(err)
	}
	if verb != "" && st.Disabled {
		return "", st, fmt.Errorf("%s is disabled: it cannot be %s now", t.line(ctx, ref), verb)
	}
	return obj, st, nil
}

// point scrolls an element into view and returns its centre in the
// viewport, iframes included.
func (t *Tab) point(ctx context.Context, obj runtime.RemoteObjectID) (float64, float64, error) {
	_, _ = chromedp.Call(ctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj})
	q, err := chromedp.Call(ctx, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj})
	if err != nil {
		return 0, 0, err
	}
	for _, quad := range q.Quads {
		if len(quad) < 8 {
			continue
		}
		var x, y float64
		for i := 0; i < 8; i += 2 {
			x += quad[i]
			y += quad[i+1]
		}
		x, y = x/4, y/4
		if quadArea(quad) >= 1 {
			return x, y, nil
		}
	}
	return 0, 0, errors.New("the element has no visible box")
}

func quadArea(q dom.Quad) float64 {
	var a float64
	for i := 0; i < 8; i += 2 {
		j := (i + 2) % 8
		a += q[i]*q[j+1] - q[j]*q[i+1]
	}
	if a < 0 {
		a = -a
	}
	return a / 2
}

// mouseButtons maps the tool's button names to the protocol's.
var mouseButtons = map[string]input.MouseButton{"": input.MouseButtonLeft, "left": input.MouseButtonLeft, "right": input.MouseButtonRight, "middle": input.MouseButtonMiddle}

// click clicks an element's centre like a person would; an element with no
// box (display: contents, say) gets a DOM click instead.
func (t *Tab) click(ctx context.Context, ref, button string, double bool, mods []string) error {
	obj, st, err := t.element(ctx, ref, "clicked")
	if err != nil {
		return err
	}
	mod, err := modifiers(mods)
	if err != nil {
		return err
	}
	if st.Nav {
		t.mu.Lock()
		t.expectNav = true
		t.mu.Unlock()
	}
	x, y, err := t.point(ctx, obj)
	if err != nil {
		_, err = callOn[any](ctx, obj, `function() { this.click(); }`)
		return t.wrap(err)
	}
	count := 1
	if double {
		count = 2
	}
	opts := []chromedp.MouseOption{chromedp.ButtonType(mouseButtons[button]), chromedp.ClickCount(count)}
	if mod != 0 {
		opts = append(opts, func(p *input.DispatchMouseEventParams) { p.Modifiers = int64(mod) })
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(x, y, opts...)); err != nil {
		return t.wrap(err)
	}
	return nil
}

// hover moves the mouse over an element.
func (t *Tab) hover(ctx context.Context, ref string) error {
	obj, err := t.resolve(ctx, ref)
	if err != nil {
		return err
	}
	x, y, err := t.point(ctx, obj)
	if err != nil {
		return fmt.Errorf("%s cannot be hovered: %v", t.line(ctx, ref), err)
	}
	return t.wrap(chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)))
}

const focusSelectFn = `function() {
  this.scrollIntoView({block: 'nearest', inline: 'nearest'});
  this.focus();
  if (this.isContentEditable) {
    const r = this.ownerDocument.createRange(); r.selectNodeContents(this);
    const s = this.ownerDocument.getSelection(); s.removeAllRanges(); s.addRange(r);
  } else if (typeof this.select === 'function') {
    this.select();
  }
  const a = this.ownerDocument.activeElement;
  return a === this || this.contains(a);
}`

// typeText replaces an editable element's text with text, then optionally
// presses Enter.
func (t *Tab) typeText(ctx context.Context, ref, text string, submit, slowly bool) error {
	obj, st, err := t.element(ctx, ref, "typed into")
	if err != nil {
		return err
	}
	if !st.Editable {
		return fmt.Errorf("%s is not a text field: type into a textbox, searchbox or editable element (use browser_select_option for a select, browser_click for a checkbox)", t.line(ctx, ref))
	}
	focused, err := callOn[bool](ctx, obj, focusSelectFn)
	if err != nil {
		return t.wrap(err)
	}
	if !focused {
		return fmt.Errorf("%s did not take the keyboard focus", t.line(ctx, ref))
	}
	switch {
	case text == "":
		err = chromedp.Do(ctx, chromedp.KeyEvent(kb.Delete))
	case slowly:
		err = chromedp.Do(ctx, chromedp.KeyEvent(text))
	default:
		_, err = chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: text})
	}
	if err != nil {
		return t.wrap(err)
	}
	if submit {
		return t.wrap(chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)))
	}
	return nil
}

const selectFn = `function(values) {
  if (this.localName !== 'select') return {error: 'not a select'};
  const opts = [...this.options];
  const norm = s => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const picked = [];
  for (const v of values) {
    const o = opts.find(o => o.value === v) || opts.find(o => norm(o.label) === norm(v)) || opts.find(o => norm(o.text).includes(norm(v)) && norm(v) !== '');
    if (!o) return {error: 'no option ' + JSON.stringify(v), options: opts.map(o => o.label || o.value).slice(0, 50)};
    if (o.disabled) return {error: 'option ' + JSON.stringify(o.label) + ' is disabled'};
    picked.push(o);
  }
  if (picked.length > 1 && !this.multiple) return {error: 'this select takes one option, not ' + picked.length};
  for (const o of opts) o.selected = picked.includes(o);
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {selected: picked.map(o => o.label || o.value)};
}`

type selectResult struct {
	Error    string   `json:"error"`
	Options  []string `json:"options"`
	Selected []string `json:"selected"`
}

// selectOptions picks options of a select by value or label.
func (t *Tab) selectOptions(ctx context.Context, ref string, values []string) ([]string, error) {
	obj, _, err := t.element(ctx, ref, "changed")
	if err != nil {
		return nil, err
	}
	r, err := callOn[selectResult](ctx, obj, selectFn, values)
	if err != nil {
		return nil, t.wrap(err)
	}
	switch {
	case r.Error == "not a select":
		return nil, fmt.Errorf("%s is not a select element: for a custom list, click it and then click the option", t.line(ctx, ref))
	case r.Error != "" && len(r.Options) > 0:
		return nil, fmt.Errorf("%s: %s; its options are: %s", t.line(ctx, ref), r.Error, strings.Join(r.Options, ", "))
	case r.Error != "":
		return nil, fmt.Errorf("%s: %s", t.line(ctx, ref), r.Error)
	}
	return r.Selected, nil
}

// setChecked makes a checkbox, radio or switch checked or not by clicking
// it when it is not so already.
func (t *Tab) setChecked(ctx context.Context, ref string, want bool) error {
	_, st, err := t.element(ctx, ref, "")
	if err != nil {
		return err
	}
	if st.Checked == nil {
		return fmt.Errorf("%s is not a checkbox, radio or switch", t.line(ctx, ref))
	}
	if *st.Checked == want {
		return nil
	}
	if !want && st.Type == "radio" {
		return fmt.Errorf("%s: a radio button is unchecked by checking another one of its group", t.line(ctx, ref))
	}
	return t.click(ctx, ref, "", false, nil)
}

// keyNames maps key names (Enter, ArrowDown, F5, ...) to chromedp's runes.
var keyNames = func() map[string]rune {
	m := map[string]rune{}
	for r, k := range kb.Keys {
		if k.Print && r != '\r' && r != '\t' {
			continue
		}
		m[strings.ToLower(k.Key)] = r
		if k.Code != "" {
			if _, ok := m[strings.ToLower(k.Code)]; !ok {
				m[strings.ToLower(k.Code)] = r
			}
		}
	}
	for name, r := range map[string]rune{"enter": '\r', "return": '\r', "tab": '\t', "esc": '\u001b', "space": ' ', "spacebar": ' ', "del": '\u007f', "up": 0, "down": 0} {
		if r == 0 {
			r = m["arrow"+name]
		}
		m[name] = r
	}
	return m
}()

var modifierNames = map[string]kb.Modifier{
	"alt": kb.ModifierAlt, "option": kb.ModifierAlt,
	"control": kb.ModifierCtrl, "ctrl": kb.ModifierCtrl,
	"meta": kb.ModifierMeta, "cmd": kb.ModifierMeta, "command": kb.ModifierMeta, "super": kb.ModifierMeta,
	"shift": kb.ModifierShift,
}

func modifiers(names []string) (kb.Modifier, error) {
	var m kb.Modifier
	for _, n := range names {
		v, ok := modifierNames[strings.ToLower(strings.TrimSpace(n))]
		if !ok {
			return 0, fmt.Errorf("unknown modifier %q: use Alt, Control, Meta or Shift", n)
		}
		m |= v
	}
	return m, nil
}

// parseKey reads "Enter", "a", "Control+Shift+K" into modifiers and a key.
func parseKey(s string) (kb.Modifier, rune, error) {
	parts := strings.Split(s, "+")
	if strings.HasSuffix(s, "++") || s == "+" {
		// "Control++" presses Control and the plus key.
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
		if s == "+" {
			parts = []string{"+"}
		}
	}
	key := parts[len(parts)-1]
	mod, err := modifiers(parts[:len(parts)-1])
	if err != nil {
		return 0, 0, err
	}
	if utf8.RuneCountInString(key) == 1 {
		r, _ := utf8.DecodeRuneInString(key)
		return mod, r, nil
	}
	r, ok := keyNames[strings.ToLower(key)]
	if !ok {
		return 0, 0, fmt.Errorf("unknown key %q: use a character or a key name such as Enter, Tab, Escape, Backspace, Delete, ArrowDown, PageUp, Home, End, F5, with modifiers as in Control+A", key)
	}
	return mod, r, nil
}

// pressKey presses a key (with modifiers) on whatever has the focus.
func (t *Tab) pressKey(ctx context.Context, key string) error {
	mod, r, err := parseKey(key)
	if err != nil {
		return err
	}
	var opts []chromedp.KeyOption
	if mod != 0 {
		opts = append(opts, func(p *input.DispatchKeyEventParams) { p.Modifiers = int64(mod) })
	}
	return t.wrap(chromedp.Do(ctx, chromedp.KeyEvent(string(r), opts...)))
}
