//go:build linux

package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Attacks beyond the escape corpus: races on move and delete, hard links
// to the outside, names that forge lines in results, relative paths that
// probe the outside, names as long as Linux allows, odd MCP roots.

// callBounded calls a tool and gives up after limit. The in-process client
// runs the handler on the calling goroutine, so a handler stuck in a
// system call would hang the test itself without this.
func callBounded(t *testing.T, c *client.Client, limit time.Duration, tool string, args map[string]any) (res *mcp.CallToolResult, ok bool) {
	t.Helper()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := c.CallTool(context.Background(), req)
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("call %s: protocol error: %v", tool, a.err)
		}
		return a.res, true
	case <-time.After(limit):
		return nil, false
	}
}

// TestLongNames writes, edits and moves files whose names are as long as
// Linux allows. The temporary file beside them must fit too.
func TestLongNames(t *testing.T) {
	top := realTempDir(t)
	a, b := filepath.Join(top, "a"), filepath.Join(top, "b")
	writeTree(t, top, map[string]string{"a/": "", "b/": ""})
	c := newTestClient(t, DefaultOptions(), a, b)
	long := strings.Repeat("n", 250)
	multi := strings.Repeat("é", 127) // 254 bytes, cut inside a character if cut carelessly
	tests := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"write", "write_file", map[string]any{"path": a + "/" + long, "content": "one\n"}},
		{"edit", "edit_file", map[string]any{"path": a + "/" + long, "edits": []any{map[string]any{"old_text": "one", "new_text": "two"}}}},
		{"move across allowed directories", "move_file", map[string]any{"source": a + "/" + long, "destination": b + "/" + long}},
		{"write multibyte", "write_file", map[string]any{"path": a + "/" + multi, "content": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if text, isErr := callTool(t, c, tt.tool, tt.args); isErr {
				t.Fatalf("%s: %s", tt.tool, text)
			}
		})
	}
	if got := mustReadFile(t, b+"/"+long); got != "two\n" {
		t.Errorf("moved file holds %q, want %q", got, "two\n")
	}
	for _, d := range []string{a, b} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".domo-") {
				t.Errorf("temporary file %s left behind", e.Name())
			}
		}
	}
}

// TestSymlinkTargetsCannotForgeLines points symlinks at names holding
// line breaks. Results name the link's target, or a path reached through
// it; a raw line break there would let the name forge entries, notes or
// headers in what the model reads.
func TestSymlinkTargetsCannotForgeLines(t *testing.T) {
	dir := realTempDir(t)
	const forged = "FORGED-LINE"
	writeTree(t, dir, map[string]string{"real/file.txt": "content\n"})
	for name, target := range map[string]string{
		"nl-file":      "new\n" + forged + " (created)",
		"nl-dir":       "real\n" + forged,
		"nl-out":       "/nowhere\n" + forged,
		"ls-file":      "new\u2028" + forged,
		"nl-in-parent": "real/../x\n" + forged,
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A name with a Unicode line separator, which strconv.Quote escapes
	// but a check for control characters does not see.
	writeTree(t, dir, map[string]string{"sep\u2028" + forged: "x"})
	c := newTestClient(t, DefaultOptions(), dir)
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": dir + "/nl-file", "content": "x"}},
		{"write_file", map[string]any{"path": dir + "/ls-file", "content": "x"}},
		{"read_text_file", map[string]any{"path": dir + "/nl-out"}},
		{"read_text_file", map[string]any{"path": dir + "/nl-dir/file.txt"}},
		{"list_directory", map[string]any{"path": dir + "/nl-dir"}},
		{"list_directory", map[string]any{"path": dir}},
		{"directory_tree", map[string]any{"path": dir}},
		{"search_files", map[string]any{"path": dir, "pattern": "*"}},
		{"get_file_info", map[string]any{"path": dir + "/nl-out"}},
		{"get_file_info", map[string]any{"path": dir + "/nl-in-parent/x"}},
		{"read_multiple_files", map[string]any{"paths": []any{dir + "/nl-dir/file.txt", "x\n" + forged}}},
		{"create_directory", map[string]any{"path": dir + "/nl-dir/sub"}},
		{"delete_file", map[string]any{"path": dir + "/nl-out"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res, ok := callBounded(t, c, 10*time.Second, tt.tool, tt.args)
			if !ok {
				t.Fatal("no answer")
			}
			for _, c := range res.Content {
				tc, ok := c.(mcp.TextContent)
				if !ok {
					continue
				}
				for line := range strings.Lines(tc.Text) {
					if strings.HasPrefix(line, forged) {
						t.Errorf("a name forged a line of its own:\n%s", tc.Text)
					}
				}
				if strings.ContainsAny(tc.Text, "\u2028\u2029") {
					t.Errorf("a Unicode line separator reached the result:\n%q", tc.Text)
				}
			}
		})
	}
}

