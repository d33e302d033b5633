package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// Follow calls fn with each event that passes f as it is appended to the
// log at path, until ctx ends. It starts at the current end of the log,
// passes a line on only once it is complete, and follows the log across
// rotation: events are tracked by sequence number, so however many files
// were rotated out between two looks, none is missed or repeated.
func Follow(ctx context.Context, path string, f Filter, poll time.Duration, fn func(Event) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f = f.normalized()
	fl := follower{path: path, c: f.compile(), f: f, fn: fn, buf: make([]byte, 256<<10)}
	if err := fl.start(); err != nil {
		return err
	}
	defer fl.close()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if err := fl.step(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

type follower struct {
	path   string
	c      compiled
	f      Filter
	fn     func(Event) error
	file   *os.File // the active file as last opened
	offset int64    // where the next unread line of file starts
	last   uint64   // the last sequence number seen
	// opened is true until the first line of a newly opened active file
	// is read: if it starts past last+1, more files were rotated out
	// meanwhile, and they are read first.
	opened bool
	buf    []byte
}

// start opens the active file at its end and notes the chain's head.
func (fl *follower) start() error {
	file, err := os.Open(fl.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fl.file = file
	fi, err := file.Stat()
	if err != nil {
		return err
	}
	fl.offset = fi.Size()
	// Cut a torn tail off the starting point: it is read once complete.
	if fl.offset > 0 {
		nl, err := lastIndexByte(file, fl.offset, '\n')
		if err != nil {
			return err
		}
		fl.offset = nl + 1
	}
	if fl.offset > 0 {
		line, err := lastLine(file, fl.offset)
		if err != nil {
			return err
		}
		fl.last, _ = lineSeq(line)
		return nil
	}
	// An empty active file continues the newest rotated one.
	files, err := Files(fl.path)
	if err != nil || len(files) < 2 {
		return err
	}
	return fl.readAll(files[len(files)-2], func(line []byte) { fl.last, _ = lineSeq(line) })
}

func (fl *follower) close() {
	if fl.file != nil {
		fl.file.Close()
	}
}

// step reads what was appended since the last step.
func (fl *follower) step() error {
	if fl.file == nil {
		file, err := os.Open(fl.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		fl.file, fl.offset, fl.opened = file, 0, true
	}
	if err := fl.drain(); err != nil {
		return err
	}
	cur, err1 := os.Stat(fl.path)
	old, err2 := fl.file.Stat()
	switch {
	case err1 == nil && err2 == nil && !os.SameFile(cur, old):
		// Rotated, perhaps several times: read the files rotated out
		// since, then the new active file from its start.
		if err := fl.catchUp(); err != nil {
			return err
		}
		fl.file.Close()
		fl.file = nil
		return fl.step()
	case err2 == nil && old.Size() < fl.offset:
		// Cut short (by hand: a writer only cuts unread torn bytes).
		fl.offset = old.Size()
	}
	return nil
}

// drain reads the complete lines of the active file from offset on. An
// incomplete last line is left unread: it is re-read whole once written,
// or it is a torn line that a writer will cut off and write past.
func (fl *follower) drain() error {
	for {
		n, err := fl.file.ReadAt(fl.buf, fl.offset)
		data := fl.buf[:n]
		used := 0
		for {
			i := bytes.IndexByte(data[used:], '\n')
			if i < 0 {
				break
			}
			line := data[used : used+i]
			if fl.opened {
				fl.opened = false
				if seq, ok := lineSeq(line); ok && seq > fl.last+1 {
					if err := fl.catchUp(); err != nil {
						return err
					}
				}
			}
			if err := fl.line(line); err != nil {
				return err
			}
			used += i + 1
		}
		fl.offset += int64(used)
		if used == 0 && n == len(fl.buf) {
			// One line longer than the buffer: grow it.
			fl.buf = make([]byte, 2*len(fl.buf))
			continue
		}
		if n < len(fl.buf) || errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// catchUp passes on the lines after last in the rotated files.
func (fl *follower) catchUp() error {
	files, err := Files(fl.path)
	if err != nil {
		return err
	}
	rotated := files[:len(files)-1]
	for i, name := range rotated {
		// Skip files that end before last: the next one starts by then.
		if i+1 < len(rotated) {
			if next, ok := rotatedFirst(fl.path, rotated[i+1]); ok && next <= fl.last+1 {
				continue
			}
		}
		var ferr error
		err := fl.readAll(name, func(line []byte) {
			if ferr == nil {
				ferr = fl.line(line)
			}
		})
		if err != nil {
			return err
		}
		if ferr != nil {
			return ferr
		}
	}
	return nil
}

// line passes on one complete line if it is new and matches.
func (fl *follower) line(line []byte) error {
	seq, ok := lineSeq(line)
	if !ok || seq <= fl.last {
		return nil
	}
	fl.last = seq
	pass, sure := fl.c.classify(line)
	if !pass {
		return nil
	}
	var e Event
	if json.Unmarshal(line, &e) != nil || !sure && !fl.f.Match(&e) {
		return nil
	}
	return fl.fn(e)
}

// readAll calls fn with each complete line of a file.
func (fl *follower) readAll(name string, fn func([]byte)) error {
	file, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since it was listed
	}
	if err != nil {
		return err
	}
	defer file.Close()
	src := newLineSource(file)
	for {
		line, complete, err := src.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if complete {
			fn(line)
		}
	}
}
