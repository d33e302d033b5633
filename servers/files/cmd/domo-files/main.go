// Command domo-files is an MCP server for files inside the directories named
// on its command line.
package main

import (
	"github.com/domo-agent/domo/servers/files"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func main() { mcpkit.Main(files.App()) }
