// Command domo-voice is an MCP server that speaks and listens: text to
// speech, speech to text with voice activity end-pointing, and wake
// phrases, local first.
package main

import (
	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/voice"
)

func main() { mcpkit.Main(voice.App()) }
