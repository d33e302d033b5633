package mcpkit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

var safe = mcpkit.Annotations{ReadOnly: mcpkit.Yes, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}

type echoArgs struct {
	Word  string `json:"word" jsonschema:"a word"`
	Times int    `json:"times,omitempty" jsonschema:"how often"`
}

func (a *echoArgs) Validate() error {
	if a.Word == "forbidden" {
		return errors.New("the word 'forbidden' is not allowed: pick another")
	}
	return nil
}

func testServer(t *testing.T) *mcpkit.Server {
	t.Helper()
	echo := mcpkit.NewTool("echo", "Echo a word.", safe,
		func(ctx context.Context, req mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, error) {
			switch in.Word {
			case "panic":
				panic("boom")
			case "fail":
				return nil, errors.New("failed on purpose: try another word")
			case "slow":
				for i := range 5 {
					mcpkit.Progress(ctx, req, float64(i+1), 5, "step")
				}
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(10 * time.Second):
				}
			}
			return mcpkit.Text(strings.Repeat(in.Word, max(in.Times, 1))), nil
		},
		mcpkit.Title("Echo"),
		mcpkit.InputSchema(func(s *jsonschema.Schema) {
			one := 1.0
			s.Properties["times"].Minimum = &one
		}),
	)
	type out struct {
		N int `json:"n"`
	}
	count := mcpkit.NewTool("count", "Count.", safe,
		func(ctx context.Context, req mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
			return mcpkit.Structured("3", out{N: 3}), nil
		}, mcpkit.Output[out](nil))
	s, err := mcpkit.NewServer("test", "", []mcpkit.Tool{echo, count})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestToolCalls(t *testing.T) {
	c := mcpkittest.Client(t, testServer(t))
	tests := []struct {
		name    string
		tool    string
		args    any
		isError bool
		want    string
	}{
		{name: "ok", tool: "echo", args: map[string]any{"word": "hi", "times": 2}, want: "hihi"},
		{name: "missing required", tool: "echo", args: map[string]any{}, isError: true, want: "missing property 'word'"},
		{name: "no arguments at all", tool: "echo", args: nil, isError: true, want: "missing property 'word'"},
		{name: "wrong type", tool: "echo", args: map[string]any{"word": 3}, isError: true, want: "word: got number, want string"},
		{name: "below minimum", tool: "echo", args: map[string]any{"word": "a", "times": 0}, isError: true, want: "times: minimum: got 0, want 1"},
		{name: "unknown argument", tool: "echo", args: map[string]any{"word": "a", "loud": true}, isError: true, want: "'loud' not allowed"},
		{name: "validate method", tool: "echo", args: map[string]any{"word": "forbidden"}, isError: true, want: "pick another"},
		{name: "handler error", tool: "echo", args: map[string]any{"word": "fail"}, isError: true, want: "failed on purpose: try another word"},
		{name: "panic is a tool error", tool: "echo", args: map[string]any{"word": "panic"}, isError: true, want: "internal error in echo: boom"},
		{name: "structured", tool: "count", args: map[string]any{}, want: "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mcpkittest.Call(t, c, tt.tool, tt.args)
			if res.IsError != tt.isError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tt.isError, mcpkittest.Text(res))
			}
			if got := mcpkittest.Text(res); !strings.Contains(got, tt.want) {
				t.Errorf("text = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestStructuredContent(t *testing.T) {
	c := mcpkittest.Client(t, testServer(t))
	res := mcpkittest.Call(t, c, "count", map[string]any{})
	m, ok := res.StructuredContent.(map[string]any)
	if !ok || m["n"] != float64(3) {
		t.Errorf("structured content = %#v, want {n: 3}", res.StructuredContent)
	}
}

func TestAnnotationsMustBeStated(t *testing.T) {
	h := func(ctx context.Context, req mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
		return nil, nil
	}
	tests := []struct {
		name string
		ann  mcpkit.Annotations
		want string
	}{
		{name: "none stated", ann: mcpkit.Annotations{}, want: "annotation ReadOnly is not stated"},
		{name: "one missing", ann: mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.No}, want: "annotation OpenWorld is not stated"},
		{name: "contradictory", ann: mcpkit.Annotations{ReadOnly: mcpkit.Yes, Destructive: mcpkit.Yes, Idempotent: mcpkit.No, OpenWorld: mcpkit.No}, want: "read-only tool cannot be destructive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcpkit.NewServer("x", "", []mcpkit.Tool{mcpkit.NewTool("t", "d", tt.ann, h)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewServer error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	t.Run("duplicate names", func(t *testing.T) {
		tool := mcpkit.NewTool("t", "d", safe, h)
		if _, err := mcpkit.NewServer("x", "", []mcpkit.Tool{tool, tool}); err == nil {
			t.Error("NewServer accepted two tools named t")
		}
	})
}

func TestCheckAnnotations(t *testing.T) {
	mcpkittest.CheckAnnotations(t, testServer(t))
}

func TestProgressAndCancel(t *testing.T) {
	var mu sync.Mutex
	var progress []float64
	s := testServer(t)
	c := mcpkittest.Client(t, s)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, n.Params.AdditionalFields["progress"].(float64))
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"word": "slow"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p1"}
	start := time.Now()
	res, err := c.CallTool(ctx, req)
	if err == nil && !(res.IsError && strings.Contains(mcpkittest.Text(res), "cancelled")) {
		t.Fatalf("slow call succeeded although its context ended: %+v", res)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancelled call took %v", time.Since(start))
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n == 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 5 || progress[4] != 5 {
		t.Errorf("progress notifications = %v, want 1..5", progress)
	}
}
