package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/tests/fakellm"
)

const teaPack = `1 memories for "what should I drink" (bm25):
[m12] preference · 2026-03-02 · The user prefers green tea over coffee. #drinks (0.82)`

// memoryGate is a gate with memory on and the memory server's recall and
// remember tools offered, next to a files tool.
func memoryGate() *gate {
	g := newGate("read_text_file")
	for _, n := range []string{"memory_recall", "memory_remember"} {
		g.tools = append(g.tools, mcpclient.Tool{Name: n, Server: "memory", Tool: mcp.NewTool(n, mcp.WithDescription("does "+n))})
	}
	g.pol.MemoryEnabled = true
	g.answers["memory_recall"] = toolgate.Result{Status: "ok", Text: teaPack}
	g.answers["memory_remember"] = toolgate.Result{Status: "ok", Text: "m20 created: ...\nm21 created: ..."}
	return g
}

func (g *gate) callsOf(name string) []toolgate.Call {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []toolgate.Call
	for _, c := range g.calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

func TestRecallGoesIntoTheSystemPrompt(t *testing.T) {
	g := memoryGate()
	a, fake := newAgent(t, g, 32768, text("Green tea, as you like it [m12]."), text("Still tea."))
	var started, ended []agent.ToolCall
	ev := agent.Events{
		ToolStart: func(c agent.ToolCall) { started = append(started, c) },
		ToolEnd:   func(c agent.ToolCall, _ toolgate.Result) { ended = append(ended, c) },
	}
	res, err := a.Turn(context.Background(), "what should I drink this morning?", agent.RouteChat, ev)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Memories, []string{"m12"}) {
		t.Errorf("memories = %v, want [m12]", res.Memories)
	}
	if len(res.Calls) != 0 {
		t.Errorf("the recall was counted among the model's calls: %+v", res.Calls)
	}
	calls := g.callsOf("memory_recall")
	if len(calls) != 1 || calls[0].Turn != 1 {
		t.Fatalf("recall calls: %+v", calls)
	}
	var args struct {
		Query string
		Limit int
	}
	if err := json.Unmarshal(calls[0].Args, &args); err != nil || args.Query != "what should I drink this morning?" || args.Limit != 5 {
		t.Errorf("recall args %s (%v)", calls[0].Args, err)
	}
	if len(started) != 1 || !started[0].ByHost || len(ended) != 1 || !ended[0].ByHost {
		t.Errorf("events: started %+v, ended %+v; want one call marked ByHost", started, ended)
	}
	system := fake.Requests()[0].Messages[0].Content
	if !strings.Contains(system, "What you remember about the user") || !strings.Contains(system, "[m12] preference") ||
		!strings.Contains(system, "The user prefers green tea over coffee.") {
		t.Errorf("the memories are not in the system prompt:\n%s", system)
	}

	// Each turn recalls for its own message; the memories of the last
	// turn do not linger.
	g.answers["memory_recall"] = toolgate.Result{Status: "ok", Text: `No memories match "and tomorrow".`}
	res, err = a.Turn(context.Background(), "and tomorrow?", agent.RouteChat, agent.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.callsOf("memory_recall")); n != 2 || len(res.Memories) != 0 {
		t.Errorf("second turn: %d recalls, memories %v", n, res.Memories)
	}
	if system := fake.Requests()[1].Messages[0].Content; strings.Contains(system, "What you remember") {
		t.Errorf("the first turn's memories stayed in the system prompt:\n%s", system)
	}
}

func TestRecallIsSkippedOrIgnored(t *testing.T) {
	tests := []struct {
		name      string
		msg       string
		setup     func(g *gate)
		wantCalls int
	}{
		{"memory off", "what should I drink?", func(g *gate) { g.pol.MemoryEnabled = false }, 0},
		{"memory server not running", "what should I drink?", func(g *gate) { g.tools = g.tools[:1] }, 0},
		{"small talk", "thanks!", nil, 0},
		{"too short", "ok?", nil, 0},
		{"denied", "what should I drink?", func(g *gate) {
			g.answers["memory_recall"] = toolgate.Result{Status: "denied", IsError: true, Text: "memory_recall needs permission"}
		}, 1},
		{"tool error", "what should I drink?", func(g *gate) {
			g.answers["memory_recall"] = toolgate.Result{Status: "ok", IsError: true, Text: "[m1] the database is locked"}
		}, 1},
		{"nothing found", "what should I drink?", func(g *gate) {
			g.answers["memory_recall"] = toolgate.Result{Status: "ok", Text: `No memories match "what should I drink?".`}
		}, 1},
		{"structured result with no memories", "what should I drink?", func(g *gate) {
			g.answers["memory_recall"] = toolgate.Result{Status: "ok", Text: "0 memories [m9]", Structured: map[string]any{"memories": []any{}}}
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := memoryGate()
			if tt.setup != nil {
				tt.setup(g)
			}
			a, fake := newAgent(t, g, 32768, text("An answer."))
			res, err := a.Turn(context.Background(), tt.msg, agent.RouteChat, agent.Events{})
			if err != nil || res.Answer != "An answer." {
				t.Fatalf("err %v, result %+v", err, res)
			}
			if n := len(g.callsOf("memory_recall")); n != tt.wantCalls {
				t.Errorf("%d recalls, want %d", n, tt.wantCalls)
			}
			if system := fake.Requests()[0].Messages[0].Content; strings.Contains(system, "What you remember") || len(res.Memories) != 0 {
				t.Errorf("memories %v went into the system prompt:\n%s", res.Memories, system)
			}
		})
	}
}

