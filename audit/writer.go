package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// Sync says when the writer forces events to stable storage.
type Sync int

// The sync policies.
const (
	SyncCallEnd Sync = iota // fsync after every tool_call_end (the default)
	SyncEvery               // fsync after every event
	SyncNever               // leave it to the operating system
)

// KindRecovered records that a writer found a torn last line and set it
// aside before continuing the chain.
const KindRecovered Kind = "log_recovered"

// Options tune a Writer. The zero value gives the defaults.
type Options struct {
	Sync Sync
	// MaxSize is the size at which the active file is rotated (default
	// 64 MiB; negative: never). The chain continues into the new file.
	MaxSize int64
	// MaxResult is how many bytes of a result are kept (default 4 KiB).
	MaxResult int
	// MaxString is how many bytes of each string in the arguments, and of
	// a denial's reason, are kept (default 1 KiB).
	MaxString int
	// LockTimeout bounds the wait for another process's lock (default 10 s).
	LockTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MaxSize == 0 {
		o.MaxSize = 64 << 20
	}
	if o.MaxResult == 0 {
		o.MaxResult = 4 << 10
	}
	if o.MaxString == 0 {
		o.MaxString = 1 << 10
	}
	if o.LockTimeout == 0 {
		o.LockTimeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Writer appends events to a log. It is safe for concurrent use, and any
// number of Writers in any number of processes may share one log: each
// append takes an exclusive lock on a sidecar ".lock" file and re-reads the
// chain's head when another writer has moved it.
type Writer struct {
	path string
	opts Options
	lock *flock.Flock

	mu sync.Mutex
	// headFile records the chain's head beside the log, so that Verify can
	// tell a log whose last lines were cut off from one that ends there.
	headFile *os.File
	f        *os.File // the active file, opened for append
	fi       os.FileInfo
	size     int64  // the active file's size after our last look
	seq      uint64 // the head of the chain
	hash     string
	// known is true while size, seq and hash describe the file on disk.
	known bool
	buf   []byte
}

// Open opens (creating if needed) the log at path, recovering a torn last
// line if a writer crashed. Parent directories are created with mode 0700.
func Open(path string, opts Options) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the audit log's directory: %w", err)
	}
	w := &Writer{path: path, opts: opts.withDefaults(), lock: flock.New(path + ".lock")}
	hf, err := os.OpenFile(path+".head", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the audit log's head file: %w", err)
	}
	w.headFile = hf
	if err := w.locked(func() error { return w.head() }); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Path returns the active file's path.
func (w *Writer) Path() string { return w.path }

// Append redacts e, chains it to the log and writes it as one line with a
// single write. It returns the event as stored.
func (w *Writer) Append(e Event) (Event, error) {
	w.prepare(&e)
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.locked(func() error { return w.append(&e) })
	return e, err
}

// prepare redacts and bounds e outside the lock.
func (w *Writer) prepare(e *Event) {
	if e.TS.IsZero() {
		e.TS = w.opts.Now()
	}
	if len(e.Args) > 0 {
		sum := sha256.Sum256(e.Args)
		e.ArgsSHA256 = hex.EncodeToString(sum[:])
		e.Args = redactJSON(e.Args, w.opts.MaxString)
	}
	e.Result = redactBounded(e.Result, w.opts.MaxResult)
	e.Reason = redactBounded(e.Reason, w.opts.MaxString)
	e.Rule = redactBounded(e.Rule, w.opts.MaxString)
	for _, s := range []*string{&e.Session, &e.Call, &e.Server, &e.Tool, &e.Group, &e.Risk, &e.Decision, &e.DecidedBy, &e.Status} {
		*s = truncate(*s, 256)
	}
}

// redactBounded redacts s and truncates it to limit bytes. Only what can
// be kept, plus a margin longer than any secret's shape, is redacted, so a
// result of megabytes costs no more than a small one; the marker still
// gives the full length.
func redactBounded(s string, limit int) string {
	const margin = 16 << 10
	if limit <= 0 || len(s) <= limit+margin {
		return truncate(redactText(s), limit)
	}
	return cutTo(redactText(s[:limit+margin]), limit, len(s))
}

// locked runs fn holding the cross-process lock.
func (w *Writer) locked(fn func() error) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.LockTimeout)
	defer cancel()
	ok, err := w.lock.TryLockContext(ctx, 2*time.Millisecond)
	if err == nil && !ok {
		err = errors.New("timed out")
	}
	if err != nil {
		return fmt.Errorf("lock the audit log %s: %w", w.lock.Path(), err)
	}
	defer w.lock.Unlock()
	return fn()
}

