// Package testenv locates and builds what Domo's black-box tests run: the
// module's own binaries and the third-party MCP programs (the MCP Inspector
// CLI, the reference Node servers) that `go tool task setup` installs under
// tests/peers.
//
// It never installs anything. A missing prerequisite skips the test with a
// loud message naming the fix, except under CI (CI=true), where a skipped
// test would hide a broken setup, so it fails instead.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// Setup is the command that installs every test prerequisite.
const Setup = "go tool task setup"

// Missing ends the test because something it needs is absent: a skip on a
// developer machine, a failure under CI.
func Missing(t testing.TB, what, hint string) {
	t.Helper()
	msg := fmt.Sprintf("SKIPPING: %s missing; run `%s`", what, Setup)
	if hint != "" {
		msg += " (" + hint + ")"
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("%s [CI is set, so a missing prerequisite fails the test]", msg)
	}
	t.Skip(msg)
}

// RequireTool returns the path of the program name on PATH, or ends the test
// through Missing. hint says where the program comes from.
func RequireTool(t testing.TB, name, hint string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, fmt.Sprintf("program %q", name), hint)
	}
	return p
}

var root = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
})

// ModuleRoot returns the directory holding the module's go.mod, found by
// walking up from the working directory (a test runs in its package's
// directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := root()
	if err != nil {
		t.Fatalf("find the module root: %v", err)
	}
	return dir
}
