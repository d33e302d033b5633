package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/tests/fakellm"
	"github.com/domo-agent/domo/tests/testenv"
)

const (
	biscuitSays = "My dog is called Biscuit, and I prefer green tea to coffee."
	teaFact     = "The user prefers green tea to coffee."
	dogFact     = "The user has a dog called Biscuit."
)

// isNotes matches the request in which the model takes notes on a
// conversation for memory.
func isNotes(r fakellm.Request) bool {
	return !r.Stream && r.ResponseFormat == "json_schema" && strings.Contains(r.Messages[0].Content, "long-term memory")
}

// memoryServer is the config entry of domo-memory on db; started, when
// not empty, is a file the server's start creates, to tell whether domo
// started it at all.
func memoryServer(t *testing.T, db, started string) map[string]any {
	bin := testenv.Binary(t, "domo-memory")
	if started == "" {
		return map[string]any{"command": bin, "args": []string{"--db", db}}
	}
	return map[string]any{"command": "sh", "args": []string{"-c", `: > "$0"; shift; exec "$@"`, started, bin, "--db", db}}
}

// TestMemoryAcrossConversations: a piped `domo chat` is told two facts;
// when its input ends, the model's notes are stored through the gate in
// one memory_remember call. A later `domo ask`, another process, recalls
// them into its system prompt, and `domo call memory_list` shows them.
// Everything went through the audit log.
func TestMemoryAcrossConversations(t *testing.T) {
	fake := fakellm.New(t)
	db := filepath.Join(t.TempDir(), "memory.db")
	h := newHostHome(t, fake.URL, map[string]any{"memory": memoryServer(t, db, "")}, nil)

	fake.Push(
		fakellm.Step{Match: lastMessageIs("user", biscuitSays, false), Reply: fakellm.Reply{Content: "Noted: Biscuit, and green tea."}},
		fakellm.Step{
			Match: func(r fakellm.Request) bool {
				return isNotes(r) && strings.Contains(r.Messages[1].Content, biscuitSays)
			},
			Reply: fakellm.Reply{Content: `{"summary":"The user introduced their dog Biscuit and said which tea they like.","facts":[` +
				`{"text":"` + dogFact + `","kind":"fact","importance":0.7,"tags":["pets"]},` +
				`{"text":"` + teaFact + `","kind":"preference","importance":0.6,"tags":["drinks"]}]}`},
		},
	)
	out, errOut, code := h.run(t, "/chat "+biscuitSays+"\n", "chat", "--allow", "memory.write")
	if code != 0 {
		t.Fatalf("domo chat: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(out, "Remembered:") || !strings.Contains(out, "created") {
		t.Errorf("domo chat did not say what it remembered:\n%s", out)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Fatalf("the model got %d requests in the first conversation, want 2", n)
	}

	fake.Push(fakellm.Step{Match: lastMessageIs("user", "which tea do I prefer?", false), Reply: fakellm.Reply{Content: "Green tea [m3]."}})
	out, errOut, code = h.run(t, "", "ask", "--chat", "--json", "which tea do I prefer?")
	if code != 0 {
		t.Fatalf("domo ask: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	reqs := fake.Requests()
	system := reqs[len(reqs)-1].Messages[0].Content
	if !strings.Contains(system, teaFact) || !strings.Contains(system, "What you remember about the user") {
		t.Errorf("the second process's system prompt lacks the remembered fact:\n%s", system)
	}
	var res struct{ Memories []string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Memories) == 0 {
		t.Errorf("ask --json lists no recalled memories (%v): %s", err, out)
	}

	out, errOut, code = h.run(t, "", "call", "memory_list", `{"limit":20}`)
	if code != 0 || !strings.Contains(out, dogFact) || !strings.Contains(out, teaFact) || !strings.Contains(out, "dog Biscuit") {
		t.Errorf("memory_list: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	want := []string{
		"session_start",
		"permission_decision memory_recall allow/policy", "tool_call_start memory_recall", "tool_call_end memory_recall ok",
		"permission_decision memory_remember allow/policy", "tool_call_start memory_remember", "tool_call_end memory_remember ok",
		"session_start",
		"permission_decision memory_recall allow/policy", "tool_call_start memory_recall", "tool_call_end memory_recall ok",
		"session_start",
		"permission_decision memory_list allow/policy", "tool_call_start memory_list", "tool_call_end memory_list ok",
	}
	if got := h.events(t); !slices.Equal(got, want) {
		t.Errorf("audit events:\n got %q\nwant %q", got, want)
	}
}

// TestMemoryWriteAsksWithoutATerminal: with memory.write left at its
// default (ask) and no terminal to ask, the notes are not stored, the
// user is told why, and the denial is audited.
func TestMemoryWriteAsksWithoutATerminal(t *testing.T) {
	fake := fakellm.New(t,
		fakellm.Step{Match: lastMessageIs("user", biscuitSays, false), Reply: fakellm.Reply{Content: "Noted."}},
		fakellm.Step{Match: isNotes, Reply: fakellm.Reply{Content: `{"summary":"The user introduced their dog.","facts":[]}`}},
	)
	db := filepath.Join(t.TempDir(), "memory.db")
	h := newHostHome(t, fake.URL, map[string]any{"memory": memoryServer(t, db, "")}, nil)
	out, errOut, code := h.run(t, "/chat "+biscuitSays+"\n", "chat")
	if code != 0 || !strings.Contains(out, "Not remembered") || !strings.Contains(out, "memory.write") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if got := h.events(t); !slices.Contains(got, "permission_decision memory_remember deny/no_terminal denied") {
		t.Errorf("the denied memory_remember is not in the audit log: %q", got)
	}
}

// TestMemoryOff: with memory.enabled=false the memory server is not
// started, no memory tool is offered to the model or called, a
// conversation leaves nothing behind, and /memory says memory is off.
func TestMemoryOff(t *testing.T) {
	fake := fakellm.New(t)
	dir := t.TempDir()
	db, started := filepath.Join(dir, "memory.db"), filepath.Join(dir, "memory-started")
	h := newHostHome(t, fake.URL, map[string]any{"memory": memoryServer(t, db, started)}, map[string]any{
		"memory": map[string]any{"enabled": false},
	})

	fake.Push(
		fakellm.Step{Match: lastMessageIs("user", biscuitSays, false), Reply: fakellm.Reply{Content: "Noted."}},
		fakellm.Step{Match: lastMessageIs("user", "list the files in my sandbox", true), Reply: fakellm.Reply{Content: "Nothing to list."}},
	)
	out, errOut, code := h.run(t, "/chat "+biscuitSays+"\nlist the files in my sandbox\n/memory\n", "chat", "--allow", "memory.write")
	if code != 0 {
		t.Fatalf("domo chat: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(out, "memory is off") {
		t.Errorf("/memory did not say memory is off:\n%s", out)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2 (no notes for memory)", len(reqs))
	}
	tools := reqs[1].Tools
	if !slices.Contains(tools, "read_text_file") {
		t.Fatalf("the tool loop was offered %v", tools)
	}
	for _, name := range tools {
		if strings.HasPrefix(name, "memory_") {
			t.Errorf("memory tool %s was offered with memory off", name)
		}
	}
	for _, r := range reqs {
		if strings.Contains(r.Messages[0].Content, "What you remember") {
			t.Errorf("memories reached the system prompt with memory off")
		}
	}

	out, _, code = h.run(t, "", "servers", "--json")
	var servers []struct{ Name, State string }
	if err := json.Unmarshal([]byte(out), &servers); err != nil || code != 0 {
		t.Fatalf("servers: exit %d, %v: %s", code, err, out)
	}
	for _, s := range servers {
		if s.Name == "memory" && s.State != "disabled" {
			t.Errorf("memory server state %q with memory off, want disabled", s.State)
		}
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("domo started the memory server with memory off")
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the memory database was created with memory off")
	}
	err := audit.Query(h.log, audit.Filter{}, func(ev audit.Event) error {
		if ev.Server == "memory" || strings.HasPrefix(ev.Tool, "memory_") {
			t.Errorf("a memory event with memory off: %+v", ev)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