// append writes e at the head of the chain. The caller holds both locks.
func (w *Writer) append(e *Event) error {
	if err := w.head(); err != nil {
		return err
	}
	e.Seq, e.Prev = w.seq+1, w.hash
	w.buf = encodeLine(w.buf[:0], e)
	if w.opts.MaxSize > 0 && w.size > 0 && w.size+int64(len(w.buf)) > w.opts.MaxSize {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(w.buf)
	w.size += int64(n)
	if err != nil {
		// A partial line is torn: the next append sets it aside.
		w.known = false
		return fmt.Errorf("write the audit log: %w", err)
	}
	w.seq, w.hash = e.Seq, e.Hash
	if w.headFile == nil {
		if w.headFile, err = os.OpenFile(w.path+".head", os.O_RDWR|os.O_CREATE, 0o600); err != nil {
			return fmt.Errorf("open the audit log's head file: %w", err)
		}
	}
	w.buf = appendHead(w.buf[:0], w.seq, w.hash)
	if _, err := w.headFile.WriteAt(w.buf, 0); err != nil {
		return fmt.Errorf("record the audit log's head: %w", err)
	}
	if w.opts.Sync == SyncEvery || (w.opts.Sync == SyncCallEnd && e.Event == KindCallEnd) {
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("sync the audit log: %w", err)
		}
	}
	return nil
}

// head makes sure the active file is open and that seq and hash are the
// chain's head, re-reading them when another writer has appended or
// rotated since our last look. The caller holds the file lock.
func (w *Writer) head() error {
	fi, err := os.Stat(w.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.closeFile()
	case err != nil:
		return fmt.Errorf("audit log: %w", err)
	case w.f != nil && !os.SameFile(fi, w.fi):
		w.closeFile() // rotated by another writer
	}
	if w.f == nil {
		if err := w.openFile(); err != nil {
			return err
		}
		fi = w.fi
	}
	if w.known && fi.Size() == w.size {
		return nil
	}
	return w.recover(fi.Size())
}

func (w *Writer) openFile() error {
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open the audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	if fi.Mode().Perm() != 0o600 {
		// Calls and their arguments are private: tighten a file someone
		// created more openly.
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return fmt.Errorf("make the audit log private: %w", err)
		}
	}
	if fi.Size() == 0 {
		syncDir(w.path)
	}
	w.f, w.fi, w.known = f, fi, false
	return nil
}

func (w *Writer) closeFile() {
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.fi, w.known = nil, nil, false
}

