package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Build compiles pkgs (patterns relative to the module root; by default every
// tree holding binaries) and writes their executables into dir. It suits a
// TestMain that manages its own directory.
func Build(dir string, pkgs ...string) error {
	modRoot, err := root()
	if err != nil {
		return fmt.Errorf("find the module root: %w", err)
	}
	if len(pkgs) == 0 {
		pkgs = binaryTrees(modRoot)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	args := append([]string{"build", "-o", abs + string(filepath.Separator)}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = modRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// binaryTrees lists the package patterns holding the module's binaries that
// exist (go build fails on a pattern over a missing directory), and the
// test-only server slowmcp.
func binaryTrees(modRoot string) []string {
	var pkgs []string
	for _, d := range []string{"servers", "host"} {
		if fi, err := os.Stat(filepath.Join(modRoot, d)); err == nil && fi.IsDir() {
			pkgs = append(pkgs, "./"+d+"/...")
		}
	}
	if _, err := os.Stat(filepath.Join(modRoot, "tests/testdata/slowmcp")); err == nil {
		pkgs = append(pkgs, "./tests/testdata/slowmcp")
	}
	return pkgs
}

var built struct {
	once sync.Once
	dir  string
	err  error
}

// BuildBinaries builds the module's binaries once per test process, however
// many tests ask, and returns the directory holding them. Call Main from the
// package's TestMain so the directory is removed afterwards.
func BuildBinaries(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "domo-testbin-")
		if built.err == nil {
			built.err = Build(built.dir)
		}
	})
	if built.err != nil {
		t.Fatalf("build the binaries: %v", built.err)
	}
	return built.dir
}

// Binary returns the path of one built binary, e.g. "domo-files".
func Binary(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(BuildBinaries(t), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("binary %s was not built: %v", name, err)
	}
	return p
}

// Main runs the tests, then removes what BuildBinaries built. Use it as
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
