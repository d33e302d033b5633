//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/ax/axtest"
	"github.com/domo-agent/domo/tests/fakellm"
	"github.com/domo-agent/domo/tests/testenv"
)

// TestAxThroughTheHost: `domo ask` operates a real GTK app through
// domo-ax and the gate: the model reads the app, presses the button by the
// ref it was given, and the app's callback runs; the audit log holds both
// calls. Without --allow, the input group asks, and with no terminal to
// ask, nothing is pressed.
func TestAxThroughTheHost(t *testing.T) {
	d := axtest.New(t, axtest.Options{WM: true})
	log := filepath.Join(t.TempDir(), "app.log")
	if _, err := d.Launch(axtest.Python, axtest.TestApp(), "--out", log); err != nil {
		t.Fatal(err)
	}
	saved := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "saved name=")
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(log); strings.Contains(string(b), "ready") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the test app never started")
		}
	}
	fake := fakellm.New(t)
	h := newHostHome(t, fake.URL, map[string]any{
		"ax": map[string]any{"command": testenv.Binary(t, "domo-ax"), "args": []string{}},
	}, nil)
	reRef := regexp.MustCompile(`push button "Save" (@e\d+)`)
	press := fakellm.Step{Respond: func(r fakellm.Request) fakellm.Reply {
		m := reRef.FindStringSubmatch(toolResult(r))
		if m == nil {
			return fakellm.Reply{Content: "no Save button in: " + toolResult(r)}
		}
		return fakellm.Reply{ToolCalls: []fakellm.Call{{ID: "call_2", Name: "ax_action", Arguments: `{"ref":"` + m[1] + `","action":"press"}`}}}
	}}
	ask := "in the desktop app domo-test-app, press the Save button"
	read := llmToolCall("ax_get_ui_state", `{"app":"domo-test-app"}`)

	fake.Push(read, press, fakellm.Step{Respond: echoResult})
	out, errOut, code := h.run(t, "", "ask", "--allow", "screen", "--allow", "input", ask)
	if code != 0 || !strings.Contains(out, `Pressed push button "Save"`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	for deadline := time.Now().Add(10 * time.Second); saved() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the button's callback never ran")
		}
	}

	fake.Push(read, press, fakellm.Step{Respond: echoResult})
	out, _, _ = h.run(t, "", "ask", "--allow", "screen", ask)
	time.Sleep(300 * time.Millisecond)
	if !strings.Contains(out, "--allow input") || saved() != 1 {
		t.Errorf("without --allow input the button was pressed (%d times) or the model was not told why:\n%s", saved(), out)
	}

	want := []string{
		"session_start",
		"permission_decision ax_get_ui_state allow/policy", "tool_call_start ax_get_ui_state", "tool_call_end ax_get_ui_state ok",
		"permission_decision ax_action allow/policy", "tool_call_start ax_action", "tool_call_end ax_action ok",
		"session_start",
		"permission_decision ax_get_ui_state allow/policy", "tool_call_start ax_get_ui_state", "tool_call_end ax_get_ui_state ok",
		"permission_decision ax_action deny/no_terminal denied",
	}
	if got := h.events(t); !slices.Equal(got, want) {
		t.Errorf("audit events:\n got %q\nwant %q", got, want)
	}
}
