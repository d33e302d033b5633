package files

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on path strings. Linux refuses longer ones anyway; checking first
// gives the model a clear message instead of ENAMETOOLONG.
const (
	maxPathLen      = 4096
	maxComponentLen = 255
)

// lookalikes are characters that render like a path separator or a dot.
// Linux treats them as ordinary name bytes, but a model (or a person
// reviewing a call) reads "‥／etc" as "../etc"; refusing them keeps what is
// shown and what is touched the same.
var lookalikes = map[rune]string{
	'\u2215': "division slash", '\u2044': "fraction slash", '\uff0f': "fullwidth solidus",
	'\u29f8': "big solidus", '\u2571': "box drawing diagonal", '\u1735': "philippine single punctuation",
	'\uff3c': "fullwidth reverse solidus", '\u2216': "set minus", '\ufe68': "small reverse solidus",
	'\u2024': "one dot leader", '\u2025': "two dot leader", '\u2026': "horizontal ellipsis",
	'\uff0e': "fullwidth full stop", '\ufe52': "small full stop", '\u0660': "arabic-indic digit zero",
	'\u06f0': "extended arabic-indic digit zero",
}

// checkPathString rejects path strings that are malformed or that try to
// say something other than what they look like. It runs before any
// resolution, so nothing is touched for a rejected path.
func checkPathString(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("path is empty: give a path inside the allowed directories")
	case len(p) > maxPathLen:
		return fmt.Errorf("path is %d bytes long, over the %d-byte limit", len(p), maxPathLen)
	case strings.IndexByte(p, 0) >= 0:
		return fmt.Errorf("path contains a NUL byte: pass the plain path without it")
	}
	lower := strings.ToLower(p)
	if strings.HasPrefix(lower, "file:") || strings.Contains(lower, "://") {
		return fmt.Errorf("path %q is a URL: pass a plain filesystem path such as /home/me/notes.txt", p)
	}
	for _, enc := range []string{"%2e", "%2f", "%5c", "%00", "%25", "%c0%af", "%e2%80"} {
		if strings.Contains(lower, enc) {
			return fmt.Errorf("path %q contains URL-encoded characters (%s): pass the decoded path; it is used literally", p, enc)
		}
	}
	if strings.ContainsRune(p, '\\') {
		return fmt.Errorf("path %q contains a backslash: this is a Linux filesystem, separate directories with /", p)
	}
	if len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z' {
		return fmt.Errorf("path %q looks like a Windows drive path: give a Linux path such as /home/me/file", p)
	}
	if err := checkChars(p); err != nil {
		return err
	}
	for c := range strings.SplitSeq(p, "/") {
		if len(c) > maxComponentLen {
			return fmt.Errorf("path component %.40q… is %d bytes, over the %d-byte limit", c, len(c), maxComponentLen)
		}
		if strings.HasSuffix(c, " ") && strings.Trim(c, ". ") == "" && c != "" {
			return fmt.Errorf("path component %q is only dots and spaces", c)
		}
	}
	return nil
}

// breaksLines reports whether r is a control character or a Unicode line
// or paragraph separator: something that may start a new line in the text
// a model reads.
func breaksLines(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp)
}

// checkChars rejects a path that would not read as what it is: one with
// bytes that are not UTF-8, line breaks or other control characters,
// invisible formatting characters, or lookalikes of / and dot.
func checkChars(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("path %q is not valid UTF-8", p)
	}
	for _, r := range p {
		if name, ok := lookalikes[r]; ok {
			return fmt.Errorf("path %q contains %U (%s), which looks like a path separator or dot; use plain / and . characters", p, r, name)
		}
		if breaksLines(r) {
			return fmt.Errorf("path %q contains the control character %U", p, r)
		}
		if unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("path %q contains the invisible formatting character %U", p, r)
		}
	}
	return nil
}
