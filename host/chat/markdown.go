package chat

import (
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"charm.land/glamour/v2"
	"github.com/charmbracelet/x/ansi"
)

// Stream prints one answer as it arrives in deltas. With colour it renders
// Markdown a block at a time: a paragraph once a blank line ends it, a list
// once a line that is not part of it starts, a fenced code block once it is
// closed, a heading at once; Flush renders the rest. Without colour it
// prints the deltas as they come, cleaned but otherwise unchanged, so piped
// output is the model's own text.
//
// A Stream is used by one goroutine at a time. After Flush it is ready for
// the next answer.
type Stream struct {
	t   *Term
	out io.Writer

	// Without colour.
	hold   string // an incomplete UTF-8 sequence or a lone \r, for the next delta
	wrote  bool   // something was printed
	lastNL bool   // and it ended with a newline

	// With colour.
	render  *glamour.TermRenderer
	partial string   // the current line, not yet ended
	block   []string // the lines of the block being read
	list    bool     // the block is a list
	blanks  int      // blank lines after a list, not yet known to end it
	fence   string   // the open code fence ("```", "~~~~"), or ""
	owns    bool     // the open fence began the block, so closing it ends it
	emitted bool     // a block was printed in this answer
}

// NewStream returns a Stream that prints to t.Out.
func (t *Term) NewStream() *Stream {
	s := &Stream{t: t, out: t.Out}
	if t.Color {
		s.out = t.styled(t.Out)
		s.render = newRenderer(t.width())
	}
	return s
}

func newRenderer(width int) *glamour.TermRenderer {
	wrap := max(width-2, 20)
	// GLAMOUR_STYLE picks another style (light, dracula, a JSON file).
	r, err := glamour.NewTermRenderer(glamour.WithEnvironmentConfig(), glamour.WithWordWrap(wrap))
	if err != nil {
		r, err = glamour.NewTermRenderer(glamour.WithStandardStyle("dark"), glamour.WithWordWrap(wrap))
	}
	if err != nil {
		return nil
	}
	return r
}

// Write adds a delta of the answer.
func (s *Stream) Write(delta string) {
	if s.render == nil {
		s.writePlain(delta)
		return
	}
	s.partial += delta
	for {
		i := strings.IndexByte(s.partial, '\n')
		if i < 0 {
			return
		}
		line := s.partial[:i]
		s.partial = s.partial[i+1:]
		s.line(Clean(strings.TrimSuffix(line, "\r")))
	}
}

// Flush ends the answer: it prints whatever is left and ends the last line.
func (s *Stream) Flush() {
	if s.render == nil {
		s.flushPlain()
		return
	}
	if s.partial != "" {
		s.line(Clean(strings.TrimSuffix(s.partial, "\r")))
	}
	s.emit()
	*s = Stream{t: s.t, out: s.out, render: s.render}
}

func (s *Stream) writePlain(delta string) {
	text := s.hold + delta
	s.hold = ""
	// Keep back what the next delta may complete: a rune split between
	// deltas, or the \r of a \r\n.
	if cut := incompleteTail(text); cut < len(text) {
		text, s.hold = text[:cut], text[cut:]
	}
	s.printPlain(text)
}

func (s *Stream) flushPlain() {
	s.printPlain(s.hold)
	if s.wrote && !s.lastNL {
		io.WriteString(s.out, "\n")
	}
	*s = Stream{t: s.t, out: s.out}
}

func (s *Stream) printPlain(text string) {
	if text == "" {
		return
	}
	text = Clean(strings.ReplaceAll(text, "\r\n", "\n"))
	io.WriteString(s.out, text)
	s.wrote, s.lastNL = true, strings.HasSuffix(text, "\n")
}

// incompleteTail returns where the end of text that a later delta may
// complete begins: len(text) when there is none.
func incompleteTail(text string) int {
	if strings.HasSuffix(text, "\r") {
		return len(text) - 1
	}
	// A rune is at most utf8.UTFMax bytes: look for its start in the last
	// few.
	for i := len(text) - 1; i >= 0 && i >= len(text)-utf8.UTFMax; i-- {
		if utf8.RuneStart(text[i]) {
			if !utf8.FullRuneInString(text[i:]) {
				return i
			}
			break
		}
	}
	return len(text)
}

var (
	fenceLine  = regexp.MustCompile("^( *)(`{3,}|~{3,})")
	headerLine = regexp.MustCompile(`^ {0,3}#{1,6}(\s|$)`)
	listItem   = regexp.MustCompile(`^\s*([-*+]|\d{1,9}[.)])(\s|$)`)
)

// line takes one cleaned line of Markdown and prints the blocks it
// completes.
func (s *Stream) line(l string) {
	blank := strings.TrimSpace(l) == ""
	if s.fence != "" {
		s.block = append(s.block, l)
		if m := fenceLine.FindStringSubmatch(l); m != nil && closes(s.fence, l, m[2]) {
			s.fence = ""
			if s.owns {
				s.emit()
			}
		}
		return
	}
	if s.list && s.blanks > 0 && !blank {
		// A list goes on past blank lines with another item or an
		// indented continuation; anything else ends it.
		if listItem.MatchString(l) || strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "\t") {
			for range s.blanks {
				s.block = append(s.block, "")
			}
			s.blanks = 0
		} else {
			s.emit()
		}
	}
	switch {
	case blank:
		switch {
		case s.list:
			s.blanks++
		case len(s.block) > 0:
			s.emit()
		}
	case headerLine.MatchString(l):
		s.emit()
		s.block = []string{l}
		s.emit()
	case fenceLine.MatchString(l):
		m := fenceLine.FindStringSubmatch(l)
		if m[1] == "" {
			// An unindented fence starts a block of its own.
			s.emit()
		}
		s.owns = len(s.block) == 0
		s.fence = m[2]
		s.block = append(s.block, l)
	default:
		if len(s.block) == 0 {
			s.list = listItem.MatchString(l)
		}
		s.block = append(s.block, l)
	}
}

// closes reports whether a fence line l (with fence f) closes the open
// fence: the same character, at least as long, and nothing after it.
func closes(open, l, f string) bool {
	return f[0] == open[0] && len(f) >= len(open) && strings.TrimSpace(l) == f
}

// emit renders the block read so far, if any, and starts the next.
func (s *Stream) emit() {
	lines := s.block
	s.block, s.list, s.blanks, s.fence, s.owns = nil, false, 0, "", false
	if len(lines) == 0 {
		return
	}
	text := strings.Join(lines, "\n") + "\n"
	out, err := s.render.Render(text)
	if err != nil {
		out = text
	}
	out = trimBlankLines(out)
	if out == "" {
		return
	}
	if s.emitted {
		io.WriteString(s.out, "\n")
	}
	io.WriteString(s.out, out+"\n")
	s.emitted = true
}

// trimBlankLines drops the lines that show nothing at the start and end of
// a rendered block, so that blocks are spaced evenly however the renderer
// pads them.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	empty := func(l string) bool { return strings.TrimSpace(ansi.Strip(l)) == "" }
	for len(lines) > 0 && empty(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && empty(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}
