package toolgate_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
)

// toy is a real MCP server, served over Streamable HTTP in-process, whose
// tools count their runs so a test can tell whether a call reached it.
type toy struct {
	runs atomic.Int64
}

func (ty *toy) start(t *testing.T) string {
	s := server.NewMCPServer("toy", "1", server.WithToolCapabilities(false))
	count := func(h server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ty.runs.Add(1)
			return h(ctx, req)
		}
	}
	s.AddTool(mcp.NewTool("read", mcp.WithString("path", mcp.Required())),
		count(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("contents of " + req.GetString("path", "")), nil
		}))
	s.AddTool(mcp.NewTool("write", mcp.WithString("path", mcp.Required())),
		count(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("written"), nil
		}))
	s.AddTool(mcp.NewTool("remove", mcp.WithString("path", mcp.Required())),
		count(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("removed"), nil
		}))
	s.AddTool(mcp.NewTool("fail"),
		count(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("the disk is on fire"), nil
		}))
	s.AddTool(mcp.NewTool("slow", mcp.WithNumber("ms")),
		count(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms := req.GetFloat("ms", 10_000)
			if tok := req.Params.Meta; tok != nil && tok.ProgressToken != nil {
				srv := server.ServerFromContext(ctx)
				for i := 1; i <= 3; i++ {
					srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": tok.ProgressToken, "progress": float64(i), "total": 3.0, "message": "step",
					})
				}
			}
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				return mcp.NewToolResultText("slept"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}))
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(hs.Close)
	return hs.URL
}

// prompter answers from a script and records what it was asked.
type prompter struct {
	mu      sync.Mutex
	answers []policy.Answer
	reason  string
	err     error
	asked   []toolgate.Prompt
}

func (p *prompter) Ask(ctx context.Context, pr toolgate.Prompt) (policy.Answer, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, pr)
	if p.err != nil {
		return policy.AnswerDeny, "", p.err
	}
	if len(p.answers) == 0 {
		return policy.AnswerDeny, "", errors.New("prompter: no answer scripted")
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return a, p.reason, nil
}

type rig struct {
	gate      *toolgate.Gate
	toy       *toy
	log       *audit.Writer
	logPath   string
	persisted map[string]policy.GroupPolicy
}

