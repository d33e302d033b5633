package x11

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// MaxClipboard is the most bytes of text ReadClipboard returns and
// WriteClipboard accepts.
const MaxClipboard = 1 << 20

// ErrNoOwner means no application owns the selection: the clipboard is
// empty, or the application that copied has quit (X keeps no copy).
var ErrNoOwner = errors.New("nothing owns the selection: the clipboard is empty, or the application that copied has quit")

// readTimeout bounds ReadClipboard when its context has no deadline.
const readTimeout = 2 * time.Second

// transferTimeout is how long an unfinished INCR transfer to another
// application is kept.
const transferTimeout = 30 * time.Second

// selectionAtom names a selection: "clipboard" (ctrl+c, ctrl+v) or
// "primary" (the text last selected, pasted with the middle button).
func (c *Conn) selectionAtom(name string) (xproto.Atom, error) {
	switch strings.ToLower(name) {
	case "clipboard", "":
		return c.atoms.clipboard, nil
	case "primary":
		return xproto.AtomPrimary, nil
	case "secondary":
		return xproto.AtomSecondary, nil
	}
	return 0, fmt.Errorf("unknown selection %q: use \"clipboard\" or \"primary\"", name)
}

// selections is what this connection owns and the INCR transfers it is
// serving.
type selections struct {
	mu        sync.Mutex
	owned     map[xproto.Atom]ownership
	transfers map[transferKey]*transfer
}

type ownership struct {
	text string
	time xproto.Timestamp
}

type transferKey struct {
	win  xproto.Window
	prop xproto.Atom
}

// transfer is one INCR transfer: the data is sent a chunk at a time, each
// when the requestor deletes the property holding the last.
type transfer struct {
	typ     xproto.Atom
	data    []byte
	sent    int
	started time.Time
}

func (s *selections) init() {
	s.owned = map[xproto.Atom]ownership{}
	s.transfers = map[transferKey]*transfer{}
}

// lost handles SelectionClear: another client owns the selection now.
func (s *selections) lost(e xproto.SelectionClearEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A clear older than our current ownership is about a previous one.
	if o, ok := s.owned[e.Selection]; ok && (e.Time == 0 || e.Time >= o.time) {
		delete(s.owned, e.Selection)
	}
}

// Owns reports whether this connection still owns the selection, that is
// whether what WriteClipboard put there is still what others paste.
func (c *Conn) Owns(selection string) bool {
	sel, err := c.selectionAtom(selection)
	if err != nil {
		return false
	}
	c.sel.mu.Lock()
	_, ok := c.sel.owned[sel]
	c.sel.mu.Unlock()
	return ok
}

// WriteClipboard makes text the content of the selection ("clipboard" or
// "primary"). X keeps no copy: this connection owns the selection and
// serves text to every application that pastes, until another
// application copies or the connection closes. Text larger than one
// request (about 256 KiB) is sent incrementally (INCR); up to
// MaxClipboard bytes are accepted.
func (c *Conn) WriteClipboard(selection, text string) error {
	sel, err := c.selectionAtom(selection)
	if err != nil {
		return err
	}
	if !utf8.ValidString(text) {
		return errors.New("text is not valid UTF-8")
	}
	if len(text) > MaxClipboard {
		return fmt.Errorf("text is %d bytes: the clipboard takes at most %d", len(text), MaxClipboard)
	}
	ts, err := c.timestamp()
	if err != nil {
		return err
	}
	// Own it in our books first: requests may arrive before the reply.
	c.sel.mu.Lock()
	c.sel.owned[sel] = ownership{text: text, time: ts}
	c.sel.mu.Unlock()
	fail := func(err error) error {
		c.sel.mu.Lock()
		if o, ok := c.sel.owned[sel]; ok && o.time == ts {
			delete(c.sel.owned, sel)
		}
		c.sel.mu.Unlock()
		return err
	}
	if err := xproto.SetSelectionOwnerChecked(c.x, c.win, sel, ts).Check(); err != nil {
		return fail(c.xerr("take the selection", err))
	}
	r, err := xproto.GetSelectionOwner(c.x, sel).Reply()
	if err != nil {
		return fail(c.xerr("check the selection's owner", err))
	}
	if r.Owner != c.win {
		return fail(fmt.Errorf("another application (window 0x%x) took the %s selection at the same time; try again", r.Owner, selection))
	}
	return nil
}

// chunk is the most bytes of data sent in one ChangeProperty: xgb does
// not use BIG-REQUESTS, so requests are limited to the setup's maximum
// (at most 256 KiB).
func (c *Conn) chunk() int {
	return min(c.maxRequest, 0xffff*4) - 64
}

