package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/tests/fakellm"
	"github.com/domo-agent/domo/tests/testenv"
)

// askText heads every permission prompt (host/chat/prompt.go).
const askText = "Allow this tool call?"

// TestChatInTmux uses `domo chat` as a person would, in a terminal that
// tmux emulates, against the built binaries and a scripted model: a
// streamed answer appears a paragraph at a time, a permission prompt is
// answered "session", the second call of that group does not ask again,
// Ctrl-C cancels a slow tool, a stray interrupt between turns cancels
// nothing, and Ctrl-D leaves. The audit log then tells the same story.
func TestChatInTmux(t *testing.T) {
	testenv.RequireTool(t, "tmux", "Debian package tmux")
	domo := testenv.Binary(t, "domo")
	files := testenv.Binary(t, "domo-files")
	slow := testenv.Binary(t, "slowmcp")

	home := t.TempDir()
	sandbox := filepath.Join(home, "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		t.Fatal(err)
	}
	one, two := filepath.Join(sandbox, "one"), filepath.Join(sandbox, "two")

	const (
		para1 = "Hello from the fake model."
		para2 = "It streams its answer in small chunks, one paragraph at a time."
	)
	fake := fakellm.New(t,
		fakellm.Step{
			Match: lastMessageIs("user", "hello", false),
			Reply: fakellm.Reply{Content: para1 + "\n\n" + para2, ChunkSize: 3, ChunkDelay: 40 * time.Millisecond},
		},
		fakellm.Step{
			Match: lastMessageIs("user", one, true),
			Reply: fakellm.Reply{ToolCalls: []fakellm.Call{{ID: "call_one", Name: "create_directory", Arguments: pathArg(one)}}},
		},
		fakellm.Step{
			Match: resultOf("call_one"),
			Reply: fakellm.Reply{Content: "Created one.", ChunkSize: 4, ChunkDelay: 20 * time.Millisecond},
		},
		fakellm.Step{
			Match: lastMessageIs("user", two, true),
			Reply: fakellm.Reply{ToolCalls: []fakellm.Call{{ID: "call_two", Name: "create_directory", Arguments: pathArg(two)}}},
		},
		fakellm.Step{
			Match: resultOf("call_two"),
			Reply: fakellm.Reply{Content: "Created two.", ChunkSize: 4, ChunkDelay: 20 * time.Millisecond},
		},
		fakellm.Step{
			Match: lastMessageIs("user", "run the sleep tool", true),
			Reply: fakellm.Reply{ToolCalls: []fakellm.Call{{ID: "call_sleep", Name: "sleep", Arguments: `{"ms":30000}`}}},
		},
		fakellm.Step{
			Match: lastMessageIs("user", "thanks", false),
			Reply: fakellm.Reply{Content: "You are welcome."},
		},
	)

	cfg, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{
			"files": map[string]any{"command": files, "args": []string{sandbox}},
			"slow":  map[string]any{"command": slow},
		},
		"llm": map[string]any{"base_url": fake.URL, "model": "fake-model", "context_size": 32768},
	})
	config := filepath.Join(home, "config", "domo", "config.json")
	os.MkdirAll(filepath.Dir(config), 0o700)
	if err := os.WriteFile(config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}

	// Only this environment: a DOMO_LLM_BASE_URL or NO_COLOR of the
	// person running the tests must not reach domo.
	p := startTmux(t, home, "env", "-i",
		"PATH="+os.Getenv("PATH"),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"),
		"TERM=xterm-256color", "LANG=C.UTF-8",
		domo, "chat", "--allow", "mcp.slow")

	p.waitFor("the banner", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "/help for commands") && screenAtInput(s)
	})

	// 1. A streamed answer: the first paragraph shows while the second is
	// still arriving.
	p.typeLine("hello")
	p.waitFor("the first paragraph alone", 5*time.Second, func(s string) bool {
		return strings.Contains(s, para1) && !strings.Contains(s, "one paragraph at a time")
	})
	p.waitFor("the whole answer", 5*time.Second, func(s string) bool {
		return strings.Contains(s, para2) && screenAtInput(s)
	})

	// 2. The first write asks; "session" allows it and the group for the
	// rest of the session.
	p.typeLine("create the directory " + one)
	p.waitFor("the permission prompt", 5*time.Second, func(s string) bool {
		return strings.Contains(s, askText) && strings.Contains(s, "[s] this session (group files.write)")
	})
	p.typeLine("s")
	p.waitFor("the answer after the first call", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "Created one.") && screenAtInput(s)
	})
	if fi, err := os.Stat(one); err != nil || !fi.IsDir() {
		t.Errorf("%s was not created: %v", one, err)
	}

	// 3. The second write of the same group runs without asking.
	p.typeLine("create the directory " + two)
	s := p.waitFor("the answer after the second call", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "Created two.") && screenAtInput(s)
	})
	if n := strings.Count(s, askText); n != 1 {
		t.Errorf("the permission prompt was shown %d times, want once (the session grant should cover the second call):\n%s", n, s)
	}
	if fi, err := os.Stat(two); err != nil || !fi.IsDir() {
		t.Errorf("%s was not created: %v", two, err)
	}

	// 4. Ctrl-C cancels a slow tool while it reports progress.
	p.typeLine("run the sleep tool")
	p.waitFor("the sleep tool's progress", 10*time.Second, func(s string) bool {
		return strings.Contains(screenLastLine(s), "sleep · ") && strings.Contains(screenLastLine(s), "sleeping")
	})
	cancelled := time.Now()
	p.keys("C-c")
	p.waitFor("(cancelled)", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "(cancelled)") && screenAtInput(s)
	})
	if d := time.Since(cancelled); d > 3*time.Second {
		t.Errorf("Ctrl-C took %v to cancel the sleep tool", d)
	}

	// 5. An interrupt that arrives while no turn runs (Ctrl-C during
	// startup or a slash command, when the terminal is not raw) does not
	// cancel the next turn.
	out, err := p.tmux("display-message", "-p", "-t", "domo", "#{pane_pid}")
	if err != nil {
		t.Fatalf("tmux display-message: %v\n%s", err, out)
	}
	if out, err := exec.Command("kill", "-INT", strings.TrimSpace(out)).CombinedOutput(); err != nil {
		t.Fatalf("kill -INT domo: %v\n%s", err, out)
	}
	p.typeLine("thanks")
	s = p.waitFor("the answer after a stray interrupt", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "You are welcome.") && screenAtInput(s)
	})
	if n := strings.Count(s, "(cancelled)"); n != 1 {
		t.Errorf("(cancelled) shown %d times, want once: a stray interrupt cancelled a later turn", n)
	}

	// 6. Ctrl-D at an empty line leaves, with status 0 and nothing said
	// after it.
	p.keys("C-d")
	status := p.waitExit(5 * time.Second)
	final := p.capture()
	t.Logf("the screen at the end (exit status %q):\n%s", status, final)
	if status != "" && status != "0" {
		t.Errorf("domo chat exited with status %s", status)
	}
	_, after, _ := strings.Cut(final, "› ^D\n")
	if said, _, _ := strings.Cut(strings.TrimSpace(after), "Pane is dead"); strings.TrimSpace(said) != "" {
		t.Errorf("domo chat said something as it left:\n%s", final)
	}
	if strings.Contains(final, "sleeping") || strings.Contains(final, "thinking") {
		t.Errorf("a spinner line was left on the screen:\n%s", final)
	}

	if n := len(fake.Requests()); n != 7 {
		t.Errorf("the model got %d requests, want 7", n)
	}

	// 7. The audit log tells the same story.
	log := filepath.Join(home, "state", "domo", "audit.jsonl")
	rep, err := audit.Verify(log)
	if err != nil || rep.Problem != nil {
		t.Fatalf("audit.Verify(%s) = %+v, %v", log, rep, err)
	}
	var events []audit.Event
	if err := audit.Query(log, audit.Filter{}, func(e audit.Event) error {
		events = append(events, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkChatAudit(t, events)
}

// checkChatAudit checks the events of the session in TestChatInTmux.
func checkChatAudit(t *testing.T, events []audit.Event) {
	t.Helper()
	type call struct {
		tool, decidedBy, end string
		started              bool
	}
	if len(events) == 0 || events[0].Event != audit.KindSession || events[0].Reason != "domo chat" {
		t.Errorf("the log does not begin with the session_start of domo chat: %+v", events)
	}
	calls := map[string]*call{}
	var order []string
	for _, e := range events {
		if e.Call == "" {
			continue
		}
		c := calls[e.Call]
		if c == nil {
			c = &call{tool: e.Tool}
			calls[e.Call] = c
			order = append(order, e.Call)
		}
		switch e.Event {
		case audit.KindDecision:
			c.decidedBy = e.DecidedBy
		case audit.KindCallStart:
			c.started = true
		case audit.KindCallEnd:
			c.end = e.Status
		}
	}
	var got []string
	for _, id := range order {
		c := calls[id]
		got = append(got, fmt.Sprintf("%s by %s started=%v end=%s", c.tool, c.decidedBy, c.started, c.end))
	}
	want := []string{
		"create_directory by user started=true end=ok",
		"create_directory by policy started=true end=ok",
		"sleep by policy started=true end=" + audit.StatusCanceled,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audited calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// lastMessageIs matches a request whose last message has role and content
// (contained in it, or equal), offering tools or not.
func lastMessageIs(role, content string, tools bool) func(fakellm.Request) bool {
	return func(r fakellm.Request) bool {
		if len(r.Messages) == 0 || (len(r.Tools) > 0) != tools {
			return false
		}
		m := r.Messages[len(r.Messages)-1]
		if tools {
			return m.Role == role && strings.Contains(m.Content, content)
		}
		return m.Role == role && m.Content == content
	}
}

// resultOf matches a request that brings back the successful result of
// the call id.
func resultOf(id string) func(fakellm.Request) bool {
	return func(r fakellm.Request) bool {
		if len(r.Messages) == 0 {
			return false
		}
		m := r.Messages[len(r.Messages)-1]
		return m.Role == "tool" && m.ToolCallID == id && !strings.Contains(m.Content, "denied")
	}
}

// pathArg is the arguments of a call on one path.
func pathArg(path string) string {
	b, _ := json.Marshal(map[string]string{"path": path})
	return string(b)
}

// tmuxPane is a tmux server with one session running a command in a
// 160×50 terminal.
type tmuxPane struct {
	t    *testing.T
	sock string
}

// startTmux starts argv in a new tmux server of its own, killed when the
// test ends. The pane stays after its command exits, so that its exit
// status can be read.
func startTmux(t *testing.T, dir string, argv ...string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{t: t, sock: filepath.Join(dir, "tmux.sock")}
	t.Cleanup(func() { p.tmux("kill-server") })
	args := append([]string{"new-session", "-d", "-s", "domo", "-x", "160", "-y", "50"}, argv...)
	args = append(args, ";", "set-option", "-t", "domo", "remain-on-exit", "on")
	if out, err := p.tmux(args...); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return p
}

// tmux runs one tmux command against the pane's server, with no user
// configuration.
func (p *tmuxPane) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", p.sock, "-f", "/dev/null"}, args...)...)
	env := []string{"LANG=C.UTF-8"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// capture returns the pane's whole history and screen as plain text,
// wrapped lines joined.
func (p *tmuxPane) capture() string {
	p.t.Helper()
	out, err := p.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "domo")
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// waitFor polls the pane until ok accepts what it shows, and returns that;
// it fails the test with the last capture after timeout.
func (p *tmuxPane) waitFor(what string, timeout time.Duration, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := p.capture()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited %v for %s; the pane shows:\n%s", timeout, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// typeLine types text and Enter.
func (p *tmuxPane) typeLine(text string) {
	p.t.Helper()
	if out, err := p.tmux("send-keys", "-t", "domo", "-l", text); err != nil {
		p.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
	p.keys("Enter")
}

// keys sends named keys, such as "Enter" or "C-c".
func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	if out, err := p.tmux(append([]string{"send-keys", "-t", "domo"}, keys...)...); err != nil {
		p.t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
}

// waitExit waits for the pane's command to exit and returns its exit
// status, or "" when tmux does not learn it: tmux 3.3 can close a pane
// whose command exited and never reap the process, which then stays a
// zombie with no status.
func (p *tmuxPane) waitExit(timeout time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	var dead time.Time
	for {
		out, err := p.tmux("display-message", "-p", "-t", "domo", "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}")
		if err != nil {
			p.t.Fatalf("tmux display-message: %v\n%s", err, out)
		}
		f := strings.Split(strings.TrimSpace(out), ":")
		switch {
		case len(f) != 3 || f[0] != "1":
			if time.Now().After(deadline) {
				p.t.Fatalf("domo chat did not exit within %v; the pane shows:\n%s", timeout, p.capture())
			}
		case f[2] != "":
			p.t.Fatalf("domo chat was killed by signal %s; the pane shows:\n%s", f[2], p.capture())
		case f[1] != "":
			return f[1]
		case dead.IsZero():
			dead = time.Now()
		case time.Since(dead) > time.Second:
			return ""
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenLastLine is the last line of s that shows something.
func screenLastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, " \n"), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// screenAtInput reports whether the pane waits for a line: its last line
// is the prompt alone.
func screenAtInput(s string) bool {
	return screenLastLine(s) == "›"
}
