package files

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMoveFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, f *mutFixture)
		args    func(f *mutFixture) map[string]any
		wantErr bool
		want    []string
		files   map[string]string // relative to top: content wanted afterwards
		absent  []string          // relative to top: must not exist afterwards
		links   map[string]string // relative to top: symlink target wanted afterwards
	}{
		{
			name:   "rename a file",
			args:   func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/b.txt") },
			want:   []string{"moved file", "allowed/b.txt"},
			files:  map[string]string{"allowed/b.txt": "alpha\n"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name: "relative paths",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"source": "a.txt", "destination": "sub/a.txt"}
			},
			files:  map[string]string{"allowed/sub/a.txt": "alpha\n"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name:   "rename a directory",
			args:   func(f *mutFixture) map[string]any { return mv(f, "allowed/sub", "allowed/renamed") },
			want:   []string{"moved directory"},
			files:  map[string]string{"allowed/renamed/deep/c.md": "gamma\n"},
			absent: []string{"allowed/sub"},
		},
		{
			name:    "a directory as destination is not moved into",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/sub") },
			wantErr: true,
			want:    []string{"is a directory", "give the full new path", "allowed/sub/a.txt"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
			absent:  []string{"allowed/sub/a.txt"},
		},
		{
			name:    "existing destination without overwrite",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/sub/b.txt") },
			wantErr: true,
			want:    []string{"already exists", "overwrite"},
			files:   map[string]string{"allowed/a.txt": "alpha\n", "allowed/sub/b.txt": "beta\n"},
		},
		{
			name: "existing destination with overwrite",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/a.txt", "allowed/sub/b.txt")
				a["overwrite"] = true
				return a
			},
			want:   []string{"replacing what was there"},
			files:  map[string]string{"allowed/sub/b.txt": "alpha\n"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name: "overwrite never replaces a directory",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/sub", "allowed/empty")
				a["overwrite"] = true
				return a
			},
			wantErr: true,
			want:    []string{"directories are never replaced", "allowed/empty/sub"},
			files:   map[string]string{"allowed/sub/b.txt": "beta\n"},
		},
		{
			name: "a directory cannot replace a file",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/empty", "allowed/a.txt")
				a["overwrite"] = true
				return a
			},
			wantErr: true,
			want:    []string{"a directory cannot replace"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name:    "a directory into itself",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/sub", "allowed/sub/deep/sub") },
			wantErr: true,
			want:    []string{"into itself"},
			files:   map[string]string{"allowed/sub/b.txt": "beta\n"},
		},
		{
			name:    "same path",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/./a.txt") },
			wantErr: true,
			want:    []string{"nothing to move"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name:   "a symlink moves as a link, even one pointing outside",
			args:   func(f *mutFixture) map[string]any { return mv(f, "allowed/to-secret", "allowed/sub/moved-link") },
			want:   []string{"moved symlink"},
			absent: []string{"allowed/to-secret"},
			links:  map[string]string{"allowed/sub/moved-link": "outside/secret.txt"},
		},
		{
			name:    "missing destination directory",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/nodir/a.txt") },
			wantErr: true,
			want:    []string{"does not exist", "create_directory"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name:    "missing source",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/nope.txt", "allowed/x.txt") },
			wantErr: true,
			want:    []string{"does not exist"},
		},
		{
			name:    "source outside",
			args:    func(f *mutFixture) map[string]any { return mv(f, "outside/secret.txt", "allowed/stolen.txt") },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			absent:  []string{"allowed/stolen.txt"},
		},
		{
			name: "source through a symlinked directory to outside",
			args: func(f *mutFixture) map[string]any {
				return mv(f, "allowed/to-outside/secret.txt", "allowed/stolen.txt")
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			absent:  []string{"allowed/stolen.txt"},
		},
		{
			name:    "destination outside",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "outside/a.txt") },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name:    "destination through a symlinked directory to outside",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/to-outside/a.txt") },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name: "dangling symlink to outside as destination is replaced, not followed",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/a.txt", "allowed/dangling-out")
				a["overwrite"] = true
				return a
			},
			files:  map[string]string{"allowed/dangling-out": "alpha\n"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name:    "dangling symlink to outside as destination without overwrite",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "allowed/dangling-out") },
			wantErr: true,
			want:    []string{"already exists (a symlink)"},
			links:   map[string]string{"allowed/dangling-out": "outside/not-yet.txt"},
		},
		{
			name:    "an allowed directory itself",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed", "allowed/moved") },
			wantErr: true,
			want:    []string{"allowed directory itself"},
		},
		{
			name:   "a file between allowed directories is copied, then deleted",
			args:   func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "other/a.txt") },
			want:   []string{"copied between allowed directories"},
			files:  map[string]string{"other/a.txt": "alpha\n"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name:    "a file between allowed directories without overwrite",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/a.txt", "other/c.txt") },
			wantErr: true,
			want:    []string{"already exists", "overwrite"},
			files:   map[string]string{"allowed/a.txt": "alpha\n", "other/c.txt": "other c\n"},
		},
		{
			name: "a file between allowed directories with overwrite",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/a.txt", "other/c.txt")
				a["overwrite"] = true
				return a
			},
			files:  map[string]string{"other/c.txt": "alpha\n"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name:    "a directory between allowed directories is refused",
			args:    func(f *mutFixture) map[string]any { return mv(f, "allowed/sub", "other/sub") },
			wantErr: true,
			want:    []string{"different allowed directories", "only regular files"},
			files:   map[string]string{"allowed/sub/b.txt": "beta\n"},
			absent:  []string{"other/sub"},
		},
		{
			name:    "missing destination argument",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"source": f.path("allowed/a.txt")} },
			wantErr: true,
			want:    []string{"destination"},
		},
		{
			name: "overwrite of the wrong type",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/a.txt", "allowed/b.txt")
				a["overwrite"] = "yes"
				return a
			},
			wantErr: true,
			absent:  []string{"allowed/b.txt"},
		},
		{
			name: "unknown argument",
			args: func(f *mutFixture) map[string]any {
				a := mv(f, "allowed/a.txt", "allowed/b.txt")
				a["force"] = true
				return a
			},
			wantErr: true,
			want:    []string{"force"},
			absent:  []string{"allowed/b.txt"},
		},
		{
			name: "empty source",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"source": "", "destination": f.path("allowed/b.txt")}
			},
			wantErr: true,
			want:    []string{"path is empty"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newMutFixture(t, DefaultOptions())
			if tt.setup != nil {
				tt.setup(t, f)
			}
			text, isErr := callTool(t, f.c, "move_file", tt.args(f))
			wantText(t, text, isErr, tt.wantErr, tt.want)
			checkTree(t, f, tt.files, tt.absent, tt.links)
			f.checkOutside(t)
			f.checkNoTemp(t)
		})
	}
}

