//go:build linux

package ax

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/ax/axtest"
	"github.com/domo-agent/domo/servers/ax/launch"
	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

func newServer(t testing.TB) (*Server, *client.Client) {
	t.Helper()
	d := New(Options{Apps: launch.DefaultFinder()})
	t.Cleanup(d.Close)
	s := NewServer(d)
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	return s, mcpkittest.Client(t, srv)
}

func call(t testing.TB, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	text, isErr := mcpkittest.CallText(t, c, name, args)
	if isErr {
		t.Fatalf("%s %v: %s", name, args, text)
	}
	return text
}

func callErr(t testing.TB, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	text, isErr := mcpkittest.CallText(t, c, name, args)
	if !isErr {
		t.Fatalf("%s %v should fail, got: %s", name, args, text)
	}
	return text
}

// testApp is one run of testdata/axapp.py.
type testApp struct {
	name, title, log string
	pid              int
	kill             func()
}

// startApp runs the test app on d and waits until it shows on the
// accessibility bus.
func startApp(t *testing.T, d *axtest.Desktop, c *client.Client, name, title string, extra ...string) *testApp {
	t.Helper()
	a := &testApp{name: name, title: title, log: filepath.Join(t.TempDir(), name+".log")}
	cmd, err := d.Launch(axtest.Python, append([]string{axtest.TestApp(), "--out", a.log, "--name", name, "--title", title}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	a.pid = cmd.Process.Pid
	a.kill = func() { axtest.Kill(cmd) }
	waitFor(t, "the app "+name+" on the accessibility bus", func() bool {
		text, isErr := mcpkittest.CallText(t, c, "ax_list_apps", nil)
		return !isErr && strings.Contains(text, `"`+name+`"`) && strings.Contains(text, title)
	})
	waitLog(t, a, "ready")
	return a
}

// waitFor polls cond for up to 15 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (a *testApp) lines() []string {
	b, _ := os.ReadFile(a.log)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func (a *testApp) logged(line string) bool {
	for _, l := range a.lines() {
		if l == line {
			return true
		}
	}
	return false
}

// waitLog waits until the app logs line: its callback ran.
func waitLog(t testing.TB, a *testApp, line string) {
	t.Helper()
	waitFor(t, a.name+" to log "+line, func() bool { return a.logged(line) })
}

// refOf finds the ref of the element on a line of a snapshot that starts
// with what, such as `push button "Save"`.
func refOf(t testing.TB, snapshot, what string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(what) + ` (@e\d+)`).FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("no ref for %s in:\n%s", what, snapshot)
	}
	return m[1]
}

