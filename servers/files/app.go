package files

import (
	"context"
	"flag"
	"fmt"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// App is the domo-files command: its flags, arguments and server.
func App() mcpkit.App {
	opts := DefaultOptions()
	return mcpkit.App{
		Name:    "domo-files",
		Summary: "MCP server for reading and changing files inside the allowed directories",
		Args:    "DIR [DIR...]",
		Flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&opts.MaxReadBytes, "max-read-bytes", opts.MaxReadBytes, "most bytes one text read returns")
			fs.Int64Var(&opts.MaxMediaBytes, "max-media-bytes", opts.MaxMediaBytes, "largest file read_media_file encodes")
			fs.Int64Var(&opts.MaxWriteBytes, "max-write-bytes", opts.MaxWriteBytes, "largest content write_file and edit_file write")
		},
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			for name, v := range map[string]int64{"--max-read-bytes": opts.MaxReadBytes, "--max-media-bytes": opts.MaxMediaBytes, "--max-write-bytes": opts.MaxWriteBytes} {
				if v <= 0 {
					return nil, fmt.Errorf("%w: %s must be a positive number of bytes, not %d", mcpkit.ErrUsage, name, v)
				}
			}
			if len(args) == 0 {
				if !listOnly {
					return nil, fmt.Errorf("%w: name at least one allowed directory, e.g. domo-files ~/projects", mcpkit.ErrUsage)
				}
				args = []string{"."}
			}
			s, err := New(args, opts)
			if err != nil {
				return nil, err
			}
			return s.MCP()
		},
	}
}
