// Command domo is Domo's host: a terminal chat against a local LLM that
// starts Domo's MCP servers and sends every tool call through one audited
// permission client. This file only wires the process to Run.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
