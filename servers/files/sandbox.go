package files

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds symlink chains, as the kernel's ELOOP does.
const maxLinkHops = 40

// ErrOutside is wrapped by every error that refuses a path for leaving the
// allowed directories.
var ErrOutside = errors.New("outside the allowed directories")

// Dir is one allowed directory. All access below it goes through root, an
// os.Root, which resolves every path component relative to an open
// directory handle and refuses symlinks that leave it; so a path checked
// here cannot be redirected outside between the check and the use.
type Dir struct {
	// Path is the directory's real path (symlinks resolved).
	Path string
	// Shown is the path as the operator or client named it, used in
	// messages and results.
	Shown string
	root  *os.Root
}

// Sandbox is a set of allowed directories and the only way the files server
// turns a path argument into something it can touch.
type Sandbox struct {
	dirs []*Dir
}

// Location is a resolved path: a directory of the sandbox and a clean,
// slash-separated path relative to it ("." for the directory itself) whose
// components were not symlinks when resolved.
type Location struct {
	Dir *Dir
	Rel string
}

// Path is the location as shown to the model.
func (l Location) Path() string {
	if l.Rel == "." {
		return l.Dir.Shown
	}
	return filepath.Join(l.Dir.Shown, l.Rel)
}

// Root is the handle every operation on this location goes through.
func (l Location) Root() *os.Root { return l.Dir.root }

// Parent is the location of the containing directory.
func (l Location) Parent() Location {
	return Location{Dir: l.Dir, Rel: filepath.Dir(l.Rel)}
}

// Base is the last path component.
func (l Location) Base() string { return filepath.Base(l.Rel) }

// IsDirRoot reports whether l is an allowed directory itself.
func (l Location) IsDirRoot() bool { return l.Rel == "." }

// NewSandbox opens the allowed directories. Each must exist and be a
// directory; symlinks in their paths are resolved once, here, by the
// operator's choice.
func NewSandbox(paths []string) (*Sandbox, error) {
	if len(paths) == 0 {
		return nil, errors.New("no allowed directories: name at least one directory on the command line")
	}
	s := &Sandbox{}
	for _, p := range paths {
		shown, err := absPath(p)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", p, err)
		}
		real, err := filepath.EvalSymlinks(shown)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", p, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", p, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("allowed directory %q is not a directory", p)
		}
		if s.byRealPath(real) != nil {
			continue
		}
		root, err := os.OpenRoot(real)
		if err != nil {
			return nil, fmt.Errorf("allowed directory %q: %w", p, err)
		}
		s.dirs = append(s.dirs, &Dir{Path: real, Shown: shown, root: root})
	}
	return s, nil
}

func absPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	return filepath.Abs(p)
}

func (s *Sandbox) byRealPath(real string) *Dir {
	for _, d := range s.dirs {
		if d.Path == real {
			return d
		}
	}
	return nil
}

// Dirs lists the allowed directories.
func (s *Sandbox) Dirs() []*Dir { return s.dirs }

// ShownDirs lists the allowed directories as shown to the model.
func (s *Sandbox) ShownDirs() []string {
	out := make([]string, len(s.dirs))
	for i, d := range s.dirs {
		out[i] = d.Shown
	}
	return out
}

// Narrow returns the sandbox a client's MCP roots allow: each root that
// lies inside an allowed directory becomes an allowed directory of its own,
// and an allowed directory that lies inside a root stays. Roots outside
// every allowed directory widen nothing; they are returned as ignored. A
// client that sends roots of which none fits gets an empty sandbox, which
// refuses everything, rather than the operator's full list.
func (s *Sandbox) Narrow(uris []string) (narrowed *Sandbox, ignored []string) {
	n := &Sandbox{}
	for _, u := range uris {
		p, err := rootURIPath(u)
		if err != nil {
			ignored = append(ignored, u)
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			ignored = append(ignored, u)
			continue
		}
		matched := false
		for _, d := range s.dirs {
			switch {
			case within(real, d.Path):
				rel, _ := filepath.Rel(d.Path, real)
				if n.byRealPath(real) != nil {
					matched = true
					continue
				}
				r, err := openSubRoot(d.root, rel)
				if err != nil {
					continue
				}
				n.dirs = append(n.dirs, &Dir{Path: real, Shown: p, root: r})
				matched = true
			case within(d.Path, real):
				if n.byRealPath(d.Path) == nil {
					n.dirs = append(n.dirs, d)
				}
				matched = true
			}
		}
		if !matched {
			ignored = append(ignored, u)
		}
	}
	return n, ignored
}

func rootURIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Errorf("root %q is not a local file URI", uri)
	}
	if !filepath.IsAbs(u.Path) {
		return "", fmt.Errorf("root %q has no absolute path", uri)
	}
	return filepath.Clean(u.Path), nil
}

// within reports whether p is base or below it, comparing whole components
// so that /allowed_evil is not inside /allowed.
func within(p, base string) bool {
	if p == base {
		return true
	}
	if base == "/" {
		return strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, base+"/")
}

// Resolve turns a path argument into a Location. Relative paths are taken
// against the allowed directories (the first in which the path exists, else
// the first). Symlinks along the path are followed while their targets stay
// inside the sandbox, across allowed directories too; one that leads
// outside, even if dangling or not yet created, is refused.
func (s *Sandbox) Resolve(p string) (Location, error) {
	if len(s.dirs) == 0 {
		return Location{}, fmt.Errorf("no directories are allowed in this session: the client's roots name none of the server's allowed directories")
	}
	if err := checkPathString(p); err != nil {
		return Location{}, err
	}
	loc, err := s.locate(p)
	if err != nil {
		return Location{}, err
	}
	return s.follow(loc, p)
}

