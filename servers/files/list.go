package files

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func (s *Server) listDirectory() mcpkit.Tool {
	return mcpkit.NewTool("list_directory", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}

func (s *Server) directoryTree() mcpkit.Tool {
	return mcpkit.NewTool("directory_tree", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}

func (s *Server) getFileInfo() mcpkit.Tool {
	return mcpkit.NewTool("get_file_info", "placeholder", readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			return nil, errors.New("not implemented")
		})
}