// TestTestApp reads our GTK test app and acts on each kind of widget;
// each action must run the app's own callback.
func TestTestApp(t *testing.T) {
	d := axtest.New(t, axtest.Options{WM: true})
	_, c := newServer(t)
	a := startApp(t, d, c, "domo-test-app", "Domo Test App")

	snap := call(t, c, "ax_get_ui_state", map[string]any{"app": "domo-test-app"})
	t.Logf("snapshot:\n%s", snap)
	for _, want := range []string{`frame "Domo Test App"`, `label "Domo test app"`, `text "Name"`, `push button "Save"`,
		`check box "Subscribe"`, `combo box "Colour"`, `spin button "Volume"`, `: "20"`, `toggle button "Details"`,
		`push button "Disabled" @e`, `[disabled]`, `list item "Item 1" @e`, `list item "Item 40" @e`, `offscreen`} {
		if !strings.Contains(snap, want) {
			t.Errorf("the snapshot lacks %s", want)
		}
	}
	if strings.Contains(snap, "Hidden details") {
		t.Error("the snapshot shows the collapsed expander's content")
	}
	if strings.Contains(snap, "filler") || strings.Contains(snap, "viewport") {
		t.Error("the snapshot shows unnamed containers")
	}

	// press: the button's callback runs.
	save := refOf(t, snap, `push button "Save"`)
	out := call(t, c, "ax_action", map[string]any{"ref": save, "action": "press"})
	if !strings.Contains(out, `Pressed push button "Save"`) {
		t.Errorf("press said: %s", out)
	}
	waitLog(t, a, "saved name=")

	// set_value on the entry reads back.
	name := refOf(t, snap, `text "Name"`)
	out = call(t, c, "ax_action", map[string]any{"ref": name, "action": "set_value", "value": "Ada Lovelace"})
	if !strings.Contains(out, `Now: value "Ada Lovelace"`) {
		t.Errorf("set_value said: %s", out)
	}
	waitLog(t, a, "name=Ada Lovelace")

	// toggle: the state reads back checked.
	sub := refOf(t, snap, `check box "Subscribe"`)
	out = call(t, c, "ax_action", map[string]any{"ref": sub, "action": "toggle"})
	if !strings.Contains(out, "checked") {
		t.Errorf("toggle said: %s", out)
	}
	waitLog(t, a, "subscribe=True")

	// A spin button takes a number; a combo box an item's name.
	call(t, c, "ax_action", map[string]any{"ref": refOf(t, snap, `spin button "Volume"`), "action": "set_value", "value": "42"})
	waitLog(t, a, "volume=42")
	out = callErr(t, c, "ax_action", map[string]any{"ref": refOf(t, snap, `spin button "Volume"`), "action": "set_value", "value": "loud"})
	if !strings.Contains(out, "not a number") {
		t.Errorf("a word for a number: %s", out)
	}
	call(t, c, "ax_action", map[string]any{"ref": refOf(t, snap, `combo box "Colour"`), "action": "set_value", "value": "Green"})
	waitLog(t, a, "colour=Green")

	// expand, then expanding again changes nothing.
	det := refOf(t, snap, `toggle button "Details"`)
	call(t, c, "ax_action", map[string]any{"ref": det, "action": "expand"})
	waitLog(t, a, "details expanded=True")
	if out := call(t, c, "ax_action", map[string]any{"ref": det, "action": "expand"}); !strings.Contains(out, "already expanded") {
		t.Errorf("expanding twice said: %s", out)
	}

	// select an item out of sight.
	call(t, c, "ax_action", map[string]any{"ref": refOf(t, snap, `list item "Item 30"`), "action": "select"})
	waitLog(t, a, "selected=Item 30")

	// An element without an accessible action is clicked at its centre.
	out = call(t, c, "ax_action", map[string]any{"ref": refOf(t, snap, `panel "Click area"`), "action": "press"})
	if !strings.Contains(out, "at its centre") {
		t.Errorf("pressing the click area said: %s", out)
	}
	waitLog(t, a, "area clicked button=1")

	// A disabled button is refused.
	out = callErr(t, c, "ax_action", map[string]any{"ref": refOf(t, snap, `push button "Disabled"`), "action": "press"})
	if !strings.Contains(out, "disabled") {
		t.Errorf("pressing a disabled button: %s", out)
	}

	// Keys and typing reach the focused entry.
	call(t, c, "ax_action", map[string]any{"ref": name, "action": "set_value", "value": ""})
	out = call(t, c, "ax_type_text", map[string]any{"ref": name, "text": "héllo wörld"})
	if !strings.Contains(out, `It now holds "héllo wörld"`) {
		t.Errorf("type_text said: %s", out)
	}
	waitLog(t, a, "name=héllo wörld")
	call(t, c, "ax_keyboard", map[string]any{"keys": "ctrl+shift+t"})
	waitLog(t, a, "shortcut ctrl+shift+t")
	call(t, c, "ax_keyboard", map[string]any{"keys": "BackSpace", "repeat": 5})
	waitLog(t, a, "name=héllo ")
	call(t, c, "ax_keyboard", map[string]any{"keys": "Enter"})
	waitLog(t, a, "name activated=héllo ")

	// ax_find searches the whole tree.
	out = call(t, c, "ax_find", map[string]any{"role": "button", "name": "sav"})
	if got := refOf(t, out, `push button "Save"`); got != save {
		t.Errorf("ax_find gave %s for Save, the snapshot %s", got, save)
	}
	out = call(t, c, "ax_find", map[string]any{"name": "Item 3"})
	if !strings.Contains(out, `"Item 3"`) || !strings.Contains(out, `"Item 39"`) {
		t.Errorf("finding Item 3…: %s", out)
	}
	// A row is found as the snapshot shows it, with the same ref.
	out = call(t, c, "ax_find", map[string]any{"role": "list item", "name": "Item 30"})
	if got, want := refOf(t, out, `list item "Item 30"`), refOf(t, snap, `list item "Item 30"`); got != want || strings.Contains(out, "label") {
		t.Errorf("finding the row Item 30 gave %s, the snapshot %s:\n%s", got, want, out)
	}
	if out := call(t, c, "ax_find", map[string]any{"name": "no such thing"}); !strings.Contains(out, "No element") {
		t.Errorf("finding nothing: %s", out)
	}

	// interactive_only shows only elements with refs.
	only := call(t, c, "ax_get_ui_state", map[string]any{"interactive_only": true, "bounds": true})
	if strings.Contains(only, `label "Domo test app"`) || !strings.Contains(only, `push button "Save" `+save) {
		t.Errorf("interactive_only:\n%s", only)
	}
	if !regexp.MustCompile(`Save" @e\d+ \(\d+,\d+ \d+x\d+\)`).MatchString(only) {
		t.Errorf("bounds are missing:\n%s", only)
	}

	// Screenshots: the screen, and one element.
	res := mcpkittest.Call(t, c, "ax_screenshot", map[string]any{})
	img := decodePNG(t, res)
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1024 {
		t.Errorf("the screenshot is %v, want the screen's 1280x1024", b)
	}
	colours := map[uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 4 {
		for x := 0; x < img.Bounds().Dx(); x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 10 {
		t.Errorf("the screenshot is blank: %d colours", len(colours))
	}
	res = mcpkittest.Call(t, c, "ax_screenshot", map[string]any{"ref": save, "max_width": 200})
	if b := decodePNG(t, res).Bounds(); b.Dx() > 200 || b.Dy() > 40 {
		t.Errorf("the button's screenshot is %v", b)
	}

	// The clipboard, through the app: paste what we wrote, read what it copied.
	call(t, c, "clipboard_write", map[string]any{"text": "from domo ✓"})
	if got := call(t, c, "clipboard_read", nil); got != "from domo ✓" {
		t.Errorf("clipboard_read = %q", got)
	}
	call(t, c, "ax_action", map[string]any{"ref": name, "action": "set_value", "value": ""})
	call(t, c, "ax_keyboard", map[string]any{"keys": "ctrl+v", "ref": name})
	waitLog(t, a, "name=from domo ✓")
	call(t, c, "ax_action", map[string]any{"ref": name, "action": "set_value", "value": "copied text"})
	call(t, c, "ax_keyboard", map[string]any{"keys": "ctrl+a ctrl+c", "ref": name})
	waitFor(t, "the copy to reach the clipboard", func() bool {
		text, _ := mcpkittest.CallText(t, c, "clipboard_read", nil)
		return text == "copied text"
	})

	// system_info describes this desktop.
	info := call(t, c, "system_info", nil)
	for _, want := range []string{"Session: x11", "Screen: 1280x1024", "Accessibility: available"} {
		if !strings.Contains(info, want) {
			t.Errorf("system_info lacks %q:\n%s", want, info)
		}
	}
}

func decodePNG(t *testing.T, res *mcp.CallToolResult) image.Image {
	t.Helper()
	if res.IsError {
		t.Fatalf("screenshot failed: %s", mcpkittest.Text(res))
	}
	for _, c := range res.Content {
		if ic, ok := c.(mcp.ImageContent); ok {
			if ic.MIMEType != "image/png" {
				t.Fatalf("the screenshot is %s", ic.MIMEType)
			}
			data, err := base64.StdEncoding.DecodeString(ic.Data)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no image in %v", res.Content)
	return nil
}
