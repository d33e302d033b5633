package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxLine bounds one line when reading, far above what the writer produces
// (results and argument strings are truncated), so a corrupt file cannot
// make a reader buffer without end.
const maxLine = 64 << 20

// lineSource yields the lines of one file. A line is returned without its
// newline; complete says whether it had one (only a torn last line lacks
// it).
type lineSource struct {
	r   *bufio.Reader
	acc []byte
	n   int // lines read
}

func newLineSource(r io.Reader) *lineSource {
	return &lineSource{r: bufio.NewReaderSize(r, 1<<20)}
}

// next returns the next line, valid until the following call. It returns
// io.EOF after the last line.
func (s *lineSource) next() (line []byte, complete bool, err error) {
	s.acc = s.acc[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		switch {
		case err == nil:
			s.n++
			if len(s.acc) == 0 {
				return chunk[:len(chunk)-1], true, nil
			}
			s.acc = append(s.acc, chunk[:len(chunk)-1]...)
			return s.acc, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			s.acc = append(s.acc, chunk...)
			if len(s.acc) > maxLine {
				return nil, false, fmt.Errorf("line %d is longer than %d bytes", s.n+1, maxLine)
			}
		case errors.Is(err, io.EOF):
			s.acc = append(s.acc, chunk...)
			if len(s.acc) == 0 {
				return nil, false, io.EOF
			}
			s.n++
			return s.acc, false, nil
		default:
			return nil, false, err
		}
	}
}

// eachLine calls fn for every line of every file of the log at path, oldest
// first. A missing active file is an empty log. fn may return errStop.
func eachLine(path string, fn func(file string, lineNo int, line []byte, complete bool) error) error {
	files, err := Files(path)
	if err != nil {
		return err
	}
	for _, name := range files {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) && name == path {
			return nil
		}
		if err != nil {
			return fmt.Errorf("open the audit log: %w", err)
		}
		src := newLineSource(f)
		for {
			line, complete, err := src.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err == nil {
				err = fn(name, src.n, line, complete)
			}
			if err != nil {
				f.Close()
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
		f.Close()
	}
	return nil
}

// errStop ends eachLine early without an error.
var errStop = errors.New("stop")
