package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

var (
	moveHints   = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.No, OpenWorld: mcpkit.No}
	deleteHints = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}
)

// refuseAllowedDir refuses to move or delete loc when it is, or holds, an
// allowed directory: those bound the sandbox and are the operator's to
// change.
func (s *Server) refuseAllowedDir(sb *Sandbox, loc Location, done string) error {
	real := loc.DiskPath()
	for _, d := range slices.Concat(sb.Dirs(), s.base.Dirs()) {
		switch {
		case d.Path == real:
			return fmt.Errorf("%s is an allowed directory itself and cannot be %s; work on the files inside it instead", loc.Path(), done)
		case within(d.Path, real):
			return fmt.Errorf("%s holds the allowed directory %s and cannot be %s", loc.Path(), d.Shown, done)
		}
	}
	return nil
}

type moveArgs struct {
	Source      string `json:"source" jsonschema:"file, directory or symlink to move, absolute or relative to an allowed directory"`
	Destination string `json:"destination" jsonschema:"the full new path including the name, not the directory to move it into"`
	Overwrite   bool   `json:"overwrite,omitempty" jsonschema:"replace a file that already exists at destination (a directory is never replaced)"`
}

func (s *Server) moveFile() mcpkit.Tool {
	return mcpkit.NewTool("move_file",
		"Move or rename a file, directory or symlink (a symlink moves as a link; what it points to stays). "+
			"destination is the complete new path: to move a.txt into docs/, give docs/a.txt. "+
			"An existing destination file is replaced only with overwrite set; a directory is never replaced. "+
			"A file moved between two different allowed directories is copied and the original deleted; directories cannot move between allowed directories.",
		moveHints,
		func(ctx context.Context, req mcp.CallToolRequest, in moveArgs) (*mcp.CallToolResult, error) {
			sb := s.sandbox(ctx)
			src, err := sb.ResolveNoFollow(in.Source)
			if err != nil {
				return nil, err
			}
			dst, err := sb.ResolveNoFollow(in.Destination)
			if err != nil {
				return nil, err
			}
			if err := s.refuseAllowedDir(sb, src, "moved"); err != nil {
				return nil, err
			}
			sfi, err := src.Lstat()
			if err != nil {
				return nil, describe(src, err)
			}
			if src.DiskPath() == dst.DiskPath() {
				return nil, fmt.Errorf("source and destination are both %s: nothing to move", src.Path())
			}
			if sfi.IsDir() && within(dst.DiskPath(), src.DiskPath()) {
				return nil, fmt.Errorf("cannot move the directory %s into itself (%s)", src.Path(), dst.Path())
			}
			replaced := false
			if dfi, err := dst.Lstat(); err == nil {
				if err := checkMoveTarget(src, sfi, dst, dfi, in.Overwrite); err != nil {
					return nil, err
				}
				replaced = true
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, describe(dst, err)
			}
			parent := dst.Parent()
			if fi, err := parent.Root().Stat(parent.Rel); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("directory %s does not exist: create it first with create_directory", parent.Path())
			}
			copied, err := moveEntry(ctx, req, sb, src, sfi, dst, in.Overwrite)
			if err != nil {
				return nil, err
			}
			msg := fmt.Sprintf("moved %s %s to %s", fileType(sfi.Mode()), src.Path(), dst.Path())
			if replaced {
				msg += ", replacing what was there"
			}
			if copied {
				msg += " (copied between allowed directories, then the original deleted)"
			}
			if sfi.Mode()&fs.ModeSymlink != 0 && src.Parent() != dst.Parent() {
				if target, err := dst.Root().Readlink(dst.Rel); err == nil && !filepath.IsAbs(target) {
					msg += fmt.Sprintf("; note: the link's relative target %q now resolves from its new directory", target)
				}
			}
			return mcpkit.Text(msg), nil
		},
		mcpkit.Title("Move or rename"),
	)
}

// checkMoveTarget decides whether an existing destination may be replaced.
func checkMoveTarget(src Location, sfi fs.FileInfo, dst Location, dfi fs.FileInfo, overwrite bool) error {
	switch {
	case os.SameFile(sfi, dfi):
		return fmt.Errorf("%s and %s are the same file (hard links): nothing to move", src.Path(), dst.Path())
	case dfi.IsDir() && !sfi.IsDir():
		return fmt.Errorf("destination %s is a directory, and move_file does not move things into directories: give the full new path, e.g. %s",
			dst.Path(), filepath.Join(dst.Path(), src.Base()))
	case dfi.IsDir():
		return fmt.Errorf("destination %s is an existing directory, and directories are never replaced: to move %s inside it, give %s",
			dst.Path(), src.Path(), filepath.Join(dst.Path(), src.Base()))
	case sfi.IsDir():
		return fmt.Errorf("destination %s is an existing %s, which a directory cannot replace: choose another destination, or delete it first with delete_file", dst.Path(), fileType(dfi.Mode()))
	case !overwrite:
		return fmt.Errorf("destination %s already exists (a %s): set overwrite to true to replace it, or choose another name", dst.Path(), fileType(dfi.Mode()))
	}
	return nil
}

