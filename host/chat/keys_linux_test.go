package chat

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pty is a pseudo-terminal: the test types on master what the editor
// reads from the slave, and answers the editor's cursor position queries.
type pty struct {
	master, slave *os.File
	mu            sync.Mutex
	out           bytes.Buffer // what was written to the terminal
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pty{master: m, slave: s}
	go p.serve()
	t.Cleanup(func() { s.Close(); m.Close() })
	return p
}

// serve keeps what the terminal shows and answers the line editor's
// cursor position query (ESC [6n) as a terminal would.
func (p *pty) serve() {
	buf := make([]byte, 4096)
	for {
		n, err := p.master.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if bytes.Contains(buf[:n], []byte("\x1b[6n")) {
				p.master.Write([]byte("\x1b[1;1R"))
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *pty) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *pty) typeText(t *testing.T, s string) {
	t.Helper()
	if _, err := p.master.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// readLine reads one line on another goroutine, so that a broken editor
// fails the test instead of hanging it.
func readLine(t *testing.T, ed *Editor) string {
	t.Helper()
	type result struct {
		line string
		err  error
	}
	c := make(chan result, 1)
	go func() {
		line, err := ed.ReadLine("› ")
		c <- result{line, err}
	}()
	r := await(t, c, "the line")
	if r.err != nil {
		t.Fatalf("ReadLine: %v", r.err)
	}
	return r.line
}

// TestWatchKeysOnATerminal: a watched key reaches the watch, not the next
// line, and is not echoed; a line read while the watch runs gets its keys
// and the watch resumes after it; stopping the watch gives the terminal
// back as it was.
func TestWatchKeysOnATerminal(t *testing.T) {
	p := openPTY(t)
	tm := NewTerm(p.slave, p.slave)
	if !tm.TTY {
		t.Fatal("the pseudo-terminal is not a terminal")
	}
	ed, err := NewEditor(tm, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ed.Close()
	before, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}

	keys := make(chan string, 10)
	stop := ed.WatchKeys(func(k []byte) { keys <- string(k) })
	p.typeText(t, "q")
	if k := await(t, keys, "the watched key"); k != "q" {
		t.Errorf("the watch got %q, want q", k)
	}

	// A prompt while the watch runs (a permission prompt during speech)
	// gets the keys typed for it.
	type result struct {
		line string
		err  error
	}
	lines := make(chan result, 1)
	go func() {
		line, err := ed.ReadLine("› ")
		lines <- result{line, err}
	}()
	// The editor asks where the cursor is once it reads: after that the
	// keys are its.
	deadline := time.Now().Add(waitLimit)
	for !strings.Contains(p.screen(), "\x1b[6n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.typeText(t, "yes\r")
	if r := await(t, lines, "the prompt's line"); r.err != nil || r.line != "yes" {
		t.Errorf("the prompt read %q, %v; want yes", r.line, r.err)
	}
	// The watch resumed after the line.
	p.typeText(t, "z")
	if k := await(t, keys, "a key after the prompt"); k != "z" {
		t.Errorf("the watch got %q after the prompt, want z", k)
	}
	stop()

	after, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Cc != before.Cc {
		t.Errorf("the terminal's mode was not restored: lflag %#x, want %#x", after.Lflag, before.Lflag)
	}

	// Neither watched key reaches the next line.
	p.typeText(t, "hello\r")
	if line := readLine(t, ed); line != "hello" {
		t.Errorf("the next line is %q, want hello: a watched key leaked into it", line)
	}
	if s := p.screen(); strings.ContainsAny(s, "qz") {
		t.Errorf("a watched key was echoed: %q", s)
	}
	select {
	case k := <-keys:
		t.Errorf("the stopped watch got %q", k)
	default:
	}
}
