package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Server is a built MCP server with the tools it was given.
type Server struct {
	Name  string
	Tools []Tool
	MCP   *server.MCPServer
	// Close, when set, releases what the server holds (a browser, say)
	// once serving ends.
	Close func()
}

// NewServer builds an MCP server offering tools. It refuses tools whose
// declaration is faulty (unstated annotations, bad schema) or whose names
// repeat, so such a server never starts.
func NewServer(name, instructions string, tools []Tool, opts ...server.ServerOption) (*Server, error) {
	var errs []error
	seen := map[string]bool{}
	for _, t := range tools {
		if t.err != nil {
			errs = append(errs, t.err)
		}
		if err := t.Annotations.check(); err != nil {
			errs = append(errs, fmt.Errorf("tool %s: %w", t.Def.Name, err))
		}
		if seen[t.Def.Name] {
			errs = append(errs, fmt.Errorf("tool %s is declared twice", t.Def.Name))
		}
		seen[t.Def.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	base := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithLogging(),
		server.WithInstructions(instructions),
		server.WithOutputSchemaValidation(),
		// Roots are how a client narrows what a server may touch. Asking for
		// them is a server-initiated request, which the 2026-07-28 protocol
		// replaced; today's clients (Claude Desktop, VS Code, Cursor, the
		// Inspector) still answer it over stdio.
		//lint:ignore SA1019 needed until clients move to multi round-trip requests
		server.WithLegacyServerInitiatedRequests(),
	}
	s := server.NewMCPServer(name, Version, append(base, opts...)...)
	for _, t := range tools {
		s.AddTool(t.Def, t.Handler)
	}
	return &Server{Name: name, Tools: tools, MCP: s}, nil
}

// Progress sends a progress notification for the call in req, if the client
// asked for progress. total may be 0 when unknown. A slow or full client
// queue drops the notification rather than stall the tool.
func Progress(ctx context.Context, req mcp.CallToolRequest, progress, total float64, message string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return
	}
	s := server.ServerFromContext(ctx)
	if s == nil {
		return
	}
	params := map[string]any{
		"progressToken": req.Params.Meta.ProgressToken,
		"progress":      progress,
	}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	if err := s.SendNotificationToClient(ctx, "notifications/progress", params); err != nil {
		slog.Debug("progress notification dropped", "err", err)
	}
}
