// Package sentences splits text into sentences for speech, also as it
// streams in from a language model, and turns Markdown into plain text a
// speech engine can read. It does no I/O.
package sentences

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxRunes is how long a sentence may run without an end before it is cut
// at a comma or a space, so that speech can start.
const maxRunes = 250

// Split splits a whole text into sentences, trimmed, with no empty ones.
func Split(text string) []string {
	s := Splitter{buf: text}
	return s.take(true)
}

// Splitter splits text that arrives in pieces, such as a language model's
// deltas. It returns a sentence only once the text after it has arrived
// far enough to be sure it ended, so feeding a text in any pieces yields
// the same sentences as [Split]. The zero value is ready to use.
type Splitter struct {
	// buf holds the text from the start of the line where the unreturned
	// part begins: some rules look at the whole line.
	buf  string
	from int // offset in buf of the unreturned part
}

// Add feeds the next piece of text and returns the sentences it completed.
func (s *Splitter) Add(delta string) []string {
	s.buf += delta
	return s.take(false)
}

// Flush returns the rest of the text as the last sentence, "" if there is
// none, and makes the Splitter ready for a new text.
func (s *Splitter) Flush() string {
	rest := strings.Join(s.take(true), " ")
	*s = Splitter{}
	return rest
}

// take returns the sentences that end in the buffer; final says no more
// text will come.
func (s *Splitter) take(final bool) []string {
	var out []string
	for {
		text := s.buf
		if !final {
			text = wholeRunes(text)
		}
		end, ok := next(text, s.from, final)
		if !ok {
			return out
		}
		if t := strings.TrimSpace(s.buf[s.from:end]); t != "" {
			out = append(out, t)
		}
		line := strings.LastIndexByte(s.buf[:end], '\n') + 1
		s.buf = s.buf[line:]
		s.from = end - line
	}
}

// verdict is whether a possible sentence end is one.
type verdict int

const (
	no verdict = iota
	yes
	unknown // the text that decides has not arrived yet
)

// next finds the end of the sentence that starts at or after from in
// text, which begins at the start of a line. It reports false when there
// is no sentence there or, unless final, when the text that decides where
// it ends has not arrived. A decision taken on a prefix of a text must be
// the one taken on the whole text: that is what makes streaming and Split
// agree.
func next(text string, from int, final bool) (int, bool) {
	start := skipSpace(text, from)
	if start == len(text) {
		return 0, false
	}
	if atLineStart(text, start) {
		switch isFence(text[start:], final) {
		case yes:
			return fenceEnd(text, start, final)
		case unknown:
			return 0, false
		}
	}
	limit := runeOffset(text, start, maxRunes)
	for i := start; i < len(text) && (limit < 0 || i < limit); {
		r, size := utf8.DecodeRuneInString(text[i:])
		v, end := no, 0
		switch {
		case r == '\n':
			v, end = newlineEnd(text, i, final), i
		case isTerminator(r):
			var after int
			v, end, after = terminatorEnd(text, start, i, final)
			size = after - i
		}
		switch v {
		case yes:
			return end, true
		case unknown:
			return 0, false
		}
		i += size
	}
	if limit >= 0 && limit < len(text) {
		return cut(text, start, limit), true
	}
	if final {
		return len(text), true
	}
	return 0, false
}

