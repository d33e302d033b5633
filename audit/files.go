package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A log is its active file plus the files rotated out of it, each named
// after the first sequence number it holds: audit.jsonl rotates into
// audit.000000000001.jsonl, audit.000000052113.jsonl, ...

// rotatedName is the name a file starting at seq first gets on rotation.
func rotatedName(path string, first uint64) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.%012d%s", strings.TrimSuffix(path, ext), first, ext)
}

// Files lists a log's files oldest first: the rotated ones in sequence
// order, then the active file at path (included even if it does not exist
// yet, so callers can report it).
func Files(path string) ([]string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	matches, err := filepath.Glob(globEscape(base) + ".*" + globEscape(ext))
	if err != nil {
		return nil, fmt.Errorf("list the audit files: %w", err)
	}
	type rotated struct {
		path  string
		first uint64
	}
	var rs []rotated
	for _, m := range matches {
		if n, ok := rotatedFirst(path, m); ok {
			rs = append(rs, rotated{m, n})
		}
	}
	slices.SortFunc(rs, func(a, b rotated) int {
		switch {
		case a.first < b.first:
			return -1
		case a.first > b.first:
			return 1
		}
		return 0
	})
	files := make([]string, 0, len(rs)+1)
	for _, r := range rs {
		files = append(files, r.path)
	}
	return append(files, path), nil
}

// rotatedFirst reads the first sequence number from the name of a file
// rotated out of the log at path.
func rotatedFirst(path, name string) (uint64, bool) {
	ext := filepath.Ext(path)
	mid, ok := strings.CutPrefix(name, strings.TrimSuffix(path, ext)+".")
	if !ok {
		return 0, false
	}
	mid, ok = strings.CutSuffix(mid, ext)
	if !ok || mid == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(mid, 10, 64)
	return n, err == nil
}

// globEscape quotes the characters filepath.Glob treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// lastIndexByte finds the last c in f before offset end, reading backwards
// in blocks. It returns -1 when there is none.
func lastIndexByte(f io.ReaderAt, end int64, c byte) (int64, error) {
	buf := make([]byte, 64<<10)
	for end > 0 {
		start := max(end-int64(len(buf)), 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, c); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}

// lastLine returns the last line of a file of size bytes that ends with a
// newline, without the newline.
func lastLine(f io.ReaderAt, size int64) ([]byte, error) {
	nl, err := lastIndexByte(f, size-1, '\n')
	if err != nil {
		return nil, err
	}
	line := make([]byte, size-1-(nl+1))
	if _, err := f.ReadAt(line, nl+1); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return line, nil
}

// firstSeq reads the sequence number of a file's first line.
func firstSeq(f io.ReaderAt) (uint64, error) {
	var buf [64]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	seq, _, ok := cutSeq(buf[:n])
	if !ok {
		return 0, errLayout
	}
	return seq, nil
}
