//go:build !linux

package ax

import (
	"fmt"
	"runtime"
)

// platformError says that this operating system has no backend: domo-ax
// reads accessibility trees through AT-SPI2 and sends input through X11,
// which are Linux's.
func platformError() error {
	return fmt.Errorf("domo-ax supports Linux desktops (AT-SPI2 and X11) only: on %s it has no accessibility, input or screen backend, so this tool is unsupported", runtime.GOOS)
}

func kernelRelease() string { return "" }