// serveSelection answers another client's (or our own) request for a
// selection we own. It runs on the event loop and waits for no reply.
func (c *Conn) serveSelection(e xproto.SelectionRequestEvent) {
	prop := e.Property
	if prop == 0 {
		prop = e.Target // an obsolete requestor (ICCCM 2.2)
	}
	c.sel.mu.Lock()
	o, owned := c.sel.owned[e.Selection]
	c.sel.mu.Unlock()
	if !owned || e.Owner != c.win || (e.Time != 0 && e.Time < o.time) {
		c.notify(e, 0)
		return
	}
	a := &c.atoms
	var (
		typ    xproto.Atom
		format byte = 8
		data   []byte
	)
	switch e.Target {
	case a.targets:
		typ, format = xproto.AtomAtom, 32
		for _, t := range []xproto.Atom{a.targets, a.timestampTarget, a.utf8String, a.textPlainUTF8, xproto.AtomString, a.text} {
			data = append32(data, uint32(t))
		}
	case a.timestampTarget:
		typ, format = xproto.AtomInteger, 32
		data = append32(nil, uint32(o.time))
	case a.utf8String, a.text:
		typ, data = a.utf8String, []byte(o.text)
	case a.textPlainUTF8:
		typ, data = a.textPlainUTF8, []byte(o.text)
	case xproto.AtomString:
		typ, data = xproto.AtomString, toLatin1(o.text)
	default:
		c.notify(e, 0) // MULTIPLE, images, …: refused
		return
	}
	if len(data) > c.chunk() {
		c.startTransfer(e.Requestor, prop, typ, data)
	} else {
		xproto.ChangeProperty(c.x, xproto.PropModeReplace, e.Requestor, prop, typ, format, uint32(len(data)*8/int(format)), data)
	}
	c.notify(e, prop)
}

// notify tells the requestor its request is answered in prop, or refused
// when prop is 0.
func (c *Conn) notify(e xproto.SelectionRequestEvent, prop xproto.Atom) {
	ev := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
	xproto.SendEvent(c.x, false, e.Requestor, xproto.EventMaskNoEvent, string(ev.Bytes()))
}

// startTransfer begins an INCR transfer: the property first holds INCR
// and a lower bound of the size; the data follows in chunks as the
// requestor deletes the property.
func (c *Conn) startTransfer(win xproto.Window, prop, typ xproto.Atom, data []byte) {
	c.sel.mu.Lock()
	for k, t := range c.sel.transfers {
		if time.Since(t.started) > transferTimeout {
			c.endTransfer(k)
		}
	}
	c.sel.transfers[transferKey{win, prop}] = &transfer{typ: typ, data: data, started: time.Now()}
	c.sel.mu.Unlock()
	if win != c.win {
		// Our window always reports property changes; another's must be
		// asked to, for this connection.
		xproto.ChangeWindowAttributes(c.x, win, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange})
	}
	xproto.ChangeProperty(c.x, xproto.PropModeReplace, win, prop, c.atoms.incr, 32, 1, append32(nil, uint32(len(data))))
}

// continueTransfer sends the next chunk of an INCR transfer when the
// requestor has deleted the last; after the data, an empty chunk ends it.
func (c *Conn) continueTransfer(e xproto.PropertyNotifyEvent) {
	k := transferKey{e.Window, e.Atom}
	c.sel.mu.Lock()
	defer c.sel.mu.Unlock()
	t, ok := c.sel.transfers[k]
	if !ok {
		return
	}
	n := min(c.chunk(), len(t.data)-t.sent)
	xproto.ChangeProperty(c.x, xproto.PropModeReplace, e.Window, e.Atom, t.typ, 8, uint32(n), t.data[t.sent:t.sent+n])
	t.sent += n
	if n == 0 {
		c.endTransfer(k)
	}
}

// endTransfer forgets a transfer; called with c.sel.mu held.
func (c *Conn) endTransfer(k transferKey) {
	delete(c.sel.transfers, k)
	if k.win != c.win {
		xproto.ChangeWindowAttributes(c.x, k.win, xproto.CwEventMask, []uint32{xproto.EventMaskNoEvent})
	}
}

// toLatin1 encodes text as ISO 8859-1 (type STRING); characters it lacks
// become '?'.
func toLatin1(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return b
}

