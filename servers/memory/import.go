package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type importArgs struct {
	Path    string `json:"path,omitempty" jsonschema:"the memory.jsonl file of @modelcontextprotocol/server-memory (its MEMORY_FILE_PATH)"`
	Content string `json:"content,omitempty" jsonschema:"the file's contents, instead of path"`
}

func (a *importArgs) Validate() error {
	if (a.Path == "") == (a.Content == "") {
		return errors.New("give path (the memory.jsonl file) or content (its text), one of them")
	}
	return nil
}

// maxImport bounds what one import reads.
const maxImport = 256 << 20

func (s *Server) importGraph() mcpkit.Tool {
	return mcpkit.NewTool("memory_import",
		"Import the knowledge graph of the official MCP memory server (@modelcontextprotocol/server-memory, its memory.jsonl): "+
			"entities with their types, every observation as a memory about its entity, and every relation. Importing the same file again adds nothing.",
		adds,
		func(ctx context.Context, req mcp.CallToolRequest, in importArgs) (*mcp.CallToolResult, error) {
			var r io.Reader = strings.NewReader(in.Content)
			source := "import"
			if in.Path != "" {
				f, err := openImport(in.Path)
				if err != nil {
					return nil, err
				}
				defer f.Close()
				r, source = io.LimitReader(f, maxImport), "import:"+filepath.Base(in.Path)
			}
			res, err := s.store.Import(ctx, r, source)
			if err != nil {
				return nil, err
			}
			text := fmt.Sprintf("Imported %d entities with %d observations (%d new memories, %d already known) and %d relations (%d new).",
				res.Entities, res.Observations, res.MemoriesCreated, res.MemoriesUnchanged, res.Relations, res.RelationsNew)
			return mcpkit.Structured(text, res), nil
		},
		mcpkit.Title("Import a memory graph"),
		mcpkit.Output[ImportResult](nil),
	)
}

func openImport(path string) (*os.File, error) {
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, errors.Unwrap(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file; give the path of memory.jsonl", path)
	}
	if fi.Size() > maxImport {
		f.Close()
		return nil, fmt.Errorf("%s is %d MiB; at most %d MiB can be imported", path, fi.Size()>>20, maxImport>>20)
	}
	return f, nil
}
