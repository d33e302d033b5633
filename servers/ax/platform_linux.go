package ax

import "os"

// platformError is nil: Linux has AT-SPI2 and X11.
func platformError() error { return nil }

// kernelRelease is the running kernel's release.
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return string(trimNewline(b))
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