// moveEntry renames src to dst through one os.Root when an allowed directory
// holds both; otherwise, or across filesystems, it copies a regular file
// and deletes the original, and reports that it did.
func moveEntry(ctx context.Context, req mcp.CallToolRequest, sb *Sandbox, src Location, sfi fs.FileInfo, dst Location, overwrite bool) (copied bool, err error) {
	if rs, rd, ok := sharedRoot(sb, src, dst); ok {
		err := renameNoReplace(rs, rd, sfi, overwrite)
		switch {
		case err == nil:
			return false, nil
		case !errors.Is(err, syscall.EXDEV):
			return false, describe(src, err)
		case !sfi.Mode().IsRegular():
			return false, fmt.Errorf("%s and %s are on different filesystems, and only regular files can be moved between them; %s is a %s",
				src.Path(), dst.Path(), src.Path(), fileType(sfi.Mode()))
		}
	} else if !sfi.Mode().IsRegular() {
		return false, fmt.Errorf("%s and %s are in different allowed directories (%s and %s), and only regular files can move between them; %s is a %s: move its files one by one, creating directories with create_directory",
			src.Path(), dst.Path(), src.Dir.Shown, dst.Dir.Shown, src.Path(), fileType(sfi.Mode()))
	}
	return true, copyAcross(ctx, req, src, sfi, dst, overwrite)
}

// renameNoReplace renames within one root. Without overwrite, a regular
// file is hard-linked to its new name and then unlinked from the old one,
// which fails rather than replace a file that appeared at dst since it was
// checked (os.Root has no RENAME_NOREPLACE). Elsewhere, and where the
// filesystem has no hard links, it renames.
func renameNoReplace(src, dst Location, sfi fs.FileInfo, overwrite bool) error {
	if !overwrite && sfi.Mode().IsRegular() {
		err := src.Root().Link(src.Rel, dst.Rel)
		if err == nil {
			return src.Root().Remove(src.Rel)
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("destination %s appeared while the move was checked: set overwrite to true to replace it, or choose another name", dst.Path())
		}
	}
	return src.Root().Rename(src.Rel, dst.Rel)
}

// sharedRoot expresses src and dst relative to one allowed directory that
// holds both, if there is one, since an os.Root renames only within itself.
func sharedRoot(sb *Sandbox, src, dst Location) (Location, Location, bool) {
	if src.Dir == dst.Dir {
		return src, dst, true
	}
	sp, dp := src.DiskPath(), dst.DiskPath()
	for _, d := range sb.Dirs() {
		if within(sp, d.Path) && within(dp, d.Path) {
			srel, _ := filepath.Rel(d.Path, sp)
			drel, _ := filepath.Rel(d.Path, dp)
			return Location{Dir: d, Rel: srel}, Location{Dir: d, Rel: drel}, true
		}
	}
	return src, dst, false
}

// copyAcross moves a regular file where no rename can: it copies src to a
// temporary file beside dst, keeping its mode and modification time, puts
// that in place, and only then deletes src.
func copyAcross(ctx context.Context, req mcp.CallToolRequest, src Location, sfi fs.FileInfo, dst Location, overwrite bool) error {
	in, fi, err := openRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if !os.SameFile(fi, sfi) {
		return fmt.Errorf("%s changed while it was being moved; nothing was moved: try again", src.Path())
	}
	tmp := tempSibling(dst)
	out, err := dst.Root().OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return describe(dst, err)
	}
	_, err = io.Copy(out, &progressReader{ctx: ctx, req: req, r: in, total: fi.Size()})
	if err == nil {
		err = out.Chmod(fi.Mode().Perm())
	}
	err = errors.Join(err, out.Close())
	if err == nil {
		err = dst.Root().Chtimes(tmp, time.Time{}, fi.ModTime())
	}
	if err == nil {
		err = placeTemp(dst, tmp, overwrite)
	}
	if err != nil {
		_ = dst.Root().Remove(tmp)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("nothing was moved: copying %s failed: %w", src.Path(), describe(dst, err))
	}
	if err := src.Root().Remove(src.Rel); err != nil {
		return fmt.Errorf("copied %s to %s, but could not delete the original (%w): delete it with delete_file", src.Path(), dst.Path(), describe(src, err))
	}
	return nil
}

