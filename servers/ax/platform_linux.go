package ax

import (
	"os"
	"strings"
)

// platformError is nil: Linux has AT-SPI2 and X11.
func platformError() error { return nil }

// kernelRelease is the running kernel's release.
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
