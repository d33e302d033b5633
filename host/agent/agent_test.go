package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/llm"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
	"github.com/domo-agent/domo/tests/fakellm"
)

// gate stands in for toolgate with the same contract: it answers each
// call from a table and records what it was asked.
type gate struct {
	mu      sync.Mutex
	tools   []mcpclient.Tool
	answers map[string]toolgate.Result
	calls   []toolgate.Call
	resets  int
	pol     policy.Config
}

func newGate(names ...string) *gate {
	g := &gate{answers: map[string]toolgate.Result{}}
	for _, n := range names {
		g.tools = append(g.tools, mcpclient.Tool{Name: n, Server: "files", Tool: mcp.NewTool(n, mcp.WithDescription("does "+n), mcp.WithString("path"))})
	}
	return g
}

func (g *gate) Call(ctx context.Context, c toolgate.Call) toolgate.Result {
	g.mu.Lock()
	g.calls = append(g.calls, c)
	res, ok := g.answers[c.Name]
	g.mu.Unlock()
	if c.Running != nil {
		c.Running()
	}
	if !ok {
		return toolgate.Result{Status: "ok", Text: "result of " + c.Name + " " + string(c.Args)}
	}
	return res
}

func (g *gate) Offered() []mcpclient.Tool { return g.tools }
func (g *gate) Policy() policy.Config     { return g.pol }
func (g *gate) Reset()                    { g.resets++ }

func newAgent(t *testing.T, g *gate, contextSize int, steps ...fakellm.Step) (*agent.Agent, *fakellm.Server) {
	t.Helper()
	fake := fakellm.New(t, steps...)
	c, err := llm.New(llm.Config{BaseURL: fake.URL, Model: fakellm.DefaultModel, ContextSize: contextSize})
	if err != nil {
		t.Fatal(err)
	}
	return agent.New(agent.Options{Model: c, Gate: g, Now: func() time.Time { return time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC) }}), fake
}

func text(s string) fakellm.Step { return fakellm.Step{Reply: fakellm.Reply{Content: s}} }

func call(name, args string) fakellm.Step {
	return fakellm.Step{Reply: fakellm.Reply{ToolCalls: []fakellm.Call{{ID: "c-" + name, Name: name, Arguments: args}}}}
}

