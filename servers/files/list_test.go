package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// walkFixture is an allowed directory for the listing and search tools,
// with hidden files, a binary file, bulky and deep subdirectories, and
// symlinks inside, outside, dangling and in a loop; and a directory
// outside the sandbox.
type walkFixture struct {
	top, dir string
	c        *client.Client
}

const outsideText = "OUTSIDE-CONTENT-91c2"

func newWalkFixture(t *testing.T, opts Options) *walkFixture {
	t.Helper()
	top := realTempDir(t)
	f := &walkFixture{top: top, dir: filepath.Join(top, "allowed")}
	writeTree(t, top, map[string]string{
		"allowed/a.txt":                     "alpha\nbeta\n",
		"allowed/.hidden":                   "h",
		"allowed/sub/b.go":                  "package b\n\nfunc B() {}\n",
		"allowed/sub/deep/d1/d2/leaf.txt":   "leaf\n",
		"allowed/node_modules/pkg/index.js": "module.exports = 1\n",
		"allowed/empty/":                    "",
		"outside/secret.txt":                outsideText + "\n",
	})
	bin := make([]byte, 3000)
	copy(bin, "\x00\x01binary alpha")
	if err := os.WriteFile(filepath.Join(f.dir, "big.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"link-in":  "sub",
		"link-out": filepath.Join(top, "outside"),
		"loop-a":   "loop-b",
		"loop-b":   "loop-a",
		"dangling": "missing",
	} {
		if err := os.Symlink(target, filepath.Join(f.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	f.c = newTestClient(t, opts, f.dir)
	return f
}

// call calls a tool and returns the result with its text.
func (f *walkFixture) call(t *testing.T, tool string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res := mcpkittest.Call(t, f.c, tool, args)
	return res, mcpkittest.Text(res)
}

// decodeStructured decodes a result's structured content into T.
func decodeStructured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return v
}

// toolCase is one call of a table test: substrings the text must hold (in
// order), must not hold, and whether it is an error result.
type toolCase struct {
	name    string
	args    map[string]any
	wantErr bool
	want    []string
	notWant []string
}

func runToolCases(t *testing.T, f *walkFixture, tool string, tests []toolCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text := f.call(t, tool, tt.args)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v, want %v; text:\n%s", res.IsError, tt.wantErr, text)
			}
			rest := text
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					if strings.Contains(text, w) {
						t.Errorf("%q is out of order in:\n%s", w, text)
					} else {
						t.Errorf("missing %q in:\n%s", w, text)
					}
					continue
				}
				rest = rest[i+len(w):]
			}
			for _, nw := range append(tt.notWant, outsideText) {
				if strings.Contains(text, nw) {
					t.Errorf("unexpected %q in:\n%s", nw, text)
				}
			}
		})
	}
}

