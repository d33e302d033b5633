//go:build !linux

package chat

import "errors"

// cbreak is not done here: keys are not watched, so speech is not stopped
// by a key (Ctrl-C still stops it with the answer).
func cbreak(fd int) (restore func() error, err error) {
	return nil, errors.New("cbreak mode is not supported on this system")
}
