package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/tests/testenv"
)

// runDomo runs the built domo binary with a private XDG environment.
func runDomo(t *testing.T, home string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runDomoWith(t, home, nil, nil, args...)
}

// runDomoWith runs the built domo with home as its HOME and XDG
// directories, env added, and stdin as its input (nil: none).
func runDomoWith(t *testing.T, home string, env []string, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t, "domo"), args...)
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"),
		"DOMO_CONFIG=", "DOMO_AUDIT_LOG=",
	)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, stdin
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestDomoAuditBinary reviews a log at the default XDG location through
// the built binary: listing, verify's exit status on an intact and on a
// tampered log, and the config file that permissions writes.
func TestDomoAuditBinary(t *testing.T) {
	home := t.TempDir()
	log := filepath.Join(home, "state", "domo", "audit.jsonl")
	w, err := audit.Open(log, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, tool := range []string{"read_text_file", "write_file", "read_text_file"} {
		ev := audit.Event{Session: "s1", Server: "files", Tool: tool, Call: string(rune('a' + i))}
		ev.Event, ev.Decision, ev.DecidedBy = audit.KindDecision, "allow", "policy"
		w.Append(ev)
		ev.Decision, ev.DecidedBy = "", ""
		ev.Event, ev.Args = audit.KindCallStart, json.RawMessage(`{"path":"a.txt","token":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}`)
		w.Append(ev)
		ev.Args = nil
		ev.Event, ev.Status, ev.DurationMS = audit.KindCallEnd, audit.StatusOK, 4
		w.Append(ev)
	}
	w.Close()

	out, errOut, code := runDomo(t, home, "audit", "--tool", "write_file", "--since", "1h")
	if code != 0 || strings.Count(out, "files/write_file") != 3 {
		t.Errorf("audit --tool write_file (exit %d):\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "ghp_") {
		t.Errorf("a token reached the listing:\n%s", out)
	}
	out, _, code = runDomo(t, home, "audit", "verify")
	if code != 0 || !strings.HasPrefix(out, "intact: 9 events") {
		t.Errorf("verify (exit %d): %s", code, out)
	}

	b, _ := os.ReadFile(log)
	lines := bytes.SplitAfter(b, []byte("\n"))
	os.WriteFile(log, bytes.Join(append(lines[:4:4], lines[5:]...), nil), 0o600)
	out, _, code = runDomo(t, home, "audit", "verify")
	if code != 1 || !strings.Contains(out, "DAMAGED at seq 5: dropped") {
		t.Errorf("verify of a log missing seq 5 (exit %d): %s", code, out)
	}
	out, _, code = runDomo(t, home, "audit", "verify", "--json")
	var rep struct {
		Intact  bool
		Problem struct {
			Seq    uint64
			Damage string
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.Intact || rep.Problem.Seq != 5 || rep.Problem.Damage != "dropped" {
		t.Errorf("verify --json (exit %d, %v): %s", code, err, out)
	}

	if _, errOut, code := runDomo(t, home, "permissions", "set", "web", "off"); code != 0 {
		t.Fatalf("permissions set: %s", errOut)
	}
	cfg := filepath.Join(home, "config", "domo", "config.json")
	if b, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(b), `"web": "off"`) {
		t.Errorf("config at %s: %s %v", cfg, b, err)
	}
	out, _, _ = runDomo(t, home, "permissions")
	if !strings.Contains(out, "web/web_search") || !strings.Contains(out, "group web is off") {
		t.Errorf("permissions after set web off:\n%s", out)
	}
	if _, errOut, code := runDomo(t, home, "audit", "--since", "soon"); code != 2 || !strings.Contains(errOut, "want an age") {
		t.Errorf("a usage error exits 2 with a hint: %d %s", code, errOut)
	}
}