func TestListDirectory(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(f.dir, "big.bin"), old, old); err != nil {
		t.Fatal(err)
	}
	runToolCases(t, f, "list_directory", []toolCase{
		{name: "sorted by name", args: map[string]any{"path": f.dir}, want: []string{
			f.dir + ":", "[FILE]  .hidden", "[FILE]  a.txt", "11 B", "[FILE]  big.bin", "2.9 KiB",
			"[LINK]  dangling -> missing", "[DIR]   empty/", "[LINK]  link-in -> sub", "[LINK]  link-out -> " + f.top + "/outside",
			"[LINK]  loop-a -> loop-b", "[DIR]   node_modules/", "[DIR]   sub/",
			"3 files, 3 directories, 5 symlinks; total size 2.9 KiB",
		}, notWant: []string{"secret.txt"}},
		{name: "relative path", args: map[string]any{"path": "sub"}, want: []string{f.dir + "/sub:", "b.go", "deep/", "1 file, 1 directory"}},
		{name: "through a symlink inside", args: map[string]any{"path": f.dir + "/link-in"}, want: []string{f.dir + "/sub:", "b.go"}},
		{name: "sorted by size", args: map[string]any{"path": f.dir, "sort_by": "size"}, want: []string{"big.bin", "a.txt", ".hidden"}},
		{name: "sorted by modified", args: map[string]any{"path": f.dir, "sort_by": "modified", "show_hidden": false}, want: []string{"a.txt", "big.bin"}},
		{name: "hidden left out", args: map[string]any{"path": f.dir, "show_hidden": false}, want: []string{"a.txt", "1 hidden entry not shown"}, notWant: []string{".hidden"}},
		{name: "empty directory", args: map[string]any{"path": f.dir + "/empty"}, want: []string{"(empty)", "0 files, 0 directories"}},
		{name: "a file", args: map[string]any{"path": f.dir + "/a.txt"}, wantErr: true, want: []string{"is a file, not a directory"}},
		{name: "missing", args: map[string]any{"path": f.dir + "/nope"}, wantErr: true, want: []string{"does not exist"}},
		{name: "outside", args: map[string]any{"path": f.top + "/outside"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink out", args: map[string]any{"path": f.dir + "/link-out"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink loop", args: map[string]any{"path": f.dir + "/loop-a"}, wantErr: true, want: []string{"too many levels of symlinks"}},
		{name: "empty path", args: map[string]any{"path": ""}, wantErr: true, want: []string{"path is empty"}},
		{name: "missing path", args: map[string]any{}, wantErr: true, want: []string{"path"}},
		{name: "wrong type", args: map[string]any{"path": 3}, wantErr: true, want: []string{"path"}},
		{name: "unknown argument", args: map[string]any{"path": f.dir, "recursive": true}, wantErr: true, want: []string{"recursive"}},
		{name: "bad sort", args: map[string]any{"path": f.dir, "sort_by": "colour"}, wantErr: true, want: []string{"sort_by"}},
	})
}

func TestListDirectoryStructured(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	res, text := f.call(t, "list_directory", map[string]any{"path": f.dir})
	if res.IsError {
		t.Fatal(text)
	}
	l := decodeStructured[dirListing](t, res)
	if l.Path != f.dir || l.Files != 3 || l.Directories != 3 || l.Symlinks != 5 || l.Others != 0 || l.TotalSize != 3000+11+1 || len(l.Entries) != 11 {
		t.Errorf("listing = %+v", l)
	}
	byName := map[string]dirEntry{}
	for _, e := range l.Entries {
		byName[e.Name] = e
	}
	tests := []struct {
		name, entry, typ, target string
		size                     int64
	}{
		{name: "file", entry: "a.txt", typ: "file", size: 11},
		{name: "directory", entry: "sub", typ: "directory"},
		{name: "link out", entry: "link-out", typ: "symlink", target: filepath.Join(f.top, "outside"), size: int64(len(filepath.Join(f.top, "outside")))},
		{name: "dangling", entry: "dangling", typ: "symlink", target: "missing", size: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := byName[tt.entry]
			if !ok {
				t.Fatalf("no entry %s", tt.entry)
			}
			if e.Type != tt.typ || e.Target != tt.target || e.Size != tt.size {
				t.Errorf("entry = %+v, want type %s target %q size %d", e, tt.typ, tt.target, tt.size)
			}
			if _, err := time.Parse(time.RFC3339, e.Modified); err != nil {
				t.Errorf("modified %q: %v", e.Modified, err)
			}
		})
	}
}

func TestListDirectoryCap(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	many := filepath.Join(f.dir, "many")
	files := map[string]string{}
	for i := range maxListEntries + 5 {
		files[fmt.Sprintf("f%04d", i)] = "x"
	}
	writeTree(t, many, files)
	res, text := f.call(t, "list_directory", map[string]any{"path": many})
	if res.IsError {
		t.Fatal(text)
	}
	if !strings.Contains(text, "[… 5 more entries not shown; narrow with") || !strings.Contains(text, "2005 files") {
		t.Errorf("no cap note or totals in:\n%s", text[len(text)-400:])
	}
	if strings.Contains(text, "f2004") {
		t.Error("an entry past the cap is shown")
	}
	l := decodeStructured[dirListing](t, res)
	if len(l.Entries) != maxListEntries || l.NotShown != 5 {
		t.Errorf("structured: %d entries, not_shown %d", len(l.Entries), l.NotShown)
	}
}

