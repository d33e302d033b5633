// Package mcpkittest owns the test helpers every server's tests share:
// an in-process client, tool calls with readable failures, the annotation
// check and the schema snapshots. It is imported only from _test files.
package mcpkittest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

var update = flag.Bool("update", false, "rewrite schema snapshots in testdata/")

// Client starts an in-process client for s and initializes it. Options such
// as client.WithRootsHandler shape what the client declares.
func Client(t testing.TB, s *mcpkit.Server, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(s.MCP, opts...)
	if err != nil {
		t.Fatalf("new in-process client: %v", err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "mcpkittest", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// Call calls tool name with args and fails the test on a protocol error.
// Tool errors come back as results with IsError set.
func Call(t testing.TB, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("call %s: protocol error: %v", name, err)
	}
	return res
}

// CallText calls a tool and returns its text and whether it is an error.
func CallText(t testing.TB, c *client.Client, name string, args any) (string, bool) {
	t.Helper()
	res := Call(t, c, name, args)
	return Text(res), res.IsError
}

// Structured calls a tool that must succeed and decodes its structured
// content into T.
func Structured[T any](t testing.TB, c *client.Client, name string, args any) T {
	t.Helper()
	res := Call(t, c, name, args)
	if res.IsError {
		t.Fatalf("%s %v: %s", name, args, Text(res))
	}
	var v T
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return v
}

// Text joins the text content of a result.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// CheckAnnotations fails when any tool of s leaves one of the four
// annotations unstated, in its declaration or in what tools/list sends.
func CheckAnnotations(t *testing.T, s *mcpkit.Server) {
	t.Helper()
	for _, tool := range s.Tools {
		if err := tool.Verify(); err != nil {
			t.Error(err)
		}
		a := tool.Annotations
		for name, h := range map[string]mcpkit.Hint{"ReadOnly": a.ReadOnly, "Destructive": a.Destructive, "Idempotent": a.Idempotent, "OpenWorld": a.OpenWorld} {
			if h != mcpkit.Yes && h != mcpkit.No {
				t.Errorf("tool %s: annotation %s is not stated", tool.Def.Name, name)
			}
		}
	}
	c := Client(t, s)
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if len(list.Tools) != len(s.Tools) {
		t.Errorf("tools/list has %d tools, server declares %d", len(list.Tools), len(s.Tools))
	}
	for _, tool := range list.Tools {
		a := tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("tool %s: tools/list leaves an annotation unset: %+v", tool.Name, a)
		}
	}
}

// Snapshot compares each tool's published definition (description,
// annotations, input and output schema) with testdata/schemas/<tool>.json,
// so a change to what models see is a reviewed diff. Run the test with
// -update to rewrite the files.
func Snapshot(t *testing.T, s *mcpkit.Server) {
	t.Helper()
	dir := filepath.Join("testdata", "schemas")
	want := map[string]bool{}
	for _, tool := range s.Tools {
		name := tool.Def.Name + ".json"
		want[name] = true
		got, err := json.MarshalIndent(tool.Def, "", "  ")
		if err != nil {
			t.Fatalf("marshal %s: %v", tool.Def.Name, err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("tool %s has no snapshot (%v); run go test -run %s -update", tool.Def.Name, err, t.Name())
			continue
		}
		if !bytes.Equal(old, got) {
			t.Errorf("tool %s changed its published definition; review and run go test -run %s -update\n--- %s\n%s\n--- now\n%s", tool.Def.Name, t.Name(), path, old, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] {
			if *update {
				_ = os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("snapshot %s belongs to no tool; run with -update to remove it", e.Name())
		}
	}
}
