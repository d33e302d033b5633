package browser

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == ' ' })
}

// App is the domo-browser command: its flags and server.
func App() mcpkit.App {
	var (
		o                Options
		allowed, blocked string
		viewport         string
		evaluate         bool
	)
	return mcpkit.App{
		Name:    "domo-browser",
		Summary: "MCP server that operates Chromium, with compact accessibility snapshots and refs",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Chrome, "chrome", os.Getenv("DOMO_BROWSER_CHROME"), "the Chrome or Chromium executable `PATH` (default: /usr/bin/chromium, or the first Chrome found)")
			fs.BoolVar(&o.Headed, "headed", false, "show the browser window instead of running headless (needs a display)")
			fs.StringVar(&o.UserDataDir, "user-data-dir", os.Getenv("DOMO_BROWSER_USER_DATA_DIR"), "keep a persistent profile in `DIR` (default: a throw-away profile per launch)")
			fs.StringVar(&o.CDPEndpoint, "cdp-endpoint", os.Getenv("DOMO_BROWSER_CDP_ENDPOINT"), "attach to a Chrome already running with remote debugging at `URL` (http://127.0.0.1:9222 or ws://…) instead of starting one")
			fs.StringVar(&allowed, "allowed-origins", os.Getenv("DOMO_BROWSER_ALLOWED_ORIGINS"), "let pages load only from these `ORIGINS` (comma-separated: https://example.com, example.com, localhost:3000, *.example.com)")
			fs.StringVar(&blocked, "blocked-origins", os.Getenv("DOMO_BROWSER_BLOCKED_ORIGINS"), "never load from these `ORIGINS` (same forms; wins over --allowed-origins)")
			fs.BoolVar(&o.AllowFile, "allow-file-urls", false, "let browser_navigate open file:// URLs")
			fs.StringVar(&o.DownloadsDir, "downloads-dir", os.Getenv("DOMO_BROWSER_DOWNLOADS_DIR"), "save downloads in `DIR` (default: a private temporary directory, removed on exit)")
			fs.BoolVar(&evaluate, "enable-evaluate", false, "offer browser_evaluate, which runs the model's JavaScript in pages")
			fs.StringVar(&viewport, "viewport", "1280x800", "the viewport `WIDTHxHEIGHT` of a headless browser")
			fs.DurationVar(&o.NavTimeout, "nav-timeout", 15*time.Second, "the longest to wait for a page to load")
			fs.DurationVar(&o.ActionTimeout, "action-timeout", 10*time.Second, "the longest one step of an action may take")
		},
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("%w: domo-browser takes no arguments (got %q)", mcpkit.ErrUsage, args[0])
			}
			o.Origins = Origins{Allow: splitList(allowed), Block: splitList(blocked)}
			if err := o.Origins.Validate(); err != nil {
				return nil, fmt.Errorf("%w: %v", mcpkit.ErrUsage, err)
			}
			if _, err := fmt.Sscanf(viewport, "%dx%d", &o.Width, &o.Height); err != nil || o.Width < 100 || o.Height < 100 {
				return nil, fmt.Errorf("%w: --viewport %q: want WIDTHxHEIGHT such as 1280x800", mcpkit.ErrUsage, viewport)
			}
			if o.Chrome != "" && !listOnly {
				if _, err := os.Stat(o.Chrome); err != nil {
					return nil, fmt.Errorf("%w: --chrome: %v", mcpkit.ErrUsage, err)
				}
			}
			b := New(o)
			s := NewServer(b)
			s.Evaluate = evaluate
			srv, err := s.MCP()
			if err != nil {
				return nil, err
			}
			srv.Close = b.Close
			return srv, nil
		},
	}
}