// ReadClipboard returns the text of the selection ("clipboard" or
// "primary"), asking its owner for UTF-8 and falling back to Latin-1. It
// returns ErrNoOwner when no application owns the selection, and waits
// for the owner until ctx ends (2 s when ctx has no deadline). Text
// larger than MaxClipboard is refused.
func (c *Conn) ReadClipboard(ctx context.Context, selection string) (string, error) {
	sel, err := c.selectionAtom(selection)
	if err != nil {
		return "", err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readTimeout)
		defer cancel()
	}
	c.read.Lock()
	defer c.read.Unlock()
	r, err := xproto.GetSelectionOwner(c.x, sel).Reply()
	if err != nil {
		return "", c.xerr("find the selection's owner", err)
	}
	if r.Owner == 0 {
		return "", ErrNoOwner
	}
	for _, target := range []xproto.Atom{c.atoms.utf8String, xproto.AtomString} {
		typ, data, err := c.convert(ctx, sel, target, r.Owner)
		if err != nil {
			return "", err
		}
		if typ == 0 {
			continue // refused: try the next
		}
		if typ == xproto.AtomString {
			return latin1(data), nil
		}
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	}
	offers := "nothing it names"
	if typ, data, err := c.convert(ctx, sel, c.atoms.targets, r.Owner); err == nil && typ == xproto.AtomAtom {
		var names []string
		for i := 0; i+4 <= len(data) && len(names) < 20; i += 4 {
			names = append(names, c.atomName(xproto.Atom(xgb.Get32(data[i:]))))
		}
		offers = strings.Join(names, ", ")
	}
	return "", fmt.Errorf("the %s holds no text (its owner offers: %s)", selection, offers)
}

// convert asks the owner of sel for target and returns the type and bytes
// it delivered; typ is 0 when the owner refused.
func (c *Conn) convert(ctx context.Context, sel, target xproto.Atom, owner xproto.Window) (typ xproto.Atom, data []byte, err error) {
	prop := c.atoms.property
	w := c.expect(func(ev xgb.Event) bool {
		switch e := ev.(type) {
		case xproto.SelectionNotifyEvent:
			return e.Requestor == c.win && e.Selection == sel
		case xproto.PropertyNotifyEvent:
			return e.Window == c.win && e.Atom == prop && e.State == xproto.PropertyNewValue
		}
		return false
	})
	defer w.cancel()
	xproto.DeleteProperty(c.x, c.win, prop)
	xproto.ConvertSelection(c.x, c.win, sel, target, prop, xproto.TimeCurrentTime)
	next := func() (xgb.Event, error) {
		select {
		case ev := <-w.ch:
			return ev, nil
		case <-c.done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("the selection's owner (window 0x%x) did not answer in time; it may be busy or hung: %w", owner, ctx.Err())
		}
	}
	for {
		ev, err := next()
		if err != nil {
			return 0, nil, err
		}
		if n, ok := ev.(xproto.SelectionNotifyEvent); ok {
			if n.Property == 0 {
				return 0, nil, nil
			}
			break
		}
	}
	r, err := c.takeProperty()
	if err != nil {
		return 0, nil, err
	}
	if r.Type != c.atoms.incr {
		return r.Type, r.Value, nil
	}
	// INCR: taking the property asked for the first chunk; each chunk
	// arrives as a new value, and an empty one ends the transfer.
	for {
		ev, err := next()
		if err != nil {
			return 0, nil, err
		}
		if _, ok := ev.(xproto.PropertyNotifyEvent); !ok {
			continue
		}
		r, err := c.takeProperty()
		if err != nil {
			return 0, nil, err
		}
		switch {
		case r.Type == 0:
			continue // a notice of a value already taken
		case len(r.Value) == 0:
			return r.Type, data, nil
		case len(data)+len(r.Value) > MaxClipboard:
			return 0, nil, fmt.Errorf("the clipboard text is larger than %d bytes: too large to read", MaxClipboard)
		}
		typ = r.Type
		data = append(data, r.Value...)
	}
}

// takeProperty reads and deletes the property a selection was delivered
// in.
func (c *Conn) takeProperty() (*xproto.GetPropertyReply, error) {
	r, err := xproto.GetProperty(c.x, true, c.win, c.atoms.property, xproto.GetPropertyTypeAny, 0, MaxClipboard/4+1).Reply()
	if err != nil {
		return nil, c.xerr("read the selection", err)
	}
	if r.BytesAfter > 0 || len(r.Value) > MaxClipboard {
		xproto.DeleteProperty(c.x, c.win, c.atoms.property)
		return nil, fmt.Errorf("the clipboard text is larger than %d bytes: too large to read", MaxClipboard)
	}
	return r, nil
}

// append32 appends v as xgb sends 32-bit values: xgb always opens the
// connection in little-endian byte order.
func append32(b []byte, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(b, v)
}
