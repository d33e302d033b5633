package files

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
	"github.com/domo-agent/domo/tests/testenv"
)

// mutFixture is a tree for the tools that change files: two allowed
// directories, an outside directory, and symlinks from inside to outside.
type mutFixture struct {
	top, allowed, other, outside string
	c                            *client.Client
}

func newMutFixture(t *testing.T, opts Options) *mutFixture {
	t.Helper()
	top := realTempDir(t)
	f := &mutFixture{
		top:     top,
		allowed: filepath.Join(top, "allowed"),
		other:   filepath.Join(top, "other"),
		outside: filepath.Join(top, "outside"),
	}
	writeTree(t, top, map[string]string{
		"allowed/a.txt":         "alpha\n",
		"allowed/sub/b.txt":     "beta\n",
		"allowed/sub/deep/c.md": "gamma\n",
		"allowed/empty/":        "",
		"other/c.txt":           "other c\n",
		"outside/secret.txt":    "secret\n",
	})
	for target, link := range map[string]string{
		filepath.Join(f.outside, "secret.txt"):  "allowed/to-secret",
		filepath.Join(f.outside, "not-yet.txt"): "allowed/dangling-out",
		f.outside:                               "allowed/to-outside",
		"a.txt":                                 "allowed/link-in",
		"sub":                                   "allowed/link-sub",
	} {
		if err := os.Symlink(target, filepath.Join(top, link)); err != nil {
			t.Fatal(err)
		}
	}
	f.c = newTestClient(t, opts, f.allowed, f.other)
	return f
}

// path joins rel to the fixture's top directory.
func (f *mutFixture) path(rel string) string { return filepath.Join(f.top, rel) }

// checkOutside fails if anything outside the allowed directories changed.
func (f *mutFixture) checkOutside(t *testing.T) {
	t.Helper()
	if got := mustReadFile(t, f.path("outside/secret.txt")); got != "secret\n" {
		t.Errorf("outside/secret.txt = %q, want it unchanged", got)
	}
	entries, err := os.ReadDir(f.outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only secret.txt", len(entries))
	}
}

// checkNoTemp fails if a temporary file of an atomic write was left behind.
func (f *mutFixture) checkNoTemp(t *testing.T) {
	t.Helper()
	for _, dir := range []string{f.allowed, f.other} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".domo-") {
				t.Errorf("temporary file left behind: %s", p)
			}
			return nil
		})
	}
}

