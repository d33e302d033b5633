package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// BenchmarkReadTextFile measures one small read_text_file call in process:
// the server's own cost per call, without a transport.
func BenchmarkReadTextFile(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "small.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("a small file for reading\n", 20)), 0o644); err != nil {
		b.Fatal(err)
	}
	s, err := New([]string{dir}, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	srv, err := s.MCP()
	if err != nil {
		b.Fatal(err)
	}
	c := mcpkittest.Client(b, srv)
	args := map[string]any{"path": p}
	b.ReportAllocs()
	for b.Loop() {
		if res := mcpkittest.Call(b, c, "read_text_file", args); res.IsError {
			b.Fatal(mcpkittest.Text(res))
		}
	}
}

// BenchmarkNewServer measures building the server, the in-process part of
// a cold start.
func BenchmarkNewServer(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		s, err := New([]string{dir}, DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.MCP(); err != nil {
			b.Fatal(err)
		}
	}
}
