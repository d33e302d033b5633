package ax

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/ax/atspi"
	"github.com/domo-agent/domo/servers/ax/launch"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type openAppArgs struct {
	Name string   `json:"name" jsonschema:"the app: its name as menus show it (Calculator), its desktop entry id (org.gnome.Calculator.desktop), or a program on the PATH (gedit)"`
	Args []string `json:"args,omitempty" jsonschema:"files or URLs to open with it, each one argument; never interpreted by a shell"`
	Wait *int     `json:"wait_seconds,omitempty" jsonschema:"how long to wait for its window to show on the accessibility bus; 0 returns at once"`
}

func (a *openAppArgs) Validate() error {
	if strings.TrimSpace(a.Name) == "" {
		return errors.New("name is empty: give an app's name, desktop entry id or program")
	}
	if len(a.Args) > 64 {
		return errors.New("at most 64 args")
	}
	return nil
}

func (s *Server) openAppTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_open_app",
		"Start a desktop app by name, desktop entry or program, optionally with files or URLs to open; waits until its window shows and makes it the target app.",
		mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.No, OpenWorld: mcpkit.Yes},
		func(ctx context.Context, _ mcp.CallToolRequest, in openAppArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) { return d.openApp(ctx, in) })
		},
		mcpkit.Title("Open an app"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetInt(sc, "wait_seconds", 0, 60, 10) }))
}

func (d *Desktop) openApp(ctx context.Context, in openAppArgs) (string, error) {
	if err := d.platform(); err != nil {
		return "", err
	}
	a, err := d.o.Apps.Find(in.Name)
	if err != nil {
		return "", err
	}
	argv, err := a.Argv(in.Args)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", a.Name, err)
	}
	// The apps already running, to tell the new one by.
	// (nil when they could not be read: then only the new process counts).
	var before map[string]bool
	bus, busErr := d.bus(ctx)
	if busErr == nil {
		if apps, err := bus.Apps(ctx, appWait); err == nil {
			before = map[string]bool{}
			for _, x := range apps {
				before[x.Bus] = true
			}
		}
	}
	p, err := launch.Start(ctx, argv, os.Environ(), a.WorkDir)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", a.Name, err)
	}
	pid := p.Process.Pid
	started := fmt.Sprintf("Started %s (pid %d: %s)", a.Name, pid, strings.Join(argv, " "))
	wait := 10
	if in.Wait != nil {
		wait = *in.Wait
	}
	if wait <= 0 || busErr != nil {
		if busErr != nil {
			return started + "; its window cannot be watched for: " + busErr.Error(), nil
		}
		return started + ". Take ax_get_ui_state once its window shows.", nil
	}
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	exited, handedOver := p.Exited(), false
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			if err := p.Err(); err != nil {
				return "", fmt.Errorf("%s exited: %v %s", a.Name, err, strings.TrimSpace(p.Stderr()))
			}
			// A launcher that handed over to a running instance, or to
			// the real program: look for a new app below.
			exited, handedOver = nil, true
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		apps, err := bus.Apps(ctx, appWait)
		if err != nil {
			continue
		}
		for _, x := range apps {
			if (x.PID == pid || before != nil && !before[x.Bus]) && len(x.Windows) > 0 {
				d.target = appOf(x)
				return started + ". " + d.greet(x), nil
			}
		}
	}
	if handedOver {
		return started + fmt.Sprintf("; it exited at once without error (a launcher, or it handed over to a copy already running) and no new window showed within %ds. ax_list_apps shows what runs.", wait), nil
	}
	return started + fmt.Sprintf("; no window of it showed on the accessibility bus within %ds (it may be slow, or not accessible). ax_list_apps shows what runs.", wait), nil
}

// greet describes a newly opened app and brings its window forward.
func (d *Desktop) greet(a *atspi.App) string {
	var wins []string
	for _, w := range a.Windows {
		wins = append(wins, fmt.Sprintf("%s %q", w.Role, w.Name))
	}
	return fmt.Sprintf("Its window: %s. It is the target app now: take ax_get_ui_state.", strings.Join(wins, ", ")) + d.raise(a.PID)
}

// raise gives the focus to the first X window of process pid. It returns
// a note when that failed, for the result to carry; without X (Wayland)
// there is nothing to do.
func (d *Desktop) raise(pid int) string {
	x, err := d.display()
	if err != nil {
		return ""
	}
	wins, err := x.Windows()
	if err != nil {
		return ""
	}
	for _, w := range wins {
		if w.PID == pid && w.Visible {
			if err := x.Activate(w.ID); err != nil {
				return fmt.Sprintf(" (Its window did not take the focus: %v.)", err)
			}
			return ""
		}
	}
	return ""
}
