package chat

import (
	"os"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain text is kept", "hello, world", "hello, world"},
		{"newline and tab are kept", "a\nb\tc", "a\nb\tc"},
		{"colour sequence", "\x1b[31mred\x1b[0m", `\u001b[31mred\u001b[0m`},
		{"window title", "\x1b]0;owned\x07", `\u001b]0;owned\u0007`},
		{"carriage return", "safe\revil", `safe\u000devil`},
		{"backspace and NUL", "a\bb\x00", `a\u0008b\u0000`},
		{"DEL", "a\x7f", `a\u007f`},
		{"C1 control sequence introducer", "\u009b31m", `\u009b31m`},
		{"C1 next line", "a\u0085b", `a\u0085b`},
		{"bidi override", "safe \u202egnp.exe", `safe \u202egnp.exe`},
		{"bidi isolates and marks", "\u2066x\u2069\u200f\u061c", `\u2066x\u2069\u200f\u061c`},
		{"zero-width space and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"tag characters beyond the BMP", "hi\U000e0041", `hi\U000e0041`},
		{"valid UTF-8 is kept", "héllo 世界 ✓ 👩\u200d💻 \ufffd", "héllo 世界 ✓ 👩\u200d💻 \ufffd"},
		{"invalid byte", "a\xffb", `a\xffb`},
		{"truncated rune", "end\xe2\x80", `end\xe2\x80`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clean(tt.in)
			if got != tt.want {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if i := strings.IndexFunc(got, unsafeRune); i >= 0 {
				t.Errorf("Clean(%q) left %q", tt.in, got[i:])
			}
			if Clean(got) != got {
				t.Errorf("Clean is not idempotent on %q", got)
			}
		})
	}
}

func TestPlainTerm(t *testing.T) {
	var b strings.Builder
	term := Plain(&b)
	if term.TTY || term.Color || term.Width != defaultWidth {
		t.Errorf("Plain = %+v, want no TTY, no colour, width %d", term, defaultWidth)
	}
}

func TestNewTermOnAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	term := NewTerm(r, w)
	if term.TTY || term.Color || term.Width != defaultWidth {
		t.Errorf("NewTerm(pipe) = TTY %v, Color %v, Width %d; want false, false, %d", term.TTY, term.Color, term.Width, defaultWidth)
	}
}