// TestRelativePathsDoNotProbeOutside gives two allowed directories and a
// relative path. Picking the directory by whether the path exists must not
// look through a symlink to the outside: if it did, reading peek/NAME
// would fail when NAME exists outside and succeed when it does not,
// telling the model which outside names exist.
func TestRelativePathsDoNotProbeOutside(t *testing.T) {
	top := realTempDir(t)
	writeTree(t, top, map[string]string{
		"outside/secret.txt": outsideMarker,
		"a/":                 "",
		"b/peek/secret.txt":  "b's secret.txt\n",
		"b/peek/missing.txt": "b's missing.txt\n",
	})
	if err := os.Symlink(filepath.Join(top, "outside"), filepath.Join(top, "a/peek")); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, DefaultOptions(), filepath.Join(top, "a"), filepath.Join(top, "b"))
	for _, name := range []string{"secret.txt", "missing.txt"} {
		t.Run(name, func(t *testing.T) {
			text, isErr := callTool(t, c, "read_text_file", map[string]any{"path": "peek/" + name})
			if isErr || text != "b's "+name+"\n" {
				t.Errorf("read_text_file peek/%s = %q (error %v), want b's file whether or not outside/%s exists", name, text, isErr, name)
			}
		})
	}
}

// TestHardLinkToOutsideFile puts a hard link to an outside file inside the
// sandbox, as a user or a build might. Reading it reads the outside inode
// (a name in the sandbox is all the sandbox can check), but no tool may
// change that inode: writes replace the name, moves and deletes act on
// the name only.
func TestHardLinkToOutsideFile(t *testing.T) {
	top := realTempDir(t)
	writeTree(t, top, map[string]string{"outside/target.txt": "outside content\n", "a/": "", "b/": ""})
	outside := filepath.Join(top, "outside/target.txt")
	if err := os.Chmod(outside, 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(top, "a"), filepath.Join(top, "b")
	c := newTestClient(t, DefaultOptions(), a, b)
	tests := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"write", "write_file", map[string]any{"path": a + "/hl", "content": "pwned"}},
		{"edit", "edit_file", map[string]any{"path": a + "/hl", "edits": []any{map[string]any{"old_text": "outside", "new_text": "pwned"}}}},
		{"move within", "move_file", map[string]any{"source": a + "/hl", "destination": a + "/moved"}},
		{"move across", "move_file", map[string]any{"source": a + "/hl", "destination": b + "/moved"}},
		{"move over it", "move_file", map[string]any{"source": a + "/other", "destination": a + "/hl", "overwrite": true}},
		{"delete", "delete_file", map[string]any{"path": a + "/hl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []string{a + "/hl", a + "/moved", b + "/moved", a + "/other"} {
				_ = os.Remove(p)
			}
			writeTree(t, a, map[string]string{"other": "other\n"})
			if err := os.Link(outside, a+"/hl"); err != nil {
				t.Fatalf("hard link: %v", err)
			}
			if text, isErr := callTool(t, c, tt.tool, tt.args); isErr {
				t.Fatalf("%s: %s", tt.tool, text)
			}
			if got := mustReadFile(t, outside); got != "outside content\n" {
				t.Errorf("the outside file now holds %q", got)
			}
			if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the outside file's mode changed: %v %v", fi.Mode(), err)
			}
		})
	}
}

