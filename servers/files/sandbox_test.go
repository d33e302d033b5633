package files

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxFixture builds a tree with two allowed directories, a sibling whose
// name shares their prefix, an outside directory, and links between them.
func sandboxFixture(t *testing.T) (top string, sb *Sandbox) {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, top, map[string]string{
		"allowed/a.txt":           "a",
		"allowed/sub/b.txt":       "b",
		"other/c.txt":             "c",
		"allowed_evil/secret.txt": "evil",
		"outside/secret.txt":      "secret",
	})
	symlinks(t, top, map[string]string{
		"allowed/rel-link":     "sub",
		"allowed/abs-link":     filepath.Join(top, "allowed/sub"),
		"allowed/to-other":     filepath.Join(top, "other"),
		"allowed/to-outside":   filepath.Join(top, "outside"),
		"allowed/rel-outside":  "../outside/secret.txt",
		"allowed/to-evil":      "../allowed_evil",
		"allowed/dangling-out": filepath.Join(top, "outside/not-yet"),
		"allowed/dangling-in":  "missing-inside",
		"allowed/loop1":        "loop2",
		"allowed/loop2":        "loop1",
		"allowed/hop1":         "hop2",
		"allowed/hop2":         "hop3",
		"allowed/hop3":         filepath.Join(top, "outside"),
		"allowed-alias":        filepath.Join(top, "allowed"),
	})
	sb, err = NewSandbox([]string{filepath.Join(top, "allowed"), filepath.Join(top, "other")})
	if err != nil {
		t.Fatal(err)
	}
	return top, sb
}

func TestResolve(t *testing.T) {
	top, sb := sandboxFixture(t)
	allowed := filepath.Join(top, "allowed")
	tests := []struct {
		name    string
		path    string
		wantDir string // allowed directory the location is in
		wantRel string
		outside bool // error wraps ErrOutside
		errText string
	}{
		{name: "absolute file", path: allowed + "/a.txt", wantDir: allowed, wantRel: "a.txt"},
		{name: "allowed dir itself", path: allowed, wantDir: allowed, wantRel: "."},
		{name: "trailing slash", path: allowed + "/sub/", wantDir: allowed, wantRel: "sub"},
		{name: "relative", path: "sub/b.txt", wantDir: allowed, wantRel: "sub/b.txt"},
		{name: "relative in second dir", path: "c.txt", wantDir: filepath.Join(top, "other"), wantRel: "c.txt"},
		{name: "relative new file", path: "new.txt", wantDir: allowed, wantRel: "new.txt"},
		{name: "dot dot inside", path: allowed + "/sub/../a.txt", wantDir: allowed, wantRel: "a.txt"},
		{name: "relative symlink inside", path: allowed + "/rel-link/b.txt", wantDir: allowed, wantRel: "sub/b.txt"},
		{name: "absolute symlink inside", path: allowed + "/abs-link/b.txt", wantDir: allowed, wantRel: "sub/b.txt"},
		{name: "symlink to other allowed dir", path: allowed + "/to-other/c.txt", wantDir: filepath.Join(top, "other"), wantRel: "c.txt"},
		{name: "dangling link inside", path: allowed + "/dangling-in", wantDir: allowed, wantRel: "missing-inside"},
		{name: "alias of allowed dir", path: filepath.Join(top, "allowed-alias/a.txt"), outside: true},
		{name: "prefix collision", path: top + "/allowed_evil/secret.txt", outside: true},
		{name: "traversal", path: allowed + "/../outside/secret.txt", outside: true},
		{name: "relative traversal", path: "../outside/secret.txt", outside: true},
		{name: "deep traversal", path: allowed + "/sub/../../outside", outside: true},
		{name: "root", path: "/", outside: true},
		{name: "etc passwd", path: "/etc/passwd", outside: true},
		{name: "symlink to outside", path: allowed + "/to-outside/secret.txt", outside: true},
		{name: "relative symlink outside", path: allowed + "/rel-outside", outside: true},
		{name: "symlink to prefix sibling", path: allowed + "/to-evil/secret.txt", outside: true},
		{name: "dangling link to outside", path: allowed + "/dangling-out", outside: true},
		{name: "chain ending outside", path: allowed + "/hop1/secret.txt", outside: true},
		{name: "symlink loop", path: allowed + "/loop1", errText: "too many levels of symlinks"},
		{name: "NUL byte", path: allowed + "/a.txt\x00.png", errText: "NUL byte"},
		{name: "empty", path: "", errText: "path is empty"},
		{name: "url", path: "file://" + allowed + "/a.txt", errText: "is a URL"},
		{name: "url encoded dots", path: allowed + "/%2e%2e/outside", errText: "URL-encoded"},
		{name: "url encoded slash", path: allowed + "/..%2foutside", errText: "URL-encoded"},
		{name: "backslash traversal", path: allowed + "\\..\\outside", errText: "backslash"},
		{name: "windows drive", path: "C:/Windows/system32", errText: "Windows drive"},
		{name: "fullwidth solidus", path: allowed + "/..／outside", errText: "fullwidth solidus"},
		{name: "one dot leader", path: allowed + "/․․/outside", errText: "one dot leader"},
		{name: "right-to-left override", path: allowed + "/a\u202etxt.exe", errText: "invisible formatting"},
		{name: "newline", path: allowed + "/a\nb", errText: "control character"},
		{name: "over-long path", path: allowed + "/" + strings.Repeat("a/", 2100), errText: "over the 4096-byte limit"},
		{name: "over-long component", path: allowed + "/" + strings.Repeat("a", 300), errText: "over the 255-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := sb.Resolve(tt.path)
			switch {
			case tt.outside:
				if !errors.Is(err, ErrOutside) {
					t.Fatalf("Resolve(%q) = %+v, %v; want ErrOutside", tt.path, loc, err)
				}
				if !strings.Contains(err.Error(), "allowed: ") {
					t.Errorf("error %q does not list the allowed directories", err)
				}
			case tt.errText != "":
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("Resolve(%q) error = %v, want %q", tt.path, err, tt.errText)
				}
			default:
				if err != nil {
					t.Fatalf("Resolve(%q): %v", tt.path, err)
				}
				if loc.Dir.Path != tt.wantDir || loc.Rel != tt.wantRel {
					t.Errorf("Resolve(%q) = %s + %s, want %s + %s", tt.path, loc.Dir.Path, loc.Rel, tt.wantDir, tt.wantRel)
				}
			}
		})
	}
}

