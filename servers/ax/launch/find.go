package launch

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adrg/xdg"
)

// ErrNotFound is wrapped by Find's error when nothing matches the query.
var ErrNotFound = errors.New("no such application")

// AmbiguousError is Find's error when the query matches several
// applications equally well.
type AmbiguousError struct {
	Query string
	Apps  []App // the candidates, sorted by Name
}

// maxCandidates is how many candidates an AmbiguousError names.
const maxCandidates = 10

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d applications: ", e.Query, len(e.Apps))
	for i, a := range e.Apps[:min(len(e.Apps), maxCandidates)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", a.Name, a.ID)
	}
	if n := len(e.Apps) - maxCandidates; n > 0 {
		fmt.Fprintf(&b, " and %d more", n)
	}
	b.WriteString("; ask again with one of the ids")
	return b.String()
}

// Finder finds applications in XDG data directories and on a PATH.
type Finder struct {
	// Dirs are the XDG data directories, most important first. Desktop
	// files are read from each one's applications subdirectory.
	Dirs []string
	// PATH is the list of directories to find executables in, as in
	// $PATH. Relative entries are ignored: what they find would depend on
	// the working directory.
	PATH string
}

// DefaultFinder is the Finder for this user: $XDG_DATA_HOME, then
// $XDG_DATA_DIRS, as github.com/adrg/xdg read them when the program
// started, and $PATH as it is now.
func DefaultFinder() Finder {
	return Finder{Dirs: append([]string{xdg.DataHome}, xdg.DataDirs...), PATH: os.Getenv("PATH")}
}

// Find finds the application a query names. In order, the query may be:
//   - a desktop file id, with or without ".desktop"
//     ("org.gnome.Calculator"), matched exactly, then ignoring case;
//   - a Name or GenericName, ignoring case;
//   - the program a single desktop entry runs ("gnome-calculator");
//   - an executable on PATH, which is started as it is;
//   - the start of a single Name or GenericName, then a part of one;
//   - an absolute path to an executable or a desktop file.
//
// Entries with NoDisplay=true are found, though List leaves them out;
// entries with Hidden=true are found only by id. When a step matches both
// kinds, entries without NoDisplay win. The query is never interpreted: a
// query that is not one of these is not found.
//
// When a step matches several applications, the error is an
// *AmbiguousError; when none matches, it wraps ErrNotFound.
func (f Finder) Find(query string) (App, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return App{}, fmt.Errorf("no application named: %w", ErrNotFound)
	}
	if strings.ContainsRune(q, '/') {
		if !filepath.IsAbs(q) {
			return App{}, fmt.Errorf("%q is neither a name nor an absolute path: %w", q, ErrNotFound)
		}
		return f.byPath(filepath.Clean(q))
	}
	apps := f.all()
	id := q
	if !strings.HasSuffix(id, ".desktop") {
		id += ".desktop"
	}
	steps := []func(App) bool{
		func(a App) bool { return a.ID == id },
		func(a App) bool { return strings.EqualFold(a.ID, id) },
	}
	for _, match := range steps {
		if a, ok, err := pick(q, apps, match); ok || err != nil {
			return a, err
		}
	}
	shown := slices.DeleteFunc(slices.Clone(apps), func(a App) bool { return a.hidden })
	lower := strings.ToLower(q)
	names := func(a App, m func(name string) bool) bool {
		return m(strings.ToLower(a.Name)) || (a.GenericName != "" && m(strings.ToLower(a.GenericName)))
	}
	if a, ok, err := pick(q, shown, func(a App) bool {
		return names(a, func(n string) bool { return n == lower })
	}); ok || err != nil {
		return a, err
	}
	if a, ok, _ := pick(q, shown, func(a App) bool {
		return len(a.Exec) > 0 && filepath.Base(a.Exec[0]) == q
	}); ok {
		return a, nil // several entries running q: q itself is the better answer
	}
	if path, ok := f.lookPath(q); ok {
		return plainApp(path), nil
	}
	for _, m := range []func(string) bool{
		func(n string) bool { return strings.HasPrefix(n, lower) },
		func(n string) bool { return strings.Contains(n, lower) },
	} {
		if a, ok, err := pick(q, shown, func(a App) bool { return names(a, m) }); ok || err != nil {
			return a, err
		}
	}
	return App{}, fmt.Errorf("%q matches no application id or name and no executable on PATH; list the applications to see what there is: %w", q, ErrNotFound)
}