type rigOptions struct {
	mode     policy.Mode
	prompter toolgate.Prompter
	allow    []string
	timeout  time.Duration
	groups   map[string]policy.GroupPolicy
	log      toolgate.Log
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	ty := &toy{}
	url := ty.start(t)
	servers := map[string]config.Server{"toy": {Type: "http", URL: url + "/mcp", Timeout: config.Duration(o.timeout)}}
	sup := mcpclient.Start(context.Background(), servers, mcpclient.Options{})
	t.Cleanup(sup.Close)
	if st := sup.Servers()[0]; st.State != mcpclient.StateReady {
		t.Fatalf("toy server: %s: %v", st.State, st.Err)
	}
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(logPath, audit.Options{Sync: audit.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	groups := map[string]policy.GroupPolicy{"toy.read": policy.PolicyAlways, "toy.write": policy.PolicyAsk, "toy.slow": policy.PolicyAlways}
	for g, p := range o.groups {
		groups[g] = p
	}
	mode := o.mode
	if mode == "" {
		mode = policy.ModeSmart
	}
	r := &rig{toy: ty, log: w, logPath: logPath, persisted: map[string]policy.GroupPolicy{}}
	var log toolgate.Log = w
	if o.log != nil {
		log = o.log
	}
	r.gate = toolgate.New(toolgate.Options{
		Servers: sup,
		Log:     log,
		Permissions: config.Permissions{
			Mode:   mode,
			Groups: groups,
			Catalog: map[string]config.CatalogEntry{
				"toy/read":   {Group: "toy.read", Risk: policy.RiskSafe},
				"toy/write":  {Group: "toy.write", Risk: policy.RiskCaution},
				"toy/remove": {Group: "toy.write", Risk: policy.RiskDestructive},
				"toy/fail":   {Group: "toy.read", Risk: policy.RiskSafe},
				"toy/slow":   {Group: "toy.slow", Risk: policy.RiskSafe},
			},
		},
		ServerConfig: servers,
		Prompter:     o.prompter,
		Persist: func(group string, p policy.GroupPolicy) error {
			r.persisted[group] = p
			return nil
		},
		Session: "test",
		Allow:   o.allow,
	})
	return r
}

func (r *rig) call(t *testing.T, name, args string) toolgate.Result {
	t.Helper()
	return r.gate.Call(context.Background(), toolgate.Call{Name: name, Args: json.RawMessage(args), Turn: 1})
}

// events returns the log's events as "kind/decided_by/status" strings and
// checks that the log verifies.
func (r *rig) events(t *testing.T) []string {
	t.Helper()
	rep, err := audit.Verify(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problem != nil {
		t.Fatalf("audit log does not verify: %+v", *rep.Problem)
	}
	var out []string
	err = audit.Query(r.logPath, audit.Filter{}, func(ev audit.Event) error {
		s := string(ev.Event)
		switch ev.Event {
		case audit.KindDecision:
			s += "/" + ev.Decision + "/" + ev.DecidedBy
			if ev.Status != "" {
				s += "/" + ev.Status
			}
		case audit.KindCallEnd:
			s += "/" + ev.Status
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGateOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		opts       rigOptions
		tool, args string
		wantStatus string
		wantText   string
		wantRuns   int64
		wantEvents []string
	}{
		{
			name: "allowed read runs", tool: "read", args: `{"path":"a.txt"}`,
			wantStatus: audit.StatusOK, wantText: "contents of a.txt", wantRuns: 1,
			wantEvents: []string{"permission_decision/allow/policy", "tool_call_start", "tool_call_end/ok"},
		},
		{
			name: "unknown tool names the closest", tool: "raed", args: `{}`,
			wantStatus: audit.StatusInvalid, wantText: `Closest tools: read`,
			wantEvents: []string{"permission_decision/deny/toolgate/invalid"},
		},
		{
			name: "arguments failing the schema do not run", tool: "read", args: `{"path":7}`,
			wantStatus: audit.StatusInvalid, wantText: "path: got number, want string",
			wantEvents: []string{"permission_decision/deny/toolgate/invalid"},
		},
		{
			name: "arguments that are not an object", tool: "read", args: `[1]`,
			wantStatus: audit.StatusInvalid, wantText: "must be a JSON object",
			wantEvents: []string{"permission_decision/deny/toolgate/invalid"},
		},
		{
			name: "arguments that are not JSON", tool: "read", args: `{"path": "a.txt"`,
			wantStatus: audit.StatusInvalid, wantText: "must be a JSON object",
			wantEvents: []string{"permission_decision/deny/toolgate/invalid"},
		},
		{
			name: "ask without a terminal denies with a hint", tool: "write", args: `{"path":"a"}`,
			wantStatus: audit.StatusDenied, wantText: "--allow toy.write",
			wantEvents: []string{"permission_decision/deny/no_terminal/denied"},
		},
		{
			name: "destructive without a terminal says it always asks", tool: "remove", args: `{"path":"a"}`,
			opts:       rigOptions{mode: policy.ModeAuto},
			wantStatus: audit.StatusDenied, wantText: "destructive tools ask before every call",
			wantEvents: []string{"permission_decision/deny/no_terminal/denied"},
		},
		{
			name: "off group is blocked without asking", tool: "write", args: `{"path":"a"}`,
			opts:       rigOptions{groups: map[string]policy.GroupPolicy{"toy.write": policy.PolicyOff}, prompter: &prompter{}},
			wantStatus: audit.StatusBlocked, wantText: "is not allowed",
			wantEvents: []string{"permission_decision/deny/policy/blocked"},
		},
		{
			name: "--allow grants the group", tool: "write", args: `{"path":"a"}`,
			opts:       rigOptions{allow: []string{"toy.write"}},
			wantStatus: audit.StatusOK, wantText: "written", wantRuns: 1,
			wantEvents: []string{"permission_decision/allow/policy", "tool_call_start", "tool_call_end/ok"},
		},
		{
			name: "tool error is an error end", tool: "fail", args: `{}`,
			wantStatus: audit.StatusError, wantText: "on fire", wantRuns: 1,
			wantEvents: []string{"permission_decision/allow/policy", "tool_call_start", "tool_call_end/error"},
		},
		{
			name: "timeout ends the call", tool: "slow", args: `{"ms":5000}`,
			opts:       rigOptions{timeout: 200 * time.Millisecond},
			wantStatus: audit.StatusTimeout, wantText: "timed out", wantRuns: 1,
			wantEvents: []string{"permission_decision/allow/policy", "tool_call_start", "tool_call_end/timeout"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.opts)
			res := r.call(t, tt.tool, tt.args)
			if res.Status != tt.wantStatus || !strings.Contains(res.Text, tt.wantText) {
				t.Errorf("got %s %q, want %s containing %q", res.Status, res.Text, tt.wantStatus, tt.wantText)
			}
			if res.IsError != (tt.wantStatus != audit.StatusOK) {
				t.Errorf("IsError = %v for status %s", res.IsError, res.Status)
			}
			// The toy server may still be finishing a timed-out call.
			time.Sleep(10 * time.Millisecond)
			if got := r.toy.runs.Load(); got != tt.wantRuns {
				t.Errorf("server ran the tool %d times, want %d", got, tt.wantRuns)
			}
			if got := r.events(t); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("events:\n got %q\nwant %q", got, tt.wantEvents)
			}
			if p, ok := tt.opts.prompter.(*prompter); ok && len(p.asked) > 0 {
				t.Errorf("asked %d times, want none", len(p.asked))
			}
		})
	}
}

func TestGatePrompts(t *testing.T) {
	t.Run("session answer covers the group until reset", func(t *testing.T) {
		p := &prompter{answers: []policy.Answer{policy.AnswerSession, policy.AnswerOnce}}
		r := newRig(t, rigOptions{prompter: p})
		for i := range 2 {
			if res := r.call(t, "write", `{"path":"a"}`); res.Status != audit.StatusOK {
				t.Fatalf("call %d: %s %s", i, res.Status, res.Text)
			}
		}
		if len(p.asked) != 1 {
			t.Fatalf("asked %d times, want 1", len(p.asked))
		}
		if a := p.asked[0]; a.Server != "toy" || a.Tool != "write" || a.Group != "toy.write" || string(a.Args) != `{"path":"a"}` {
			t.Errorf("prompt = %+v", a)
		}
		r.gate.Reset()
		r.call(t, "write", `{"path":"a"}`)
		if len(p.asked) != 2 {
			t.Errorf("after reset: asked %d times, want 2", len(p.asked))
		}
		want := []string{
			"permission_decision/allow/user", "tool_call_start", "tool_call_end/ok",
			"permission_decision/allow/policy", "tool_call_start", "tool_call_end/ok",
			"permission_decision/allow/user", "tool_call_start", "tool_call_end/ok",
		}
		if got := r.events(t); !slices.Equal(got, want) {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
	})
	t.Run("always is persisted and applies at once", func(t *testing.T) {
		p := &prompter{answers: []policy.Answer{policy.AnswerAlways}}
		r := newRig(t, rigOptions{prompter: p})
		r.call(t, "write", `{"path":"a"}`)
		r.call(t, "write", `{"path":"b"}`)
		if len(p.asked) != 1 {
			t.Errorf("asked %d times, want 1", len(p.asked))
		}
		if r.persisted["toy.write"] != policy.PolicyAlways {
			t.Errorf("persisted %v, want toy.write: always", r.persisted)
		}
	})
	t.Run("destructive asks every time, even after session", func(t *testing.T) {
		p := &prompter{answers: []policy.Answer{policy.AnswerSession, policy.AnswerOnce}}
		r := newRig(t, rigOptions{prompter: p, mode: policy.ModeAuto})
		r.call(t, "remove", `{"path":"a"}`)
		r.call(t, "remove", `{"path":"a"}`)
		if len(p.asked) != 2 || r.toy.runs.Load() != 2 {
			t.Errorf("asked %d times, ran %d; want 2 and 2", len(p.asked), r.toy.runs.Load())
		}
	})
	t.Run("deny passes the user's reason to the model", func(t *testing.T) {
		p := &prompter{answers: []policy.Answer{policy.AnswerDeny}, reason: "not that file"}
		r := newRig(t, rigOptions{prompter: p})
		res := r.call(t, "write", `{"path":"a"}`)
		if res.Status != audit.StatusDenied || !strings.Contains(res.Text, "not that file") || res.Cancel {
			t.Errorf("got %+v", res)
		}
		if r.toy.runs.Load() != 0 {
			t.Error("a denied call ran")
		}
	})
	t.Run("cancel ends the turn", func(t *testing.T) {
		p := &prompter{answers: []policy.Answer{policy.AnswerCancel}}
		r := newRig(t, rigOptions{prompter: p})
		if res := r.call(t, "write", `{"path":"a"}`); !res.Cancel || res.Status != audit.StatusCanceled {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("a prompter with no terminal denies with the hint", func(t *testing.T) {
		p := &prompter{err: toolgate.ErrNoTerminal}
		r := newRig(t, rigOptions{prompter: p})
		if res := r.call(t, "write", `{"path":"a"}`); !strings.Contains(res.Text, "--allow toy.write") {
			t.Errorf("got %+v", res)
		}
	})
}

func TestGateCancelAndProgress(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	var progress atomic.Int64
	running := make(chan struct{})
	go func() {
		<-running
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	res := r.gate.Call(ctx, toolgate.Call{
		Name: "slow", Args: json.RawMessage(`{"ms":10000}`),
		Progress: func(mcpclient.Progress) { progress.Add(1) },
		Running:  func() { close(running) },
	})
	if res.Status != audit.StatusCanceled {
		t.Errorf("status %s %q, want canceled", res.Status, res.Text)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancel took %s", d)
	}
	if progress.Load() == 0 {
		t.Error("no progress notification reached the caller")
	}
	want := []string{"permission_decision/allow/policy", "tool_call_start", "tool_call_end/canceled"}
	if got := r.events(t); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

// brokenLog fails every append, as a full disk would.
type brokenLog struct{}

func (brokenLog) Append(audit.Event) (audit.Event, error) {
	return audit.Event{}, errors.New("no space left on device")
}

func TestGateRefusesToRunUnaudited(t *testing.T) {
	r := newRig(t, rigOptions{log: brokenLog{}})
	res := r.call(t, "read", `{"path":"a"}`)
	if !res.IsError || !strings.Contains(res.Text, "audit log") {
		t.Errorf("got %+v", res)
	}
	if r.toy.runs.Load() != 0 {
		t.Error("the call ran without being audited")
	}
}
