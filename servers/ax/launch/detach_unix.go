//go:build unix

package launch

import "syscall"

// detached puts the process in a session of its own: it outlives us, and
// no signal for our process group or terminal reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
