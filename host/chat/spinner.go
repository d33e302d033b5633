package chat

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// spinFrames are drawn in turn, one per tick.
var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

const spinTick = 100 * time.Millisecond

var spinStyle = lipgloss.NewStyle().Foreground(lipgloss.Cyan)

// Spinner shows on one line that something is running, such as a tool
// call with its MCP progress: "⠋ read_text_file · 40% · reading…". It
// animates on its own goroutine and clears its line when stopped. On a
// Term that is not a TTY it prints nothing. Its methods are safe for
// concurrent use; a stopped Spinner may be started again.
type Spinner struct {
	t *Term

	mu      sync.Mutex
	label   string
	status  string // progress, already formatted
	frame   int
	running bool
	stop    chan struct{}
	done    chan struct{}
}

// NewSpinner returns a stopped spinner that draws on t.Out.
func (t *Term) NewSpinner() *Spinner {
	return &Spinner{t: t}
}

// Start shows the spinner with label, or changes the label if it is
// already running. Progress from an earlier label is dropped.
func (s *Spinner) Start(label string) {
	if !s.t.TTY {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.label, s.status = oneLine(label), ""
	if s.running {
		s.drawLocked()
		return
	}
	s.running, s.frame = true, 0
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.drawLocked()
	go s.animate(s.stop, s.done)
}

// Set changes the label and drops the progress.
func (s *Spinner) Set(label string) {
	if !s.t.TTY {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.label, s.status = oneLine(label), ""
	if s.running {
		s.drawLocked()
	}
}

// Progress shows how far the work is: a percentage when total is known
// (not 0), else the count when there is one, and the message.
func (s *Spinner) Progress(progress, total float64, message string) {
	if !s.t.TTY {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = progressText(progress, total, message)
	if s.running {
		s.drawLocked()
	}
}

// Stop clears the spinner's line. It returns once the spinner has stopped
// drawing, so that what is printed next is not overwritten.
func (s *Spinner) Stop() {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return
	}
	s.running = false
	stop, done := s.stop, s.done
	s.mu.Unlock()
	close(stop)
	<-done
	s.mu.Lock()
	io.WriteString(s.t.Out, "\r\x1b[K")
	s.mu.Unlock()
}

func (s *Spinner) animate(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(spinTick)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			s.mu.Lock()
			if s.running {
				s.frame = (s.frame + 1) % len(spinFrames)
				s.drawLocked()
			}
			s.mu.Unlock()
		}
	}
}

// drawLocked redraws the spinner's line, cut to the terminal's width so
// that it never wraps (a wrapped line could not be cleared).
func (s *Spinner) drawLocked() {
	text := s.label
	if s.status != "" {
		text += " · " + s.status
	}
	text = ansi.Truncate(text, max(s.t.width()-3, 10), "…")
	frame := spinFrames[s.frame]
	if s.t.Color {
		frame = spinStyle.Render(frame)
	}
	io.WriteString(s.t.Out, "\r"+frame+" "+text+"\x1b[K")
}

// progressText formats an MCP progress notification for the spinner.
func progressText(progress, total float64, message string) string {
	var parts []string
	switch {
	case total > 0:
		pct := int(100 * progress / total)
		parts = append(parts, fmt.Sprintf("%d%%", min(max(pct, 0), 100)))
	case progress > 0:
		parts = append(parts, strconv.FormatFloat(progress, 'f', -1, 64))
	}
	if m := oneLine(message); m != "" {
		parts = append(parts, m)
	}
	return strings.Join(parts, " · ")
}