func mv(f *mutFixture, src, dst string) map[string]any {
	return map[string]any{"source": f.path(src), "destination": f.path(dst)}
}

func checkTree(t *testing.T, f *mutFixture, files map[string]string, absent []string, links map[string]string) {
	t.Helper()
	for rel, want := range files {
		if got := mustReadFile(t, f.path(rel)); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	for _, rel := range absent {
		if _, err := os.Lstat(f.path(rel)); err == nil {
			t.Errorf("%s still exists", rel)
		}
	}
	for rel, want := range links {
		got, err := os.Readlink(f.path(rel))
		if err != nil {
			t.Errorf("%s is not a symlink: %v", rel, err)
			continue
		}
		if want = f.path(want); got != want {
			t.Errorf("%s points to %s, want %s", rel, got, want)
		}
	}
}

func TestMoveFileAcrossKeepsModeAndTime(t *testing.T) {
	f := newMutFixture(t, DefaultOptions())
	src := f.path("allowed/a.txt")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chmod(src, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(src, old, old); err != nil {
		t.Fatal(err)
	}
	text, isErr := callTool(t, f.c, "move_file", mv(f, "allowed/a.txt", "other/sub/a.txt"))
	wantText(t, text, isErr, true, []string{"create_directory"})
	text, isErr = callTool(t, f.c, "move_file", mv(f, "allowed/a.txt", "other/a.txt"))
	wantText(t, text, isErr, false, nil)
	fi, err := os.Stat(f.path("other/a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(old) {
		t.Errorf("moved file has mode %v and time %v, want 0640 and %v", fi.Mode().Perm(), fi.ModTime(), old)
	}
	f.checkNoTemp(t)
}

// TestMoveFileNestedAllowedDirs checks that a move between two allowed
// directories, one inside the other, is a rename through the outer one.
func TestMoveFileNestedAllowedDirs(t *testing.T) {
	top := realTempDir(t)
	writeTree(t, top, map[string]string{"a.txt": "a\n", "nest/n.txt": "n\n", "nest/d/x": "x"})
	c := newTestClient(t, DefaultOptions(), top, filepath.Join(top, "nest"))
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr bool
		want    []string
	}{
		{
			name: "file into the inner directory is renamed",
			tool: "move_file",
			args: map[string]any{"source": filepath.Join(top, "a.txt"), "destination": filepath.Join(top, "nest/a.txt")},
			want: []string{"moved file"},
		},
		{
			name: "directory out of the inner directory is renamed",
			tool: "move_file",
			args: map[string]any{"source": filepath.Join(top, "nest/d"), "destination": filepath.Join(top, "d")},
			want: []string{"moved directory"},
		},
		{
			name:    "the inner allowed directory cannot be moved",
			tool:    "move_file",
			args:    map[string]any{"source": filepath.Join(top, "nest"), "destination": filepath.Join(top, "moved")},
			wantErr: true,
			want:    []string{"allowed directory itself"},
		},
		{
			name:    "the inner allowed directory cannot be deleted",
			tool:    "delete_file",
			args:    map[string]any{"path": filepath.Join(top, "nest"), "recursive": true},
			wantErr: true,
			want:    []string{"allowed directory itself"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := callTool(t, c, tt.tool, tt.args)
			wantText(t, text, isErr, tt.wantErr, tt.want)
			if !tt.wantErr && strings.Contains(text, "copied") {
				t.Errorf("moved by copying, want a rename: %s", text)
			}
		})
	}
	if got := mustReadFile(t, filepath.Join(top, "nest/a.txt")); got != "a\n" {
		t.Errorf("nest/a.txt = %q", got)
	}
	if got := mustReadFile(t, filepath.Join(top, "d/x")); got != "x" {
		t.Errorf("d/x = %q", got)
	}
}

func TestDeleteFile(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, f *mutFixture)
		args    func(f *mutFixture) map[string]any
		wantErr bool
		want    []string
		files   map[string]string // relative to top: content wanted afterwards
		absent  []string
		links   map[string]string
	}{
		{
			name:   "a file",
			args:   func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/a.txt")} },
			want:   []string{"deleted file", "allowed/a.txt", "6 B"},
			absent: []string{"allowed/a.txt"},
		},
		{
			name:   "relative path",
			args:   func(f *mutFixture) map[string]any { return map[string]any{"path": "sub/b.txt"} },
			absent: []string{"allowed/sub/b.txt"},
		},
		{
			name:   "a symlink to an outside file deletes the link only",
			args:   func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/to-secret")} },
			want:   []string{"deleted symlink", "was not touched"},
			absent: []string{"allowed/to-secret"},
		},
		{
			name:   "a dangling symlink to outside",
			args:   func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/dangling-out")} },
			want:   []string{"deleted symlink"},
			absent: []string{"allowed/dangling-out"},
		},
		{
			name: "a symlink to a directory inside, even with recursive",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/link-sub"), "recursive": true}
			},
			want:   []string{"deleted symlink"},
			files:  map[string]string{"allowed/sub/b.txt": "beta\n"},
			absent: []string{"allowed/link-sub"},
		},
		{
			name:   "an empty directory",
			args:   func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/empty")} },
			want:   []string{"deleted empty directory"},
			absent: []string{"allowed/empty"},
		},
		{
			name:    "a directory with contents needs recursive",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/sub")} },
			wantErr: true,
			want:    []string{"not empty (2 entries", "recursive"},
			files:   map[string]string{"allowed/sub/b.txt": "beta\n", "allowed/sub/deep/c.md": "gamma\n"},
		},
		{
			name: "a directory with contents and recursive",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/sub"), "recursive": true}
			},
			want:   []string{"deleted directory", "with 3 entries (2 files or links, 1 directory)"},
			absent: []string{"allowed/sub"},
		},
		{
			name: "recursive delete does not follow a link to outside",
			setup: func(t *testing.T, f *mutFixture) {
				if err := os.Symlink(f.outside, f.path("allowed/sub/deep/out")); err != nil {
					t.Fatal(err)
				}
			},
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/sub"), "recursive": true}
			},
			absent: []string{"allowed/sub"},
		},
		{
			name:    "an allowed directory itself",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.allowed, "recursive": true} },
			wantErr: true,
			want:    []string{"allowed directory itself"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name:    "an allowed directory as dot",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": ".", "recursive": true} },
			wantErr: true,
			want:    []string{"allowed directory itself"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
		{
			name:    "missing file",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("allowed/nope")} },
			wantErr: true,
			want:    []string{"does not exist"},
		},
		{
			name:    "path outside",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": f.path("outside/secret.txt")} },
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name: "through a symlinked directory to outside",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/to-outside/secret.txt")}
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name: "dot-dot out of an allowed directory",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": "../outside/secret.txt"}
			},
			wantErr: true,
			want:    []string{"outside the allowed directories"},
		},
		{
			name:    "empty path",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"path": ""} },
			wantErr: true,
			want:    []string{"path is empty"},
		},
		{
			name:    "missing path",
			args:    func(f *mutFixture) map[string]any { return map[string]any{"recursive": true} },
			wantErr: true,
			want:    []string{"path"},
		},
		{
			name: "recursive of the wrong type",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/sub"), "recursive": "true"}
			},
			wantErr: true,
			files:   map[string]string{"allowed/sub/b.txt": "beta\n"},
		},
		{
			name: "unknown argument",
			args: func(f *mutFixture) map[string]any {
				return map[string]any{"path": f.path("allowed/a.txt"), "force": true}
			},
			wantErr: true,
			want:    []string{"force"},
			files:   map[string]string{"allowed/a.txt": "alpha\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newMutFixture(t, DefaultOptions())
			if tt.setup != nil {
				tt.setup(t, f)
			}
			text, isErr := callTool(t, f.c, "delete_file", tt.args(f))
			wantText(t, text, isErr, tt.wantErr, tt.want)
			checkTree(t, f, tt.files, tt.absent, tt.links)
			f.checkOutside(t)
		})
	}
}

