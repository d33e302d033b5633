package audit

import (
	"regexp"
	"strconv"
	"strings"
)

// redacted replaces the whole value of a secret-named key.
const redacted = "[REDACTED]"

// rule finds one shape of secret in free text and replaces it with
// [REDACTED:kind]. Only the first participating group whose name starts with
// "v" is replaced (the whole match if there is none), so that what surrounds
// a secret, such as a URL's user and host or a parameter's name, stays
// readable.
//
// Go's regexp runs at some tens of MB/s, too slow to pass every rule over
// every tool result; so one pass finds the hints of all rules, literals that
// every match contains, and a rule searches only the words around its own.
// A text holding none of a rule's hints costs that rule nothing.
type rule struct {
	kind  string
	hints []string // lowercase
	// near finds candidates where no literal hint would do.
	near func(lower string) []int
	re   *regexp.Regexp
	// fwd is how far past a hint a match may reach before the word that
	// holds its secret, for rules whose matches span whitespace.
	fwd int
	// multiline rules search the whole text instead.
	multiline bool
	// needs, if set, lists bytes of which a window must hold one to be
	// worth searching.
	needs string
	// key, if set, makes a key rule: the identifier holding a hint is the
	// key, which key judges (with the byte before it) before re is tried,
	// anchored, on what follows it. Cheaper than a regexp that finds the
	// identifier too, in identifiers, where hints are common.
	key func(m match) bool
	// tail, if set, finds the secret's span from the end of the match, so
	// that a quoted value of any length is redacted whole. Key rules need
	// one.
	tail func(s string, at int) (start, end int)
	// ok, if set, vetoes a match that has the shape but not the substance.
	ok func(m match) bool

	values   []int   // indexes of the "v" groups
	keyGroup int     // index of the "key" group, or -1
	mask     hintSet // the rule's hints in the package's hints
}

// match is one candidate found by a rule; s[start:end] would be redacted.
type match struct {
	s          string
	loc        []int
	re         *regexp.Regexp
	start, end int
	keyAt      int // where key is in s, if the rule has one
	key        string
}

func (m match) value() string { return m.s[m.start:m.end] }

// group returns the named group's text, or "" if it did not participate.
func (m match) group(name string) string {
	i := m.re.SubexpIndex(name)
	if i < 0 || m.loc[2*i] < 0 {
		return ""
	}
	return m.s[m.loc[2*i]:m.loc[2*i+1]]
}

// hints lists every rule's hints once; byPair indexes them by their first
// two bytes, so that one pass over a text finds them all, and pairBits says
// which pairs start one in a table small enough to stay in the L1 cache.
var (
	hints     []string
	byPair    [1 << 16]uint8 // 1 + index in pairHints; 0 for none
	pairBits  [1 << 16 / 64]uint64
	pairHints [][]int
)

const maxHints = 128

// hintSet is a set of indexes in hints.
type hintSet [maxHints / 64]uint64

func (h *hintSet) add(i int)     { h[i/64] |= 1 << (i % 64) }
func (h hintSet) has(i int) bool { return h[i/64]&(1<<(i%64)) != 0 }

