package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/domo-agent/domo/tests/testenv"
)

// TestConfigSnippets keeps the client snippets in configs/ valid and the
// copies inlined in README.md identical to them.
func TestConfigSnippets(t *testing.T) {
	root := testenv.ModuleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "configs", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no snippets in configs/")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cfg struct {
				Servers    map[string]json.RawMessage `json:"servers"`    // VS Code
				MCPServers map[string]json.RawMessage `json:"mcpServers"` // Claude Desktop, Cursor
			}
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatalf("not a client config: %v", err)
			}
			servers := cfg.MCPServers
			if servers == nil {
				servers = cfg.Servers
			}
			if _, ok := servers["domo-files"]; !ok {
				t.Errorf("no domo-files server in %s", f)
			}
			if !strings.Contains(string(readme), strings.TrimSpace(string(b))) {
				t.Errorf("README.md does not contain %s verbatim", filepath.Base(f))
			}
		})
	}
}