// placeTemp puts the finished temporary file tmp at dst. Without overwrite it
// hard-links rather than renames, which fails if dst has appeared since it
// was checked.
func placeTemp(dst Location, tmp string, overwrite bool) error {
	if overwrite {
		return dst.Root().Rename(tmp, dst.Rel)
	}
	err := dst.Root().Link(tmp, dst.Rel)
	switch {
	case err == nil:
		_ = dst.Root().Remove(tmp)
		return nil
	case errors.Is(err, fs.ErrExist):
		return err
	}
	// A filesystem without hard links: check again, then rename.
	if _, lerr := dst.Lstat(); lerr == nil {
		return fs.ErrExist
	}
	return dst.Root().Rename(tmp, dst.Rel)
}

// progressReader stops a copy when ctx ends and reports progress now and
// then.
type progressReader struct {
	ctx         context.Context
	req         mcp.CallToolRequest
	r           io.Reader
	done, total int64
	next        int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	if err := p.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done >= p.next {
		mcpkit.Progress(p.ctx, p.req, float64(p.done), float64(p.total), "copying")
		p.next = p.done + 16<<20
	}
	return n, err
}

type deleteArgs struct {
	Path      string `json:"path" jsonschema:"file, symlink or directory to delete, absolute or relative to an allowed directory"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a directory with everything in it; required when the directory is not empty"`
}

func (s *Server) deleteFile() mcpkit.Tool {
	return mcpkit.NewTool("delete_file",
		"Delete a file, a symlink (only the link; what it points to is not touched) or an empty directory. "+
			"A directory that is not empty is deleted only with recursive set, together with everything in it. "+
			"Deletion is permanent: there is no trash. The allowed directories themselves cannot be deleted.",
		deleteHints,
		func(ctx context.Context, req mcp.CallToolRequest, in deleteArgs) (*mcp.CallToolResult, error) {
			sb := s.sandbox(ctx)
			loc, err := sb.ResolveNoFollow(in.Path)
			if err != nil {
				return nil, err
			}
			if err := s.refuseAllowedDir(sb, loc, "deleted"); err != nil {
				return nil, err
			}
			fi, err := loc.Lstat()
			if err != nil {
				return nil, describe(loc, err)
			}
			if !fi.IsDir() {
				var what string
				switch {
				case fi.Mode()&fs.ModeSymlink != 0:
					target, _ := loc.Root().Readlink(loc.Rel)
					what = fmt.Sprintf("symlink %s (it pointed to %s, which was not touched)", loc.Path(), shownName(target))
				case fi.Mode().IsRegular():
					what = fmt.Sprintf("file %s (%s)", loc.Path(), humanSize(fi.Size()))
				default:
					what = fmt.Sprintf("%s %s", fileType(fi.Mode()), loc.Path())
				}
				if err := loc.Root().Remove(loc.Rel); err != nil {
					return nil, describe(loc, err)
				}
				return mcpkit.Text("deleted " + what), nil
			}
			n, err := entriesIn(loc)
			if err != nil {
				return nil, describe(loc, err)
			}
			if n == 0 {
				if err := loc.Root().Remove(loc.Rel); err != nil {
					return nil, describe(loc, err)
				}
				return mcpkit.Text(fmt.Sprintf("deleted empty directory %s", loc.Path())), nil
			}
			if !in.Recursive {
				return nil, fmt.Errorf("directory %s is not empty (%d entries directly in it): set recursive to true to delete it with everything in it, or delete its contents first", loc.Path(), n)
			}
			files, dirs, err := countTree(ctx, loc)
			if err != nil {
				return nil, err
			}
			if err := loc.Root().RemoveAll(loc.Rel); err != nil {
				return nil, fmt.Errorf("deleting %s stopped part way, some of it may be gone: %w", loc.Path(), describe(loc, err))
			}
			return mcpkit.Text(fmt.Sprintf("deleted directory %s with %s (%s or links, %s)", loc.Path(),
				nounCount(files+dirs, "entry", "entries"), nounCount(files, "file", "files"), nounCount(dirs, "directory", "directories"))), nil
		},
		mcpkit.Title("Delete file or directory"),
	)
}

// entriesIn counts the names directly in the directory loc.
func entriesIn(loc Location) (int, error) {
	f, err := openDir(loc.Root(), loc.Rel)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	return len(names), err
}

// countTree counts everything below the directory loc, without following
// symlinks. Unreadable subdirectories are skipped, not fatal: the count
// only describes what is deleted.
func countTree(ctx context.Context, loc Location) (files, dirs int, err error) {
	err = fs.WalkDir(walkFS{loc.Root()}, loc.Rel, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		switch {
		case p == loc.Rel || err != nil:
		case d.IsDir():
			dirs++
		default:
			files++
		}
		return nil
	})
	return files, dirs, err
}

// nounCount writes n and the noun in the number n calls for.
func nounCount(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