// TestMoveDeleteSwapRace swaps a directory with a symlink to the outside
// while move_file, delete_file, edit_file and create_directory work inside
// it: the checks they make before acting go stale, and the action itself
// must still stay inside. The outside must be unchanged afterwards.
func TestMoveDeleteSwapRace(t *testing.T) {
	f := newAttackFixture(t)
	dir := filepath.Join(f.allowed, "race-dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The real directory, by handle: refilling it through a name could go
	// through the link to the outside.
	real, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	refill := func() {
		for _, name := range []string{"a.txt", "b.txt", "c.txt", "sub/d.txt"} {
			_ = real.MkdirAll("sub", 0o755)
			_ = real.WriteFile(name, []byte("inside secret\n"), 0o644)
		}
	}
	refill()
	if err := os.Symlink(filepath.Join(f.top, "outside"), dir+".swap"); err != nil {
		t.Fatal(err)
	}
	// The outside gets the same names, so a call that follows the link
	// finds something to damage.
	for _, name := range []string{"a.txt", "b.txt", "c.txt", "sub/d.txt"} {
		p := filepath.Join(f.top, "outside", name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(outsideMarker+" secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := f.snapshot(t)

	stop := swapLoop(dir, dir+".swap", nil)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"delete_file", map[string]any{"path": dir + "/a.txt"}},
		{"delete_file", map[string]any{"path": dir + "/sub", "recursive": true}},
		{"move_file", map[string]any{"source": dir + "/b.txt", "destination": f.allowed + "/moved.txt", "overwrite": true}},
		{"move_file", map[string]any{"source": f.allowed + "/victim.txt", "destination": dir + "/c.txt", "overwrite": true}},
		{"edit_file", map[string]any{"path": dir + "/c.txt", "edits": []any{map[string]any{"old_text": "secret", "new_text": "pwned"}}}},
		{"write_file", map[string]any{"path": dir + "/sub/d.txt", "content": "pwned"}},
		{"create_directory", map[string]any{"path": dir + "/sub/new"}},
	}
	deadline := time.Now().Add(3 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		if n%len(calls) == 0 {
			refill()
			writeTree(t, f.allowed, map[string]string{"victim.txt": "inside victim\n"})
		}
		call := calls[n%len(calls)]
		res, ok := callBounded(t, f.c, 10*time.Second, call.tool, call.args)
		if !ok {
			t.Fatalf("%s blocked", call.tool)
		}
		if text := resultText(res); strings.Contains(text, outsideMarker) {
			t.Errorf("%s leaked outside content: %.200s", call.tool, text)
		}
	}
	if swaps := stop(); swaps < 100 {
		t.Errorf("only %d swaps happened: the race was not exercised", swaps)
	}
	f.assertOutsideUnchanged(t, before)
}

// TestNarrowOddRoots declares MCP roots that are not plain directories
// inside the allowed one.
func TestNarrowOddRoots(t *testing.T) {
	top, sb := sandboxFixture(t)
	allowed := filepath.Join(top, "allowed")
	tests := []struct {
		name string
		root string
		want []string
	}{
		{"dotdot leading out", "file://" + allowed + "/../outside", nil},
		{"encoded dotdot leading out", "file://" + allowed + "/%2e%2e/outside", nil},
		{"dotdot leading in", "file://" + top + "/outside/../allowed/sub", []string{allowed + "/sub"}},
		{"symlink inside", "file://" + allowed + "/rel-link", []string{allowed + "/rel-link"}},
		// Cleaned as text, as paths given to tools are: back to allowed.
		{"dotdot after a symlink out", "file://" + allowed + "/to-outside/..", []string{allowed}},
		{"file", "file://" + allowed + "/a.txt", nil},
		{"missing", "file://" + allowed + "/nope", nil},
		{"other host", "file://example.com" + allowed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, _ := sb.Narrow([]string{tt.root})
			if got := n.ShownDirs(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Narrow(%s) = %v, want %v", tt.root, got, tt.want)
			}
			if _, err := n.Resolve(top + "/outside/secret.txt"); err == nil {
				t.Error("the narrowed sandbox resolved a path outside")
			}
		})
	}
}
