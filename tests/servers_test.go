package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/domo-agent/domo/tests/testenv"
)

// TestDomoServersAndTools starts Domo's own servers and a third-party one
// from npm through the built domo binary: the ready ones list their tools
// with groups and decisions, a missing built-in server is absent rather
// than failed, and a broken entry is reported with its reason while the
// others start.
func TestDomoServersAndTools(t *testing.T) {
	home := t.TempDir()
	sandbox := filepath.Join(home, "sandbox")
	os.MkdirAll(sandbox, 0o755)
	everything := testenv.PeerServer(t, "server-everything")
	cfg := map[string]any{"mcpServers": map[string]any{
		"files":      map[string]any{"command": "domo-files", "args": []string{sandbox}},
		"memory":     map[string]any{"command": "domo-memory-not-built"},
		"everything": map[string]any{"command": everything[0], "args": everything[1:]},
		"broken":     map[string]any{"command": "sh", "args": []string{"-c", "echo cannot start: no such database >&2; exit 3"}},
		"unset":      map[string]any{"command": "x", "env": map[string]string{"TOKEN": "${DOMO_TEST_UNSET_TOKEN}"}},
	}}
	b, _ := json.Marshal(cfg)
	config := filepath.Join(home, "config", "domo", "config.json")
	os.MkdirAll(filepath.Dir(config), 0o700)
	os.WriteFile(config, b, 0o600)

	out, errOut, code := runDomo(t, home, "servers", "--json")
	if code != 0 {
		t.Fatalf("servers: exit %d: %s", code, errOut)
	}
	var servers []struct {
		Name, State string
		LastError   string `json:"last_error"`
		PID, Tools  int
	}
	if err := json.Unmarshal([]byte(out), &servers); err != nil {
		t.Fatal(err, out)
	}
	got := map[string]string{}
	for _, s := range servers {
		got[s.Name] = s.State
		switch s.Name {
		case "files", "everything":
			if s.State != "ready" || s.Tools == 0 || s.PID == 0 {
				t.Errorf("%s = %+v, want ready with tools and a pid", s.Name, s)
			}
		case "broken":
			if s.State != "failed" || !strings.Contains(s.LastError, "no such database") {
				t.Errorf("broken = %+v, want failed with its stderr tail", s)
			}
		case "unset":
			if s.State != "failed" || !strings.Contains(s.LastError, "${DOMO_TEST_UNSET_TOKEN} is not set") {
				t.Errorf("unset = %+v", s)
			}
		case "memory":
			if s.State != "failed" || !strings.Contains(s.LastError, "not found") {
				t.Errorf("a configured server with a missing binary = %+v, want failed", s)
			}
		}
	}
	if len(got) != 5 {
		t.Errorf("servers = %v", got)
	}
	// Every child died with domo: none still holds the sandbox open.
	if pids := processesMentioning(t, sandbox); len(pids) > 0 {
		t.Errorf("processes left running after domo exited: %v", pids)
	}

	out, _, code = runDomo(t, home, "tools", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	var tools []struct{ Name, Server, Group, Risk, Decision string }
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tl := range tools {
		seen[tl.Server] = true
		if tl.Server == "everything" && (tl.Group != "mcp.everything" || tl.Risk != "dangerous" || tl.Decision != "ask") {
			t.Errorf("a third-party tool = %+v, want group mcp.everything, dangerous, ask", tl)
		}
		if tl.Name == "read_text_file" && (tl.Group != "files.read" || tl.Decision != "allow") {
			t.Errorf("read_text_file = %+v", tl)
		}
	}
	if !seen["files"] || !seen["everything"] {
		t.Errorf("tools came from %v", seen)
	}
}

// processesMentioning lists the PIDs whose command line contains s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		testenv.Missing(t, "/proc", "the leftover-process check reads it")
	}
	var pids []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), s) {
			pids = append(pids, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return pids
}