func TestDirectoryTree(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	runToolCases(t, f, "directory_tree", []toolCase{
		{name: "default depth", args: map[string]any{"path": f.dir}, want: []string{
			f.dir + "/\n", "  .hidden\n", "  a.txt\n", "  big.bin\n", "  dangling -> missing\n", "  empty/\n",
			"  link-in -> sub\n", "  link-out -> " + f.top + "/outside\n", "  loop-a -> loop-b\n", "  loop-b -> loop-a\n",
			"  node_modules/\n", "    pkg/\n", "      index.js\n",
			"  sub/\n", "    b.go\n", "    deep/\n", "      d1/ (1 entry)\n",
			"5 files, 6 directories, 5 symlinks shown", "below max_depth=3",
		}, notWant: []string{"leaf.txt", "secret.txt"}},
		{name: "depth one", args: map[string]any{"path": f.dir, "max_depth": 1}, want: []string{
			"  empty/\n", "  node_modules/ (1 entry)\n", "  sub/ (2 entries)\n", "below max_depth=1",
		}, notWant: []string{"b.go", "index.js"}},
		{name: "deep", args: map[string]any{"path": f.dir + "/sub", "max_depth": 20}, want: []string{"        leaf.txt\n"}, notWant: []string{"max_depth="}},
		{name: "exclude by name prunes", args: map[string]any{"path": f.dir, "exclude": []any{"node_modules", "deep/", ".*"}}, want: []string{"  a.txt\n", "  sub/\n", "    b.go\n"},
			notWant: []string{"node_modules", "pkg/", "index.js", "deep", ".hidden"}},
		{name: "exclude by path glob", args: map[string]any{"path": f.dir, "exclude": []any{"**/*.go", "sub/deep"}}, want: []string{"  sub/\n"}, notWant: []string{"b.go", "deep"}},
		{name: "max entries", args: map[string]any{"path": f.dir, "max_entries": 3}, want: []string{
			"  .hidden\n", "  a.txt\n", "  big.bin\n", "3 files, 0 directories shown",
			"stopped at max_entries=3; 13 more entries not shown; narrow with exclude",
		}, notWant: []string{"dangling"}},
		{name: "a file", args: map[string]any{"path": f.dir + "/a.txt"}, wantErr: true, want: []string{"not a directory"}},
		{name: "outside", args: map[string]any{"path": f.top}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink out", args: map[string]any{"path": f.dir + "/link-out"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink loop", args: map[string]any{"path": f.dir + "/loop-b"}, wantErr: true, want: []string{"too many levels"}},
		{name: "depth zero", args: map[string]any{"path": f.dir, "max_depth": 0}, wantErr: true, want: []string{"max_depth"}},
		{name: "depth too big", args: map[string]any{"path": f.dir, "max_depth": 21}, wantErr: true, want: []string{"max_depth"}},
		{name: "entries too many", args: map[string]any{"path": f.dir, "max_entries": 10001}, wantErr: true, want: []string{"max_entries"}},
		{name: "bad glob", args: map[string]any{"path": f.dir, "exclude": []any{"[abc"}}, wantErr: true, want: []string{`exclude pattern "[abc" is not a valid glob`}},
		{name: "exclude not a list", args: map[string]any{"path": f.dir, "exclude": "node_modules"}, wantErr: true, want: []string{"exclude"}},
		{name: "empty path", args: map[string]any{"path": ""}, wantErr: true, want: []string{"path is empty"}},
		{name: "missing path", args: map[string]any{"max_depth": 2}, wantErr: true, want: []string{"path"}},
	})
}

