package files

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type grepArgs struct {
	Path            string   `json:"path" jsonschema:"file to search, or directory to search recursively; absolute or relative to an allowed directory"`
	Pattern         string   `json:"pattern" jsonschema:"Go (RE2) regular expression matched against each line, e.g. func \\w+\\(; no backreferences or lookaround; set fixed_strings to search for literal text"`
	Include         []string `json:"include,omitempty" jsonschema:"search only files matching one of these globs, by base name or path relative to path, e.g. *.go, src/**/*.ts"`
	Exclude         []string `json:"exclude,omitempty" jsonschema:"glob patterns of files and directories to skip together with everything below them, e.g. node_modules, .git, *.min.js"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty" jsonschema:"ignore letter case"`
	FixedStrings    bool     `json:"fixed_strings,omitempty" jsonschema:"treat pattern as literal text, not a regular expression"`
	ContextLines    int      `json:"context_lines,omitempty" jsonschema:"lines of context to show before and after each match (default 0)"`
	MaxMatches      int      `json:"max_matches,omitempty" jsonschema:"stop after this many matching lines (default 100)"`
	MaxFileBytes    int64    `json:"max_file_bytes,omitempty" jsonschema:"skip files larger than this many bytes (default 10 MiB)"`
}

func (a *grepArgs) Validate() error {
	switch {
	case a.Pattern == "":
		return errors.New("pattern is empty: give a regular expression or, with fixed_strings, the text to find")
	case a.ContextLines < 0 || a.ContextLines > maxGrepContext:
		return fmt.Errorf("context_lines must be between 0 and %d", maxGrepContext)
	case a.MaxMatches < 0 || a.MaxMatches > maxGrepMatches:
		return fmt.Errorf("max_matches must be between 1 and %d", maxGrepMatches)
	case a.MaxFileBytes < 0:
		return errors.New("max_file_bytes must be positive")
	}
	if err := checkGlobs("include", a.Include); err != nil {
		return err
	}
	return checkGlobs("exclude", a.Exclude)
}

// regexp compiles the pattern as the arguments ask.
func (a *grepArgs) regexp() (*regexp.Regexp, error) {
	expr := a.Pattern
	if a.FixedStrings {
		expr = regexp.QuoteMeta(expr)
	}
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("pattern is not a valid Go (RE2) regular expression: %v; escape special characters with \\, or set fixed_strings to true to search for the text as is", err)
	}
	if n := progSize(expr); n > maxGrepProg {
		return nil, fmt.Errorf("pattern is too complex: it compiles to %d steps, over the %d this server matches; use smaller {n,m} repeat counts, or search for a shorter part of the text", n, maxGrepProg)
	}
	return re, nil
}

// maxGrepProg bounds the size of a compiled pattern. Go's regexp takes
// time proportional to a line's length times this size, in one call that
// cannot be interrupted: [ab]{1000} repeated fifty times would take
// hours on each long line.
const maxGrepProg = 1000

// progSize is the number of instructions expr, already known to compile,
// compiles to.
func progSize(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}

func (s *Server) grepFiles() mcpkit.Tool {
	return mcpkit.NewTool("grep_files",
		"Search the contents of text files for a regular expression (Go RE2 syntax), in one file or recursively below a directory. "+
			"Output lines are path:line:text, context lines path-line-text, groups separated by --; long lines are cut. "+
			"Binary files, files over max_file_bytes and files with lines over 1 MiB are skipped and counted; symlinks are not followed. "+
			"Narrow with include (e.g. *.go) and exclude (e.g. node_modules, .git). To find files by name use search_files.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in grepArgs) (*mcp.CallToolResult, error) {
			re, err := in.regexp()
			if err != nil {
				return nil, err
			}
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			g := &grepper{
				re:         re,
				context:    in.ContextLines,
				maxMatches: cmp.Or(in.MaxMatches, defaultGrepMatches),
				maxBytes:   cmp.Or(in.MaxFileBytes, defaultGrepFileSize),
				budget:     int(s.opts.MaxReadBytes),
			}
			text, err := g.run(ctx, req, loc, normGlobs(in.Include), normGlobs(in.Exclude))
			if err != nil {
				return nil, err
			}
			return mcpkit.Text(text), nil
		},
		mcpkit.Title("Search file contents"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetInt(sc, "context_lines", 0, maxGrepContext, 0)
			mcpkit.SetInt(sc, "max_matches", 1, maxGrepMatches, defaultGrepMatches)
			one := 1.0
			sc.Properties["max_file_bytes"].Minimum = &one
			sc.Properties["max_file_bytes"].Default = []byte(fmt.Sprint(defaultGrepFileSize))
			sc.Properties["pattern"].MinLength = jsonschema.Ptr(1)
		}),
	)
}