// terminatorEnd decides whether the run of sentence-ending punctuation at
// i ends the sentence that began at start, and where. after is where the
// run ends.
func terminatorEnd(text string, start, i int, final bool) (v verdict, end, after int) {
	j, dots, cjk, bang := i, 0, false, false
	for j < len(text) {
		r, size := utf8.DecodeRuneInString(text[j:])
		if !isTerminator(r) {
			break
		}
		switch r {
		case '.':
			dots++
		case '…':
			dots += 3
		case '!', '?':
			bang = true
		default:
			cjk = true
		}
		j += size
	}
	k := j
	for k < len(text) {
		r, size := utf8.DecodeRuneInString(text[k:])
		if !isCloser(r) {
			break
		}
		k += size
	}
	if k == len(text) {
		if final {
			return yes, k, j
		}
		return unknown, 0, j
	}
	if cjk {
		// Chinese and Japanese put no space after a sentence.
		return yes, k, j
	}
	if r, _ := utf8.DecodeRuneInString(text[k:]); !unicode.IsSpace(r) {
		return no, 0, j // 3.14, v1.2.3, example.com, "Hi!"s
	}
	if bang {
		return yes, k, j
	}
	if dots == 1 && abbreviation(text, start, i) {
		return no, 0, j
	}
	// A period or an ellipsis followed by a lowercase word is inside a
	// sentence ("approx. five", "wait... what"), unless a blank line
	// comes between.
	newlines := 0
	m := k
	for m < len(text) {
		r, size := utf8.DecodeRuneInString(text[m:])
		if !unicode.IsSpace(r) {
			break
		}
		if r == '\n' {
			newlines++
		}
		m += size
	}
	if newlines >= 2 {
		return yes, k, j
	}
	if m == len(text) {
		if final {
			return yes, k, j
		}
		return unknown, 0, j
	}
	if r, _ := utf8.DecodeRuneInString(text[m:]); unicode.IsLower(r) {
		return no, 0, j
	}
	return yes, k, j
}

// abbreviations are words that end with a period inside a sentence. Words
// that also end sentences often ("no", "in") are left out.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true, "jr": true,
	"st": true, "mt": true, "vs": true, "etc": true, "cf": true, "approx": true, "al": true,
	"fig": true, "figs": true, "vol": true, "inc": true, "ltd": true, "corp": true,
	"dept": true, "est": true, "ph.d": true, "jan": true, "feb": true, "mar": true,
	"apr": true, "jun": true, "jul": true, "aug": true, "sep": true, "sept": true,
	"oct": true, "nov": true, "dec": true, "nr": true, "ca": true, "resp": true,
}

