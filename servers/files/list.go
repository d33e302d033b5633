package files

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// Caps that keep listings inside a model's context.
const (
	maxListEntries     = 2000
	defaultTreeDepth   = 3
	maxTreeDepth       = 20
	defaultTreeEntries = 500
	maxTreeEntries     = 10000
	// maxUncounted bounds the walk that only counts what a capped result
	// leaves out, so a cap on a huge tree still answers quickly.
	maxUncounted = 100_000
	// maxCutDirCount bounds counting the entries of a directory that
	// directory_tree does not expand.
	maxCutDirCount = 10_000
	progressEvery  = 1000
)

// errWalkDone stops a walk early without being an error.
var errWalkDone = errors.New("walk done")

// walkProgress reports a walk's progress every progressEvery entries.
func walkProgress(ctx context.Context, req mcp.CallToolRequest, n int) {
	if n%progressEvery == 0 {
		mcpkit.Progress(ctx, req, float64(n), 0, fmt.Sprintf("%d entries examined", n))
	}
}

// walkBelow walks the directory at loc, opened as a root of its own so
// every name resolves against that handle, without following symlinks.
// It stops when ctx ends, reports progress, and leaves out excluded
// entries with everything below them. visit gets every other entry, and
// each directory that cannot be read, with its error. A visit returning
// errWalkDone ends the walk without error. It returns how many entries
// it examined.
func walkBelow(ctx context.Context, req mcp.CallToolRequest, loc Location, exclude []string,
	visit func(sub *Dir, rel string, d fs.DirEntry, err error) error) (examined int, err error) {
	sub, err := loc.OpenSubtree()
	if err != nil {
		return 0, err
	}
	defer sub.root.Close()
	err = fs.WalkDir(walkFS{sub.root}, ".", func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if rel == "." {
			if err != nil {
				return describe(loc, err)
			}
			return nil
		}
		if err != nil {
			return visit(sub, rel, d, err)
		}
		examined++
		walkProgress(ctx, req, examined)
		if matchAny(exclude, rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return visit(sub, rel, d, nil)
	})
	if errors.Is(err, errWalkDone) {
		err = nil
	}
	return examined, err
}

// fileType names the type of an entry as the tools report it.
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "other"
}

// shownName is a name or path as results print it: quoted when it holds
// line breaks, other control characters or invalid UTF-8, so that one entry
// is always one line and a crafted name cannot pose as other entries or as
// a note.
func shownName(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, breaksLines) {
		return s
	}
	return strconv.Quote(s)
}

// plural returns "1 file" or "2 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// counts says how many entries of each type a listing has.
func counts(files, dirs, links, others int) string {
	s := plural(files, "file", "files") + ", " + plural(dirs, "directory", "directories")
	if links > 0 {
		s += ", " + plural(links, "symlink", "symlinks")
	}
	if others > 0 {
		s += ", " + plural(others, "other entry (FIFO, socket or device)", "other entries (FIFOs, sockets or devices)")
	}
	return s
}

type listDirArgs struct {
	Path       string `json:"path" jsonschema:"directory to list, absolute or relative to an allowed directory"`
	SortBy     string `json:"sort_by,omitempty" jsonschema:"order of the entries: name (A to Z, the default), size (largest first) or modified (newest first)"`
	ShowHidden *bool  `json:"show_hidden,omitempty" jsonschema:"include entries whose names start with a dot (default true)"`
}

func (a *listDirArgs) Validate() error {
	switch a.SortBy {
	case "", "name", "size", "modified":
		return nil
	}
	return fmt.Errorf("sort_by is %q; use name, size or modified", a.SortBy)
}

type dirEntry struct {
	Name     string `json:"name" jsonschema:"entry name"`
	Type     string `json:"type" jsonschema:"file, directory, symlink, fifo, socket, device or other"`
	Size     int64  `json:"size" jsonschema:"size in bytes; 0 for directories"`
	Modified string `json:"modified" jsonschema:"modification time, RFC 3339"`
	Target   string `json:"target,omitempty" jsonschema:"for a symlink, the target as written in the link; listings never follow links"`

	mod time.Time
}

