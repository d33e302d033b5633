package x11

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Window is a top-level client window: the window an application made,
// not the frame a window manager may have put around it.
type Window struct {
	ID uint32
	// PID is the process that owns the window (_NET_WM_PID), 0 when the
	// application does not say.
	PID int
	// Title is _NET_WM_NAME, or WM_NAME when that is missing.
	Title string
	// X and Y are the window's top-left corner in root (screen)
	// coordinates; W and H its size.
	X, Y, W, H int
	// Visible is true when the window is viewable: mapped, as are its
	// ancestors. A window manager keeps minimised windows unmapped. A
	// window covered by others is still visible in this sense.
	Visible bool
}

func (w Window) String() string {
	return fmt.Sprintf("window 0x%x %q (pid %d)", w.ID, w.Title, w.PID)
}

// ErrNoWindow means a window id names no window (it may have closed).
var ErrNoWindow = errors.New("no such window")

// ActiveWindow returns the top-level window that has the keyboard focus.
// With a window manager that is _NET_ACTIVE_WINDOW; without one it is the
// X input focus, and when the focus follows the pointer (PointerRoot) the
// window under the pointer. ok is false when nothing has the focus.
func (c *Conn) ActiveWindow() (w Window, ok bool, err error) {
	id, err := c.activeID()
	if err != nil || id == 0 {
		return Window{}, false, err
	}
	infos, err := c.windowInfos([]xproto.Window{id})
	if err != nil {
		if errors.Is(err, ErrNoWindow) {
			return Window{}, false, nil // it closed as we looked
		}
		return Window{}, false, err
	}
	return infos[0], true, nil
}

// activeID is ActiveWindow without the details: 0 when nothing has the
// focus.
func (c *Conn) activeID() (xproto.Window, error) {
	if wm, err := c.wmRunning(); err != nil {
		return 0, err
	} else if wm {
		ids, err := c.windowList(c.root, c.atoms.netActiveWindow)
		if err != nil {
			return 0, err
		}
		if len(ids) > 0 && ids[0] != 0 {
			id, err := c.clientOf(ids[0])
			if !errors.Is(err, ErrNoWindow) {
				return id, err
			}
			// It has just closed: the X focus says what has it now.
		}
	}
	f, err := xproto.GetInputFocus(c.x).Reply()
	if err != nil {
		return 0, c.xerr("get the input focus", err)
	}
	focus := f.Focus
	switch focus {
	case xproto.InputFocusNone:
		return 0, nil
	case xproto.InputFocusPointerRoot, c.root:
		// The focus follows the pointer: the window under it has it.
		p, err := xproto.QueryPointer(c.x, c.root).Reply()
		if err != nil {
			return 0, c.xerr("query the pointer", err)
		}
		if p.Child == 0 {
			return 0, nil
		}
		focus = p.Child
	}
	return c.clientOf(focus)
}

// wmRunning reports whether an EWMH window manager is running: the root's
// _NET_SUPPORTING_WM_CHECK names a window that names itself, so a stale
// property left by a dead window manager does not count.
func (c *Conn) wmRunning() (bool, error) {
	ids, err := c.windowList(c.root, c.atoms.netSupportingWMCheck)
	if err != nil || len(ids) == 0 || ids[0] == 0 {
		return false, err
	}
	self, err := c.windowList(ids[0], c.atoms.netSupportingWMCheck)
	if errors.Is(err, ErrNoWindow) {
		return false, nil
	}
	return err == nil && len(self) > 0 && self[0] == ids[0], err
}

// windowList reads a property holding window ids (type WINDOW, format 32).
func (c *Conn) windowList(w xproto.Window, prop xproto.Atom) ([]xproto.Window, error) {
	r, err := xproto.GetProperty(c.x, false, w, prop, xproto.AtomWindow, 0, 1<<16).Reply()
	if err != nil {
		return nil, c.windowErr(w, "read "+c.atomName(prop), err)
	}
	if r.Format != 32 {
		return nil, nil
	}
	ids := make([]xproto.Window, 0, r.ValueLen)
	for i := 0; i+4 <= len(r.Value) && len(ids) < int(r.ValueLen); i += 4 {
		ids = append(ids, xproto.Window(xgb.Get32(r.Value[i:])))
	}
	return ids, nil
}

