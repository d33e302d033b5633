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
	var old fs.FileInfo
	if fi, err := loc.Lstat(); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory; give a file path", loc.Path())
		}
		if fi.Mode().IsRegular() {
			perm, keep, old = fi.Mode().Perm(), true, fi
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
		// A server running as root must not hand a user's file to root.
		// Without the privilege the chown fails, and the file is ours anyway.
		if uid, gid, _, _ := ownerAndTimes(old); uid != nil && gid != nil {
			_ = f.Chown(int(*uid), int(*gid))
		}
		// After the chown, which may clear setuid bits: O_CREATE applied
		// the umask, and the old mode is kept exactly.
		werr = f.Chmod(perm)
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

// maxTempBase is how much of a file's name its temporary sibling repeats,
// leaving room for the rest within the 255-byte limit on a name.
const maxTempBase = 200

// tempSibling names a temporary file in loc's directory.
func tempSibling(loc Location) string {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	base := loc.Base()
	if len(base) > maxTempBase {
		base = strings.ToValidUTF8(base[:maxTempBase], "")
	}
	return path.Join(loc.Parent().Rel, "."+base+".domo-"+hex.EncodeToString(suffix[:])+".tmp")
}

// maxWalkDepth is how many directories deep a walk goes. Each open in a
// walk resolves its path from the top again, so a chain of n directories
// costs n² lookups to walk; a path argument cannot name anything this deep
// anyway.
const maxWalkDepth = 512

// errTooDeep is what a walk reports for a directory it does not read.
var errTooDeep = fmt.Errorf("more than %d directories deep", maxWalkDepth)

// openDir opens the directory rel below r. The trailing "/." makes os.Root
// open rel as a directory on the way (with O_DIRECTORY), so a FIFO put
// where the directory was is refused at once: a plain open of a FIFO
// blocks until a writer comes, and cancellation cannot stop it.
func openDir(r *os.Root, rel string) (*os.File, error) {
	return r.Open(rel + "/.")
}

// openSubRoot opens the directory rel below r as a root of its own; see
// openDir for the trailing "/.".
func openSubRoot(r *os.Root, rel string) (*os.Root, error) {
	return r.OpenRoot(rel + "/.")
}

// walkFS is the tree below an os.Root as fs.WalkDir reads it: through
// openDir, and no deeper than maxWalkDepth. A directory it does not read is
// reported to the walk function as an error, like an unreadable one.
type walkFS struct{ root *os.Root }

func (w walkFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if strings.Count(name, "/") >= maxWalkDepth {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errTooDeep}
	}
	return openDir(w.root, name)
}