func TestWalkProgress(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	files := map[string]string{}
	for i := range 2500 {
		files[fmt.Sprintf("many/f%04d", i)] = ""
	}
	writeTree(t, f.dir, files)
	var got atomic.Int32
	f.c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			got.Add(1)
		}
	})
	for _, tool := range []string{"directory_tree", "search_files", "grep_files", "list_directory"} {
		t.Run(tool, func(t *testing.T) {
			got.Store(0)
			req := mcp.CallToolRequest{}
			req.Params.Name = tool
			req.Params.Arguments = map[string]any{"path": f.dir + "/many", "pattern": "zzz"}
			if tool == "directory_tree" || tool == "list_directory" {
				req.Params.Arguments = map[string]any{"path": f.dir + "/many"}
			}
			req.Params.Meta = &mcp.Meta{ProgressToken: "p1"}
			res, err := f.c.CallTool(t.Context(), req)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %s", err, mcpkittest.Text(res))
			}
			deadline := time.Now().Add(2 * time.Second)
			for got.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if got.Load() < 2 {
				t.Errorf("%d progress notifications, want at least 2", got.Load())
			}
		})
	}
}

// TestWalksStopWhenCancelled calls the walks directly: the in-process
// transport refuses a cancelled context before a handler runs.
func TestWalksStopWhenCancelled(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	sb, err := NewSandbox([]string{f.dir})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := sb.Resolve(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var req mcp.CallToolRequest
	tests := []struct {
		name string
		walk func() error
	}{
		{name: "list", walk: func() error { _, err := listDir(ctx, req, loc, true); return err }},
		{name: "tree", walk: func() error { _, err := renderTree(ctx, req, loc, treeArgs{}); return err }},
		{name: "search", walk: func() error { _, err := searchNames(ctx, req, loc, searchArgs{Pattern: "*"}); return err }},
		{name: "grep", walk: func() error {
			g := &grepper{re: regexp.MustCompile("a"), maxMatches: 10, maxBytes: 1 << 20, budget: 1 << 20}
			_, err := g.run(ctx, req, loc, nil, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.walk(); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
		})
	}
}

// TestOddEntries lists, searches and greps a directory holding a FIFO
// (which must never be opened for reading: it would block) and a name
// crafted to look like further entries.
func TestOddEntries(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	odd := filepath.Join(f.dir, "odd")
	crafted := "evil\n[FILE] fake.txt"
	writeTree(t, odd, map[string]string{crafted: "needle\n", "plain.txt": "needle\n"})
	if err := syscall.Mkfifo(filepath.Join(odd, "pipe"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	quoted := fmt.Sprintf("%q", crafted)
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr bool
		want    []string
	}{
		{name: "list", tool: "list_directory", args: map[string]any{"path": odd}, want: []string{quoted, "[FIFO]  pipe", "2 files, 0 directories, 1 other entry"}},
		{name: "tree", tool: "directory_tree", args: map[string]any{"path": odd}, want: []string{"  " + quoted + "\n", "  pipe [fifo]\n"}},
		{name: "search", tool: "search_files", args: map[string]any{"path": odd, "pattern": "*"}, want: []string{fmt.Sprintf("%q", odd+"/"+crafted), odd + "/pipe\n", "3 matches"}},
		{name: "grep skips the fifo", tool: "grep_files", args: map[string]any{"path": odd, "pattern": "needle"}, want: []string{fmt.Sprintf("%q", odd+"/"+crafted) + ":1:needle", "2 matching lines in 2 files (2 files searched)"}},
		{name: "grep the fifo", tool: "grep_files", args: map[string]any{"path": odd + "/pipe", "pattern": "needle"}, wantErr: true, want: []string{"not a regular file"}},
		{name: "info on the fifo", tool: "get_file_info", args: map[string]any{"path": odd + "/pipe"}, want: []string{"type: fifo", "mode: 0644 (prw-r--r--)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text := f.call(t, tt.tool, tt.args)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v; text:\n%s", res.IsError, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if strings.Contains(text, "\n[FILE] fake.txt") {
				t.Errorf("the crafted name made a line of its own:\n%s", text)
			}
		})
	}
}