// grepOutcome says whether grep_files searched a file or why it skipped it.
type grepOutcome int

const (
	grepSearched grepOutcome = iota
	grepUnreadable
	grepTooBig
	grepBinary
	grepLongLine
)

// grepper searches files one by one and collects their output.
type grepper struct {
	re         *regexp.Regexp
	context    int
	maxMatches int
	maxBytes   int64
	budget     int // output bytes

	out          strings.Builder
	matches      int
	filesMatched int
	skipped      [grepLongLine + 1]int
	// stopped says why the search ended early, when it did.
	stopped string
}

func (g *grepper) run(ctx context.Context, req mcp.CallToolRequest, loc Location, include, exclude []string) (string, error) {
	fi, err := loc.Root().Stat(loc.Rel)
	if err != nil {
		return "", describe(loc, err)
	}
	if !fi.IsDir() {
		why, err := g.file(ctx, loc)
		if err != nil {
			return "", err
		}
		g.skipped[why]++
		switch why {
		case grepTooBig:
			return "", fmt.Errorf("%s is %s, over max_file_bytes (%s): raise max_file_bytes to search it", loc.Path(), humanSize(fi.Size()), humanSize(g.maxBytes))
		case grepBinary:
			return "", fmt.Errorf("%s is a binary file; grep_files searches text only (use get_file_info to see what it is)", loc.Path())
		case grepLongLine:
			return "", fmt.Errorf("%s has a line longer than %s (minified code or data?); grep_files skips such files: read parts of it with read_text_file", loc.Path(), humanSize(maxGrepLine))
		}
		return g.summary(loc), nil
	}

	_, err = walkBelow(ctx, req, loc, exclude, func(sub *Dir, rel string, d fs.DirEntry, err error) error {
		if err != nil {
			g.skipped[grepUnreadable]++
			return nil
		}
		// Symlinks are not followed; FIFOs and devices are not read.
		if !d.Type().IsRegular() || (len(include) > 0 && !matchAny(include, rel)) {
			return nil
		}
		why, err := g.file(ctx, Location{Dir: sub, Rel: rel})
		g.skipped[why]++
		if err != nil && why != grepUnreadable {
			return err
		}
		if g.stopped != "" {
			return errWalkDone
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return g.summary(loc), nil
}

type heldLine struct {
	n    int
	text string
}

// file searches one regular file and adds its matches to the output, or
// says why it skipped it. The error is cancellation, or with
// grepUnreadable what went wrong.
func (g *grepper) file(ctx context.Context, loc Location) (grepOutcome, error) {
	f, fi, err := openRegular(loc)
	if err != nil {
		return grepUnreadable, err
	}
	defer f.Close()
	if fi.Size() > g.maxBytes {
		return grepTooBig, nil
	}
	br := bufio.NewReaderSize(io.LimitReader(f, g.maxBytes), 64<<10)
	head, _ := br.Peek(8000)
	if _, bin := sniffBinary(head); bin {
		return grepBinary, nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), maxGrepLine)

	p := shownName(loc.Path())
	var out strings.Builder
	var before []heldLine
	n, lastOut, after, found := 0, 0, 0, 0
	stopped := ""
	for sc.Scan() {
		n++
		line := sc.Bytes()
		// Matching one long line can take seconds: check before each.
		if n%4096 == 0 || len(line) > 64<<10 {
			if err := ctx.Err(); err != nil {
				return grepSearched, err
			}
		}
		if stopped != "" {
			// Finish the context after the last match shown.
			if after == 0 {
				break
			}
			fmt.Fprintf(&out, "%s-%d-%s\n", p, n, shownLine(line))
			after--
			continue
		}
		if !g.re.Match(line) {
			switch {
			case after > 0:
				fmt.Fprintf(&out, "%s-%d-%s\n", p, n, shownLine(line))
				after--
				lastOut = n
			case g.context > 0:
				if len(before) == g.context {
					before = append(before[:0], before[1:]...)
				}
				before = append(before, heldLine{n, shownLine(line)})
			}
			continue
		}
		first := n
		if len(before) > 0 {
			first = before[0].n
		}
		if g.context > 0 && ((lastOut == 0 && g.out.Len() > 0) || (lastOut > 0 && first > lastOut+1)) {
			out.WriteString("--\n")
		}
		for _, h := range before {
			fmt.Fprintf(&out, "%s-%d-%s\n", p, h.n, h.text)
		}
		before = before[:0]
		fmt.Fprintf(&out, "%s:%d:%s\n", p, n, shownLine(line))
		lastOut, after = n, g.context
		found++
		switch {
		case g.out.Len()+out.Len() > g.budget:
			stopped, after = "output", 0
		case g.matches+found >= g.maxMatches:
			stopped = "max_matches"
		}
	}
	if err := sc.Err(); err != nil && stopped == "" {
		if errors.Is(err, bufio.ErrTooLong) {
			return grepLongLine, nil
		}
		return grepUnreadable, describe(loc, err)
	}
	g.out.WriteString(out.String())
	g.matches += found
	if found > 0 {
		g.filesMatched++
	}
	g.stopped = stopped
	return grepSearched, nil
}

// shownLine is a line as grep_files prints it: valid UTF-8, cut to
// maxGrepShown bytes at a character boundary.
func shownLine(line []byte) string {
	if len(line) <= maxGrepShown {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	i := maxGrepShown
	for i > 0 && !utf8.RuneStart(line[i]) {
		i--
	}
	return strings.ToValidUTF8(string(line[:i]), "\uFFFD") + fmt.Sprintf(" […line cut: %d bytes in all]", len(line))
}

func (g *grepper) summary(loc Location) string {
	var b strings.Builder
	b.WriteString(g.out.String())
	n := g.skipped[grepSearched]
	switch g.stopped {
	case "max_matches":
		fmt.Fprintf(&b, "[… stopped at max_matches=%d; more matches may follow; narrow with include, exclude, a subdirectory as path or a more specific pattern]\n", g.maxMatches)
	case "output":
		fmt.Fprintf(&b, "[… stopped: the output reached the server's limit of %s; narrow with include, exclude, a subdirectory as path or a more specific pattern]\n", humanSize(int64(g.budget)))
	}
	if g.matches == 0 {
		fmt.Fprintf(&b, "No matches in %s below %s.\n", plural(n, "file searched", "files searched"), loc.Path())
	} else {
		fmt.Fprintf(&b, "%s in %s (%s searched).\n", plural(g.matches, "matching line", "matching lines"), plural(g.filesMatched, "file", "files"), plural(n, "file", "files"))
	}
	var skipped []string
	if k := g.skipped[grepBinary]; k > 0 {
		skipped = append(skipped, plural(k, "binary file", "binary files"))
	}
	if k := g.skipped[grepTooBig]; k > 0 {
		skipped = append(skipped, plural(k, "file", "files")+" over max_file_bytes ("+humanSize(g.maxBytes)+")")
	}
	if k := g.skipped[grepLongLine]; k > 0 {
		skipped = append(skipped, plural(k, "file", "files")+" with lines over "+humanSize(maxGrepLine))
	}
	if k := g.skipped[grepUnreadable]; k > 0 {
		skipped = append(skipped, plural(k, "unreadable file or directory", "unreadable files or directories"))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "Skipped %s.\n", strings.Join(skipped, ", "))
	}
	return b.String()
}
