// Command domo-web is an MCP server for web search, news headlines and
// reading pages, with every request kept from private addresses.
package main

import (
	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/web"
)

func main() { mcpkit.Main(web.App()) }