func wantText(t *testing.T, text string, isErr, wantErr bool, want []string) {
	t.Helper()
	if isErr != wantErr {
		t.Fatalf("isError = %v, want %v; text:\n%s", isErr, wantErr, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("result does not contain %q:\n%s", w, text)
		}
	}
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, f *mutFixture)
		args    func(f *mutFixture) map[string]any
		wantErr bool
		want    []string
		check   func(t *testing.T, f *mutFixture)
	}{
		{
			name: "create a new file",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/new.txt"), "content": "hello\n"}
			},
			want: []string{"wrote 6 bytes to ", "allowed/new.txt (created)"},
			check: func(t *testing.T, f *mutFixture) {
				if got := mustReadFile(t, f.path("allowed/new.txt")); got != "hello\n" {
					t.Errorf("content = %q", got)
				}
			},
		},
		{
			name: "replace a file and keep its mode",
			setup: func(t *testing.T, f *mutFixture) {
				if err := os.Chmod(f.path("allowed/a.txt"), 0o751); err != nil {
					t.Fatal(err)
				}
			},
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/a.txt"), "content": "new"}
			},
			want: []string{"wrote 3 bytes", "(replaced)"},
			check: func(t *testing.T, f *mutFixture) {
				fi, err := os.Stat(f.path("allowed/a.txt"))
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o751 {
					t.Errorf("mode = %v, want 0751", fi.Mode().Perm())
				}
				if got := mustReadFile(t, f.path("allowed/a.txt")); got != "new" {
					t.Errorf("content = %q", got)
				}
			},
		},
		{
			name: "relative path and empty content",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": "sub/empty.txt", "content": ""}
			},
			want: []string{"wrote 0 bytes", "allowed/sub/empty.txt (created)"},
			check: func(t *testing.T, f *mutFixture) {
				if got := mustReadFile(t, f.path("allowed/sub/empty.txt")); got != "" {
					t.Errorf("content = %q", got)
				}
			},
		},
		{
			name: "a symlink inside is written through to its target",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/link-in"), "content": "via link"}
			},
			want: []string{"allowed/a.txt (replaced)"},
			check: func(t *testing.T, f *mutFixture) {
				if got := mustReadFile(t, f.path("allowed/a.txt")); got != "via link" {
					t.Errorf("target content = %q", got)
				}
				if fi, err := os.Lstat(f.path("allowed/link-in")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("link-in is no longer a symlink: %v, %v", fi, err)
				}
			},
		},
		{
			name: "missing parent directory",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/nodir/x.txt"), "content": "x"}
			},
			wantErr: true,
			want:    []string{"does not exist", "create_directory"},
		},
		{
			name: "path is a directory",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/sub"), "content": "x"}
			},
			wantErr: true,
			want:    []string{"is a directory"},
		},
		{
			name: "allowed directory itself",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.allowed, "content": "x"}
			},
			wantErr: true,
			want:    []string{"allowed directory itself"},
		},
		{
			name:    "missing content",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/x.txt")} },
			wantErr: true,
			want:    []string{"content"},
		},
		{
			name:    "missing path",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"content": "x"} },
			wantErr: true,
			want:    []string{"path"},
		},
		{
			name: "content of the wrong type",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/x.txt"), "content": 42}
			},
			wantErr: true,
		},
		{
			name: "unknown argument",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/x.txt"), "content": "x", "mode": "0777"}
			},
			wantErr: true,
			want:    []string{"mode"},
		},
		{
			name:    "empty path",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": "", "content": "x"} },
			wantErr: true,
			want:    []string{"path is empty"},
		},
		{
			name: "path outside",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("outside/new.txt"), "content": "x"}
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name: "dot-dot out of an allowed directory",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/../outside/new.txt"), "content": "x"}
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name: "symlink to an outside file is not written through",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/to-secret"), "content": "pwned"}
			},
			wantErr: true,
			want:    []string{"symlink", "outside the allowed directories"},
			check: func(t *testing.T, f *mutFixture) {
				if fi, err := os.Lstat(f.path("allowed/to-secret")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the link was replaced: %v, %v", fi, err)
				}
			},
		},
		{
			name: "dangling symlink to outside is not created through",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/dangling-out"), "content": "pwned"}
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name: "symlinked directory to outside",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/to-outside/new.txt"), "content": "pwned"}
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newMutFixture(t, DefaultOptions())
			if tt.setup != nil {
				tt.setup(t, f)
			}
			text, isErr := callTool(t, f.c, "write_file", tt.args(f))
			wantText(t, text, isErr, tt.wantErr, tt.want)
			if tt.check != nil {
				tt.check(t, f)
			}
			f.checkOutside(t)
			f.checkNoTemp(t)
		})
	}
}

func TestWriteFileLimit(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxWriteBytes = 10
	f := newMutFixture(t, opts)
	text, isErr := callTool(t, f.c, "write_file", map[string]any{"path": f.path("allowed/big.txt"), "content": "0123456789!"})
	wantText(t, text, isErr, true, []string{"11 B", "write limit of 10 B"})
	if _, err := os.Lstat(f.path("allowed/big.txt")); err == nil {
		t.Error("the file was created despite the limit")
	}
}