func TestResolveNoFollow(t *testing.T) {
	top, sb := sandboxFixture(t)
	tests := []struct {
		name    string
		path    string
		wantRel string
		wantDir string // relative to top
		wantErr bool
	}{
		{name: "a link to outside is the link", path: top + "/allowed/to-outside", wantRel: "to-outside", wantDir: "allowed"},
		{name: "a dangling link to outside is the link", path: top + "/allowed/dangling-out", wantRel: "dangling-out", wantDir: "allowed"},
		{name: "a link in the parent is followed", path: top + "/allowed/rel-link/b.txt", wantRel: "sub/b.txt", wantDir: "allowed"},
		{name: "a parent link to another allowed directory", path: top + "/allowed/to-other/c.txt", wantRel: "c.txt", wantDir: "other"},
		{name: "a parent link to outside is refused", path: top + "/allowed/to-outside/secret.txt", wantErr: true},
		{name: "relative path found in the second directory", path: "c.txt", wantRel: "c.txt", wantDir: "other"},
		{name: "an allowed directory itself", path: top + "/other", wantRel: ".", wantDir: "other"},
		{name: "outside", path: top + "/outside/secret.txt", wantErr: true},
		{name: "empty", path: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := sb.ResolveNoFollow(tt.path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if loc.Rel != tt.wantRel || loc.Dir.Path != filepath.Join(top, tt.wantDir) {
				t.Errorf("got %s + %s, want %s + %s", loc.Dir.Path, loc.Rel, filepath.Join(top, tt.wantDir), tt.wantRel)
			}
		})
	}
}

func TestCountTreeCancelled(t *testing.T) {
	f := newMutFixture(t, DefaultOptions())
	sb, err := NewSandbox([]string{f.allowed})
	if err != nil {
		t.Fatal(err)
	}
	loc, err := sb.Resolve("sub")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := countTree(ctx, loc); err == nil {
		t.Error("countTree walked with a cancelled context")
	}
	files, dirs, err := countTree(context.Background(), loc)
	if err != nil || files != 2 || dirs != 1 {
		t.Errorf("countTree = %d files, %d dirs, %v; want 2, 1, nil", files, dirs, err)
	}
	if fi, err := os.Lstat(f.path("allowed/sub")); err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		t.Errorf("sub changed: %v", err)
	}
}