// pick returns the one app of apps that matches, preferring those without
// NoDisplay; ok is false when none does, and err is an *AmbiguousError
// when several do.
func pick(q string, apps []App, match func(App) bool) (a App, ok bool, err error) {
	var all, shown []App
	for _, a := range apps {
		if match(a) {
			all = append(all, a)
			if !a.noDisplay {
				shown = append(shown, a)
			}
		}
	}
	if len(shown) > 0 {
		all = shown
	}
	switch len(all) {
	case 0:
		return App{}, false, nil
	case 1:
		return all[0], true, nil
	}
	sortApps(all)
	return App{}, false, &AmbiguousError{Query: q, Apps: all}
}

// List lists the applications for a menu, sorted by Name: not Hidden or
// NoDisplay, and with an Exec line that parses. With a filter, only those
// whose Name, GenericName, Comment or id contains it, ignoring case.
func (f Finder) List(filter string) ([]App, error) {
	if len(f.Dirs) == 0 {
		return nil, errors.New("no XDG data directories to read applications from")
	}
	apps := f.all()
	filter = strings.ToLower(strings.TrimSpace(filter))
	out := apps[:0]
	for _, a := range apps {
		if !a.visible() {
			continue
		}
		if filter != "" && !slices.ContainsFunc([]string{a.Name, a.GenericName, a.Comment, a.ID}, func(s string) bool {
			return strings.Contains(strings.ToLower(s), filter)
		}) {
			continue
		}
		out = append(out, a)
	}
	sortApps(out)
	return out, nil
}

func sortApps(apps []App) {
	slices.SortFunc(apps, func(a, b App) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.ID, b.ID))
	})
}

// all reads every application's desktop file. Where several files have
// the same desktop file id, the first found wins, even if it is not an
// application or its TryExec program is missing: that is how a user's
// file overrides the system's. A file or directory that cannot be read,
// or a file that does not parse, is skipped and overrides nothing.
func (f Finder) all() []App {
	seen := map[string]bool{}
	var apps []App
	for _, dir := range f.Dirs {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // the specification says relative paths are invalid
		}
		root := filepath.Join(dir, "applications")
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".desktop") {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return nil
			}
			id := strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")
			if seen[id] {
				return nil
			}
			e, err := readEntry(path)
			if err != nil {
				return nil
			}
			seen[id] = true
			if a, ok := f.appFromEntry(id, path, e); ok {
				apps = append(apps, a)
			}
			return nil
		})
	}
	return apps
}

// byPath finds the application at an absolute path: a desktop file or an
// executable.
func (f Finder) byPath(path string) (App, error) {
	if strings.HasSuffix(path, ".desktop") {
		e, err := readEntry(path)
		if errors.Is(err, fs.ErrNotExist) {
			return App{}, fmt.Errorf("%s does not exist: %w", path, ErrNotFound)
		}
		if err != nil {
			return App{}, fmt.Errorf("read desktop file %s: %w", path, err)
		}
		a, ok := f.appFromEntry(f.idOf(path), path, e)
		if !ok {
			return App{}, fmt.Errorf("%s is not an application that is installed (Type is not Application, or its TryExec program is missing): %w", path, ErrNotFound)
		}
		return a, nil
	}
	if !isExecutable(path) {
		return App{}, fmt.Errorf("%s is not an executable file: %w", path, ErrNotFound)
	}
	return plainApp(path), nil
}

// idOf is the desktop file id of the desktop file at path: from its place
// under one of f.Dirs, or else its base name.
func (f Finder) idOf(path string) string {
	for _, dir := range f.Dirs {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		rel, err := filepath.Rel(filepath.Join(dir, "applications"), path)
		if err == nil && filepath.IsLocal(rel) {
			return strings.ReplaceAll(filepath.ToSlash(rel), "/", "-")
		}
	}
	return filepath.Base(path)
}

// lookPath finds an executable: name itself if it is absolute, else the
// first one of that name in the absolute directories of f.PATH.
func (f Finder) lookPath(name string) (string, bool) {
	return lookPath(name, f.PATH)
}

func lookPath(name, pathList string) (string, bool) {
	if filepath.IsAbs(name) {
		return name, isExecutable(name)
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "", false
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p, true
		}
	}
	return "", false
}
