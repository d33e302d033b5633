package files

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

const (
	defaultSearchResults = 200
	maxSearchResults     = 5000

	defaultGrepMatches  = 100
	maxGrepMatches      = 2000
	maxGrepContext      = 10
	defaultGrepFileSize = 10 << 20
	// maxGrepLine is the longest line grep_files reads; a file with a
	// longer one is minified or data, and is skipped.
	maxGrepLine = 1 << 20
	// maxGrepShown cuts long lines in grep_files output.
	maxGrepShown = 500

	// maxGlobAlternatives bounds how many patterns the {…} groups of a
	// glob make together. The matcher tries every combination against a
	// name in turn, so twenty groups of two take it minutes per name, in a
	// call that cancellation cannot interrupt.
	maxGlobAlternatives = 128
)

// checkGlobs validates glob patterns, naming the argument they came from.
func checkGlobs(arg string, patterns []string) error {
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("%s holds an empty pattern: remove it", arg)
		}
		if !doublestar.ValidatePattern(normGlob(p)) {
			return fmt.Errorf("%s pattern %q is not a valid glob: check its [brackets] and {braces}, or escape them with \\ to match them literally", arg, p)
		}
		if globAlternatives(normGlob(p)) > maxGlobAlternatives {
			return fmt.Errorf("%s pattern %q has {…} groups that combine into over %d alternatives, too many to match: use fewer or smaller groups, or split it into several patterns", arg, p, maxGlobAlternatives)
		}
	}
	return nil
}

// globAlternatives counts the patterns into which the {…} groups of the
// valid glob p expand, up to maxGlobAlternatives+1. It reads escapes and
// [classes] as doublestar does, so braces in them do not count.
func globAlternatives(p string) int {
	const most = maxGlobAlternatives + 1
	// For each open group: the alternatives it has so far, and the
	// product of the groups in its current alternative.
	type group struct{ sum, prod int }
	stack := []group{{prod: 1}}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(p) && p[i] != ']'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
		case '{':
			stack = append(stack, group{prod: 1})
		case ',':
			if top := &stack[len(stack)-1]; len(stack) > 1 {
				top.sum, top.prod = min(top.sum+top.prod, most), 1
			}
		case '}':
			if len(stack) > 1 {
				n := min(stack[len(stack)-1].sum+stack[len(stack)-1].prod, most)
				stack = stack[:len(stack)-1]
				top := &stack[len(stack)-1]
				top.prod = min(top.prod*n, most)
			}
		}
	}
	return stack[0].prod
}

// normGlob drops what models often add to a pattern but relative paths
// never have: a leading "./" and a trailing "/".
func normGlob(p string) string {
	p = strings.TrimPrefix(p, "./")
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

func normGlobs(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = normGlob(p)
	}
	return out
}

// matchGlob reports whether the entry at rel, a slash-separated path below
// the top of a walk, matches pattern by that path or by its base name; so
// "*.go" finds Go files at any depth and "cmd/*/main.go" a relative path.
func matchGlob(pattern, rel string) bool {
	return doublestar.MatchUnvalidated(pattern, rel) || doublestar.MatchUnvalidated(pattern, path.Base(rel))
}

func matchAny(patterns []string, rel string) bool {
	for _, p := range patterns {
		if matchGlob(p, rel) {
			return true
		}
	}
	return false
}

type searchArgs struct {
	Path       string   `json:"path" jsonschema:"directory to search below, absolute or relative to an allowed directory"`
	Pattern    string   `json:"pattern" jsonschema:"glob matched against each entry's base name and its path relative to path: *.go finds Go files at any depth, **/test/*.go those in any directory named test, cmd/*/main.go a relative path; ** spans directories, {a,b} gives alternatives, [abc] a class; matching is case-sensitive"`
	Exclude    []string `json:"exclude,omitempty" jsonschema:"glob patterns of entries to skip together with everything below them, matched the same way, e.g. node_modules, .git, **/testdata"`
	MaxResults int      `json:"max_results,omitempty" jsonschema:"return at most this many paths (default 200)"`
	Type       string   `json:"type,omitempty" jsonschema:"what to return: any (the default), file or directory"`
}

