package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

var (
	writeHints = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}
	editHints  = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.No, OpenWorld: mcpkit.No}
	mkdirHints = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}
)

type writeArgs struct {
	Path    string `json:"path" jsonschema:"file to create or replace, absolute or relative to an allowed directory; its directory must already exist"`
	Content string `json:"content" jsonschema:"the complete new text of the file"`
}

func (s *Server) writeFile() mcpkit.Tool {
	return mcpkit.NewTool("write_file",
		"Create a text file, or replace the whole content of an existing one. "+
			"To change part of an existing file use edit_file instead: it keeps the rest intact and shows a diff. "+
			"The file's directory must exist (make it with create_directory). The write is atomic, and a replaced file keeps its permissions. "+
			fmt.Sprintf("Content is limited to %s.", humanSize(s.opts.MaxWriteBytes)),
		writeHints,
		func(ctx context.Context, req mcp.CallToolRequest, in writeArgs) (*mcp.CallToolResult, error) {
			if n := int64(len(in.Content)); n > s.opts.MaxWriteBytes {
				return nil, fmt.Errorf("content is %s, over this server's write limit of %s: write a smaller file", humanSize(n), humanSize(s.opts.MaxWriteBytes))
			}
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			how := "created"
			fi, err := loc.Lstat()
			switch {
			case err == nil && fi.Mode().IsRegular():
				how = "replaced"
			case err == nil && !fi.IsDir():
				return nil, fmt.Errorf("%s is not a regular file (%s): write_file replaces regular files only", loc.Path(), fi.Mode().Type())
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return nil, describe(loc, err)
			}
			// A directory in the way is reported by atomicWrite.
			if err := atomicWrite(loc, []byte(in.Content)); err != nil {
				return nil, err
			}
			return mcpkit.Text(fmt.Sprintf("wrote %d bytes to %s (%s)", len(in.Content), loc.Path(), how)), nil
		},
		mcpkit.Title("Write file"),
	)
}

type mkdirArgs struct {
	Path string `json:"path" jsonschema:"directory to create, absolute or relative to an allowed directory; missing parents are created too"`
}

func (s *Server) createDirectory() mcpkit.Tool {
	return mcpkit.NewTool("create_directory",
		"Create a directory, and any missing parent directories, like mkdir -p. "+
			"Succeeds without change if the directory already exists. Use it before write_file or move_file into a directory that does not exist yet.",
		mkdirHints,
		func(ctx context.Context, req mcp.CallToolRequest, in mkdirArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			if fi, err := loc.Root().Stat(loc.Rel); err == nil {
				if fi.IsDir() {
					return mcpkit.Text(fmt.Sprintf("directory %s already exists", loc.Path())), nil
				}
				return nil, fmt.Errorf("%s already exists and is a file, not a directory: choose another name, or delete the file first with delete_file", loc.Path())
			}
			if err := loc.Root().MkdirAll(loc.Rel, 0o755); err != nil {
				if blocker, ok := fileInPath(loc); ok {
					return nil, fmt.Errorf("cannot create directory %s: %s is a file, not a directory", loc.Path(), blocker.Path())
				}
				return nil, describe(loc, err)
			}
			return mcpkit.Text(fmt.Sprintf("created directory %s", loc.Path())), nil
		},
		mcpkit.Title("Create directory"),
	)
}

// fileInPath finds the first component of loc that exists and is not a
// directory.
func fileInPath(loc Location) (Location, bool) {
	prefix := ""
	for c := range strings.SplitSeq(loc.Rel, "/") {
		prefix = path.Join(prefix, c)
		fi, err := loc.Root().Stat(prefix)
		if err != nil {
			return Location{}, false
		}
		if !fi.IsDir() {
			return Location{Dir: loc.Dir, Rel: prefix}, true
		}
	}
	return Location{}, false
}