// abbreviation reports whether the word before the period at i, in the
// sentence that began at start, is an abbreviation, an initial or the
// number of a list item.
func abbreviation(text string, start, i int) bool {
	w := i
	for w > start {
		r, size := utf8.DecodeLastRuneInString(text[:w])
		if unicode.IsSpace(r) || strings.ContainsRune("([{\"'“‘«*_", r) {
			break
		}
		w -= size
	}
	word := text[w:i]
	switch {
	case word == "":
		return false
	case strings.Trim(word, "0123456789") == "":
		return atLineStart(text, w) // "1. First step"
	case abbreviations[strings.ToLower(word)]:
		return true
	}
	if r, size := utf8.DecodeRuneInString(word); size == len(word) && unicode.IsUpper(r) && r != 'I' {
		return true // J. R. R. Tolkien
	}
	// e.g, i.e, U.S, a.m: single letters joined by periods.
	parts := strings.Split(word, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if r, size := utf8.DecodeRuneInString(p); size != len(p) || !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// newlineEnd decides whether the line break at i ends a sentence: after a
// blank line, a list item, a heading or a table row, and before one.
func newlineEnd(text string, i int, final bool) verdict {
	line := text[strings.LastIndexByte(text[:i], '\n')+1 : i]
	if structural(line) {
		return yes
	}
	j := i + 1
	for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r') {
		j++
	}
	if j == len(text) {
		if final {
			return yes
		}
		return unknown
	}
	if text[j] == '\n' {
		return yes
	}
	v := startsBlock(text[j:])
	if v == unknown && final {
		return no
	}
	return v
}

// structural reports whether a whole line is a list item, a heading, a
// table row or a code fence: a line that is spoken on its own.
func structural(line string) bool {
	line = strings.TrimLeft(line, " \t")
	return line != "" && startsBlock(line+"\n") == yes
}

// startsBlock reports whether s starts with the marker of a list item, a
// heading, a table row or a code fence; unknown if s ends too soon to
// tell.
func startsBlock(s string) verdict {
	if s == "" {
		return unknown
	}
	switch c := s[0]; {
	case c == '-' || c == '*' || c == '+':
		return spaceAt(s, 1)
	case c >= '0' && c <= '9':
		n := len(s) - len(strings.TrimLeft(s, "0123456789"))
		if n > 9 {
			return no
		}
		if n == len(s) {
			return unknown
		}
		if s[n] != '.' && s[n] != ')' {
			return no
		}
		return spaceAt(s, n+1)
	case c == '#':
		n := len(s) - len(strings.TrimLeft(s, "#"))
		if n > 6 {
			return no
		}
		return spaceAt(s, n)
	case c == '|':
		return yes
	case c == '`' || c == '~':
		return isFence(s, false)
	}
	return no
}

// spaceAt reports whether s has a space, a tab or a line end at i.
func spaceAt(s string, i int) verdict {
	if i >= len(s) {
		return unknown
	}
	switch s[i] {
	case ' ', '\t', '\n', '\r':
		return yes
	}
	return no
}

// isFence reports whether s starts with a code fence, ``` or ~~~.
func isFence(s string, final bool) verdict {
	if s[0] != '`' && s[0] != '~' {
		return no
	}
	n := fenceLen(s)
	switch {
	case n >= 3:
		return yes
	case n < len(s) || final:
		return no
	}
	return unknown
}

func fenceLen(s string) int {
	if s == "" {
		return 0
	}
	return len(s) - len(strings.TrimLeft(s, s[:1]))
}

// fenceEnd finds the end of the fenced code block opening at start: the
// block is one piece, never cut, whatever its length.
func fenceEnd(text string, start int, final bool) (int, bool) {
	fence := text[start : start+fenceLen(text[start:])]
	nl := strings.IndexByte(text[start:], '\n')
	for nl >= 0 {
		i := start + nl + 1 // the next line
		line, end := text[i:], strings.IndexByte(text[i:], '\n')
		if end >= 0 {
			line = line[:end]
		}
		line = strings.TrimSpace(line)
		if line != "" && fenceLen(line) == len(line) && strings.HasPrefix(line, fence) {
			if end < 0 {
				break // the closing line may go on
			}
			return i + end, true
		}
		start, nl = i, end
	}
	if final {
		return len(text), true
	}
	return 0, false
}

// cut ends a sentence that has run past limit without an end after its
// last comma or semicolon before limit, else at its last space, else at
// limit.
func cut(text string, start, limit int) int {
	space := -1
	for i := limit; i > start; {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		i -= size
		switch {
		case strings.ContainsRune(",;:", r) && i+1 < len(text) && isSpaceByte(text[i+1]):
			return i + 1 // not 3,000 or https:
		case strings.ContainsRune("，、；：", r):
			return i + size
		case space < 0 && unicode.IsSpace(r):
			space = i
		}
	}
	if space > start {
		return space
	}
	return limit
}

func isTerminator(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？':
		return true
	}
	return false
}

// isCloser reports whether r may follow a sentence's last punctuation and
// still belong to the sentence: quotes, brackets, Markdown emphasis.
func isCloser(r rune) bool {
	return strings.ContainsRune("\"'”’»)]}*_`」』）】》", r)
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipSpace(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// atLineStart reports whether only spaces come between the line start and
// i.
func atLineStart(text string, i int) bool {
	line := strings.LastIndexByte(text[:i], '\n') + 1
	return strings.Trim(text[line:i], " \t") == ""
}

// wholeRunes drops the start of a character split between two deltas.
func wholeRunes(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			break
		}
	}
	return s
}

// runeOffset is the offset in text n runes after start, or -1 if text
// ends first.
func runeOffset(text string, start, n int) int {
	i := start
	for range n {
		if i >= len(text) {
			return -1
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	return i
}