func TestEditFile(t *testing.T) {
	const goSrc = "package p\n\nfunc f() int {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
	tests := []struct {
		name    string
		file    string // content of allowed/e.txt before the call
		mode    fs.FileMode
		args    map[string]any // "path" defaults to allowed/e.txt
		wantErr bool
		want    []string
		after   string // content of allowed/e.txt after; "" means unchanged
	}{
		{
			name:  "single exact edit returns a unified diff",
			file:  "one\ntwo\nthree\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "two", "new_text": "2"}}},
			want:  []string{"added 1 and removed 1 lines", "allowed/e.txt\n+++ b/", "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"},
			after: "one\n2\nthree\n",
		},
		{
			name: "edits apply in order to the result of the ones before",
			file: "one\ntwo\nthree\n",
			args: map[string]any{"edits": []any{
				map[string]any{"old_text": "two", "new_text": "deux"},
				map[string]any{"old_text": "deux\nthree", "new_text": "deux\ntrois"},
			}},
			after: "one\ndeux\ntrois\n",
		},
		{
			name:  "dry run leaves the file unchanged",
			file:  "one\ntwo\n",
			args:  map[string]any{"dry_run": true, "edits": []any{map[string]any{"old_text": "two", "new_text": "2"}}},
			want:  []string{"dry run", "was not changed", "-two\n+2\n"},
			after: "",
		},
		{
			name: "whitespace-tolerant match re-indents the replacement",
			file: goSrc,
			args: map[string]any{"edits": []any{map[string]any{
				"old_text": "if x {\n    return 1\n}",
				"new_text": "if y {\n    return 2\n}",
			}}},
			want:  []string{"ignoring leading and trailing whitespace", "-\tif x {\n-\t\treturn 1\n+\tif y {\n+\t\treturn 2\n"},
			after: "package p\n\nfunc f() int {\n\tif y {\n\t\treturn 2\n\t}\n\treturn 0\n}\n",
		},
		{
			name:    "ambiguous exact match names the lines",
			file:    "x = 1\ny\nx = 1\nz\nx = 1\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "x = 1", "new_text": "x = 2"}}},
			wantErr: true,
			want:    []string{"edits[0]", "occurs 3 times (lines 1, 3, 5)", "add surrounding lines", "replace_all"},
		},
		{
			name:    "ambiguous loose match",
			file:    "a\n  b\nc\n\tb\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "b ", "new_text": "B"}}},
			wantErr: true,
			want:    []string{"occurs 2 times when ignoring indentation (lines 2, 4)"},
		},
		{
			name:  "replace_all replaces every occurrence",
			file:  "x = 1\ny\nx = 1\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "x = 1", "new_text": "x = 2", "replace_all": true}}},
			after: "x = 2\ny\nx = 2\n",
		},
		{
			name: "not found names the edit and the closest line, and nothing is written",
			file: "alpha\nbeta\ngamma\n",
			args: map[string]any{"edits": []any{
				map[string]any{"old_text": "alpha", "new_text": "ALPHA"},
				map[string]any{"old_text": "betta", "new_text": "BETA"},
			}},
			wantErr: true,
			want:    []string{"edits[1]", "not found", `line 2: "beta"`, "the file is unchanged"},
		},
		{
			name:    "not found, although the first line is there, names the line that differs",
			file:    "a\nb\nc\nd\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "b\nc\nx", "new_text": "B"}}},
			wantErr: true,
			want:    []string{"its first line is line 2, but line 4 is \"d\" where old_text has \"x\""},
		},
		{
			name:  "CRLF line endings are kept",
			file:  "a\r\nb\r\nc\r\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "a\r\nb", "new_text": "a\nB\nB2"}}},
			want:  []string{"-b\n+B\n+B2\n"},
			after: "a\r\nB\r\nB2\r\nc\r\n",
		},
		{
			name:  "a missing final newline stays missing",
			file:  "a\nb",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "b", "new_text": "c\n"}}},
			want:  []string{"\\ No newline at end of file"},
			after: "a\nc",
		},
		{
			name:  "a final newline stays",
			file:  "a\nb\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "b\n", "new_text": "c"}}},
			after: "a\nc\n",
		},
		{
			name:  "deleting lines",
			file:  "a\nb\nc\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "b\n", "new_text": ""}}},
			after: "a\nc\n",
		},
		{
			name:  "mode is kept",
			file:  "a\n",
			mode:  0o600,
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}},
			after: "b\n",
		},
		{
			name:  "a UTF-8 byte order mark is kept",
			file:  "\uFEFFa\nb\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "b", "new_text": "c"}}},
			after: "\uFEFFa\nc\n",
		},
		{
			name:  "bytes that are not UTF-8 are kept",
			file:  "caf\xe9\nx\n",
			args:  map[string]any{"edits": []any{map[string]any{"old_text": "x", "new_text": "y"}}},
			want:  []string{"not valid UTF-8"},
			after: "caf\xe9\ny\n",
		},
		{
			name:    "binary file refused",
			file:    "\x00\x01\x02abc",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "abc", "new_text": "x"}}},
			wantErr: true,
			want:    []string{"binary"},
		},
		{
			name:    "UTF-16 file refused",
			file:    "\xff\xfea\x00\n\x00",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}},
			wantErr: true,
			want:    []string{"UTF-16"},
		},
		{
			name:    "no edits",
			file:    "a\n",
			args:    map[string]any{"edits": []any{}},
			wantErr: true,
		},
		{
			name:    "edits missing",
			file:    "a\n",
			args:    map[string]any{},
			wantErr: true,
			want:    []string{"edits"},
		},
		{
			name:    "edits of the wrong type",
			file:    "a\n",
			args:    map[string]any{"edits": "a -> b"},
			wantErr: true,
		},
		{
			name:    "empty old_text",
			file:    "a\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "", "new_text": "b"}}},
			wantErr: true,
			want:    []string{"old_text"},
		},
		{
			name:    "edit that changes nothing",
			file:    "a\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "a", "new_text": "a"}}},
			wantErr: true,
			want:    []string{"changes nothing"},
		},
		{
			name:    "new_text missing",
			file:    "a\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "a"}}},
			wantErr: true,
			want:    []string{"new_text"},
		},
		{
			name:    "unknown argument in an edit",
			file:    "a\n",
			args:    map[string]any{"edits": []any{map[string]any{"old_text": "a", "new_text": "b", "regex": true}}},
			wantErr: true,
			want:    []string{"regex"},
		},
		{
			name:    "unknown argument",
			file:    "a\n",
			args:    map[string]any{"backup": true, "edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}},
			wantErr: true,
			want:    []string{"backup"},
		},
		{
			name:    "empty path",
			file:    "a\n",
			args:    map[string]any{"path": "", "edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}},
			wantErr: true,
			want:    []string{"path is empty"},
		},
		{
			name:    "directory",
			file:    "a\n",
			args:    map[string]any{"path": "sub", "edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}},
			wantErr: true,
			want:    []string{"is a directory"},
		},
		{
			name:    "missing file",
			file:    "a\n",
			args:    map[string]any{"path": "nope.txt", "edits": []any{map[string]any{"old_text": "a", "new_text": "b"}}},
			wantErr: true,
			want:    []string{"does not exist"},
		},
		{
			name:    "symlink to an outside file",
			file:    "a\n",
			args:    map[string]any{"path": "to-secret", "edits": []any{map[string]any{"old_text": "secret", "new_text": "pwned"}}},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name:    "path outside",
			file:    "a\n",
			args:    map[string]any{"path": "../outside/secret.txt", "edits": []any{map[string]any{"old_text": "secret", "new_text": "pwned"}}},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newMutFixture(t, DefaultOptions())
			p := f.path("allowed/e.txt")
			if err := os.WriteFile(p, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.mode != 0 {
				if err := os.Chmod(p, tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			args := map[string]any{"path": p}
			for k, v := range tt.args {
				args[k] = v
			}
			text, isErr := callTool(t, f.c, "edit_file", args)
			wantText(t, text, isErr, tt.wantErr, tt.want)
			want := tt.after
			if want == "" {
				want = tt.file
			}
			if got := mustReadFile(t, p); got != want {
				t.Errorf("file = %q, want %q", got, want)
			}
			if tt.mode != 0 {
				if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != tt.mode {
					t.Errorf("mode = %v (%v), want %v", fi.Mode().Perm(), err, tt.mode)
				}
			}
			f.checkOutside(t)
			f.checkNoTemp(t)
		})
	}
}

func TestEditFileLimit(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxReadBytes = 16
	f := newMutFixture(t, opts)
	p := f.path("allowed/big.txt")
	content := strings.Repeat("line\n", 10)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := callTool(t, f.c, "edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"old_text": "line", "new_text": "x"}}})
	wantText(t, text, isErr, true, []string{"over the 16 B edit_file can change"})
	if got := mustReadFile(t, p); got != content {
		t.Errorf("file changed to %q", got)
	}
}

func TestEditReindent(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		old, new string
		want     string
	}{
		{
			name: "spaces in old_text, tabs in the file",
			text: "func f() {\n\tif x {\n\t\tg()\n\t}\n}\n",
			old:  "if x {\n    g()\n}",
			new:  "if x {\n    g()\n    h()\n}",
			want: "func f() {\n\tif x {\n\t\tg()\n\t\th()\n\t}\n}\n",
		},
		{
			name: "old_text without indentation",
			text: "  a\n  b\n",
			old:  "a\nb\n",
			new:  "a\nc\n",
			want: "  a\n  c\n",
		},
		{
			name: "trailing whitespace differs",
			text: "a  \nb\t\n",
			old:  "a\nb",
			new:  "x",
			want: "x\n",
		},
		{
			name: "match at the end of a file without a final newline",
			text: "a\n  b",
			old:  "b\n",
			new:  "c\n",
			want: "a\n  c",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, loose, err := applyEdit(context.Background(), tt.text, tt.old, tt.new, false, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || n != 1 || !loose {
				t.Errorf("applyEdit = %q, %d, %v; want %q, 1, true", got, n, loose, tt.want)
			}
		})
	}
}

func TestApplyEditsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := applyEdits(ctx, "a\n", []editOp{{OldText: "a", NewText: "b"}}, true, 1<<20); err == nil {
		t.Error("applyEdits ran with a cancelled context")
	}
}

func TestCreateDirectory(t *testing.T) {
	tests := []struct {
		name    string
		args    func(f *mutFixture) map[string]any
		wantErr bool
		want    []string
		isDir   string // relative to top, must be a directory afterwards
		absent  string // relative to top, must not exist afterwards
	}{
		{
			name:  "nested new directories",
			args:  func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/x/y/z")} },
			want:  []string{"created directory", "allowed/x/y/z"},
			isDir: "allowed/x/y/z",
		},
		{
			name:  "relative path",
			args:  func(f *mutFixture) map[string]any { return map[string]any{"path": "sub/new"} },
			isDir: "allowed/sub/new",
		},
		{
			name: "already exists",
			args: func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/sub")} },
			want: []string{"already exists"},
		},
		{
			name: "an allowed directory itself",
			args: func(f *mutFixture) map[string]any { return map[string]any{"path": f.allowed} },
			want: []string{"already exists"},
		},
		{
			name:    "a file in the way",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/a.txt")} },
			wantErr: true,
			want:    []string{"is a file, not a directory"},
		},
		{
			name:    "a file in the way of a parent",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/a.txt/x/y")} },
			wantErr: true,
			want:    []string{"allowed/a.txt is a file, not a directory"},
		},
		{
			name:    "path outside",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("outside/new")} },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			absent:  "outside/new",
		},
		{
			name:    "through a symlink to outside",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/to-outside/new")} },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			absent:  "outside/new",
		},
		{
			name:    "dangling symlink to outside",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/dangling-out")} },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			absent:  "outside/not-yet.txt",
		},
		{
			name:    "missing path",
			args:    func(f *mutFixture) map[string]any { return map[string]any{} },
			wantErr: true,
			want:    []string{"path"},
		},
		{
			name:    "empty path",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": ""} },
			wantErr: true,
			want:    []string{"path is empty"},
		},
		{
			name:    "path of the wrong type",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": []string{"a"}} },
			wantErr: true,
		},
		{
			name:    "unknown argument",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": "n", "mode": 0o700} },
			wantErr: true,
			want:    []string{"mode"},
			absent:  "allowed/n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newMutFixture(t, DefaultOptions())
			text, isErr := callTool(t, f.c, "create_directory", tt.args(f))
			wantText(t, text, isErr, tt.wantErr, tt.want)
			if tt.isDir != "" {
				if fi, err := os.Lstat(f.path(tt.isDir)); err != nil || !fi.IsDir() {
					t.Errorf("%s is not a directory: %v", tt.isDir, err)
				}
			}
			if tt.absent != "" {
				if _, err := os.Lstat(f.path(tt.absent)); err == nil {
					t.Errorf("%s exists", tt.absent)
				}
			}
			f.checkOutside(t)
		})
	}
}

