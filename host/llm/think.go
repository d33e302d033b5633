package llm

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
	blanks     = " \t\r\n"
)

// thinkSplitter moves a <think>…</think> block at the start of the content
// to the reasoning, as models do whose server does not separate it. Tags
// split across chunks are recognised; a think block left open at the end is
// all reasoning.
type thinkSplitter struct {
	state int
	buf   string
}

const (
	thinkUndecided = iota // nothing but blanks so far
	thinkInside
	thinkAfter // past </think>, dropping the blanks that follow it
	thinkNone
)

func (t *thinkSplitter) feed(s string, reason, text func(string)) {
	switch t.state {
	case thinkNone:
		text(s)
	case thinkUndecided:
		t.buf += s
		lead := strings.TrimLeft(t.buf, blanks)
		switch {
		case strings.HasPrefix(lead, thinkOpen):
			t.state, t.buf = thinkInside, ""
			t.inside(lead[len(thinkOpen):], reason, text)
		case strings.HasPrefix(thinkOpen, lead):
			// Blanks, or the start of the tag: wait for more.
		default:
			t.state = thinkNone
			b := t.buf
			t.buf = ""
			text(b)
		}
	case thinkInside:
		t.inside(s, reason, text)
	case thinkAfter:
		t.after(s, text)
	}
}

func (t *thinkSplitter) inside(s string, reason, text func(string)) {
	t.buf += s
	if i := strings.Index(t.buf, thinkClose); i >= 0 {
		reason(t.buf[:i])
		rest := t.buf[i+len(thinkClose):]
		t.state, t.buf = thinkAfter, ""
		t.after(rest, text)
		return
	}
	keep := partialSuffix(t.buf, thinkClose)
	reason(t.buf[:len(t.buf)-keep])
	t.buf = t.buf[len(t.buf)-keep:]
}

func (t *thinkSplitter) after(s string, text func(string)) {
	if lead := strings.TrimLeft(s, blanks); lead != "" {
		t.state = thinkNone
		text(lead)
	}
}

// finish flushes what is still undecided.
func (t *thinkSplitter) finish(reason, text func(string)) {
	switch t.state {
	case thinkUndecided:
		text(t.buf)
	case thinkInside:
		reason(t.buf)
	}
	t.buf = ""
}

// partialSuffix returns the length of the longest proper prefix of tag that
// s ends with: the bytes to hold back in case the tag is being split.
func partialSuffix[S string | []byte](s S, tag string) int {
	for k := min(len(tag)-1, len(s)); k > 0; k-- {
		if string(s[len(s)-k:]) == tag[:k] {
			return k
		}
	}
	return 0
}
