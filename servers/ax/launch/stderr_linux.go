package launch

import (
	"os"

	"golang.org/x/sys/unix"
)

// newStderrHead makes the file a process's stderr goes to: an anonymous
// in-memory file of stderrMax bytes, sealed so it cannot grow. Writes past
// the end fail (EPERM) rather than block or raise SIGPIPE, as a pipe would
// once we had exited. It returns nil, so stderr goes to the null device,
// if the kernel has no sealable memfd.
func newStderrHead() *stderrHead {
	fd, err := unix.MemfdCreate("stderr", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "stderr")
	if err := f.Truncate(stderrMax); err != nil {
		f.Close()
		return nil
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil
	}
	return &stderrHead{f: f}
}
