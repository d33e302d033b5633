// Command domo-ax is an MCP server that operates desktop apps through
// their accessibility tree.
package main

import (
	"github.com/domo-agent/domo/servers/ax"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func main() { mcpkit.Main(ax.App()) }
