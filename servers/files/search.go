package files

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func (s *Server) searchFiles() mcpkit.Tool {
	return mcpkit.NewTool("search_files", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}

func (s *Server) grepFiles() mcpkit.Tool {
	return mcpkit.NewTool("grep_files", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}