func TestChatStreamsAndRemembers(t *testing.T) {
	g := newGate("read_text_file")
	a, fake := newAgent(t, g, 32768, text("Hello **there**."), text("You said hi."))
	var streamed strings.Builder
	res, err := a.Turn(context.Background(), "hi!", "", agent.Events{Content: func(s string) { streamed.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Route != agent.RouteChat || res.Answer != "Hello **there**." || streamed.String() != res.Answer {
		t.Errorf("turn 1: route %s answer %q streamed %q", res.Route, res.Answer, streamed.String())
	}
	if _, err := a.Turn(context.Background(), "what did I say?", agent.RouteChat, agent.Events{}); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs[0].Tools) != 0 {
		t.Errorf("a chat turn offered tools: %v", reqs[0].Tools)
	}
	second := reqs[1].Messages
	if len(second) != 4 || second[1].Content != "hi!" || second[2].Content != "Hello **there**." || second[3].Content != "what did I say?" {
		t.Errorf("second request does not carry the first turn: %+v", second)
	}
	if !strings.Contains(second[0].Content, "Saturday 21 November 2026") {
		t.Errorf("system prompt lacks the date: %q", second[0].Content)
	}
}

func TestToolLoop(t *testing.T) {
	tests := []struct {
		name  string
		first fakellm.Step
	}{
		{"native call", call("read_text_file", `{"path":"/tmp/a.txt"}`)},
		{"call printed as text", text(`<tool_call>{"name":"read_text_file","arguments":{"path":"/tmp/a.txt"}}</tool_call>`)},
		{"bare JSON call", text(`{"name":"read_text_file","arguments":{"path":"/tmp/a.txt"}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate("read_text_file", "write_file")
			a, fake := newAgent(t, g, 32768, tt.first, text("The file says hello."))
			var started, ended []string
			var streamed strings.Builder
			res, err := a.Turn(context.Background(), "read /tmp/a.txt", "", agent.Events{
				Content:   func(s string) { streamed.WriteString(s) },
				ToolStart: func(c agent.ToolCall) { started = append(started, c.Name) },
				ToolEnd:   func(c agent.ToolCall, r toolgate.Result) { ended = append(ended, r.Status) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Route != agent.RouteTools || res.Answer != "The file says hello." || res.Rounds != 2 {
				t.Errorf("got %+v", res)
			}
			if strings.Contains(streamed.String(), "read_text_file") {
				t.Errorf("the raw tool call reached the user: %q", streamed.String())
			}
			if len(g.calls) != 1 || g.calls[0].Name != "read_text_file" || !json.Valid(g.calls[0].Args) || !strings.Contains(string(g.calls[0].Args), "/tmp/a.txt") {
				t.Fatalf("gate calls: %+v", g.calls)
			}
			if len(started) != 1 || len(ended) != 1 || ended[0] != "ok" {
				t.Errorf("events: started %v ended %v", started, ended)
			}
			reqs := fake.Requests()
			if len(reqs[0].Tools) != 2 {
				t.Errorf("tools offered: %v", reqs[0].Tools)
			}
			last := reqs[1].Messages
			tool := last[len(last)-1]
			asked := last[len(last)-2]
			if tool.Role != "tool" || !strings.Contains(tool.Content, "result of read_text_file") ||
				len(asked.ToolCalls) != 1 || tool.ToolCallID != asked.ToolCalls[0].ID {
				t.Errorf("the result did not go back to the model paired with its call: %+v", last)
			}
		})
	}
}

func TestRouter(t *testing.T) {
	tests := []struct {
		name      string
		msg       string
		classify  string // the model's classification, when it is asked
		wantRoute agent.Route
	}{
		{"greeting", "hello!", "", agent.RouteChat},
		{"path", "what is in ~/notes/todo.md", "", agent.RouteTools},
		{"action", "list my downloads folder", "", agent.RouteTools},
		{"knowledge question", "what is the capital of France?", "", agent.RouteChat},
		{"unclear, model says chat", "quantum entanglement, in brief", `{"route":"chat"}`, agent.RouteChat},
		{"unclear, model says tools", "the invoices from march", `{"route":"tools"}`, agent.RouteTools},
		{"unclear, model talks", "the invoices from march", `I think tools`, agent.RouteTools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := []fakellm.Step{}
			if tt.classify != "" {
				steps = append(steps, fakellm.Step{
					Match: func(r fakellm.Request) bool { return r.ResponseFormat == "json_schema" && !r.Stream },
					Reply: fakellm.Reply{Content: tt.classify},
				})
			}
			steps = append(steps, text("answer"))
			a, _ := newAgent(t, newGate("read_text_file"), 32768, steps...)
			var why string
			res, err := a.Turn(context.Background(), tt.msg, "", agent.Events{Routed: func(_ agent.Route, w string) { why = w }})
			if err != nil {
				t.Fatal(err)
			}
			if res.Route != tt.wantRoute {
				t.Errorf("route %s (%s), want %s", res.Route, why, tt.wantRoute)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Run("summarize at the round limit", func(t *testing.T) {
		g := newGate("read_text_file")
		fake := fakellm.New(t)
		fake.SetFallback(fakellm.Reply{ToolCalls: []fakellm.Call{{Name: "read_text_file", Arguments: `{"path":"/x"}`}}})
		c, _ := llm.New(llm.Config{BaseURL: fake.URL, Model: fakellm.DefaultModel, ContextSize: 1 << 20})
		a := agent.New(agent.Options{Model: c, Gate: g})
		var limited []agent.LimitReached
		res, err := a.Turn(context.Background(), "read /x", "", agent.Events{
			Limit: func(ctx context.Context, l agent.LimitReached) agent.LimitChoice {
				limited = append(limited, l)
				if len(limited) == 1 {
					return agent.LimitContinue
				}
				return agent.LimitSummarize
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(limited) != 2 || limited[0].Rounds != 8 || limited[1].Rounds != 16 {
			t.Errorf("limits: %+v", limited)
		}
		if res.Stopped != "limit" || len(g.calls) != 16 {
			t.Errorf("stopped %q after %d calls", res.Stopped, len(g.calls))
		}
	})
	t.Run("abort", func(t *testing.T) {
		g := newGate("read_text_file")
		fake := fakellm.New(t)
		fake.SetFallback(fakellm.Reply{ToolCalls: []fakellm.Call{{Name: "read_text_file", Arguments: `{}`}}})
		c, _ := llm.New(llm.Config{BaseURL: fake.URL, Model: fakellm.DefaultModel, ContextSize: 1 << 20})
		a := agent.New(agent.Options{Model: c, Gate: g})
		res, err := a.Turn(context.Background(), "read /x", "", agent.Events{
			Limit: func(context.Context, agent.LimitReached) agent.LimitChoice { return agent.LimitAbort },
		})
		if err != nil || res.Stopped != "aborted" || len(g.calls) != 8 {
			t.Errorf("err %v stopped %q calls %d", err, res.Stopped, len(g.calls))
		}
	})
}

func TestCancel(t *testing.T) {
	t.Run("cancel at a prompt ends the turn", func(t *testing.T) {
		g := newGate("write_file")
		g.answers["write_file"] = toolgate.Result{Status: "denied", IsError: true, Cancel: true, Text: "cancelled"}
		a, fake := newAgent(t, g, 32768, call("write_file", `{"path":"/x"}`), text("next answer"))
		res, err := a.Turn(context.Background(), "write /x", "", agent.Events{})
		if err != nil || res.Stopped != "cancelled" {
			t.Fatalf("err %v, stopped %q", err, res.Stopped)
		}
		// The next turn's history pairs the cancelled call with a result.
		if _, err := a.Turn(context.Background(), "never mind", agent.RouteChat, agent.Events{}); err != nil {
			t.Fatal(err)
		}
		msgs := fake.Requests()[1].Messages
		var calls, results int
		for _, m := range msgs {
			calls += len(m.ToolCalls)
			if m.Role == "tool" {
				results++
			}
		}
		if calls != 1 || results != 1 {
			t.Errorf("history has %d calls and %d results: %+v", calls, results, msgs)
		}
	})
	t.Run("Ctrl-C during a slow first token", func(t *testing.T) {
		a, _ := newAgent(t, newGate(), 32768, fakellm.Step{Reply: fakellm.Reply{Content: "late", Delay: 30 * time.Second}})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		res, err := a.Turn(ctx, "hello there", agent.RouteChat, agent.Events{})
		if err != nil || res.Stopped != "cancelled" {
			t.Errorf("err %v stopped %q", err, res.Stopped)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("cancel took %s", d)
		}
	})
}

func TestHistoryIsCondensedNotDropped(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 40) // ~270 tokens
	var steps []fakellm.Step
	for range 3 {
		steps = append(steps, text("noted: "+long))
	}
	steps = append(steps,
		fakellm.Step{
			Match: func(r fakellm.Request) bool {
				return !r.Stream && strings.Contains(r.Messages[0].Content, "condense")
			},
			Reply: fakellm.Reply{Content: "The user shared three long notes about lorem ipsum."},
		},
		fakellm.Step{
			Match: func(r fakellm.Request) bool {
				return strings.Contains(r.Messages[0].Content, "three long notes")
			},
			Reply: fakellm.Reply{Content: "done"},
		},
	)
	a, _ := newAgent(t, newGate(), 2000, steps...)
	var notices []string
	for i := range 4 {
		_, err := a.Turn(context.Background(), "note "+long, agent.RouteChat, agent.Events{Notice: func(s string) { notices = append(notices, s) }})
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "condensed") {
		t.Errorf("notices: %q", notices)
	}
	turns, total := a.Usage()
	if len(turns) != 4 || total.Requests != 5 {
		t.Errorf("usage: %d turns, %d requests", len(turns), total.Requests)
	}
}

func TestNoModel(t *testing.T) {
	a := agent.New(agent.Options{Gate: newGate()})
	if _, err := a.Turn(context.Background(), "hi", "", agent.Events{}); !errors.Is(err, agent.ErrNoModel) {
		t.Errorf("err = %v, want ErrNoModel", err)
	}
}

func TestResetDropsHistoryAndGrants(t *testing.T) {
	g := newGate()
	a, fake := newAgent(t, g, 32768, text("one"), text("two"))
	a.Turn(context.Background(), "first", agent.RouteChat, agent.Events{})
	a.Reset()
	a.Turn(context.Background(), "second", agent.RouteChat, agent.Events{})
	if n := len(fake.Requests()[1].Messages); n != 2 || g.resets != 1 {
		t.Errorf("after reset: %d messages, %d gate resets", n, g.resets)
	}
}