func (h hintSet) meets(o hintSet) bool {
	for i := range h {
		if h[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// hit is hints[hint] found at lower[at:at+n].
type hit struct{ at, n, hint int }

func findHints(lower string) (hits []hit, present hintSet) {
	for i := 0; i+1 < len(lower); i++ {
		pair := uint16(lower[i])<<8 | uint16(lower[i+1])
		if pairBits[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		for _, h := range pairHints[byPair[pair]-1] {
			if strings.HasPrefix(lower[i:], hints[h]) {
				hits = append(hits, hit{i, len(hints[h]), h})
				present.add(h)
			}
		}
	}
	return hits, present
}

func init() {
	index := map[string]int{}
	for _, r := range rules {
		r.keyGroup = r.re.SubexpIndex("key")
		for i, name := range r.re.SubexpNames() {
			if strings.HasPrefix(name, "v") {
				r.values = append(r.values, i)
			}
		}
		for _, h := range r.hints {
			n, ok := index[h]
			if !ok {
				if len(h) < 2 || h != strings.ToLower(h) {
					panic("audit: a redaction hint must be lowercase and two bytes or longer: " + h)
				}
				n = len(hints)
				index[h] = n
				hints = append(hints, h)
				pair := uint16(h[0])<<8 | uint16(h[1])
				if byPair[pair] == 0 {
					pairHints = append(pairHints, nil)
					byPair[pair] = uint8(len(pairHints))
					pairBits[pair/64] |= 1 << (pair % 64)
				}
				pairHints[byPair[pair]-1] = append(pairHints[byPair[pair]-1], n)
			}
			r.mask.add(n)
		}
	}
	if len(hints) > maxHints || len(pairHints) > 255 {
		panic("audit: too many redaction hints")
	}
}

func re(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// redactText replaces every secret found in s with [REDACTED:kind].
func redactText(s string) string {
	lower := asciiLower(s)
	hits, present := findHints(lower)
	for _, r := range rules {
		if r.near == nil && !r.mask.meets(present) {
			continue
		}
		if t := r.apply(s, lower, hits); t != s {
			s, lower = t, asciiLower(t)
			hits, present = findHints(lower)
		}
	}
	return s
}

// asciiLower lowercases only ASCII letters, so that offsets in the result
// are offsets in s.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func (r *rule) apply(s, lower string, hits []hit) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	skip := 0 // keys before skip are inside a value already judged
	redact := func(m match) {
		b.WriteString(s[done:m.start])
		b.WriteString("[REDACTED:")
		b.WriteString(r.kind)
		b.WriteString("]")
		done = m.end
	}
	for _, w := range r.windows(s, lower, hits) {
		if r.key != nil {
			if w.keyAt < max(done, skip) {
				continue
			}
			m := match{s: s, re: r.re, keyAt: w.keyAt, key: s[w.keyAt:w.start]}
			if !r.key(m) {
				continue
			}
			if m.loc = r.re.FindStringSubmatchIndex(s[w.start:w.end]); m.loc == nil {
				continue
			}
			shift(m.loc, w.start)
			m.start, m.end = r.tail(s, m.loc[1])
			if m.start == m.end || strings.HasPrefix(s[m.start:], "[REDACTED") || (r.ok != nil && !r.ok(m)) {
				skip = m.end
				continue
			}
			redact(m)
			continue
		}
		pos := max(w.start, done)
		for pos < w.end {
			loc := r.re.FindStringSubmatchIndex(s[pos:w.end])
			if loc == nil {
				break
			}
			shift(loc, pos)
			m := match{s: s, loc: loc, re: r.re, start: loc[0], end: loc[1]}
			if g := r.keyGroup; g >= 0 && loc[2*g] >= 0 {
				m.keyAt, m.key = loc[2*g], s[loc[2*g]:loc[2*g+1]]
			}
			for _, g := range r.values {
				if loc[2*g] >= 0 {
					m.start, m.end = loc[2*g], loc[2*g+1]
					break
				}
			}
			switch {
			case r.tail != nil:
				m.start, m.end = r.tail(s, loc[1])
			case len(r.values) == 0 && !r.multiline:
				m.end = tokenEnd(s, m.end)
			}
			if m.start == m.end || strings.HasPrefix(s[m.start:], "[REDACTED") || (r.ok != nil && !r.ok(m)) {
				// Go on after the vetoed match, not from just after
				// where it began: a long vetoed match ("sk-" and kebab
				// words to the end of a line) would be found again and
				// again.
				pos = max(loc[1], loc[0]+1)
				continue
			}
			redact(m)
			pos = max(loc[1], m.end)
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// shift makes a submatch index found in s[pos:] an index in s.
func shift(loc []int, pos int) {
	for i := range loc {
		if loc[i] >= 0 {
			loc[i] += pos
		}
	}
}

// window is a stretch of s that a rule searches. For key rules it starts
// right after the key, s[keyAt:start].
type window struct{ keyAt, start, end int }

// windows returns, in order, the stretches of s that r searches: the words
// around each hint and up to fwd bytes beyond it, within its line, merged
// where they overlap. Each starts after whitespace, so that \b and ^ mean
// there what they mean in s. Every byte is looked at a bounded number of
// times, so a long line full of hints costs no more per byte than a short
// one.
func (r *rule) windows(s, lower string, hits []hit) []window {
	if r.multiline {
		return []window{{start: 0, end: len(s)}}
	}
	if r.near != nil {
		hits = nil
		for _, at := range r.near(lower) {
			hits = append(hits, hit{at: at, n: 1})
		}
	}
	var ws []window
	lineStart, lineEnd := 0, -1
	for _, h := range hits {
		if r.near == nil && !r.mask.has(h.hint) {
			continue
		}
		if h.at > lineEnd {
			lineStart = strings.LastIndexByte(s[:h.at], '\n') + 1
			lineEnd = len(s)
			if j := strings.IndexByte(s[h.at:], '\n'); j >= 0 {
				lineEnd = h.at + j
			}
		}
		if r.key != nil {
			if w, ok := keyWindow(s, h.at, h.at+h.n, lineStart, lineEnd, r.fwd); ok && (len(ws) == 0 || w.keyAt != ws[len(ws)-1].keyAt) {
				ws = append(ws, w)
			}
			continue
		}
		floor, end := lineStart, h.at+h.n+r.fwd
		if len(ws) > 0 {
			floor = max(floor, ws[len(ws)-1].end)
			end = max(end, ws[len(ws)-1].end)
		}
		start := h.at
		for start > floor && !isSpace(s[start-1]) {
			start--
		}
		end = min(end, lineEnd)
		for end < lineEnd && !isSpace(s[end]) {
			end++
		}
		if len(ws) > 0 && start <= ws[len(ws)-1].end {
			ws[len(ws)-1].end = max(ws[len(ws)-1].end, end)
		} else {
			ws = append(ws, window{start: start, end: end})
		}
	}
	return ws
}

// maxKey bounds the identifiers taken for keys, so that a long run of
// identifier bytes full of hints costs a bounded amount per hint.
const maxKey = 128

// keyWindow returns the window of a key rule for the hint at s[i:j]: the
// identifier holding it is the key, and the fwd bytes after it are searched.
func keyWindow(s string, i, j, lineStart, lineEnd, fwd int) (window, bool) {
	hint := i
	for ; i > lineStart && isIdent(s[i-1]); i-- {
		if hint-i > maxKey {
			return window{}, false
		}
	}
	// In \u0026password= the key starts after the escape.
	if i > lineStart && s[i-1] == '\\' && i+5 <= hint && s[i] == 'u' {
		if _, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
			i += 5
		}
	}
	for end := j; j < lineEnd && isIdent(s[j]); j++ {
		if j-end > maxKey {
			return window{}, false
		}
	}
	return window{keyAt: i, start: j, end: min(j+fwd, lineEnd)}, true
}

// tokenEnd extends a secret's shape over the token characters right after
// it, so that a longer variant, or one percent-encoded in a URL
// ("…%3D5F2A…"), leaves no tail behind.
func tokenEnd(s string, end int) int {
	for end < len(s) {
		switch c := s[end]; {
		case isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '=':
			end++
		case c == '%' && end+2 < len(s) && isHex(s[end+1]) && isHex(s[end+2]):
			end += 3
		default:
			return end
		}
	}
	return end
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdent(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// dotPairs finds dots seven bytes apart, as in a Discord bot token.
func dotPairs(lower string) []int {
	var at []int
	for i := 0; ; {
		j := strings.IndexByte(lower[i:], '.')
		if j < 0 {
			return at
		}
		i += j
		if i+7 < len(lower) && lower[i+7] == '.' {
			at = append(at, i)
		}
		i++
	}
}

// valueAt returns the span of the value that starts at or after at, past
// blanks: the inside of a quoted string (JSON escapes allowed), of a string
// quoted with \" (JSON held in a JSON string), or a word ending at
// whitespace or at a byte in stop. A quote left open runs to the line's end.
func valueAt(s string, at int, stop string) (int, int) {
	for at < len(s) && (s[at] == ' ' || s[at] == '\t') {
		at++
	}
	rest := s[at:]
	switch {
	case strings.HasPrefix(rest, `\"`):
		for j := 2; j < len(rest) && rest[j] != '\n'; j++ {
			if strings.HasPrefix(rest[j:], `\"`) {
				return at + 2, at + j
			}
		}
		return at + 2, at + lineLen(rest)
	case rest != "" && strings.IndexByte("\"'`", rest[0]) >= 0:
		for j := 1; j < len(rest) && rest[j] != '\n'; j++ {
			if rest[j] == '\\' && rest[0] == '"' {
				j++
			} else if rest[j] == rest[0] {
				return at + 1, at + j
			}
		}
		return at + 1, at + lineLen(rest)
	}
	j := 0
	for j < len(rest) && !isSpace(rest[j]) && strings.IndexByte(stop, rest[j]) < 0 {
		j++
	}
	return at, at + j
}

// lineLen returns the length of the first line of s, which the caller has
// just read to its end (or an escaped quote's backslash before it).
func lineLen(s string) int {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return i
	}
	return len(s)
}

// assignedValue ends an unquoted value where a list, a statement or a query
// parameter would go on.
func assignedValue(s string, at int) (int, int) {
	start, end := valueAt(s, at, "\"'`,;&\\")
	if start < end && strings.IndexByte("{[(<", s[start]) >= 0 {
		return start, start // an object or a call, not a secret
	}
	return start, end
}

func flagValue(s string, at int) (int, int) { return valueAt(s, at, "\"'`") }

// elementText returns the text of <password>text</password>, if it ends
// within 256 bytes.
func elementText(s string, at int) (int, int) {
	text := s[at:min(len(s), at+256)]
	for j := range len(text) {
		switch {
		case text[j] == '\n':
			return at, at
		case strings.HasPrefix(text[j:], "</"), strings.HasPrefix(text[j:], `\u003c/`), strings.HasPrefix(text[j:], `\u003C/`):
			return at, at + j
		}
	}
	return at, at
}

// paramValue returns the value of a URL's query parameter.
func paramValue(s string, at int) (int, int) {
	end := at
	for end < len(s) && !isSpace(s[end]) && strings.IndexByte("&#;\"'<>\\", s[end]) < 0 {
		end++
	}
	return at, end
}
