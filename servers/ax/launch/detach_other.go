//go:build !unix

package launch

import "syscall"

// detached is nil here: sessions are a Unix thing, and this package is
// meant for Linux desktops.
func detached() *syscall.SysProcAttr { return nil }
