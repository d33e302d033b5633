//go:build linux

package ax

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/domo-agent/domo/servers/ax/axtest"
)

// TestWidgetFactory opens gtk3-widget-factory by its desktop entry and
// reads it.
func TestWidgetFactory(t *testing.T) {
	axtest.New(t, axtest.Options{WM: true})
	_, c := newServer(t)
	out := call(t, c, "ax_open_app", map[string]any{"name": "gtk3-widget-factory"})
	if !strings.Contains(out, "Started") || !strings.Contains(out, "target app") {
		t.Fatalf("ax_open_app: %s", out)
	}
	// ax_open_app starts apps in a session of their own: end this one.
	if m := regexp.MustCompile(`\(pid (\d+)`).FindStringSubmatch(out); m != nil {
		pid, _ := strconv.Atoi(m[1])
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	snap := call(t, c, "ax_get_ui_state", map[string]any{"app": "gtk3-widget-factory"})
	for _, want := range []string{`- frame [active]`, `radio button "Page 1" @e`, `page tab "page 1" @e`, `[selected]`, `push button "Close" @e`,
		`check box "checkbutton" @e`, `[disabled checked]`, `slider @e`, `spin button @e`, `: "50"`, `table cell "Andrea" @e`, `text @e`} {
		if !strings.Contains(snap, want) {
			t.Errorf("the widget factory's snapshot lacks %s", want)
		}
	}
	if n := strings.Count(snap, "\n"); n < 100 {
		t.Errorf("only %d lines:\n%s", n, snap)
	}
	// A page tab is selected through its list.
	tab := refOf(t, snap, `page tab "page 2"`)
	out = call(t, c, "ax_action", map[string]any{"ref": tab, "action": "select"})
	if !strings.Contains(out, "[selected]") {
		t.Errorf("selecting page 2 said: %s", out)
	}
	snap = call(t, c, "ax_get_ui_state", map[string]any{"app": "gtk3-widget-factory"})
	if !strings.Contains(snap, `page tab "page 2" `+tab+" [selected]") {
		t.Errorf("page 2 is not selected:\n%s", snap)
	}
}

// TestBadArguments: every tool answers bad input with an error a model can
// act on.
func TestBadArguments(t *testing.T) {
	axtest.New(t, axtest.Options{})
	_, c := newServer(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ax_action", map[string]any{"ref": "@e7"}, "never given out"},
		{"ax_action", map[string]any{"ref": "button"}, "is not a ref"},
		{"ax_action", map[string]any{"ref": "@e1", "action": "set_value"}, "needs value"},
		{"ax_action", map[string]any{"ref": "@e1", "action": "smash"}, "invalid arguments"},
		{"ax_action", map[string]any{}, "invalid arguments"},
		{"ax_keyboard", map[string]any{"keys": "ctrl+nosuchkey"}, "nosuchkey"},
		{"ax_keyboard", map[string]any{"keys": ""}, "invalid arguments"},
		{"ax_type_text", map[string]any{"text": ""}, "empty"},
		{"ax_type_text", map[string]any{"text": strings.Repeat("a", 10_001)}, "10,000"},
		{"ax_find", map[string]any{}, "at least one of role, name and value"},
		{"ax_get_ui_state", map[string]any{"app": "no-such-app"}, `no app named "no-such-app"`},
		{"ax_get_ui_state", map[string]any{"max_nodes": 0}, "invalid arguments"},
		{"ax_get_ui_state", map[string]any{"app": "pid:1"}, "no app with pid 1"},
		{"ax_get_ui_state", map[string]any{"unknown": 1}, "invalid arguments"},
		{"ax_screenshot", map[string]any{"ref": "@e1", "app": "x"}, "not both"},
		{"ax_screenshot", map[string]any{"format": "gif"}, "invalid arguments"},
		{"ax_mouse_click", map[string]any{"x": 5000, "y": 10}, "off the screen"},
		{"ax_mouse_click", map[string]any{"x": -1, "y": 10}, "invalid arguments"},
		{"ax_mouse_click", map[string]any{"x": 10, "y": 10, "button": "fourth"}, "invalid arguments"},
		{"ax_open_app", map[string]any{"name": ""}, "name is empty"},
		{"ax_open_app", map[string]any{"name": "no-such-app-anywhere"}, "no-such-app-anywhere"},
		{"clipboard_write", map[string]any{"text": strings.Repeat("x", 1<<20+1)}, "longer than 1 MiB"},
		{"clipboard_read", map[string]any{"selection": "secondary"}, "invalid arguments"},
	} {
		out := callErr(t, c, tc.tool, tc.args)
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s %v: %q lacks %q", tc.tool, tc.args, out, tc.want)
		}
	}
}

// TestOpenAppNeverUsesAShell: a name or argument carrying shell syntax is
// passed literally, never run.
func TestOpenAppNeverUsesAShell(t *testing.T) {
	axtest.New(t, axtest.Options{})
	_, c := newServer(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	for _, name := range []string{"true; touch " + marker, "$(touch " + marker + ")", "`touch " + marker + "`"} {
		callErr(t, c, "ax_open_app", map[string]any{"name": name})
	}
	out := call(t, c, "ax_open_app", map[string]any{"name": "true", "args": []any{"; touch " + marker, "$(touch " + marker + ")"}, "wait_seconds": 0})
	if !strings.Contains(out, "Started") {
		t.Errorf("starting true: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("shell syntax in a name or argument ran")
	}
}

// TestWayland: in a Wayland session the X11 tools say so, and the rest
// still work.
func TestWayland(t *testing.T) {
	axtest.New(t, axtest.Options{})
	t.Setenv("XDG_SESSION_TYPE", "wayland")
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	_, c := newServer(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"ax_keyboard", map[string]any{"keys": "Enter"}},
		{"ax_type_text", map[string]any{"text": "x"}},
		{"ax_mouse_click", map[string]any{"x": 1, "y": 1}},
		{"ax_screenshot", nil},
		{"clipboard_read", nil},
		{"clipboard_write", map[string]any{"text": "x"}},
	} {
		if out := callErr(t, c, tc.tool, tc.args); !strings.Contains(out, "Wayland") || !strings.Contains(out, "unsupported") {
			t.Errorf("%s on Wayland: %s", tc.tool, out)
		}
	}
	info := call(t, c, "system_info", nil)
	if !strings.Contains(info, "Session: wayland") || !strings.Contains(info, "Unsupported: this is a Wayland session") {
		t.Errorf("system_info on Wayland:\n%s", info)
	}
	call(t, c, "ax_list_apps", nil)
}
