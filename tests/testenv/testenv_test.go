package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMissing runs a test that lacks a prerequisite in a child process, once
// as a developer would and once under CI.
func TestMissing(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		RequireTool(t, "domo-no-such-program", "")
		return
	}
	tests := []struct {
		name     string
		ci       string
		wantFail bool
		wantOut  string
	}{
		{name: "developer skips", ci: "", wantFail: false, wantOut: "--- SKIP"},
		{name: "CI fails", ci: "true", wantFail: true, wantOut: "--- FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissing$", "-test.v")
			cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+tt.ci)
			out, err := cmd.CombinedOutput()
			if failed := err != nil; failed != tt.wantFail {
				t.Errorf("child failed = %v, want %v\n%s", failed, tt.wantFail, out)
			}
			for _, want := range []string{tt.wantOut, "SKIPPING: program \"domo-no-such-program\" missing; run `go tool task setup`"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("child output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}