// atomList reads a property holding atoms (type ATOM, format 32).
func (c *Conn) atomList(w xproto.Window, prop xproto.Atom) ([]xproto.Atom, error) {
	r, err := xproto.GetProperty(c.x, false, w, prop, xproto.AtomAtom, 0, 1<<10).Reply()
	if err != nil {
		return nil, c.windowErr(w, "read "+c.atomName(prop), err)
	}
	if r.Format != 32 {
		return nil, nil
	}
	var atoms []xproto.Atom
	for i := 0; i+4 <= len(r.Value); i += 4 {
		atoms = append(atoms, xproto.Atom(xgb.Get32(r.Value[i:])))
	}
	return atoms, nil
}

// windowErr wraps a failed request about window w; a BadWindow (or
// BadDrawable) error becomes ErrNoWindow.
func (c *Conn) windowErr(w xproto.Window, what string, err error) error {
	var bw xproto.WindowError
	var bd xproto.DrawableError
	if errors.As(err, &bw) || errors.As(err, &bd) {
		return fmt.Errorf("window 0x%x: %w (it may have closed; list the windows again)", w, ErrNoWindow)
	}
	return c.xerr(what, err)
}

// isClient reports whether w is an application's top-level window: the
// window manager gave it WM_STATE, or the application set _NET_WM_PID.
func (c *Conn) isClient(w xproto.Window) (bool, error) {
	a := xproto.GetProperty(c.x, false, w, c.atoms.wmState, xproto.GetPropertyTypeAny, 0, 0)
	b := xproto.GetProperty(c.x, false, w, c.atoms.netWMPID, xproto.GetPropertyTypeAny, 0, 0)
	ra, errA := a.Reply()
	rb, errB := b.Reply()
	if err := errors.Join(errA, errB); err != nil {
		return false, c.windowErr(w, "read the window's properties", err)
	}
	return ra.Type != 0 || rb.Type != 0, nil
}

// clientOf returns the top-level client window that contains w: w itself
// or its nearest ancestor that is a client, or, when w is (inside) a
// window manager's frame, the client in that frame. A top-level window
// with no client inside is returned as it is.
func (c *Conn) clientOf(w xproto.Window) (xproto.Window, error) {
	cur := w
	for range 64 { // X trees are shallow; the bound only guards a loop
		ok, err := c.isClient(cur)
		if err != nil {
			return 0, err
		}
		if ok {
			return cur, nil
		}
		t, err := xproto.QueryTree(c.x, cur).Reply()
		if err != nil {
			return 0, c.windowErr(cur, "query the window tree", err)
		}
		if t.Parent == 0 || cur == c.root {
			return 0, nil // w was the root
		}
		if t.Parent == c.root {
			break
		}
		cur = t.Parent
	}
	// cur is a child of the root with no client mark: a frame, or a window
	// of a client that sets neither property.
	if found, err := c.findClient(cur, 3); err != nil || found != 0 {
		return found, err
	}
	return cur, nil
}

// findClient searches below w, breadth first and at most depth levels
// down, for a client window; 0 when there is none.
func (c *Conn) findClient(w xproto.Window, depth int) (xproto.Window, error) {
	level := []xproto.Window{w}
	for ; depth > 0 && len(level) > 0; depth-- {
		var next []xproto.Window
		for _, p := range level {
			t, err := xproto.QueryTree(c.x, p).Reply()
			if err != nil {
				continue // it went away
			}
			for _, k := range t.Children {
				ok, err := c.isClient(k)
				if err == nil && ok {
					return k, nil
				}
			}
			next = append(next, t.Children...)
		}
		level = next
	}
	return 0, nil
}

