package ax

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/domo-agent/domo/servers/ax/launch"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// App is the domo-ax command: its flags and server.
func App() mcpkit.App {
	var o Options
	return mcpkit.App{
		Name:    "domo-ax",
		Summary: "MCP server that operates desktop apps through their accessibility tree (AT-SPI2), with keys, clicks, screenshots and the clipboard through X11",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&o.Display, "display", os.Getenv("DOMO_AX_DISPLAY"), "the X `DISPLAY` to operate (default: $DISPLAY)")
			fs.DurationVar(&o.Timeout, "timeout", 3*time.Second, "the longest to wait for an app to answer before giving a partial result")
		},
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("%w: domo-ax takes no arguments (got %q)", mcpkit.ErrUsage, args[0])
			}
			if o.Timeout <= 0 {
				return nil, fmt.Errorf("%w: --timeout must be positive", mcpkit.ErrUsage)
			}
			o.Apps = launch.DefaultFinder()
			d := New(o)
			srv, err := NewServer(d).MCP()
			if err != nil {
				return nil, err
			}
			srv.Close = d.Close
			return srv, nil
		},
	}
}
