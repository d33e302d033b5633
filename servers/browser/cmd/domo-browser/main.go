// Command domo-browser is an MCP server that operates Chromium through the
// DevTools protocol, showing pages as compact accessibility snapshots.
package main

import (
	"github.com/domo-agent/domo/servers/browser"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func main() { mcpkit.Main(browser.App()) }