func TestMutationToolAnnotations(t *testing.T) {
	s, err := New([]string{t.TempDir()}, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	y, n := mcpkit.Yes, mcpkit.No
	want := map[string]mcpkit.Annotations{
		"write_file":       {ReadOnly: n, Destructive: y, Idempotent: y, OpenWorld: n},
		"edit_file":        {ReadOnly: n, Destructive: y, Idempotent: n, OpenWorld: n},
		"create_directory": {ReadOnly: n, Destructive: n, Idempotent: y, OpenWorld: n},
		"move_file":        {ReadOnly: n, Destructive: y, Idempotent: n, OpenWorld: n},
		"delete_file":      {ReadOnly: n, Destructive: y, Idempotent: y, OpenWorld: n},
	}
	for _, tool := range s.Tools() {
		w, ok := want[tool.Def.Name]
		if !ok {
			continue
		}
		delete(want, tool.Def.Name)
		if tool.Annotations != w {
			t.Errorf("%s annotations = %+v, want %+v", tool.Def.Name, tool.Annotations, w)
		}
		if tool.Def.Annotations.Title == "" {
			t.Errorf("%s has no title", tool.Def.Name)
		}
	}
	for name := range want {
		t.Errorf("tool %s is missing", name)
	}
}

// TestWriteKeepsOwner replaces a file owned by another user, as a server
// running as root would: the file keeps its owner.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root", "changing a file's owner needs root")
	}
	dir := realTempDir(t)
	p := filepath.Join(dir, "owned.txt")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 1234, 5678); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, DefaultOptions(), dir)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": p, "content": "new"}},
		{"edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"old_text": "new", "new_text": "newer"}}}},
	} {
		if res := mcpkittest.Call(t, c, call.tool, call.args); res.IsError {
			t.Fatalf("%s: %s", call.tool, mcpkittest.Text(res))
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 1234 || st.Gid != 5678 || fi.Mode().Perm() != 0o640 {
			t.Errorf("after %s: owner %d:%d mode %v, want 1234:5678 0640", call.tool, st.Uid, st.Gid, fi.Mode().Perm())
		}
	}
}
