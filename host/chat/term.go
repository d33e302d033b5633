// Package chat owns the terminal side of `domo chat`: the terminal's
// capabilities, line editing with history, streamed answers rendered as
// Markdown, the spinner shown while a tool runs, and the permission prompt.
//
// Everything it prints that came from a model, a tool or a server passes
// through Clean first. It must not decide permissions (policy does) nor call
// tools (toolgate does); it only shows and asks.
package chat

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
	"golang.org/x/term"
)

// defaultWidth is the width assumed when the terminal does not say.
const defaultWidth = 80

// Term is what chat knows about the terminal it talks to.
type Term struct {
	In    *os.File
	Out   io.Writer
	TTY   bool // both In and Out are terminals: prompts, spinners and raw mode
	Color bool // escape codes for colour and style are welcome
	Links bool // OSC 8 hyperlinks are welcome
	Width int  // columns, at creation; see width for the live value

	// profile is how many colours Out shows; Unknown means "do not
	// downsample" (a Term built by hand in a test).
	profile colorprofile.Profile
}

// NewTerm looks at in and out: TTY when both are terminals, Color when TTY,
// NO_COLOR is unset or empty and TERM is not "dumb", Links when TTY and
// TERM is not "dumb" (a terminal that does not know OSC 8 shows the text
// alone).
func NewTerm(in *os.File, out *os.File) *Term {
	t := &Term{In: in, Out: out, Width: defaultWidth}
	t.TTY = term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd()))
	t.Color = t.TTY && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	t.Links = t.TTY && os.Getenv("TERM") != "dumb"
	if w, _, err := term.GetSize(int(out.Fd())); err == nil && w > 0 {
		t.Width = w
	}
	if t.Color {
		t.profile = colorprofile.Detect(out, os.Environ())
	}
	return t
}

// Plain returns a Term that writes plain text to out and never prompts:
// for pipes and tests.
func Plain(out io.Writer) *Term {
	return &Term{Out: out, Width: defaultWidth}
}

// width is the terminal's current width, which may have changed since
// NewTerm.
func (t *Term) width() int {
	w, _ := t.size()
	return w
}

// size is the terminal's current size in columns and rows, falling back to
// t.Width (or the default) by 24 rows when the terminal does not say.
func (t *Term) size() (w, h int) {
	if t.TTY {
		for _, f := range []*os.File{asFile(t.Out), t.In} {
			if f == nil {
				continue
			}
			if w, h, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				return w, h
			}
		}
	}
	if t.Width > 0 {
		return t.Width, 24
	}
	return defaultWidth, 24
}

func asFile(w io.Writer) *os.File {
	f, _ := w.(*os.File)
	return f
}

// styled returns out wrapped, when needed, so that colours beyond what the
// terminal shows are downsampled.
func (t *Term) styled(out io.Writer) io.Writer {
	switch t.profile {
	case colorprofile.ASCII, colorprofile.ANSI, colorprofile.ANSI256:
		return &colorprofile.Writer{Forward: out, Profile: t.profile}
	}
	return out
}

// Clean makes untrusted text safe to print on a terminal. A model's answer,
// a tool's result or a server's name may carry escape sequences that would
// retitle the window, move the cursor or hide text, or bidirectional
// overrides and invisible characters that change what a reader sees. Each
// such character is shown as an escape instead: a code point as \u001b (or
// \U000e0041 beyond the BMP), a byte that is not UTF-8 as \xff. Newlines
// and tabs are kept. Text that needs nothing is returned as is.
func Clean(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports whether r must not reach a terminal as it is: C0
// controls but newline and tab, DEL, C1 controls (U+009B alone starts a
// control sequence on some terminals), the line and paragraph separators,
// and the invisible format characters (bidi overrides and isolates,
// zero-width spaces, tag characters). The zero-width joiner and non-joiner
// are kept: emoji sequences and several scripts need them.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	case r == 0x200c || r == 0x200d:
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// oneLine flattens s for a single terminal line: cleaned, with runs of
// whitespace (newlines included) made one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(Clean(s)), " ")
}
