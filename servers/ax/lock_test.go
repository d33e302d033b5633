//go:build linux

package ax

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/domo-agent/domo/servers/ax/axtest"
)

// TestContextLock moves the focus to another app's window between the
// snapshot and the action: the action is refused and the app unchanged.
func TestContextLock(t *testing.T) {
	d := axtest.New(t, axtest.Options{WM: true})
	_, c := newServer(t)
	a := startApp(t, d, c, "domo-test-app", "Domo Test App")
	b := startApp(t, d, c, "other-app", "Other App")

	snapA := call(t, c, "ax_get_ui_state", map[string]any{"app": a.name})
	saveA := refOf(t, snapA, `push button "Save"`)
	nameA := refOf(t, snapA, `text "Name"`)
	call(t, c, "ax_action", map[string]any{"ref": nameA, "action": "focus"})
	waitFor(t, a.name+" to own the focused window", func() bool {
		return strings.Contains(call(t, c, "ax_get_ui_state", map[string]any{"app": a.name}), "owns the focused window")
	})
	snapA = call(t, c, "ax_get_ui_state", map[string]any{"app": "focused"})
	if !strings.HasPrefix(snapA, `App "domo-test-app"`) {
		t.Fatalf("the focused app is not the test app:\n%s", snapA)
	}

	// Another app takes the focus, as a person clicking it would.
	snapB := call(t, c, "ax_get_ui_state", map[string]any{"app": b.name})
	call(t, c, "ax_action", map[string]any{"ref": refOf(t, snapB, `text "Name"`), "action": "focus"})
	waitFor(t, b.name+" to own the focused window", func() bool {
		return strings.Contains(call(t, c, "ax_get_ui_state", map[string]any{"app": b.name}), "owns the focused window")
	})
	// A's refs were taken again: A is the target app once more.
	call(t, c, "ax_find", map[string]any{"app": a.name, "name": "Save"})

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"ax_action", map[string]any{"ref": saveA, "action": "press"}},
		{"ax_action", map[string]any{"ref": nameA, "action": "set_value", "value": "should not land"}},
		{"ax_type_text", map[string]any{"ref": nameA, "text": "should not land"}},
		{"ax_keyboard", map[string]any{"keys": "ctrl+shift+t"}},
		{"ax_type_text", map[string]any{"text": "should not land"}},
		{"ax_mouse_click", map[string]any{"x": 100, "y": 100}},
	} {
		out := callErr(t, c, tc.tool, tc.args)
		if !strings.Contains(out, "target app lost focus") || !strings.Contains(out, `"other-app"`) {
			t.Errorf("%s %v: %s", tc.tool, tc.args, out)
		}
	}
	for _, app := range []*testApp{a, b} {
		for _, l := range app.lines() {
			if l != "ready" {
				t.Errorf("%s changed after refused input: %q", app.name, l)
			}
		}
	}

	// Focus brings A back, and input works again.
	call(t, c, "ax_action", map[string]any{"ref": nameA, "action": "focus"})
	call(t, c, "ax_action", map[string]any{"ref": saveA, "action": "press"})
	waitLog(t, a, "saved name=")
}

// TestStaleRef restarts the app: its old refs are stale, clearly.
func TestStaleRef(t *testing.T) {
	d := axtest.New(t, axtest.Options{WM: true})
	_, c := newServer(t)
	a := startApp(t, d, c, "domo-test-app", "Domo Test App")
	snap := call(t, c, "ax_get_ui_state", map[string]any{"app": a.name})
	save := refOf(t, snap, `push button "Save"`)
	a.kill()
	a = startApp(t, d, c, "domo-test-app", "Domo Test App")

	out := callErr(t, c, "ax_action", map[string]any{"ref": save, "action": "press"})
	if !strings.Contains(out, "stale") || !strings.Contains(out, "exited or restarted") || !strings.Contains(out, "ax_get_ui_state") {
		t.Errorf("an old ref: %s", out)
	}
	snap2 := call(t, c, "ax_get_ui_state", map[string]any{"app": a.name})
	if save2 := refOf(t, snap2, `push button "Save"`); save2 == save {
		t.Errorf("the restarted app's Save has the old ref %s", save)
	}
	if a.logged("saved name=") {
		t.Error("the restarted app was pressed through the stale ref")
	}
	for _, ref := range []string{"@e999999", "e0", "Save"} {
		out := callErr(t, c, "ax_action", map[string]any{"ref": ref})
		if !strings.Contains(out, "never given out") && !strings.Contains(out, "is not a ref") {
			t.Errorf("ref %q: %s", ref, out)
		}
	}
}

// TestHungApp blocks the app's main loop: reads come back partial within
// their time limit, while the app is still blocked.
func TestHungApp(t *testing.T) {
	d := axtest.New(t, axtest.Options{WM: true})
	_, c := newServer(t)
	a := startApp(t, d, c, "domo-test-app", "Domo Test App", "--freeze", "60")
	snap := call(t, c, "ax_get_ui_state", map[string]any{"app": a.name})
	save := refOf(t, snap, `push button "Save"`)
	if err := syscall.Kill(a.pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitLog(t, a, "freezing")

	out := call(t, c, "ax_get_ui_state", map[string]any{"app": "pid:" + strconv.Itoa(a.pid), "timeout_ms": 500})
	if !strings.Contains(out, "partial") || !strings.Contains(out, "main loop may be blocked") {
		t.Errorf("a hung app's tree:\n%s", out)
	}
	list := call(t, c, "ax_list_apps", nil)
	if !strings.Contains(list, "not answering") {
		t.Errorf("ax_list_apps with a hung app:\n%s", list)
	}
	out = callErr(t, c, "ax_action", map[string]any{"ref": save, "action": "press"})
	if !strings.Contains(out, "did not answer") {
		t.Errorf("pressing in a hung app: %s", out)
	}
	if a.logged("thawed") {
		t.Fatal("the app thawed before the reads came back: they were not bounded")
	}
}
