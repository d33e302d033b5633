// Command domo-memory is an MCP server for long-term memory kept in a local
// SQLite file.
package main

import (
	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/memory"
)

func main() { mcpkit.Main(memory.App()) }
