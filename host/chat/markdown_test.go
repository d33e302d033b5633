package chat

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestStreamPlain(t *testing.T) {
	tests := []struct {
		name   string
		deltas []string
		want   string
	}{
		{"deltas pass through", []string{"Hello ", "**world**", "\n", "- a\n"}, "Hello **world**\n- a\n"},
		{"a last newline is added", []string{"no newline"}, "no newline\n"},
		{"nothing stays nothing", nil, ""},
		{"escapes are made visible", []string{"red \x1b[31m", "text\x1b]0;title\x07\n"}, "red \\u001b[31mtext\\u001b]0;title\\u0007\n"},
		{"bidi override is made visible", []string{"file \u202egnp.exe\n"}, "file \\u202egnp.exe\n"},
		{"a rune split between deltas", []string{"caf\xc3", "\xa9 ", "\xe2\x9c", "\x93\n"}, "café ✓\n"},
		{"CRLF split between deltas", []string{"one\r", "\ntwo\r\n"}, "one\ntwo\n"},
		{"a lone CR is made visible", []string{"50%\r", "100%\n"}, "50%\\u000d100%\n"},
		{"a byte never completed", []string{"end\xe2"}, "end\\xe2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			s := Plain(&b).NewStream()
			for _, d := range tt.deltas {
				s.Write(d)
			}
			s.Flush()
			if got := b.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStreamPlainPrintsEachDelta(t *testing.T) {
	var b strings.Builder
	s := Plain(&b).NewStream()
	s.Write("Hel")
	if b.String() != "Hel" {
		t.Fatalf("after one delta: %q", b.String())
	}
	s.Write("lo")
	if b.String() != "Hello" {
		t.Fatalf("after two deltas: %q", b.String())
	}
	s.Flush()
	s.Write("again")
	s.Flush()
	if want := "Hello\nagain\n"; b.String() != want {
		t.Errorf("after reuse: %q, want %q", b.String(), want)
	}
}

// TestStreamRendersBlocks feeds an answer in deltas and checks that each
// block is printed, styled, once it is complete and not before.
func TestStreamRendersBlocks(t *testing.T) {
	var b strings.Builder
	term := &Term{Out: &b, TTY: true, Color: true, Width: 80}
	s := term.NewStream()
	steps := []struct {
		delta string
		want  []string // new text since the last step, once the delta is in
	}{
		{"# Ti", nil},
		{"tle\n", []string{"Title"}},
		{"First para", nil},
		{"graph here.\n", nil},
		{"\n", []string{"First", "paragraph", "here."}},
		{"- one\n", nil},
		{"- two\n\n", nil},
		{"- three\n", nil},
		{"\n", nil},
		{"```go\n", []string{"one", "two", "three"}},
		{"fmt.Println(\"hi\")\n\n", nil},
		{"```\n", []string{"Println"}},
		{"Last ", nil},
		{"words\x1b]0;owned\x07", nil},
	}
	seen := 0
	for i, st := range steps {
		s.Write(st.delta)
		out := b.String()
		fresh := out[seen:]
		seen = len(out)
		if st.want == nil && fresh != "" {
			t.Errorf("step %d (%q) printed %q before its block was complete", i, st.delta, fresh)
		}
		for _, w := range st.want {
			if !strings.Contains(fresh, w) {
				t.Errorf("step %d (%q): %q missing from %q", i, st.delta, w, fresh)
			}
		}
		if st.want != nil && !strings.Contains(fresh, "\x1b[") {
			t.Errorf("step %d (%q): no styling in %q", i, st.delta, fresh)
		}
	}
	s.Flush()
	fresh := ansi.Strip(b.String()[seen:])
	for _, w := range []string{"Last", "words", `\u001b]0;owned\u0007`} {
		if !strings.Contains(fresh, w) {
			t.Errorf("Flush: %q missing from %q", w, fresh)
		}
	}
	if strings.Contains(b.String(), "\x1b]") || strings.Contains(b.String(), "\x07") {
		t.Errorf("the model's escape reached the terminal: %q", b.String())
	}
	// The list stayed one list across its blank line: one bullet each.
	if n := strings.Count(b.String(), "•"); n != 3 {
		t.Errorf("%d bullets, want 3", n)
	}
}

func TestStreamFlushRendersAnOpenFence(t *testing.T) {
	var b strings.Builder
	s := (&Term{Out: &b, TTY: true, Color: true, Width: 60}).NewStream()
	s.Write("```\nunfinished code")
	if b.Len() != 0 {
		t.Fatalf("printed before Flush: %q", b.String())
	}
	s.Flush()
	if !strings.Contains(b.String(), "unfinished code") {
		t.Errorf("Flush lost the open block: %q", b.String())
	}
}
