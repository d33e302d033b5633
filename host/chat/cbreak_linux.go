package chat

import "golang.org/x/sys/unix"

// cbreak puts the terminal fd in cbreak mode: each key can be read as it
// is pressed and is not echoed, while Ctrl-C still raises SIGINT and
// output processing (\n to \r\n) is kept. restore puts back the mode it
// found.
func cbreak(fd int) (restore func() error, err error) {
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *saved
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	return func() error { return unix.IoctlSetTermios(fd, unix.TCSETS, saved) }, nil
}
