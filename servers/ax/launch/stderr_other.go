//go:build !linux

package launch

// newStderrHead returns nil: without Linux's sealed memfd there is no
// bounded place for stderr that a process outliving us can keep writing
// to, so stderr goes to the null device.
func newStderrHead() *stderrHead { return nil }
