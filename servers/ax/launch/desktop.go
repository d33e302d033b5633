package launch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxEntrySize bounds how much of a desktop file is read: real ones are a
// few kilobytes, and a huge one is not worth a big allocation.
const maxEntrySize = 1 << 20

// entry holds the unlocalised keys of a desktop file's [Desktop Entry]
// group, values still raw (escapes not yet undone).
type entry map[string]string

// readEntry reads the [Desktop Entry] group of the desktop file at path.
func readEntry(path string) (entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseEntry(io.LimitReader(f, maxEntrySize))
}

// parseEntry reads the [Desktop Entry] group of a desktop file (Desktop
// Entry Specification 1.5). Localised keys (Name[de]) are dropped: the
// unlocalised value is what this package matches and reports. When a key
// repeats, which the specification forbids, the first value wins.
func parseEntry(r io.Reader) (entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEntrySize)
	e := entry{}
	found, inEntry, first := false, false, true
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
			first = false
		}
		s := strings.TrimSpace(string(line))
		switch {
		case s == "" || s[0] == '#':
			continue
		case s[0] == '[':
			if !strings.HasSuffix(s, "]") {
				return nil, fmt.Errorf("malformed group header %q", s)
			}
			inEntry = s == "[Desktop Entry]"
			found = found || inEntry
			continue
		case !inEntry:
			continue
		}
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("malformed line %q: no '='", s)
		}
		key = strings.TrimSpace(key)
		if strings.ContainsRune(key, '[') {
			continue // a localised value
		}
		if _, dup := e[key]; !dup {
			e[key] = strings.TrimLeft(value, " \t")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("no [Desktop Entry] group")
	}
	return e, nil
}

// text is the value of a key of type string or localestring, escapes
// undone.
func (e entry) text(key string) string { return unescape(e[key]) }

// flag is the value of a key of type boolean. "1" is accepted, as older
// versions of the specification allowed it.
func (e entry) flag(key string) bool {
	v := e[key]
	return v == "true" || v == "1"
}

// unescape undoes the escapes of string values: \s \n \t \r \\. Any other
// backslash stays as it is; it may mean something to the Exec quoting
// rules, which apply after this.
func unescape(s string) string {
	if !strings.ContainsRune(s, '\\') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 's':
			b.WriteByte(' ')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
