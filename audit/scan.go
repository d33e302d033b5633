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
				// No writer makes such a line: skip it whole and hand
				// back an empty line, which every reader treats as
				// damage, rather than stop reading the log.
				s.acc = s.acc[:0]
				for {
					_, err := s.r.ReadSlice('\n')
					if err == nil || errors.Is(err, io.EOF) {
						s.n++
						return nil, err == nil, nil
					}
					if !errors.Is(err, bufio.ErrBufferFull) {
						return nil, false, err
					}
				}
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
//
// Writers may rotate the log while it is read. The active file is opened
// before the files are listed again, so a file rotated out in between is
// read first (in sequence order), and the file held open, if it was itself
// rotated meanwhile, is read once, as the end of the snapshot.
func eachLine(path string, fn func(file string, lineNo int, line []byte, complete bool) error) error {
	files, err := Files(path)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	read := func(name string, f *os.File) error {
		done[name] = true
		src := newLineSource(f)
		for {
			line, complete, err := src.next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err == nil {
				err = fn(name, src.n, line, complete)
			}
			if err != nil {
				return err
			}
		}
	}
	readFile := func(name string) error {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed since it was listed
		}
		if err != nil {
			return fmt.Errorf("open the audit log: %w", err)
		}
		defer f.Close()
		return read(name, f)
	}
	stop := func(err error) error {
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	for _, name := range files[:len(files)-1] {
		if err := readFile(name); err != nil {
			return stop(err)
		}
	}
	active, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		active = nil
	} else if err != nil {
		return fmt.Errorf("open the audit log: %w", err)
	}
	if active != nil {
		defer active.Close()
	}
	again, err := Files(path)
	if err != nil {
		return err
	}
	var held os.FileInfo
	if active != nil {
		held, _ = active.Stat()
	}
	for _, name := range again[:len(again)-1] {
		if done[name] {
			continue
		}
		if fi, err := os.Stat(name); err == nil && held != nil && os.SameFile(fi, held) {
			continue // the file held open, rotated after it was opened
		}
		if err := readFile(name); err != nil {
			return stop(err)
		}
	}
	if active == nil {
		return nil
	}
	return stop(read(path, active))
}

// errStop ends eachLine early without an error.
var errStop = errors.New("stop")
