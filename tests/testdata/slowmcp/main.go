// Command slowmcp is an MCP server for the host's tests: a tool that takes
// as long as it is told (reporting progress), one that answers at once, and
// one that tells its process ID, so a test can kill it mid-call.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("slowmcp", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Wait ms milliseconds, reporting progress."),
		mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			total := req.GetFloat("ms", 0)
			deadline := time.Now().Add(time.Duration(total) * time.Millisecond)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for time.Now().Before(deadline) {
				select {
				case <-ctx.Done():
					return mcp.NewToolResultError("cancelled"), nil
				case <-tick.C:
				}
				if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
					done := total - float64(time.Until(deadline).Milliseconds())
					server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": m.ProgressToken, "progress": done, "total": total, "message": "sleeping",
					})
				}
			}
			return mcp.NewToolResultText(fmt.Sprintf("slept %v ms", total)), nil
		})
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Return the text."), mcp.WithString("text")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("Return the server's process ID.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(os.Getpid())), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
