package browser

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

func benchSetup(b *testing.B) (*client.Client, string) {
	ts := site(b)
	c, _ := newClient(b, Options{}, false)
	return c, ts.URL
}

// BenchmarkNavigateSnapshot is a warm browser_navigate (which returns the
// snapshot) between two simple pages.
func BenchmarkNavigateSnapshot(b *testing.B) {
	c, base := benchSetup(b)
	pages := []string{base + "/", base + "/form"}
	mcpkittest.Call(b, c, "browser_navigate", map[string]any{"url": pages[0]})
	b.ResetTimer()
	for i := range b.N {
		res := mcpkittest.Call(b, c, "browser_navigate", map[string]any{"url": pages[i%2]})
		if res.IsError {
			b.Fatal(mcpkittest.Text(res))
		}
	}
}

// BenchmarkSnapshotBig is browser_snapshot of the 20,000-node page.
func BenchmarkSnapshotBig(b *testing.B) {
	c, base := benchSetup(b)
	mcpkittest.Call(b, c, "browser_navigate", map[string]any{"url": base + "/big"})
	b.ResetTimer()
	for range b.N {
		res := mcpkittest.Call(b, c, "browser_snapshot", nil)
		if res.IsError {
			b.Fatal(mcpkittest.Text(res))
		}
	}
}
