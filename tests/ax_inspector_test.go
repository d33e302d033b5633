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
	"github.com/domo-agent/domo/tests/testenv"
)

var axTools = []string{
	"ax_action", "ax_find", "ax_get_ui_state", "ax_keyboard", "ax_list_apps", "ax_mouse_click", "ax_open_app",
	"ax_screenshot", "ax_type_text", "clipboard_read", "clipboard_write", "system_info",
}

// TestAxInspector drives domo-ax with the MCP Inspector CLI: its tools
// pass the Inspector's strict schema checks over stdio, and over
// Streamable HTTP one server reads our GTK test app on a private desktop
// and presses its button by the ref one call gave the next.
func TestAxInspector(t *testing.T) {
	bin := testenv.Binary(t, "domo-ax")
	out, code := inspect(t, []string{bin}, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\n%s", code, out)
	}
	if names := toolNames(t, out); !slices.Equal(names, axTools) {
		t.Errorf("tools = %v\nwant %v", names, axTools)
	}

	d := axtest.New(t, axtest.Options{WM: true})
	log := filepath.Join(t.TempDir(), "app.log")
	if _, err := d.Launch(axtest.Python, axtest.TestApp(), "--out", log); err != nil {
		t.Fatal(err)
	}
	addr := startHTTPServer(t, bin, "--http", "127.0.0.1:0", "--no-auth")
	target := []string{"--transport", "http", "--server-url", "http://" + addr + "/mcp"}

	var snap string
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(snap, `push button "Save"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the test app never showed:\n%s", snap)
		}
		time.Sleep(100 * time.Millisecond)
		out, _ := inspect(t, target, "--method", "tools/call", "--tool-name", "ax_get_ui_state", "--tool-args-json", `{"app":"domo-test-app"}`)
		snap, _ = inspectorResult(t, out)
	}
	m := regexp.MustCompile(`push button "Save" (@e\d+)`).FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no ref for Save:\n%s", snap)
	}
	browserCall(t, target, "ax_action", `{"ref":"`+m[1]+`","action":"focus"}`)
	got := browserCall(t, target, "ax_action", `{"ref":"`+m[1]+`","action":"press"}`)
	if !strings.Contains(got, `Pressed push button "Save"`) {
		t.Errorf("ax_action: %s", got)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), "saved name=") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the button's callback never ran: %q", b)
		}
	}
}
