// Command domo-memory is an MCP server for long-term memory kept in a local
// SQLite file.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/memory"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := memory.App().Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "domo-memory: %v\n", err)
		if errors.Is(err, mcpkit.ErrUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