// recover reads the chain's head from the end of the active file (or of
// the newest rotated file when the active one is empty), first setting
// aside a torn last line.
func (w *Writer) recover(size int64) error {
	torn, err := w.setAsideTorn(size)
	if err != nil {
		return err
	}
	if torn > 0 {
		size, err = w.f.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	w.seq, w.hash = 0, ""
	src, srcSize := w.f, size
	if size == 0 {
		rotated, err := Files(w.path)
		if err != nil {
			return err
		}
		if len(rotated) > 1 { // the last is the active file
			prev, err := os.Open(rotated[len(rotated)-2])
			if err != nil {
				return fmt.Errorf("read the previous audit file: %w", err)
			}
			defer prev.Close()
			fi, err := prev.Stat()
			if err != nil {
				return fmt.Errorf("read the previous audit file: %w", err)
			}
			src, srcSize = prev, fi.Size()
		}
	}
	if srcSize > 0 {
		line, err := lastLine(src, srcSize)
		if err != nil {
			return fmt.Errorf("read the audit log's last line: %w", err)
		}
		fr, err := parseFrame(line)
		if err != nil {
			return fmt.Errorf("%s: the last line cannot be chained to (%v); run `domo audit verify` and move the damaged file aside", src.Name(), err)
		}
		w.seq, w.hash = fr.seq, string(fr.hash)
	}
	w.size, w.known = size, true
	if err := w.checkHead(); err != nil {
		return err
	}
	if torn > 0 {
		e := Event{
			TS:     w.opts.Now(),
			Event:  KindRecovered,
			Status: StatusError,
			Result: fmt.Sprintf("a writer stopped in the middle of a line; its %d bytes were moved to %s", torn, filepath.Base(w.path)+".torn"),
		}
		return w.append(&e)
	}
	return nil
}

// StatusDamaged marks a log_recovered event in which a writer records
// damage it found on opening the log; Verify reports it for ever after.
const StatusDamaged = "damaged"

// damage is the arguments of a StatusDamaged event.
type damage struct {
	Damage      string `json:"damage"`
	FirstBadSeq uint64 `json:"first_bad_seq"`
	Detail      string `json:"detail"`
}

// checkHead compares the chain's head as found in the files with the head
// the writers recorded. Lines cut off the end, or a last line changed and
// re-hashed, would otherwise vanish from view with the next append, which
// rewrites the record: so the writer records the damage in the chain
// itself, and when lines are missing it continues after the recorded
// head, leaving a gap Verify names.
func (w *Writer) checkHead() error {
	hseq, hhash, ok := readHead(w.path)
	if !ok || hseq == 0 {
		return nil
	}
	var d damage
	switch {
	case hseq > w.seq:
		d = damage{DamageDropped, w.seq + 1, fmt.Sprintf("the log ended at seq %d but writers had reached seq %d: lines were removed", w.seq, hseq)}
		w.seq = hseq
	case hseq == w.seq && hhash != w.hash:
		d = damage{DamageEdited, hseq, fmt.Sprintf("seq %d is not the line the writers recorded: it was changed and re-hashed", hseq)}
	default:
		return nil
	}
	args, _ := json.Marshal(d)
	e := Event{TS: w.opts.Now(), Event: KindRecovered, Status: StatusDamaged, Args: args, Result: d.Detail}
	return w.append(&e)
}

// setAsideTorn moves the bytes after the last newline, if any, to the
// ".torn" file beside the log and cuts them off. It returns how many bytes
// it moved.
func (w *Writer) setAsideTorn(size int64) (int64, error) {
	if size == 0 {
		return 0, nil
	}
	var last [1]byte
	if _, err := w.f.ReadAt(last[:], size-1); err != nil {
		return 0, fmt.Errorf("read the audit log: %w", err)
	}
	if last[0] == '\n' {
		return 0, nil
	}
	nl, err := lastIndexByte(w.f, size, '\n')
	if err != nil {
		return 0, fmt.Errorf("read the audit log: %w", err)
	}
	keep := nl + 1
	torn := make([]byte, size-keep, size-keep+1)
	if _, err := w.f.ReadAt(torn, keep); err != nil {
		return 0, fmt.Errorf("read the torn line: %w", err)
	}
	t, err := os.OpenFile(w.path+".torn", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("set aside the torn line: %w", err)
	}
	_, err = t.Write(append(torn, '\n'))
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("set aside the torn line: %w", err)
	}
	// Only once the bytes are safe in .torn are they cut from the log; a
	// crash in between leaves them in both, never in neither.
	if err := w.f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("cut the torn line: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return 0, fmt.Errorf("sync the audit log: %w", err)
	}
	return size - keep, nil
}

// rotate renames the active file after the first sequence number it holds
// and starts an empty one. The chain goes on: the next line's prev is the
// last hash of the renamed file.
func (w *Writer) rotate() error {
	first, err := firstSeq(w.f)
	if err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	if err := os.Rename(w.path, rotatedName(w.path, first)); err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	w.closeFile()
	if err := w.openFile(); err != nil {
		return err
	}
	w.size, w.known = 0, true
	return nil
}

// Close releases the log. Appending after Close reopens it.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.f != nil {
		err = w.f.Close()
	}
	w.f, w.fi, w.known = nil, nil, false
	if w.headFile != nil {
		w.headFile.Close()
		w.headFile = nil
	}
	w.lock.Close()
	return err
}

// appendHead encodes the head record: a fixed width, so that rewriting it
// in place never leaves a longer old record's tail behind.
func appendHead(b []byte, seq uint64, hash string) []byte {
	return fmt.Appendf(b, "%020d %-64s\n", seq, hash)
}

// readHead reads the head record of the log at path. ok is false when
// there is none.
func readHead(path string) (seq uint64, hash string, ok bool) {
	b, err := os.ReadFile(path + ".head")
	if err != nil {
		return 0, "", false
	}
	var h string
	if _, err := fmt.Sscanf(string(b), "%d %s", &seq, &h); err != nil {
		return 0, "", false
	}
	return seq, h, true
}

// syncDir makes a created or renamed entry in path's directory durable.
func syncDir(path string) {
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
}