func TestNewSandbox(t *testing.T) {
	top, _ := sandboxFixture(t)
	tests := []struct {
		name    string
		dirs    []string
		errText string
		want    []string
	}{
		{name: "none", dirs: nil, errText: "no allowed directories"},
		{name: "missing", dirs: []string{top + "/nope"}, errText: "no such file"},
		{name: "a file", dirs: []string{top + "/allowed/a.txt"}, errText: "not a directory"},
		{name: "duplicates collapse", dirs: []string{top + "/allowed", top + "/allowed/", top + "/allowed-alias"}, want: []string{top + "/allowed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb, err := NewSandbox(tt.dirs)
			if tt.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want %q", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sb.ShownDirs(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("dirs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAllowedDirGivenThroughSymlink(t *testing.T) {
	top, _ := sandboxFixture(t)
	sb, err := NewSandbox([]string{top + "/allowed-alias"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{top + "/allowed-alias/a.txt", top + "/allowed/a.txt"} {
		loc, err := sb.Resolve(p)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", p, err)
		}
		if loc.Rel != "a.txt" || loc.Path() != top+"/allowed-alias/a.txt" {
			t.Errorf("Resolve(%q) = %s shown as %s", p, loc.Rel, loc.Path())
		}
	}
}

func TestNarrow(t *testing.T) {
	top, sb := sandboxFixture(t)
	allowed := filepath.Join(top, "allowed")
	tests := []struct {
		name    string
		roots   []string
		want    []string
		ignored int
	}{
		{name: "subdirectory narrows", roots: []string{"file://" + allowed + "/sub"}, want: []string{allowed + "/sub"}},
		{name: "parent keeps the allowed dir", roots: []string{"file://" + top}, want: []string{allowed, top + "/other"}},
		{name: "outside root widens nothing", roots: []string{"file://" + top + "/outside"}, want: nil, ignored: 1},
		{name: "prefix sibling widens nothing", roots: []string{"file://" + top + "/allowed_evil"}, want: nil, ignored: 1},
		{name: "symlink root leading outside", roots: []string{"file://" + allowed + "/to-outside"}, want: nil, ignored: 1},
		{name: "not a file uri", roots: []string{"https://example.com/"}, want: nil, ignored: 1},
		{name: "mixed", roots: []string{"file://" + allowed + "/sub", "file:///etc"}, want: []string{allowed + "/sub"}, ignored: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ignored := sb.Narrow(tt.roots)
			if got := n.ShownDirs(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("narrowed dirs = %v, want %v", got, tt.want)
			}
			if len(ignored) != tt.ignored {
				t.Errorf("ignored = %v, want %d", ignored, tt.ignored)
			}
			if _, err := n.Resolve(top + "/outside/secret.txt"); err == nil {
				t.Error("narrowed sandbox resolved a path outside")
			}
		})
	}
	t.Run("narrowed root refuses its parent", func(t *testing.T) {
		n, _ := sb.Narrow([]string{"file://" + allowed + "/sub"})
		if _, err := n.Resolve(allowed + "/a.txt"); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve of a file beside the narrowed root: %v, want ErrOutside", err)
		}
		if _, err := n.Resolve(allowed + "/sub/b.txt"); err != nil {
			t.Errorf("Resolve inside the narrowed root: %v", err)
		}
	})
	t.Run("empty sandbox refuses everything", func(t *testing.T) {
		n, _ := sb.Narrow([]string{"file:///etc"})
		if _, err := n.Resolve(allowed + "/a.txt"); err == nil || !strings.Contains(err.Error(), "no directories are allowed") {
			t.Errorf("Resolve in an empty sandbox: %v", err)
		}
	})
}

func TestWithin(t *testing.T) {
	tests := []struct {
		p, base string
		want    bool
	}{
		{"/a", "/a", true},
		{"/a/b", "/a", true},
		{"/ab", "/a", false},
		{"/a_evil/x", "/a", false},
		{"/", "/a", false},
		{"/x", "/", true},
	}
	for _, tt := range tests {
		if got := within(tt.p, tt.base); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.p, tt.base, got, tt.want)
		}
	}
}
