// Package launch finds desktop applications, by desktop file id, by name
// or as an executable, and starts them detached from the caller, never
// through a shell: a query, a file name or a URL is only ever one argv
// element. It owns reading desktop entries (Desktop Entry Specification
// 1.5) and turning their Exec lines into argv. Whether an application may
// be started at all is the caller's policy, not this package's.
package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// App is an application that can be started: a desktop entry, or a plain
// executable.
type App struct {
	// ID is the desktop file id ("org.gnome.Calculator.desktop"); for a
	// desktop file given by a path outside the data directories, its base
	// name; "" for a plain executable.
	ID string
	// Name is Name= (unlocalised), or the executable's base name.
	Name string
	// GenericName is GenericName= (unlocalised), such as "Web Browser".
	GenericName string
	// Comment is Comment= (unlocalised).
	Comment string
	// Path is the desktop file, or the executable.
	Path string
	// Exec is the argv template after quote parsing, field codes still
	// present; for a plain executable, just Path.
	Exec []string
	// Icon is Icon=, which %i passes on.
	Icon string
	// WorkDir is Path=, the directory to start the application in, or "".
	WorkDir string
	// Terminal reports Terminal=true: the application needs a terminal,
	// so Argv refuses it.
	Terminal bool

	quoted    []bool // which Exec arguments were quoted
	execErr   error  // why Exec could not be parsed
	hidden    bool   // Hidden=true: deleted, as far as menus are concerned
	noDisplay bool   // NoDisplay=true: not for menus
}

// visible reports whether a belongs in a list of applications: not
// deleted or hidden from menus, and startable without a terminal.
func (a App) visible() bool {
	return !a.hidden && !a.noDisplay && a.execErr == nil && len(a.Exec) > 0
}

// appFromEntry makes an App of the desktop entry e read from path. ok is
// false for an entry that is not an application or whose TryExec program
// is missing; f resolves TryExec.
func (f Finder) appFromEntry(id, path string, e entry) (a App, ok bool) {
	if e["Type"] != "Application" {
		return App{}, false
	}
	if try := e.text("TryExec"); try != "" {
		if _, found := f.lookPath(try); !found {
			return App{}, false
		}
	}
	a = App{
		ID:          id,
		Name:        e.text("Name"),
		GenericName: e.text("GenericName"),
		Comment:     e.text("Comment"),
		Path:        path,
		Icon:        e.text("Icon"),
		WorkDir:     e.text("Path"),
		Terminal:    e.flag("Terminal"),
		hidden:      e.flag("Hidden"),
		noDisplay:   e.flag("NoDisplay"),
	}
	if a.Name == "" {
		a.Name = strings.TrimSuffix(id, ".desktop")
	}
	if _, has := e["Exec"]; has {
		a.Exec, a.quoted, a.execErr = splitExec(e.text("Exec"))
	}
	return a, true
}

// plainApp is the App for the executable at path.
func plainApp(path string) App {
	return App{Name: filepath.Base(path), Path: path, Exec: []string{path}}
}

// isExecutable reports whether the file at path, which must be absolute,
// is a regular file we may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	_, err = exec.LookPath(path) // checks execute permission the way each OS does
	return err == nil
}