func TestRecallQueryOfALongMessageIsCut(t *testing.T) {
	g := memoryGate()
	a, _ := newAgent(t, g, 32768, text("ok"))
	long := strings.Repeat("é", 3000)
	if _, err := a.Turn(context.Background(), long, agent.RouteChat, agent.Events{}); err != nil {
		t.Fatal(err)
	}
	var args struct{ Query string }
	json.Unmarshal(g.callsOf("memory_recall")[0].Args, &args)
	if len(args.Query) == 0 || len(args.Query) > 1000 || !strings.HasPrefix(long, args.Query) {
		t.Errorf("query of %d bytes, want a prefix of at most 1000", len(args.Query))
	}
}

func TestCancelAtTheRecallPromptEndsTheTurn(t *testing.T) {
	g := memoryGate()
	g.answers["memory_recall"] = toolgate.Result{Status: "canceled", IsError: true, Cancel: true, Text: "cancelled"}
	a, fake := newAgent(t, g, 32768)
	res, err := a.Turn(context.Background(), "what should I drink?", "", agent.Events{})
	if err != nil || res.Stopped != "cancelled" {
		t.Errorf("err %v, stopped %q", err, res.Stopped)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the model got %d requests after the user cancelled", n)
	}
}

// notesStep answers the note-taking request, checking that it is the
// constrained, non-streamed one and that it carries the conversation.
func notesStep(t *testing.T, reply string) fakellm.Step {
	return fakellm.Step{
		Match: func(r fakellm.Request) bool {
			ok := !r.Stream && r.ResponseFormat == "json_schema" && len(r.Tools) == 0 &&
				strings.Contains(r.Messages[0].Content, "long-term memory") &&
				strings.Contains(r.Messages[1].Content, "user: my dog is called Biscuit")
			if !ok {
				t.Errorf("the notes request: %+v", r)
			}
			return ok
		},
		Reply: fakellm.Reply{Content: reply},
	}
}

const goodNotes = `{"summary":"The user talked about their dog Biscuit and asked for walk times.","facts":[
 {"text":"The user has a dog called Biscuit.","kind":"fact","importance":0.8,"tags":["Pets","#dog"]},
 {"text":"The user's bank password is hunter2.","kind":"fact","importance":1,"tags":[]},
 {"text":"  ","kind":"note","importance":0.1,"tags":[]},
 {"text":"The user walks Biscuit at 7am.","kind":"habit","importance":7,"tags":["dog","dog"]}
]}`

