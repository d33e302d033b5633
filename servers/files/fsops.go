package files

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"syscall"
)

// openRegular opens loc for reading, refusing anything but a regular file
// (a FIFO would block, a device could be endless).
func openRegular(loc Location) (*os.File, fs.FileInfo, error) {
	f, err := loc.Root().OpenFile(loc.Rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, describe(loc, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, describe(loc, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory: use list_directory or directory_tree", loc.Path())
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", loc.Path(), fi.Mode().Type())
	}
	return f, fi, nil
}

// describe turns an error from an os.Root operation into a message naming
// the path as the model gave it and saying what to do.
func describe(loc Location, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist; check the name with list_directory or search_files", loc.Path())
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s already exists", loc.Path())
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s", loc.Path())
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("a component of %s is not a directory", loc.Path())
	case errors.Is(err, syscall.ENOTEMPTY):
		return fmt.Errorf("directory %s is not empty: set recursive to true to delete it with its contents", loc.Path())
	case errors.Is(err, syscall.ELOOP), strings.Contains(err.Error(), "path escapes"):
		return fmt.Errorf("%s leads through a symlink %w", loc.Path(), ErrOutside)
	case errors.As(err, &pe):
		return fmt.Errorf("%s on %s: %v", pe.Op, loc.Path(), pe.Err)
	case errors.As(err, &le):
		return fmt.Errorf("%s: %v", le.Op, le.Err)
	}
	return fmt.Errorf("%s: %v", loc.Path(), err)
}

// readLimited reads at most limit bytes of f and reports whether there was
// more.
func readLimited(f *os.File, size, limit int64) ([]byte, bool, error) {
	n := min(size, limit)
	buf := make([]byte, n+1)
	got, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if int64(got) > limit {
		return buf[:limit], true, nil
	}
	return buf[:got], false, nil
}

// sniffBinary reports a content kind when data is not text, judged from its
// first bytes the way file(1) and browsers do.
func sniffBinary(data []byte) (kind string, binary bool) {
	head := data[:min(len(data), 8000)]
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return "", false // UTF-16 text with a byte order mark
	}
	if bytes.IndexByte(head, 0) < 0 {
		return "", false
	}
	return http.DetectContentType(head), true
}

// atomicWrite replaces loc's contents with data: it writes a temporary file
// in the same directory and renames it over loc. The rename replaces a
// symlink swapped in at loc rather than writing through it, and a reader
// never sees a half-written file. An existing file keeps its mode.
func atomicWrite(loc Location, data []byte) error {
	if loc.IsDirRoot() {
		return fmt.Errorf("%s is an allowed directory itself, not a file", loc.Path())
	}
	// A new file gets 0666 less the umask, as editors create files; an
	// existing one keeps its exact mode.
	perm, keep := fs.FileMode(0o666), false
	if fi, err := loc.Lstat(); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory; give a file path", loc.Path())
		}
		if fi.Mode().IsRegular() {
			perm, keep = fi.Mode().Perm(), true
		}
	}
	parent := loc.Parent()
	if fi, err := parent.Root().Stat(parent.Rel); err != nil || !fi.IsDir() {
		return fmt.Errorf("directory %s does not exist: create it first with create_directory", parent.Path())
	}
	tmp := tempSibling(loc)
	f, err := loc.Root().OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return describe(loc, err)
	}
	_, werr := f.Write(data)
	if werr == nil && keep {
		werr = f.Chmod(perm) // O_CREATE applied the umask; keep the old mode exactly
	}
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = loc.Root().Remove(tmp)
		return fmt.Errorf("write %s: %w", loc.Path(), err)
	}
	if err := loc.Root().Rename(tmp, loc.Rel); err != nil {
		_ = loc.Root().Remove(tmp)
		return describe(loc, err)
	}
	return nil
}

// tempSibling names a temporary file in loc's directory.
func tempSibling(loc Location) string {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	return path.Join(loc.Parent().Rel, "."+loc.Base()+".domo-"+hex.EncodeToString(suffix[:])+".tmp")
}
