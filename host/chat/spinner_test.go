package chat

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is written by the spinner's goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestSpinnerWithoutATerminal(t *testing.T) {
	var b lockedBuffer
	s := Plain(&b).NewSpinner()
	s.Start("read_text_file")
	s.Set("write_file")
	s.Progress(1, 2, "half")
	s.Stop()
	if b.String() != "" {
		t.Errorf("printed %q", b.String())
	}
}

func TestSpinner(t *testing.T) {
	var b lockedBuffer
	s := (&Term{Out: &b, TTY: true, Width: 80}).NewSpinner()
	s.Start("evil\x1b[2J")
	s.Set("read_text_file")
	s.Progress(40, 100, "reading…")
	time.Sleep(3 * spinTick)
	s.Stop()
	s.Stop() // a second Stop does nothing
	out := b.String()
	for _, w := range []string{`evil\u001b[2J`, "⠋ read_text_file · 40% · reading…", "⠙"} {
		if !strings.Contains(out, w) {
			t.Errorf("%q missing from %q", w, out)
		}
	}
	if strings.Contains(out, "\x1b[2J") {
		t.Errorf("the label's escape reached the terminal: %q", out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("Stop did not clear the line: %q", out)
	}
	// Stopped, it draws no more.
	time.Sleep(2 * spinTick)
	if b.String() != out {
		t.Errorf("drew after Stop: %q", b.String()[len(out):])
	}
}

func TestSpinnerConcurrentUse(t *testing.T) {
	var b lockedBuffer
	s := (&Term{Out: &b, TTY: true, Width: 40}).NewSpinner()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				switch (i + j) % 4 {
				case 0:
					s.Start("tool")
				case 1:
					s.Progress(float64(j), 50, "working")
				case 2:
					s.Set("other")
				case 3:
					s.Stop()
				}
			}
		})
	}
	wg.Wait()
	s.Stop()
}

func TestProgressText(t *testing.T) {
	tests := []struct {
		name            string
		progress, total float64
		message         string
		want            string
	}{
		{"percent and message", 40, 100, "reading…", "40% · reading…"},
		{"percent only", 1, 3, "", "33%"},
		{"over the total", 150, 100, "", "100%"},
		{"unknown total with a count", 12, 0, "pages", "12 · pages"},
		{"nothing yet", 0, 0, "", ""},
		{"message only", 0, 0, "starting", "starting"},
		{"message on one line, cleaned", 0, 0, "a\nb\x1b[1m", `a b\u001b[1m`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressText(tt.progress, tt.total, tt.message); got != tt.want {
				t.Errorf("progressText(%v, %v, %q) = %q, want %q", tt.progress, tt.total, tt.message, got, tt.want)
			}
		})
	}
}

func TestSpinnerFitsTheLine(t *testing.T) {
	var b lockedBuffer
	s := (&Term{Out: &b, TTY: true, Width: 30}).NewSpinner()
	s.Start(strings.Repeat("long label ", 10))
	s.Stop()
	first := strings.Split(b.String(), "\r")[1]
	first = strings.TrimSuffix(first, "\x1b[K")
	if n := len([]rune(first)); n > 30 {
		t.Errorf("spinner line is %d runes wide on 30 columns: %q", n, first)
	}
}
