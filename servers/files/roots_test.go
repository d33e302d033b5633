package files

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// rootsClient is a client whose MCP roots can change during a test.
type rootsClient struct {
	mu    sync.Mutex
	uris  []string
	asked int
}

func (r *rootsClient) ListRoots(ctx context.Context, req mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked++
	res := &mcp.ListRootsResult{}
	for _, u := range r.uris {
		res.Roots = append(res.Roots, mcp.Root{URI: u, Name: u})
	}
	return res, nil
}

func (r *rootsClient) set(uris ...string) {
	r.mu.Lock()
	r.uris = uris
	r.mu.Unlock()
}

func TestRootsNarrowNeverWiden(t *testing.T) {
	top, _ := sandboxFixture(t)
	allowed := top + "/allowed"
	s, err := New([]string{allowed}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	roots := &rootsClient{}
	roots.set("file://"+allowed+"/sub", "file://"+top+"/outside", "file:///etc")
	c := mcpkittest.Client(t, srv, client.WithRootsHandler(roots))

	read := func(p string) *mcp.CallToolResult {
		return mcpkittest.Call(t, c, "read_text_file", map[string]any{"path": p})
	}
	if res := read(allowed + "/sub/b.txt"); res.IsError {
		t.Errorf("read inside the narrowed root failed: %s", mcpkittest.Text(res))
	}
	for _, p := range []string{allowed + "/a.txt", top + "/outside/secret.txt", "/etc/passwd"} {
		if res := read(p); !res.IsError {
			t.Errorf("read %s succeeded although the roots exclude it: %s", p, mcpkittest.Text(res))
		}
	}
	dirs := mcpkittest.Text(mcpkittest.Call(t, c, "list_allowed_directories", map[string]any{}))
	if !strings.Contains(dirs, allowed+"/sub") || strings.Contains(dirs, top+"/outside") || strings.Contains(dirs, "\n/\n") {
		t.Errorf("list_allowed_directories = %q, want only %s/sub", dirs, allowed)
	}

	// The client widens its roots and says so: the server asks again, and
	// still grants no more than the operator allowed.
	roots.set("file:///")
	if err := c.RootListChanges(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		return !read(allowed + "/a.txt").IsError
	})
	if res := read(top + "/outside/secret.txt"); !res.IsError {
		t.Errorf("a root of / widened the sandbox: %s", mcpkittest.Text(res))
	}
}

func TestNoRootsCapabilityUsesAllowedDirs(t *testing.T) {
	top, _ := sandboxFixture(t)
	s, err := New([]string{top + "/allowed"}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	c := mcpkittest.Client(t, srv)
	if res := mcpkittest.Call(t, c, "read_text_file", map[string]any{"path": top + "/allowed/a.txt"}); res.IsError {
		t.Errorf("read failed: %s", mcpkittest.Text(res))
	}
}

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
