//go:build cgo && !noportaudio && unix

package audio

import (
	"bufio"
	"bytes"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// quiet runs f with standard error sent to a file, then passes on what
// was written there except the sound libraries' probing chatter: ALSA
// names every card it lacks and JACK every server it cannot reach, each
// time PortAudio starts, which would bury a server's own log.
func quiet(f func()) {
	tmp, err := os.CreateTemp("", "domo-voice-stderr-*")
	if err != nil {
		f()
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	saved, err := unix.Dup(2)
	if err != nil {
		f()
		return
	}
	defer unix.Close(saved)
	if err := unix.Dup2(int(tmp.Fd()), 2); err != nil {
		f()
		return
	}
	f()
	unix.Dup2(saved, 2)
	if _, err := tmp.Seek(0, 0); err != nil {
		return
	}
	var keep bytes.Buffer
	sc := bufio.NewScanner(tmp)
	for sc.Scan() {
		if !chatter(sc.Text()) {
			keep.WriteString(sc.Text() + "\n")
		}
	}
	os.Stderr.Write(keep.Bytes())
}

func chatter(line string) bool {
	for _, p := range []string{"ALSA lib ", "Cannot connect to server", "jack server is not running", "JackShmReadWritePtr", "Jack", "jack_", "Expression 'alsa_"} {
		if strings.HasPrefix(strings.TrimSpace(line), p) {
			return true
		}
	}
	return strings.TrimSpace(line) == ""
}
