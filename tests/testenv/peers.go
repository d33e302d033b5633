package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

const scope = "@modelcontextprotocol"

// peerEntry maps each npm peer to the script its package runs, relative to
// the package directory.
var peerEntry = map[string]string{
	"inspector":         "clients/launcher/build/index.js",
	"server-everything": "dist/index.js",
	"server-filesystem": "dist/index.js",
	"server-memory":     "dist/index.js",
}

// Peers returns the tests/peers/node_modules directory after checking that
// Node.js and every peer in tests/peers/package.json are installed.
func Peers(t testing.TB) string {
	t.Helper()
	RequireTool(t, "node", "Node.js runs the npm test peers")
	dir := filepath.Join(ModuleRoot(t), "tests", "peers", "node_modules")
	for name, entry := range peerEntry {
		if _, err := os.Stat(filepath.Join(dir, scope, name, entry)); err != nil {
			Missing(t, "npm test peer "+scope+"/"+name, "expected under "+dir)
		}
	}
	return dir
}

// Inspector returns the argv prefix that runs the MCP Inspector CLI with JSON
// output. Append the server command, then "--method", "tools/list" and so on.
func Inspector(t testing.TB) []string {
	t.Helper()
	node := RequireTool(t, "node", "Node.js runs the MCP Inspector")
	return []string{node, filepath.Join(Peers(t), scope, "inspector", peerEntry["inspector"]), "--cli", "-q", "--format", "json"}
}

// PeerServer returns the argv that starts one of the reference MCP servers,
// "server-everything", "server-filesystem" or "server-memory"; append its own
// arguments (the filesystem server takes the allowed directories; the memory
// server takes none, but reads its file's path from MEMORY_FILE_PATH).
func PeerServer(t testing.TB, name string) []string {
	t.Helper()
	entry, ok := peerEntry[name]
	if !ok || name == "inspector" {
		t.Fatalf("testenv: unknown peer server %q", name)
	}
	node := RequireTool(t, "node", "Node.js runs the reference MCP servers")
	return []string{node, filepath.Join(Peers(t), scope, name, entry)}
}
