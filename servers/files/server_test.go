package files

import (
	"testing"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

func filesServerForSchemas(t *testing.T) *Server {
	t.Helper()
	s, err := New([]string{t.TempDir()}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAnnotations fails when a tool leaves one of its four annotations
// unstated, or when one is wrong for what the tool does.
func TestAnnotations(t *testing.T) {
	srv, err := filesServerForSchemas(t).MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckAnnotations(t, srv)
	destructive := map[string]bool{"write_file": true, "edit_file": true, "move_file": true, "delete_file": true}
	writes := map[string]bool{"create_directory": true}
	for _, tool := range srv.Tools {
		a := tool.Def.Annotations
		name := tool.Def.Name
		if got := *a.DestructiveHint; got != destructive[name] {
			t.Errorf("%s: destructiveHint = %v, want %v", name, got, destructive[name])
		}
		if got, want := *a.ReadOnlyHint, !destructive[name] && !writes[name]; got != want {
			t.Errorf("%s: readOnlyHint = %v, want %v", name, got, want)
		}
		if *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint is true; the files server reaches nothing outside its directories", name)
		}
	}
}

// TestSchemas compares every tool's published definition with its
// snapshot in testdata/schemas; run with -update after a reviewed change.
func TestSchemas(t *testing.T) {
	srv, err := filesServerForSchemas(t).MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.Snapshot(t, srv)
}