// Windows lists the top-level client windows: the window manager's
// _NET_CLIENT_LIST when one runs (which includes windows it keeps
// unmapped: see Window.Visible), else the mapped children of the root.
func (c *Conn) Windows() ([]Window, error) {
	var ids []xproto.Window
	wm, err := c.wmRunning()
	if err != nil {
		return nil, err
	}
	if wm {
		if ids, err = c.windowList(c.root, c.atoms.netClientList); err != nil {
			return nil, err
		}
	}
	if !wm || ids == nil {
		if ids, err = c.mappedTopLevels(); err != nil {
			return nil, err
		}
	}
	return c.windowInfos(ids)
}

// mappedTopLevels is the clients of the root's mapped, not
// override-redirect (menus, tooltips) children.
func (c *Conn) mappedTopLevels() ([]xproto.Window, error) {
	t, err := xproto.QueryTree(c.x, c.root).Reply()
	if err != nil {
		return nil, c.xerr("list the root window's children", err)
	}
	attrs := make([]xproto.GetWindowAttributesCookie, len(t.Children))
	for i, k := range t.Children {
		attrs[i] = xproto.GetWindowAttributes(c.x, k)
	}
	var ids []xproto.Window
	for i, k := range t.Children {
		a, err := attrs[i].Reply()
		if err != nil || a.MapState != xproto.MapStateViewable || a.OverrideRedirect || k == c.win {
			continue
		}
		id, err := c.clientOf(k)
		if err != nil || id == 0 {
			continue
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// windowInfos reads the details of windows, with every request in flight
// at once. Windows that have closed are left out, unless there is only
// one: then the result is ErrNoWindow.
func (c *Conn) windowInfos(ids []xproto.Window) ([]Window, error) {
	type cookies struct {
		pid, netName, name xproto.GetPropertyCookie
		geom               xproto.GetGeometryCookie
		pos                xproto.TranslateCoordinatesCookie
		attr               xproto.GetWindowAttributesCookie
	}
	cs := make([]cookies, len(ids))
	for i, id := range ids {
		cs[i] = cookies{
			pid:     xproto.GetProperty(c.x, false, id, c.atoms.netWMPID, xproto.AtomCardinal, 0, 1),
			netName: xproto.GetProperty(c.x, false, id, c.atoms.netWMName, c.atoms.utf8String, 0, 1024),
			name:    xproto.GetProperty(c.x, false, id, xproto.AtomWmName, xproto.GetPropertyTypeAny, 0, 1024),
			geom:    xproto.GetGeometry(c.x, xproto.Drawable(id)),
			pos:     xproto.TranslateCoordinates(c.x, id, c.root, 0, 0),
			attr:    xproto.GetWindowAttributes(c.x, id),
		}
	}
	out := make([]Window, 0, len(ids))
	var firstErr error
	for i, id := range ids {
		w := Window{ID: uint32(id)}
		pid, err1 := cs[i].pid.Reply()
		netName, err2 := cs[i].netName.Reply()
		name, err3 := cs[i].name.Reply()
		geom, err4 := cs[i].geom.Reply()
		pos, err5 := cs[i].pos.Reply()
		attr, err6 := cs[i].attr.Reply()
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			if firstErr == nil {
				firstErr = c.windowErr(id, "read the window's details", err)
			}
			continue
		}
		if pid.Format == 32 && len(pid.Value) >= 4 {
			w.PID = int(xgb.Get32(pid.Value))
		}
		switch {
		case netName.Type == c.atoms.utf8String && len(netName.Value) > 0:
			w.Title = strings.ToValidUTF8(string(netName.Value), "\uFFFD")
		case name.Type == xproto.AtomString:
			w.Title = latin1(name.Value)
		default:
			w.Title = strings.ToValidUTF8(string(name.Value), "\uFFFD")
		}
		w.X, w.Y = int(pos.DstX), int(pos.DstY)
		w.W, w.H = int(geom.Width), int(geom.Height)
		w.Visible = attr.MapState == xproto.MapStateViewable
		out = append(out, w)
	}
	if len(ids) == 1 && len(out) == 0 {
		return nil, firstErr
	}
	return out, nil
}

// latin1 decodes ISO 8859-1, the encoding of type STRING.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// activateTimeout bounds how long Activate waits for the focus to move.
const activateTimeout = 2 * time.Second

// Activate gives window w the keyboard focus and raises it. With a window
// manager it asks the manager (_NET_ACTIVE_WINDOW, as a pager does);
// without one it maps and raises w and sets the input focus. It returns
// once ActiveWindow reports w, or an error after about two seconds.
func (c *Conn) Activate(w uint32) error {
	id := xproto.Window(w)
	if id == c.root || id == 0 {
		return fmt.Errorf("window 0x%x is not an application window: give the id of one that Windows lists", w)
	}
	if _, err := xproto.GetWindowAttributes(c.x, id).Reply(); err != nil {
		return c.windowErr(id, "read the window", err)
	}
	wm, err := c.wmRunning()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(activateTimeout)
	var lastAsk time.Time
	var setErr error
	for {
		// Ask again now and then: a window manager may ignore a request
		// that arrives while the window is still being mapped, and a window
		// that was just mapped cannot take the focus until it is viewable.
		if again := time.Since(lastAsk) > 500*time.Millisecond; again || setErr != nil {
			lastAsk = time.Now()
			if wm && again {
				if err := c.askWM(id); err != nil {
					return err
				}
			} else if !wm {
				if setErr = c.setFocus(id); errors.Is(setErr, ErrNoWindow) || errors.Is(setErr, ErrClosed) {
					return setErr
				}
			}
		}
		active, err := c.activeID()
		if err != nil {
			return err
		}
		if active == id {
			return nil
		}
		if time.Now().After(deadline) {
			why := "the window manager did not give it the focus"
			if !wm {
				why = "the X server did not give it the focus"
				if setErr != nil {
					why += ": " + setErr.Error()
				}
			}
			now := "nothing has the focus"
			if infos, err := c.windowInfos([]xproto.Window{active}); active != 0 && err == nil {
				now = "the active window is " + infos[0].String()
			}
			return fmt.Errorf("window 0x%x did not become active within %v (%s); %s", w, activateTimeout, why, now)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// askWM sends the EWMH request to activate id, as a pager (source 2),
// whose requests window managers do not treat as focus stealing.
func (c *Conn) askWM(id xproto.Window) error {
	ts, err := c.timestamp()
	if err != nil {
		return err
	}
	current, _ := c.activeID()
	ev := xproto.ClientMessageEvent{
		Format: 32,
		Window: id,
		Type:   c.atoms.netActiveWindow,
		Data:   xproto.ClientMessageDataUnionData32New([]uint32{2, uint32(ts), uint32(current), 0, 0}),
	}
	err = xproto.SendEventChecked(c.x, false, c.root,
		xproto.EventMaskSubstructureRedirect|xproto.EventMaskSubstructureNotify, string(ev.Bytes())).Check()
	return c.xerr("ask the window manager to activate the window", err)
}

// setFocus maps and raises id and gives it the input focus, as a window
// manager would.
func (c *Conn) setFocus(id xproto.Window) error {
	xproto.MapWindow(c.x, id)
	xproto.ConfigureWindow(c.x, id, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove})
	err := xproto.SetInputFocusChecked(c.x, xproto.InputFocusParent, id, xproto.TimeCurrentTime).Check()
	if err != nil {
		var match xproto.MatchError
		if errors.As(err, &match) {
			return errors.New("it is not viewable (unmapped, or inside an unmapped window)")
		}
		return c.windowErr(id, "set the input focus", err)
	}
	return nil
}
