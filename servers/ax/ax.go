// Package ax is domo-ax: desktop control through the accessibility tree.
// It reads applications' AT-SPI2 trees over D-Bus, shows them as compact
// text with refs (@e12), acts on elements through their accessible
// actions, and uses X11 (XTEST, GetImage, selections) for keys, pointer
// clicks, screenshots and the clipboard.
package ax

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/domo-agent/domo/servers/ax/atspi"
	"github.com/domo-agent/domo/servers/ax/launch"
	"github.com/domo-agent/domo/servers/ax/x11"
)

// Options configure the desktop connection.
type Options struct {
	// Display is the X display; empty means $DISPLAY.
	Display string
	// Timeout bounds one read of an app's tree unless the call asks for
	// another.
	Timeout time.Duration
	// Apps finds the applications ax_open_app starts.
	Apps launch.Finder
}

// Desktop is the desktop domo-ax operates: its accessibility bus, its X
// display, and the refs it has given out.
type Desktop struct {
	o Options

	// mu serialises tool calls: refs and the target app are shared.
	mu   sync.Mutex
	a11y *atspi.Conn
	x    *x11.Conn
	refs refTable
	// target is the app the latest snapshot, search or action was about:
	// keys, typing and clicks are checked against it.
	target *app
}

// New returns a Desktop that connects on first use.
func New(o Options) *Desktop {
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Second
	}
	return &Desktop{o: o, refs: newRefTable()}
}

// Close ends the connections.
func (d *Desktop) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.a11y != nil {
		d.a11y.Close()
		d.a11y = nil
	}
	if d.x != nil {
		d.x.Close()
		d.x = nil
	}
}

// platform names what this operating system lacks, or is nil on Linux.
func (d *Desktop) platform() error { return platformError() }

// bus returns the accessibility bus, connecting on first use.
func (d *Desktop) bus(ctx context.Context) (*atspi.Conn, error) {
	if err := d.platform(); err != nil {
		return nil, err
	}
	if d.a11y != nil {
		return d.a11y, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := atspi.Connect(cctx)
	if err != nil {
		return nil, err
	}
	d.a11y = c
	return c, nil
}

// display returns the X display, connecting on first use. On Wayland, or
// with no X display, it says why keys, pointer, screenshots and the
// clipboard are unavailable.
func (d *Desktop) display() (*x11.Conn, error) {
	if err := d.platform(); err != nil {
		return nil, err
	}
	if d.x != nil {
		return d.x, nil
	}
	name := d.o.Display
	if name == "" {
		name = os.Getenv("DISPLAY")
	}
	if wayland() && d.o.Display == "" {
		// Even with XWayland's DISPLAY set, input and screenshots would
		// silently miss every Wayland window.
		return nil, errWayland
	}
	if name == "" {
		return nil, errors.New("no X display: DISPLAY is not set; domo-ax sends keys and clicks, takes screenshots and uses the clipboard through X11")
	}
	x, err := x11.Connect(name)
	if err != nil {
		return nil, err
	}
	d.x = x
	return x, nil
}

var errWayland = errors.New("this is a Wayland session: Wayland lets no ordinary program send keys or clicks, read the screen or the clipboard of other apps, so ax_keyboard, ax_type_text, ax_mouse_click, ax_screenshot and the clipboard tools are unsupported here; " +
	"reading apps (ax_get_ui_state, ax_find) and their accessible actions still work. Log in to an X11 session (\"… on Xorg\") for the rest")

// wayland reports whether the session is a Wayland one.
func wayland() bool {
	return os.Getenv("XDG_SESSION_TYPE") == "wayland" || os.Getenv("WAYLAND_DISPLAY") != ""
}