type dirListing struct {
	Path        string     `json:"path" jsonschema:"the directory listed"`
	Entries     []dirEntry `json:"entries" jsonschema:"the entries shown, in the requested order"`
	Files       int        `json:"files" jsonschema:"regular files in the directory"`
	Directories int        `json:"directories" jsonschema:"subdirectories in the directory"`
	Symlinks    int        `json:"symlinks" jsonschema:"symlinks in the directory"`
	Others      int        `json:"others" jsonschema:"FIFOs, sockets and devices in the directory"`
	TotalSize   int64      `json:"total_size" jsonschema:"sum of the sizes of the regular files, in bytes"`
	NotShown    int        `json:"not_shown" jsonschema:"entries left out because the listing was capped"`
	Hidden      int        `json:"hidden" jsonschema:"dot entries left out because show_hidden is false"`
}

func (s *Server) listDirectory() mcpkit.Tool {
	return mcpkit.NewTool("list_directory",
		"List the entries of one directory with their type ([DIR], [FILE], [LINK] -> target), size and modification time, and totals. "+
			"Sort by name, size (largest first) or modified (newest first). Symlinks are shown, not followed. "+
			fmt.Sprintf("At most %d entries are returned. ", maxListEntries)+
			"For a whole subtree use directory_tree; to find files by name use search_files.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in listDirArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			l, err := listDir(ctx, req, loc, in.ShowHidden == nil || *in.ShowHidden)
			if err != nil {
				return nil, err
			}
			sortEntries(l.Entries, in.SortBy)
			if len(l.Entries) > maxListEntries {
				l.NotShown = len(l.Entries) - maxListEntries
				l.Entries = l.Entries[:maxListEntries]
			}
			return mcpkit.Structured(l.text(), l), nil
		},
		mcpkit.Title("List directory"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetEnum(sc, "sort_by", "name", "size", "modified")
			sh := sc.Properties["show_hidden"]
			sh.Types, sh.Type = nil, "boolean"
			sh.Default = json.RawMessage("true")
		}),
		mcpkit.Output[dirListing](nil),
	)
}

// listDir reads every entry of the directory at loc.
func listDir(ctx context.Context, req mcp.CallToolRequest, loc Location, showHidden bool) (*dirListing, error) {
	sub, err := loc.OpenSubtree()
	if err != nil {
		return nil, err
	}
	defer sub.root.Close()
	f, err := sub.root.Open(".")
	if err != nil {
		return nil, describe(loc, err)
	}
	defer f.Close()
	l := &dirListing{Path: loc.Path(), Entries: []dirEntry{}}
	for {
		// Entries of a directory opened through an os.Root carry the
		// Lstat made relative to its handle, not a lazy Lstat by path.
		batch, err := f.ReadDir(progressEvery)
		for _, d := range batch {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			name := d.Name()
			if !showHidden && strings.HasPrefix(name, ".") {
				l.Hidden++
				continue
			}
			fi, ierr := d.Info()
			if ierr != nil {
				continue // removed since it was listed
			}
			e := dirEntry{Name: name, Type: fileType(fi.Mode()), mod: fi.ModTime(), Modified: fi.ModTime().Format(time.RFC3339)}
			switch e.Type {
			case "directory":
				l.Directories++
			case "file":
				e.Size = fi.Size()
				l.Files++
				l.TotalSize += e.Size
			case "symlink":
				e.Size = fi.Size()
				e.Target, _ = sub.root.Readlink(name)
				l.Symlinks++
			default:
				l.Others++
			}
			l.Entries = append(l.Entries, e)
		}
		walkProgress(ctx, req, len(l.Entries)+l.Hidden)
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, describe(loc, err)
		}
	}
	return l, nil
}

