// Package x11 drives an X11 desktop for domo-ax: it lists and focuses
// top-level windows, sends keys and pointer clicks through the XTEST
// extension, takes screenshots of the root window and reads and writes
// the clipboard. It talks the X protocol directly (github.com/jezek/xgb,
// pure Go), so it needs no C library and builds everywhere; it works only
// where an X server is reachable.
//
// It must not decide what a model may do: policy, confirmation and the MCP
// surface live in the server that uses it.
package x11

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

func init() {
	// xgb logs protocol trouble to stderr by default, which would corrupt
	// an MCP server's stdio. Every failure reaches us as an error anyway.
	xgb.Logger = log.New(io.Discard, "", 0)
}

// Conn is one connection to an X server. It is safe for concurrent use:
// key and pointer sequences are serialised so that two callers' keys never
// interleave.
type Conn struct {
	x       *xgb.Conn
	display string
	setup   *xproto.SetupInfo
	screen  *xproto.ScreenInfo
	root    xproto.Window
	// win is a private unmapped window: the requestor and owner in
	// selection transfers, and where server timestamps come from.
	win   xproto.Window
	atoms atoms
	// maxRequest is the largest request in bytes (xgb does not use
	// BIG-REQUESTS).
	maxRequest int

	// input serialises XTEST sequences and keyboard-mapping changes.
	input  sync.Mutex
	keymap keymap
	bound  bindings

	// read serialises clipboard reads: they share one property on win.
	read sync.Mutex
	// sel is the selections this connection owns and its INCR transfers.
	sel selections

	waitMu  sync.Mutex
	waiters map[*waiter]struct{}

	closeOnce sync.Once
	// done is closed when the event loop ends: the connection is closed
	// or lost.
	done chan struct{}
}

// ErrClosed is returned once the connection is closed or the X server has
// gone away.
var ErrClosed = errors.New("the connection to the X server is closed")

// Connect opens a connection to the X server named by display (":1",
// "host:0.0"); "" means $DISPLAY. The server must offer the XTEST
// extension, which fakes keyboard and pointer input.
func Connect(display string) (*Conn, error) {
	name := display
	if name == "" {
		name = os.Getenv("DISPLAY")
		if name == "" {
			return nil, errors.New("DISPLAY is not set: there is no X server to use (set DISPLAY, e.g. :0, or start Xvfb)")
		}
	}
	x, err := dial(name)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the X server on display %q (is an X server running there, and may this user use it?): %w", name, err)
	}
	c := &Conn{
		x:       x,
		display: name,
		waiters: map[*waiter]struct{}{},
		done:    make(chan struct{}),
	}
	if err := c.init(); err != nil {
		x.Close()
		return nil, fmt.Errorf("display %q: %w", name, err)
	}
	go c.events()
	return c, nil
}

// dialTimeout bounds connecting: xgb dials with no timeout, and a remote
// display that drops packets would hang for minutes.
const dialTimeout = 10 * time.Second

func dial(display string) (*xgb.Conn, error) {
	type result struct {
		x   *xgb.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		x, err := xgb.NewConnDisplay(display)
		ch <- result{x, err}
	}()
	t := time.NewTimer(dialTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.x, r.err
	case <-t.C:
		go func() {
			// Close a connection that succeeds too late.
			if r := <-ch; r.x != nil {
				r.x.Close()
			}
		}()
		return nil, fmt.Errorf("no answer within %v", dialTimeout)
	}
}

func (c *Conn) init() error {
	c.setup = xproto.Setup(c.x)
	if c.setup == nil || len(c.setup.Roots) == 0 {
		return errors.New("the X server sent no screens")
	}
	if n := c.x.DefaultScreen; n < 0 || n >= len(c.setup.Roots) {
		return fmt.Errorf("the X server has no screen %d (it has %d)", n, len(c.setup.Roots))
	}
	c.screen = c.setup.DefaultScreen(c.x)
	c.root = c.screen.Root
	c.maxRequest = int(c.setup.MaximumRequestLength) * 4
	if err := xtest.Init(c.x); err != nil {
		return fmt.Errorf("the X server lacks the XTEST extension, needed to send keys and clicks: %w", err)
	}
	if _, err := xtest.GetVersion(c.x, 2, 2).Reply(); err != nil {
		return fmt.Errorf("the XTEST extension does not answer: %w", err)
	}
	if err := c.internAtoms(); err != nil {
		return err
	}
	win, err := xproto.NewWindowId(c.x)
	if err != nil {
		return fmt.Errorf("allocate a window id: %w", err)
	}
	// An InputOnly window is enough to hold properties and own selections;
	// it is never mapped, so no one sees it.
	err = xproto.CreateWindowChecked(c.x, 0, win, c.root, -10, -10, 1, 1, 0,
		xproto.WindowClassInputOnly, xproto.WindowClassCopyFromParent,
		xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange}).Check()
	if err != nil {
		return fmt.Errorf("create the private window: %w", err)
	}
	c.win = win
	// Apps answer pings (see catchUp) with a message to the root that
	// reaches those listening for SubstructureNotify there.
	err = xproto.ChangeWindowAttributesChecked(c.x, c.root, xproto.CwEventMask,
		[]uint32{xproto.EventMaskSubstructureNotify}).Check()
	if err != nil {
		return fmt.Errorf("listen to the root window: %w", err)
	}
	c.sel.init()
	return nil
}

// Close undoes any temporary key bindings and ends the connection.
// Selections this connection owns are lost: other applications can no
// longer paste what WriteClipboard put there.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.closeKeys()
		c.x.Close()
	})
	<-c.done
	return nil
}

// Display is the display this connection uses, such as ":1".
func (c *Conn) Display() string { return c.display }

// ScreenSize is the size of the default screen in pixels.
func (c *Conn) ScreenSize() (w, h int) {
	return int(c.screen.WidthInPixels), int(c.screen.HeightInPixels)
}

// xerr turns an xgb failure into an error that says what was being done;
// a closed connection becomes ErrClosed.
func (c *Conn) xerr(what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) || c.closed() {
		return fmt.Errorf("%s: %w", what, ErrClosed)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (c *Conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// sync waits until the server has processed every request sent so far.
func (c *Conn) sync() error {
	_, err := xproto.GetInputFocus(c.x).Reply()
	return c.xerr("wait for the X server", err)
}

// timestamp returns the server's current time, as ICCCM asks owners of
// selections to use: it appends nothing to a property of our window and
// reads the time of the PropertyNotify that causes.
func (c *Conn) timestamp() (xproto.Timestamp, error) {
	w := c.expect(func(ev xgb.Event) bool {
		p, ok := ev.(xproto.PropertyNotifyEvent)
		return ok && p.Window == c.win && p.Atom == c.atoms.timestamp
	})
	defer w.cancel()
	err := xproto.ChangePropertyChecked(c.x, xproto.PropModeAppend, c.win, c.atoms.timestamp,
		xproto.AtomString, 8, 0, nil).Check()
	if err != nil {
		return 0, c.xerr("get the server time", err)
	}
	select {
	case ev := <-w.ch:
		return ev.(xproto.PropertyNotifyEvent).Time, nil
	case <-c.done:
		return 0, ErrClosed
	case <-time.After(2 * time.Second):
		return 0, errors.New("the X server did not report its time within 2s")
	}
}
