package mcpkit_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// pipeClient speaks newline-delimited JSON-RPC to a server run by Run.
type pipeClient struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startPipe(t *testing.T, app mcpkit.App) *pipeClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &pipeClient{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		c.done <- app.Run(context.Background(), nil, inR, outW, io.Discard)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *pipeClient) send(msg string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, msg+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads the next message, failing after a few seconds.
func (c *pipeClient) next() map[string]any {
	c.t.Helper()
	type line struct {
		b   []byte
		err error
	}
	ch := make(chan line, 1)
	go func() {
		b, err := c.out.ReadBytes('\n')
		ch <- line{b, err}
	}()
	select {
	case l := <-ch:
		if l.err != nil {
			c.t.Fatalf("read: %v", l.err)
		}
		var m map[string]any
		if err := json.Unmarshal(l.b, &m); err != nil {
			c.t.Fatalf("server wrote a line that is not JSON: %q", l.b)
		}
		return m
	case <-time.After(5 * time.Second):
		c.t.Fatal("no message from the server within 5s")
	}
	return nil
}

func rootsApp(t *testing.T) mcpkit.App {
	rootsTool := mcpkit.NewTool("roots", "List the client's roots.", safe,
		func(ctx context.Context, req mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
			res, err := server.ServerFromContext(ctx).RequestRoots(ctx, mcp.ListRootsRequest{})
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return mcpkit.Text(strings.Join(uris, ",")), nil
		})
	return mcpkit.App{Name: "roots", Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
		s := testServer(t)
		srv, err := mcpkit.NewServer("roots", "", append(s.Tools, rootsTool))
		return srv, err
	}}
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"t","version":"0"}}}`

// TestStdioServerRequest checks that a tool waiting on the client's answer
// to roots/list gets it: the reader must keep reading while a tool runs.
func TestStdioServerRequest(t *testing.T) {
	c := startPipe(t, rootsApp(t))
	c.send(initMsg)
	if m := c.next(); m["id"] != float64(1) {
		t.Fatalf("initialize reply = %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	req := c.next()
	if req["method"] != "roots/list" {
		t.Fatalf("expected a roots/list request, got %v", req)
	}
	id, _ := json.Marshal(req["id"])
	c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}}`)
	res := c.next()
	if res["id"] != float64(2) || !strings.Contains(toJSON(res), "file:///a,file:///b") {
		t.Errorf("tool result = %v", res)
	}
}

// TestStdioConcurrentAndCancel runs a slow call, then a quick one and a
// cancellation of the slow one while it runs: the quick one must not wait.
func TestStdioConcurrentAndCancel(t *testing.T) {
	c := startPipe(t, rootsApp(t))
	c.send(initMsg)
	c.next()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"word":"slow"}}}`)
	c.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"word":"quick"}}}`)
	if m := c.next(); m["id"] != float64(11) {
		t.Fatalf("first reply = %v, want the quick call's (id 11)", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10,"reason":"test"}}`)
	start := time.Now()
	m := c.next()
	if m["id"] != float64(10) || !strings.Contains(toJSON(m), "cancelled") {
		t.Errorf("reply to the cancelled call = %v", m)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancelled call answered after %v", d)
	}
}

// TestStdioBadLines sends garbage: the server answers with a parse error
// and goes on serving.
func TestStdioBadLines(t *testing.T) {
	c := startPipe(t, rootsApp(t))
	c.send(`this is not json`)
	if m := c.next(); !strings.Contains(toJSON(m), "parse error") {
		t.Errorf("reply to garbage = %v", m)
	}
	c.send(initMsg)
	if m := c.next(); m["id"] != float64(1) {
		t.Errorf("initialize after garbage = %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`)
	if m := c.next(); m["error"] == nil {
		t.Errorf("unknown method reply = %v, want an error", m)
	}
}

// TestStdioAnswersEverythingBeforeExit closes the input right after a
// burst of calls: every call is still answered.
func TestStdioAnswersEverythingBeforeExit(t *testing.T) {
	c := startPipe(t, rootsApp(t))
	var b strings.Builder
	b.WriteString(initMsg + "\n")
	const n = 200
	for i := range n {
		b.WriteString(`{"jsonrpc":"2.0","id":` + itoa(100+i) + `,"method":"tools/call","params":{"name":"echo","arguments":{"word":"x"}}}` + "\n")
	}
	go func() {
		io.WriteString(c.in, b.String())
		c.in.Close()
	}()
	got := 0
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			break
		}
		if strings.Contains(string(line), `"result"`) {
			got++
		}
	}
	if got != n+1 {
		t.Errorf("%d replies, want %d", got, n+1)
	}
	if err := <-c.done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestStdioOversizedMessage sends a line over the message limit: it is
// refused, and the server goes on serving.
func TestStdioOversizedMessage(t *testing.T) {
	c := startPipe(t, rootsApp(t))
	go func() {
		big := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"word":"` + strings.Repeat("x", 65<<20) + `"}}}`
		c.send(big)
		c.send(initMsg)
	}()
	if m := c.next(); !strings.Contains(toJSON(m), "refused") {
		t.Errorf("reply to an oversized message = %.200v", m)
	}
	if m := c.next(); m["id"] != float64(1) {
		t.Errorf("initialize after an oversized message = %v", m)
	}
}
