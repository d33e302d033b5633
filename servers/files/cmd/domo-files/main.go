// Command domo-files is an MCP server for files inside the directories named
// on its command line.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/domo-agent/domo/servers/files"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := files.App().Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "domo-files: %v\n", err)
		if errors.Is(err, mcpkit.ErrUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
