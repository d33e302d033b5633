package memory

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// openStore opens a store in a temporary directory, its clock at now.
func openStore(t testing.TB, emb *Embeddings) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), emb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newClient serves store to an in-process MCP client.
func newClient(t testing.TB, s *Store) *client.Client {
	t.Helper()
	srv, err := NewServer(s).MCP()
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.Client(t, srv)
}

func TestAnnotations(t *testing.T) {
	srv, err := NewServer(nil).MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckAnnotations(t, srv)
	destructive := map[string]bool{"memory_forget": true, "memory_update": true}
	for _, tool := range srv.Tools {
		a := tool.Def.Annotations
		name := tool.Def.Name
		if got := *a.DestructiveHint; got != destructive[name] {
			t.Errorf("%s: destructiveHint = %v, want %v", name, got, destructive[name])
		}
		if *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint is true; memory reaches nothing but its database", name)
		}
	}
}

func TestSchemas(t *testing.T) {
	srv, err := NewServer(nil).MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.Snapshot(t, srv)
}

func TestRememberRecallRoundTrip(t *testing.T) {
	s := openStore(t, nil)
	c := newClient(t, s)
	out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{
		"text": "The user's boss is Sarah Chen.", "tags": []string{"work"}, "entities": []string{"Sarah Chen"},
	})
	if len(out.Results) != 1 || out.Results[0].Status != "created" {
		t.Fatalf("remember = %+v", out)
	}
	r := mcpkittest.Structured[Recall](t, c, "memory_recall", map[string]any{"query": "who is my boss?"})
	if len(r.Memories) != 1 || r.Memories[0].ID != out.Results[0].ID {
		t.Fatalf("recall = %+v", r)
	}
	text, isErr := mcpkittest.CallText(t, c, "memory_recall", map[string]any{"query": "who is my boss?"})
	if isErr || !strings.Contains(text, "["+out.Results[0].ID+"] fact · "+time.Now().Format(time.DateOnly)+" · The user's boss is Sarah Chen. #work (about Sarah Chen)") {
		t.Errorf("pack = %s", text)
	}
	_ = mcp.CallToolResult{}
}