func sortEntries(es []dirEntry, by string) {
	byName := func(a, b dirEntry) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.Name, b.Name))
	}
	switch by {
	case "size":
		slices.SortFunc(es, func(a, b dirEntry) int { return cmp.Or(cmp.Compare(b.Size, a.Size), byName(a, b)) })
	case "modified":
		slices.SortFunc(es, func(a, b dirEntry) int { return cmp.Or(b.mod.Compare(a.mod), byName(a, b)) })
	default:
		slices.SortFunc(es, byName)
	}
}

func (l *dirListing) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", l.Path)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, e := range l.Entries {
		mod := e.mod.Format("2006-01-02 15:04")
		name := shownName(e.Name)
		switch e.Type {
		case "directory":
			fmt.Fprintf(tw, "[DIR]\t%s/\t\t%s\n", name, mod)
		case "file":
			fmt.Fprintf(tw, "[FILE]\t%s\t%s\t%s\n", name, humanSize(e.Size), mod)
		case "symlink":
			fmt.Fprintf(tw, "[LINK]\t%s -> %s\t\t%s\n", name, shownName(e.Target), mod)
		default:
			fmt.Fprintf(tw, "[%s]\t%s\t\t%s\n", strings.ToUpper(e.Type), name, mod)
		}
	}
	tw.Flush()
	if len(l.Entries) == 0 && l.NotShown == 0 {
		b.WriteString("(empty)\n")
	}
	if l.NotShown > 0 {
		fmt.Fprintf(&b, "[… %d more entries not shown; narrow with search_files and a pattern, or sort by size or modified to see the largest or newest first]\n", l.NotShown)
	}
	if l.Hidden > 0 {
		fmt.Fprintf(&b, "[%s not shown; set show_hidden to true to include them]\n", plural(l.Hidden, "hidden entry", "hidden entries"))
	}
	fmt.Fprintf(&b, "%s; total size %s\n", counts(l.Files, l.Directories, l.Symlinks, l.Others), humanSize(l.TotalSize))
	return b.String()
}

type treeArgs struct {
	Path       string   `json:"path" jsonschema:"directory at the top of the tree, absolute or relative to an allowed directory"`
	MaxDepth   int      `json:"max_depth,omitempty" jsonschema:"how many levels below path to show (default 3); deeper directories show only their entry count"`
	Exclude    []string `json:"exclude,omitempty" jsonschema:"glob patterns of entries to leave out together with everything below them, matched against the path relative to path and against the base name, e.g. node_modules, .git, **/*.log, build/out"`
	MaxEntries int      `json:"max_entries,omitempty" jsonschema:"stop after showing this many entries (default 500)"`
}

func (a *treeArgs) Validate() error {
	if a.MaxDepth < 0 || a.MaxDepth > maxTreeDepth {
		return fmt.Errorf("max_depth must be between 1 and %d", maxTreeDepth)
	}
	if a.MaxEntries < 0 || a.MaxEntries > maxTreeEntries {
		return fmt.Errorf("max_entries must be between 1 and %d", maxTreeEntries)
	}
	return checkGlobs("exclude", a.Exclude)
}

func (s *Server) directoryTree() mcpkit.Tool {
	return mcpkit.NewTool("directory_tree",
		"Show a directory and what is below it as an indented tree: directories end in /, symlinks show as name -> target and are not followed. "+
			"Keep max_depth small and exclude bulky directories (node_modules, .git, build output) to see the shape of a project; "+
			"a directory below max_depth shows only how many entries it has. Output stops at max_entries with a note saying how much was left out.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in treeArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			text, err := renderTree(ctx, req, loc, in)
			if err != nil {
				return nil, err
			}
			return mcpkit.Text(text), nil
		},
		mcpkit.Title("Directory tree"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetInt(sc, "max_depth", 1, maxTreeDepth, defaultTreeDepth)
			mcpkit.SetInt(sc, "max_entries", 1, maxTreeEntries, defaultTreeEntries)
		}),
	)
}

