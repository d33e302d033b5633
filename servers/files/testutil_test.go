package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// realTempDir is t.TempDir with symlinks in its path resolved, so paths
// built from it compare equal to what the server reports.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newTestClient builds a files server over dirs with opts and returns an
// in-process client connected to it.
func newTestClient(t *testing.T, opts Options, dirs ...string) *client.Client {
	t.Helper()
	s, err := New(dirs, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.Client(t, srv)
}

// callTool calls a tool and returns its text and whether it is an error
// result.
func callTool(t *testing.T, c *client.Client, name string, args any) (string, bool) {
	t.Helper()
	res := mcpkittest.Call(t, c, name, args)
	return mcpkittest.Text(res), res.IsError
}

// writeTree creates files under root, with their parent directories; a key
// ending in "/" makes an empty directory.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if rel[len(rel)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mustReadFile returns the contents of path, failing the test if it cannot
// be read.
func mustReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// symlinks creates each link (a path relative to root) pointing at its
// target, which is used as given: relative, absolute, or dangling.
func symlinks(t *testing.T, root string, links map[string]string) {
	t.Helper()
	for rel, target := range links {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}