func (a *searchArgs) Validate() error {
	if strings.TrimSpace(a.Pattern) == "" {
		return errors.New("pattern is empty: give a glob such as *.go or **/test/*.py")
	}
	if a.MaxResults < 0 || a.MaxResults > maxSearchResults {
		return fmt.Errorf("max_results must be between 1 and %d", maxSearchResults)
	}
	switch a.Type {
	case "", "any", "file", "directory":
	default:
		return fmt.Errorf("type is %q; use any, file or directory", a.Type)
	}
	if err := checkGlobs("pattern", []string{a.Pattern}); err != nil {
		return err
	}
	return checkGlobs("exclude", a.Exclude)
}

func (s *Server) searchFiles() mcpkit.Tool {
	return mcpkit.NewTool("search_files",
		"Find files and directories by name below a directory, recursively, with a glob pattern: *.go matches base names at any depth, "+
			"**/test/*.go matches paths relative to path. Returns matching paths, one per line (directories end in /, symlinks show their target and are not followed). "+
			"Exclude bulky directories (node_modules, .git) to search faster. To search file contents use grep_files.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			text, err := searchNames(ctx, req, loc, in)
			if err != nil {
				return nil, err
			}
			return mcpkit.Text(text), nil
		},
		mcpkit.Title("Search files by name"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetInt(sc, "max_results", 1, maxSearchResults, defaultSearchResults)
			mcpkit.SetEnum(sc, "type", "any", "file", "directory")
			sc.Properties["pattern"].MinLength = jsonschema.Ptr(1)
		}),
	)
}

func searchNames(ctx context.Context, req mcp.CallToolRequest, loc Location, in searchArgs) (string, error) {
	pattern := normGlob(in.Pattern)
	maxResults := cmp.Or(in.MaxResults, defaultSearchResults)
	var b strings.Builder
	found, unreadable := 0, 0
	examined, err := walkBelow(ctx, req, loc, normGlobs(in.Exclude), func(sub *Dir, rel string, d fs.DirEntry, err error) error {
		if err != nil {
			unreadable++
			return nil
		}
		switch {
		case in.Type == "file" && (d.IsDir() || d.Type()&fs.ModeSymlink != 0),
			in.Type == "directory" && !d.IsDir(),
			!matchGlob(pattern, rel):
			return nil
		}
		found++
		if found > maxResults {
			if found-maxResults >= maxUncounted {
				return errWalkDone
			}
			return nil
		}
		p := shownName(Location{Dir: sub, Rel: rel}.Path())
		switch {
		case d.IsDir():
			fmt.Fprintf(&b, "%s/\n", p)
		case d.Type()&fs.ModeSymlink != 0:
			target, lerr := sub.root.Readlink(rel)
			if lerr != nil {
				target = "?"
			}
			fmt.Fprintf(&b, "%s -> %s\n", p, shownName(target))
		default:
			fmt.Fprintf(&b, "%s\n", p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	what := "entries"
	if in.Type == "file" || in.Type == "directory" {
		what = in.Type + " entries"
	}
	switch {
	case found == 0:
		fmt.Fprintf(&b, "No %s match %q below %s (%d examined).", what, in.Pattern, loc.Path(), examined)
		if !strings.Contains(pattern, "/") {
			b.WriteString(" The pattern is matched against base names, case-sensitively; try *part* for a name containing part.")
		} else {
			b.WriteString(" A pattern with / is matched against the path relative to the search directory; start it with **/ to match at any depth.")
		}
		b.WriteString("\n")
	case found > maxResults:
		more := fmt.Sprint(found - maxResults)
		if found-maxResults >= maxUncounted {
			more = "at least " + more
		}
		fmt.Fprintf(&b, "[… %s more matches not shown; narrow with a more specific pattern, exclude, type, or a subdirectory as path]\n", more)
		fmt.Fprintf(&b, "%d of %s shown\n", maxResults, plural(found, "match", "matches"))
	default:
		fmt.Fprintf(&b, "%s\n", plural(found, "match", "matches"))
	}
	if unreadable > 0 {
		fmt.Fprintf(&b, "[%s could not be read]\n", plural(unreadable, "directory", "directories"))
	}
	return b.String(), nil
}