func TestRememberStoresSummaryAndFactsInOneCall(t *testing.T) {
	g := memoryGate()
	g.answers["memory_recall"] = toolgate.Result{Status: "ok", Text: "No memories match."}
	a, fake := newAgent(t, g, 32768, text("Mornings suit Biscuit."), notesStep(t, "```json\n"+goodNotes+"\n```"))
	if _, err := a.Turn(context.Background(), "my dog is called Biscuit; when should we walk?", agent.RouteChat, agent.Events{}); err != nil {
		t.Fatal(err)
	}
	var notices []string
	var started []agent.ToolCall
	got, err := a.Remember(context.Background(), agent.Events{
		Notice:    func(s string) { notices = append(notices, s) },
		ToolStart: func(c agent.ToolCall) { started = append(started, c) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || len(started) != 1 || !started[0].ByHost || started[0].Name != "memory_remember" {
		t.Errorf("events: notices %q, calls %+v", notices, started)
	}
	if got.Result.Status != "ok" || got.Summary == "" || len(got.Facts) != 2 {
		t.Errorf("remembered %+v", got)
	}
	calls := g.callsOf("memory_remember")
	if len(calls) != 1 {
		t.Fatalf("%d memory_remember calls, want one", len(calls))
	}
	var args struct {
		Memories []struct {
			Text, Kind, Source string
			Importance         *float64
			Tags               []string
		}
	}
	if err := json.Unmarshal(calls[0].Args, &args); err != nil {
		t.Fatal(err)
	}
	m := args.Memories
	if len(m) != 3 {
		t.Fatalf("memories sent: %s", calls[0].Args)
	}
	if m[0].Kind != "summary" || !strings.Contains(m[0].Text, "dog Biscuit") {
		t.Errorf("first memory is not the summary: %+v", m[0])
	}
	if m[1].Text != "The user has a dog called Biscuit." || m[1].Kind != "fact" || !slices.Equal(m[1].Tags, []string{"pets", "dog"}) {
		t.Errorf("fact: %+v", m[1])
	}
	if m[2].Kind != "fact" || m[2].Importance == nil || *m[2].Importance != 1 || !slices.Equal(m[2].Tags, []string{"dog"}) {
		t.Errorf("a fact with an unknown kind and importance was not cleaned: %+v", m[2])
	}
	for _, mem := range m {
		if !strings.Contains(mem.Source, "2026-11-21") {
			t.Errorf("source %q does not date the conversation", mem.Source)
		}
		if strings.Contains(mem.Text, "hunter2") {
			t.Errorf("a secret was sent to memory: %q", mem.Text)
		}
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("%d model requests, want the answer and the notes", n)
	}
}

func TestRememberSkipsOrFailsCleanly(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(g *gate)
		msgs        []string
		notes       string // the model's notes; "" when none are asked for
		wantSkipped bool
		wantErr     error
		wantCall    bool
	}{
		{name: "memory off", setup: func(g *gate) { g.pol.MemoryEnabled = false }, msgs: []string{"my dog is called Biscuit"}, wantSkipped: true},
		{name: "memory server not running", setup: func(g *gate) { g.tools = g.tools[:1] }, msgs: []string{"my dog is called Biscuit"}, wantSkipped: true},
		{name: "no turns", wantSkipped: true},
		{name: "small talk only", msgs: []string{"hi", "thanks!"}, wantSkipped: true},
		{name: "notes not JSON", msgs: []string{"my dog is called Biscuit"}, notes: "Sure! The user has a dog.", wantErr: agent.ErrBadNotes},
		{name: "nothing worth keeping", msgs: []string{"my dog is called Biscuit"}, notes: `{"summary":"","facts":[]}`},
		{name: "summary only", msgs: []string{"my dog is called Biscuit"}, notes: `{"summary":"A chat about a dog.","facts":[{"text":42}]}`, wantCall: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := memoryGate()
			if tt.setup != nil {
				tt.setup(g)
			}
			var steps []fakellm.Step
			for range tt.msgs {
				steps = append(steps, text("An answer."))
			}
			if tt.notes != "" {
				steps = append(steps, notesStep(t, tt.notes))
			}
			a, fake := newAgent(t, g, 32768, steps...)
			for _, m := range tt.msgs {
				if _, err := a.Turn(context.Background(), m, agent.RouteChat, agent.Events{}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := a.Remember(context.Background(), agent.Events{})
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if (got.Skipped != "") != tt.wantSkipped {
				t.Errorf("skipped %q, want skipped %v", got.Skipped, tt.wantSkipped)
			}
			if n := len(g.callsOf("memory_remember")); (n == 1) != tt.wantCall || n > 1 {
				t.Errorf("%d memory_remember calls, want a call: %v", n, tt.wantCall)
			}
			if want := len(steps); len(fake.Requests()) != want {
				t.Errorf("%d model requests, want %d", len(fake.Requests()), want)
			}
		})
	}
}

func TestRememberAfterADeniedCall(t *testing.T) {
	g := memoryGate()
	g.answers["memory_remember"] = toolgate.Result{Status: "denied", IsError: true, Text: "memory_remember needs permission: --allow memory.write"}
	a, _ := newAgent(t, g, 32768, text("Noted."), notesStep(t, goodNotes))
	if _, err := a.Turn(context.Background(), "my dog is called Biscuit", agent.RouteChat, agent.Events{}); err != nil {
		t.Fatal(err)
	}
	got, err := a.Remember(context.Background(), agent.Events{})
	if err != nil || !got.Result.IsError || !strings.Contains(got.Result.Text, "--allow memory.write") {
		t.Errorf("err %v, result %+v", err, got.Result)
	}
}