// locate maps a path string to a directory and relative path, lexically.
func (s *Sandbox) locate(p string) (Location, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		abs, err := absPath(p)
		if err != nil {
			return Location{}, err
		}
		p = abs
	}
	if !filepath.IsAbs(p) {
		rel := filepath.Clean(p)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return Location{}, fmt.Errorf("path %q leaves the allowed directories (%w); allowed: %s", p, ErrOutside, strings.Join(s.ShownDirs(), ", "))
		}
		for _, d := range s.dirs {
			// Through the root, so that a symlink out of d does not count:
			// whether the path exists there would tell what is outside.
			if _, err := d.root.Lstat(rel); err == nil {
				return Location{Dir: d, Rel: rel}, nil
			}
		}
		return Location{Dir: s.dirs[0], Rel: rel}, nil
	}
	clean := filepath.Clean(p)
	var best *Dir
	var bestRel string
	for _, d := range s.dirs {
		for _, base := range []string{d.Path, d.Shown} {
			if within(clean, base) {
				rel, _ := filepath.Rel(base, clean)
				// The deepest match wins when one allowed directory holds another.
				if best == nil || len(rel) < len(bestRel) {
					best, bestRel = d, rel
				}
			}
		}
	}
	if best == nil {
		return Location{}, fmt.Errorf("path %s is %w; allowed: %s", clean, ErrOutside, strings.Join(s.ShownDirs(), ", "))
	}
	return Location{Dir: best, Rel: filepath.ToSlash(bestRel)}, nil
}

// follow walks loc component by component and replaces every symlink by its
// target, so the Location returned names the real place. This is for
// naming, not safety: every operation still goes through an os.Root, so a
// link swapped in after this check can at worst redirect inside the root.
func (s *Sandbox) follow(loc Location, orig string) (Location, error) {
	for hops := 0; ; hops++ {
		if hops > maxLinkHops {
			return Location{}, fmt.Errorf("path %q has too many levels of symlinks", orig)
		}
		redirected := false
		comps := strings.Split(loc.Rel, "/")
		cur := ""
		for i, c := range comps {
			if c == "." {
				continue
			}
			next := c
			if cur != "" {
				next = cur + "/" + c
			}
			fi, err := os.Lstat(filepath.Join(loc.Dir.Path, next))
			if err != nil {
				// The rest does not exist (yet): nothing further to follow.
				return loc, nil
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				cur = next
				continue
			}
			target, err := loc.Dir.root.Readlink(next)
			if err != nil {
				return Location{}, fmt.Errorf("read symlink %s: %w", filepath.Join(loc.Dir.Shown, next), err)
			}
			// The target becomes part of the path shown in results; a line
			// break in it could forge lines there.
			if err := checkChars(target); err != nil {
				return Location{}, fmt.Errorf("path %q goes through the symlink %s, whose target cannot be shown: %w",
					orig, filepath.Join(loc.Dir.Shown, next), err)
			}
			var abs string
			if filepath.IsAbs(target) {
				abs = filepath.Clean(target)
			} else {
				abs = filepath.Join(loc.Dir.Path, cur, target)
			}
			abs = filepath.Join(append([]string{abs}, comps[i+1:]...)...)
			nl, err := s.locate(abs)
			if err != nil {
				return Location{}, fmt.Errorf("path %q goes through the symlink %s, which points to %s, %w; allowed: %s",
					orig, filepath.Join(loc.Dir.Shown, next), target, ErrOutside, strings.Join(s.ShownDirs(), ", "))
			}
			loc = nl
			redirected = true
			break
		}
		if !redirected {
			return loc, nil
		}
	}
}

// Lstat describes loc itself.
func (l Location) Lstat() (fs.FileInfo, error) { return l.Root().Lstat(l.Rel) }

// ResolveNoFollow is Resolve without following the last
// component. It maps p lexically (choosing the allowed directory the way
// Resolve does, which matters for relative paths when there are several),
// follows the parent directory, and joins the base name to the result.
func (sb *Sandbox) ResolveNoFollow(p string) (Location, error) {
	if len(sb.Dirs()) == 0 {
		return sb.Resolve(p) // for its message
	}
	if err := checkPathString(p); err != nil {
		return Location{}, err
	}
	loc, err := sb.locate(p)
	if err != nil || loc.IsDirRoot() {
		return loc, err
	}
	parent, err := sb.follow(loc.Parent(), p)
	if err != nil {
		return Location{}, err
	}
	return Location{Dir: parent.Dir, Rel: path.Join(parent.Rel, loc.Base())}, nil
}

// DiskPath is where l is on disk, as far as it was resolved.
func (l Location) DiskPath() string { return filepath.Join(l.Dir.Path, l.Rel) }

// OpenSubtree opens the directory at loc as a root of its own. A walk
// below it resolves every name against that directory handle, so a
// directory swapped for a symlink during the walk cannot lead anywhere
// else. Locations in the returned Dir print as paths below loc. The caller
// closes it.
func (loc Location) OpenSubtree() (*Dir, error) {
	fi, err := loc.Root().Stat(loc.Rel)
	if err != nil {
		return nil, describe(loc, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory: give a directory, or use get_file_info or read_text_file on the file", loc.Path())
	}
	r, err := openSubRoot(loc.Root(), loc.Rel)
	if err != nil {
		return nil, describe(loc, err)
	}
	return &Dir{Path: filepath.Join(loc.Dir.Path, loc.Rel), Shown: loc.Path(), root: r}, nil
}
