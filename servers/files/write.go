package files

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func (s *Server) writeFile() mcpkit.Tool {
	return mcpkit.NewTool("write_file", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}

func (s *Server) editFile() mcpkit.Tool {
	return mcpkit.NewTool("edit_file", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}

func (s *Server) createDirectory() mcpkit.Tool {
	return mcpkit.NewTool("create_directory", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}
