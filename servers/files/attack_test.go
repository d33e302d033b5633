//go:build linux

package files

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// The attack corpus: escape attempts against every tool that takes a path.
// None may succeed, no result may carry outside content, and every file
// outside the sandbox must be byte-identical afterwards. The public cases
// behind CVE-2025-53110 (a sibling directory sharing the allowed
// directory's name as a prefix) and CVE-2025-53109 (symlinks out of the
// sandbox) are among them.

const outsideMarker = "OUTSIDE-SECRET-7f3a"

type attackFixture struct {
	top, allowed string
	c            *client.Client
}

func newAttackFixture(t *testing.T) *attackFixture {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &attackFixture{top: top, allowed: filepath.Join(top, "allowed")}
	writeTree(t, top, map[string]string{
		"allowed/victim.txt":       "inside victim\n",
		"allowed/sub/inner.txt":    "inner\n",
		"allowed/sub/deeper/x.txt": "x\n",
		"outside/secret.txt":       outsideMarker + " secret\n",
		"outside/dir/nested.txt":   outsideMarker + " nested\n",
		"outside/target.txt":       outsideMarker + " target\n",
		"allowed_evil/secret.txt":  outsideMarker + " prefix sibling\n",
		"allowed_evil/dir/x.txt":   outsideMarker + " prefix sibling dir\n",
	})
	symlinks(t, top, map[string]string{
		"allowed/link-out":         filepath.Join(top, "outside"),
		"allowed/link-out-rel":     "../outside",
		"allowed/link-file-out":    filepath.Join(top, "outside/secret.txt"),
		"allowed/chain1":           "chain2",
		"allowed/chain2":           "sub/chain3",
		"allowed/sub/chain3":       filepath.Join(top, "outside/secret.txt"),
		"allowed/dangling-out":     filepath.Join(top, "outside/not-yet.txt"),
		"allowed/dangling-dir-out": filepath.Join(top, "outside/newdir"),
		"allowed/link-evil":        "../allowed_evil",
		"allowed/link-parent":      "..",
		"allowed/link-root":        "/",
		"allowed/sub/link-up":      "../../outside",
		"allowed/loop-a":           "loop-b",
		"allowed/loop-b":           "loop-a",
	})

	s, err := New([]string{f.allowed}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	f.c = mcpkittest.Client(t, srv)
	return f
}

// snapshot hashes every file and link outside the allowed directory.
func (f *attackFixture) snapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(f.top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == f.allowed {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = "link:" + target
		case d.IsDir():
			out[p] = fmt.Sprintf("dir:%v", info.Mode())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = fmt.Sprintf("file:%v:%x", info.Mode(), sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type evilPath struct {
	name string
	path string
	// lastIsLink marks paths whose last component is a symlink inside the
	// sandbox: deleting, moving or describing the link itself is allowed,
	// so those tools are not attacked with them.
	lastIsLink bool
}

func (f *attackFixture) evilPaths() []evilPath {
	A, T := f.allowed, f.top
	home, _ := os.UserHomeDir()
	upToTop := strings.Repeat("../", strings.Count(strings.Trim(home, "/"), "/")+1)
	return []evilPath{
		{name: "plain outside", path: T + "/outside/secret.txt"},
		{name: "outside dir", path: T + "/outside"},
		{name: "dotdot", path: A + "/../outside/secret.txt"},
		{name: "dotdot dir", path: A + "/../outside/dir"},
		{name: "relative dotdot", path: "../outside/secret.txt"},
		{name: "relative dotdot dir", path: "../outside"},
		{name: "deep dotdot", path: A + "/sub/deeper/../../../outside/secret.txt"},
		{name: "dot then dotdot", path: A + "/./../outside/secret.txt"},
		{name: "double slash", path: T + "//outside//secret.txt"},
		{name: "prefix collision file", path: T + "/allowed_evil/secret.txt"},
		{name: "prefix collision dir", path: T + "/allowed_evil"},
		{name: "prefix collision nested", path: A + "_evil/dir/x.txt"},
		{name: "prefix collision via dotdot", path: A + "/../allowed_evil/secret.txt"},
		{name: "symlink dir out absolute", path: A + "/link-out/secret.txt"},
		{name: "symlink dir out absolute itself", path: A + "/link-out", lastIsLink: true},
		{name: "symlink dir out relative", path: A + "/link-out-rel/secret.txt"},
		{name: "symlink dir out nested", path: A + "/link-out/dir/nested.txt"},
		{name: "symlink dir out new file", path: A + "/link-out/created.txt"},
		{name: "symlink file out", path: A + "/link-file-out", lastIsLink: true},
		{name: "symlink chain", path: A + "/chain1", lastIsLink: true},
		{name: "symlink chain middle", path: A + "/chain2", lastIsLink: true},
		{name: "dangling link out", path: A + "/dangling-out", lastIsLink: true},
		{name: "dangling dir link out", path: A + "/dangling-dir-out/new.txt"},
		{name: "symlink to prefix sibling", path: A + "/link-evil/secret.txt"},
		{name: "symlink to parent", path: A + "/link-parent/outside/secret.txt"},
		{name: "symlink to parent sibling", path: A + "/link-parent/allowed_evil/secret.txt"},
		{name: "symlink to root", path: A + "/link-root" + T + "/outside/secret.txt"},
		{name: "nested symlink up", path: A + "/sub/link-up/secret.txt"},
		{name: "relative symlink", path: "link-out/secret.txt"},
		{name: "relative chain", path: "sub/link-up/target.txt"},
		{name: "symlink loop", path: A + "/loop-a/x", lastIsLink: false},
		{name: "url encoded dots", path: A + "/%2e%2e/outside/secret.txt"},
		{name: "url encoded slash", path: A + "/..%2foutside%2fsecret.txt"},
		{name: "double url encoded", path: A + "/%252e%252e/outside/secret.txt"},
		{name: "overlong utf8 slash", path: A + "/..%c0%afoutside/secret.txt"},
		{name: "file url", path: "file://" + T + "/outside/secret.txt"},
		{name: "backslashes", path: A + "\\..\\outside\\secret.txt"},
		{name: "windows drive", path: "C:\\outside\\secret.txt"},
		{name: "unc path", path: "\\\\server\\share\\secret.txt"},
		{name: "division slash", path: A + "/..\u2215outside\u2215secret.txt"},
		{name: "fullwidth dots", path: A + "/\uff0e\uff0e/outside/secret.txt"},
		{name: "one dot leaders", path: A + "/\u2024\u2024/outside/secret.txt"},
		{name: "NUL truncation", path: T + "/outside/secret.txt\x00" + A + "/victim.txt"},
		{name: "NUL suffix", path: A + "/../outside/secret.txt\x00.txt"},
		{name: "newline", path: A + "/victim.txt\n/../../outside/secret.txt"},
		{name: "rtl override", path: A + "/\u202e../outside/secret.txt"},
		{name: "zero width space", path: A + "/.\u200b./outside/secret.txt"},
		{name: "tilde escape", path: "~/" + upToTop + strings.TrimPrefix(T, "/") + "/outside/secret.txt"},
		{name: "over-long path", path: A + "/" + strings.Repeat("sub/../", 700) + "../outside/secret.txt"},
		{name: "etc passwd", path: "/etc/passwd"},
		{name: "proc environ", path: "/proc/self/environ"},
		{name: "proc root", path: "/proc/self/root" + T + "/outside/secret.txt"},
		{name: "root", path: "/"},
	}
}

// attacks builds every (tool, arguments) pair of the corpus.
func (f *attackFixture) attacks() []struct {
	name string
	tool string
	args map[string]any
} {
	type attack = struct {
		name string
		tool string
		args map[string]any
	}
	var out []attack
	add := func(name, tool string, args map[string]any) {
		out = append(out, attack{name: tool + "/" + name, tool: tool, args: args})
	}
	safeWrite := func(p string) bool {
		// Never aim a write at a real system file: a bug would damage the
		// machine rather than fail a test.
		return !strings.HasPrefix(p, "/etc") && !strings.HasPrefix(p, "/proc") && p != "/"
	}
	for _, e := range f.evilPaths() {
		p := e.path
		add(e.name, "read_text_file", map[string]any{"path": p})
		add(e.name, "read_media_file", map[string]any{"path": p})
		add(e.name, "read_multiple_files", map[string]any{"paths": []any{p}})
		add(e.name, "list_directory", map[string]any{"path": p})
		add(e.name, "directory_tree", map[string]any{"path": p})
		add(e.name, "search_files", map[string]any{"path": p, "pattern": "*"})
		add(e.name, "grep_files", map[string]any{"path": p, "pattern": "SECRET"})
		if !e.lastIsLink {
			add(e.name, "get_file_info", map[string]any{"path": p})
		}
		if !safeWrite(p) {
			continue
		}
		add(e.name, "write_file", map[string]any{"path": p, "content": "pwned"})
		add(e.name, "edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"old_text": "secret", "new_text": "pwned"}}})
		add(e.name+" dry run", "edit_file", map[string]any{"path": p, "dry_run": true, "edits": []any{map[string]any{"old_text": "secret", "new_text": "pwned"}}})
		add(e.name, "create_directory", map[string]any{"path": p + "/newdir"})
		add(e.name+" as destination", "move_file", map[string]any{"source": f.allowed + "/victim.txt", "destination": p})
		if !e.lastIsLink {
			add(e.name+" as source", "move_file", map[string]any{"source": p, "destination": f.allowed + "/stolen.txt"})
			add(e.name, "delete_file", map[string]any{"path": p})
			add(e.name+" recursive", "delete_file", map[string]any{"path": p, "recursive": true})
		}
	}
	return out
}

func TestAttackCorpus(t *testing.T) {
	f := newAttackFixture(t)
	before := f.snapshot(t)
	attacks := f.attacks()
	if len(attacks) < 100 {
		t.Fatalf("the corpus has %d attempts, want at least 100", len(attacks))
	}
	succeeded := 0
	for _, a := range attacks {
		res := mcpkittest.Call(t, f.c, a.tool, a.args)
		text := resultText(res)
		if !res.IsError {
			succeeded++
			t.Errorf("%s: escape attempt succeeded: %.300s", a.name, text)
		}
		if strings.Contains(text, outsideMarker) {
			t.Errorf("%s: result carries outside content: %.300s", a.name, text)
		}
	}
	t.Logf("%d escape attempts, %d succeeded", len(attacks), succeeded)
	f.assertOutsideUnchanged(t, before)
}

// TestListingsDoNotFollowLinksOut lists and searches the sandbox, which
// holds links to the outside: the links may be named, never followed.
func TestListingsDoNotFollowLinksOut(t *testing.T) {
	f := newAttackFixture(t)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_directory", map[string]any{"path": f.allowed}},
		{"directory_tree", map[string]any{"path": f.allowed, "max_depth": 20}},
		{"search_files", map[string]any{"path": f.allowed, "pattern": "**/*"}},
		{"search_files", map[string]any{"path": f.allowed, "pattern": "*secret*"}},
		{"grep_files", map[string]any{"path": f.allowed, "pattern": "SECRET"}},
		{"grep_files", map[string]any{"path": f.allowed, "pattern": "secret", "case_insensitive": true}},
	}
	for _, c := range calls {
		res := mcpkittest.Call(t, f.c, c.tool, c.args)
		text := resultText(res)
		if res.IsError {
			t.Errorf("%s %v failed: %s", c.tool, c.args, text)
		}
		if strings.Contains(text, outsideMarker) || strings.Contains(text, "nested.txt") || strings.Contains(text, "target.txt") {
			t.Errorf("%s %v reached outside the sandbox: %.500s", c.tool, c.args, text)
		}
	}
}

// TestSymlinkSwapRace swaps a directory for a symlink to the outside, and
// a file for a symlink to an outside file, as fast as it can while reads
// and writes go through the paths. No call may read or change the outside.
func TestSymlinkSwapRace(t *testing.T) {
	f := newAttackFixture(t)
	writeTree(t, f.allowed, map[string]string{
		"race-dir/secret.txt": "inside\n",
		"race-file":           "inside file secret\n",
	})
	dir := filepath.Join(f.allowed, "race-dir")
	file := filepath.Join(f.allowed, "race-file")
	// The swap partners: links to the outside that trade places with the
	// real directory and file.
	if err := os.Symlink(filepath.Join(f.top, "outside"), dir+".swap"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.top, "outside/target.txt"), file+".swap"); err != nil {
		t.Fatal(err)
	}
	before := f.snapshot(t)

	stop := swapLoop(dir, dir+".swap", func() {
		_ = unix.Renameat2(unix.AT_FDCWD, file, unix.AT_FDCWD, file+".swap", unix.RENAME_EXCHANGE)
		// A write replaces whichever of the two it found; put the link
		// back so the race goes on.
		if !isSymlink(file) && !isSymlink(file+".swap") {
			_ = os.Remove(file + ".swap")
			_ = os.Symlink(filepath.Join(f.top, "outside/target.txt"), file+".swap")
		}
	})
	var leaks, calls atomic.Int64
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; i < 3000 && time.Now().Before(deadline); i++ {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"read_text_file", map[string]any{"path": dir + "/secret.txt"}},
			{"read_text_file", map[string]any{"path": file}},
			{"write_file", map[string]any{"path": dir + "/pwned.txt", "content": "pwned"}},
			{"write_file", map[string]any{"path": file, "content": "pwned"}},
			{"edit_file", map[string]any{"path": file, "edits": []any{map[string]any{"old_text": "secret", "new_text": "pwned"}}}},
			{"list_directory", map[string]any{"path": dir}},
			{"grep_files", map[string]any{"path": dir, "pattern": "SECRET"}},
		} {
			res := mcpkittest.Call(t, f.c, c.tool, c.args)
			calls.Add(1)
			if text := resultText(res); strings.Contains(text, outsideMarker) || strings.Contains(text, "nested.txt") {
				leaks.Add(1)
				t.Errorf("%s %v leaked outside content: %.200s", c.tool, c.args, text)
			}
		}
	}
	swaps := stop()
	t.Logf("%d racing calls over %d swaps, %d leaks", calls.Load(), swaps, leaks.Load())
	if swaps < 100 {
		t.Errorf("only %d swaps happened: the race was not exercised", swaps)
	}
	after := f.snapshot(t)
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("a racing call created %s outside the sandbox", p)
		}
	}
	for p, h := range before {
		if after[p] != h {
			t.Errorf("a racing call changed %s outside the sandbox", p)
		}
	}
}

// swapLoop exchanges the names a and b with RENAME_EXCHANGE, which swaps
// both atomically (each path always names one of the two, never nothing),
// as fast as it can until stop is called. each, when not nil, runs after
// every exchange. stop waits for the loop and returns how many exchanges
// succeeded.
func swapLoop(a, b string, each func()) (stop func() int64) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var swaps atomic.Int64
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
			if each != nil {
				each()
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return swaps.Load()
	}
}

func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

func (f *attackFixture) assertOutsideUnchanged(t *testing.T, before map[string]string) {
	t.Helper()
	after := f.snapshot(t)
	for p, h := range before {
		if after[p] != h {
			t.Errorf("%s outside the sandbox changed: %s -> %s", p, h, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared outside the sandbox", p)
		}
	}
}

// resultText is every text a result carries, content and structured.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	b.WriteString(mcpkittest.Text(res))
	if res.StructuredContent != nil {
		fmt.Fprintf(&b, "\n%v", res.StructuredContent)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.ImageContent:
			b.WriteString(c.Data)
		case mcp.AudioContent:
			b.WriteString(c.Data)
		case mcp.EmbeddedResource:
			fmt.Fprintf(&b, "%v", c.Resource)
		}
	}
	return b.String()
}