func renderTree(ctx context.Context, req mcp.CallToolRequest, loc Location, in treeArgs) (string, error) {
	maxDepth := cmp.Or(in.MaxDepth, defaultTreeDepth)
	maxEntries := cmp.Or(in.MaxEntries, defaultTreeEntries)
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(loc.Path(), "/") + "/\n")
	var shown, dirs, files, links, others, cutDirs, unreadable, leftOut int
	_, err := walkBelow(ctx, req, loc, normGlobs(in.Exclude), func(sub *Dir, rel string, d fs.DirEntry, err error) error {
		depth := strings.Count(rel, "/") + 1
		indent := strings.Repeat("  ", depth)
		if err != nil {
			// The directory was shown but cannot be read.
			unreadable++
			if shown < maxEntries {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				fmt.Fprintf(&b, "%s  [cannot read: %v]\n", indent, err)
			}
			return nil
		}
		descend := d.IsDir() && depth < maxDepth
		if shown >= maxEntries {
			leftOut++
			if leftOut >= maxUncounted {
				return errWalkDone
			}
			if d.IsDir() && !descend {
				return fs.SkipDir
			}
			return nil
		}
		shown++
		name := shownName(d.Name())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			links++
			target, lerr := sub.root.Readlink(rel)
			if lerr != nil {
				target = "?"
			}
			fmt.Fprintf(&b, "%s%s -> %s\n", indent, name, shownName(target))
		case d.IsDir():
			dirs++
			if descend {
				fmt.Fprintf(&b, "%s%s/\n", indent, name)
				return nil
			}
			n, more, err := countEntries(ctx, sub, rel)
			if err != nil {
				return err
			}
			switch {
			case n == 0:
				fmt.Fprintf(&b, "%s%s/\n", indent, name)
			case more:
				cutDirs++
				fmt.Fprintf(&b, "%s%s/ (%d+ entries)\n", indent, name, n)
			default:
				cutDirs++
				fmt.Fprintf(&b, "%s%s/ (%s)\n", indent, name, plural(n, "entry", "entries"))
			}
			return fs.SkipDir
		case d.Type().IsRegular():
			files++
			fmt.Fprintf(&b, "%s%s\n", indent, name)
		default:
			others++
			fmt.Fprintf(&b, "%s%s [%s]\n", indent, name, fileType(d.Type()))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "%s shown\n", counts(files, dirs, links, others))
	if cutDirs > 0 {
		fmt.Fprintf(&b, "[directories with an entry count are below max_depth=%d: raise max_depth or call directory_tree on one of them]\n", maxDepth)
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, "[%s could not be read]\n", plural(unreadable, "directory", "directories"))
	}
	if leftOut > 0 {
		more := fmt.Sprint(leftOut)
		if leftOut >= maxUncounted {
			more = "at least " + more
		}
		fmt.Fprintf(&b, "[… stopped at max_entries=%d; %s more entries not shown; narrow with exclude (e.g. node_modules, .git), a smaller max_depth, or directory_tree on a subdirectory]\n", maxEntries, more)
	}
	return b.String(), nil
}

// countEntries counts the entries of the directory rel below sub, by name
// only, up to maxCutDirCount. An unreadable directory counts as empty.
func countEntries(ctx context.Context, sub *Dir, rel string) (n int, more bool, err error) {
	f, err := openDir(sub.root, rel)
	if err != nil {
		return 0, false, nil
	}
	defer f.Close()
	for n < maxCutDirCount {
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		names, err := f.Readdirnames(progressEvery)
		n += len(names)
		if err != nil || len(names) == 0 {
			return n, false, nil
		}
	}
	names, _ := f.Readdirnames(1)
	return n, len(names) > 0, nil
}
