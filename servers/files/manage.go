package files

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func (s *Server) moveFile() mcpkit.Tool {
	return mcpkit.NewTool("move_file", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}

func (s *Server) deleteFile() mcpkit.Tool {
	return mcpkit.NewTool("delete_file", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}
