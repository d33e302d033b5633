package voicetest

import (
	"os"
	"os/exec"
	"testing"
)

// Needs lists the programs the audio tests need.
var Needs = []string{"pulseaudio", "pactl", "paplay", "parecord", "espeak-ng"}

// Missing returns the first of Needs (and extra) that is not installed.
func Missing(extra ...string) string {
	return missing(append(append([]string{}, Needs...), extra...))
}

func missing(programs []string) string {
	for _, bin := range programs {
		if _, err := exec.LookPath(bin); err != nil {
			return bin
		}
	}
	return ""
}

// Require skips a test loudly when the audio packages are missing, and
// fails it under CI, where they must be installed.
func Require(tb testing.TB, extra ...string) {
	tb.Helper()
	requireAll(tb, append(append([]string{}, Needs...), extra...))
}

// RequirePrograms is Require for tests that need only the programs named
// (espeak-ng, pocketsphinx_continuous), not a sound server.
func RequirePrograms(tb testing.TB, programs ...string) {
	tb.Helper()
	requireAll(tb, programs)
}

func requireAll(tb testing.TB, programs []string) {
	tb.Helper()
	if bin := missing(programs); bin != "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI=true and %s is missing: scripts/setup.sh installs it", bin)
		}
		tb.Skipf("SKIPPING AUDIO TEST: %s is missing (run `go tool task setup`)", bin)
	}
}
