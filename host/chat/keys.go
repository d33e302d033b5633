package chat

import (
	"bytes"
	"os"
	"sync"

	"github.com/muesli/cancelreader"
)

// keyWatcher calls onKey with the keys pressed, until stop. *Editor is one.
type keyWatcher interface {
	WatchKeys(onKey func(key []byte)) (stop func())
}

var _ keyWatcher = (*Editor)(nil)

// keys is the Editor's key watch: it lets a key pressed while no line is
// read stop something (the reply being spoken, the wait for a wake
// phrase). While it watches, the terminal is in cbreak mode — no echo, no
// line buffering, but Ctrl-C still raises SIGINT and output is processed
// as usual, so the answer streams as before — and it is read through a
// reader that a cancel stops without consuming anything. Reading a line
// pauses the watch (the keys are the line's); when the watch stops, the
// terminal is as it was and the next key goes to the line editor.
type keys struct {
	mu      sync.Mutex
	in      *os.File
	onKey   func([]byte) // the watch, nil when there is none
	gen     int          // counts watches, so that a stale stop does nothing
	reading int          // lines being read: while > 0 the watch is paused
	run     *keyReader   // the reader while it runs
}

// keyReader is one run of the watch's reader.
type keyReader struct {
	r       cancelreader.CancelReader
	restore func() error
	done    chan struct{}
}

// WatchKeys calls onKey, on a goroutine of its own, with each key pressed
// (the bytes of one read: a key, or an escape sequence) until stop, except
// while a line is read. The keys it sees are consumed. A new watch
// replaces the last one. On a pipe, or when the terminal cannot be put in
// cbreak mode, nothing is watched.
func (e *Editor) WatchKeys(onKey func(key []byte)) (stop func()) {
	if e.rl == nil || e.in == nil {
		return func() {}
	}
	k := &e.keys
	k.mu.Lock()
	defer k.mu.Unlock()
	k.haltLocked()
	k.gen++
	gen := k.gen
	k.in, k.onKey = e.in, onKey
	if k.reading == 0 {
		k.startLocked()
	}
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.gen == gen {
			k.haltLocked()
			k.onKey = nil
		}
	}
}

// pause stops the reader while a line is read.
func (k *keys) pause() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reading++
	k.haltLocked()
}

// resume starts the reader again after a line, if the watch goes on.
func (k *keys) resume() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reading--
	if k.reading == 0 && k.onKey != nil {
		k.startLocked()
	}
}

// end stops the watch for good.
func (k *keys) end() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.haltLocked()
	k.onKey = nil
}

func (k *keys) startLocked() {
	if k.run != nil {
		return
	}
	restore, err := cbreak(int(k.in.Fd()))
	if err != nil {
		return // no watch: the keys wait for the next line
	}
	r, err := cancelreader.NewReader(k.in)
	if err != nil {
		restore()
		return
	}
	run := &keyReader{r: r, restore: restore, done: make(chan struct{})}
	onKey := k.onKey
	go func() {
		defer close(run.done)
		buf := make([]byte, 256)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				onKey(bytes.Clone(buf[:n]))
			}
			if err != nil || n == 0 {
				return
			}
		}
	}()
	k.run = run
}

// haltLocked stops the reader, if it runs, and restores the terminal.
func (k *keys) haltLocked() {
	if k.run == nil {
		return
	}
	k.run.r.Cancel()
	<-k.run.done
	k.run.r.Close()
	k.run.restore()
	k.run = nil
}
