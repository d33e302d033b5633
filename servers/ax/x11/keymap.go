package x11

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// keysym is an X keysym: the symbol a key produces.
type keysym = uint32

const (
	symReturn keysym = 0xff0d
	symTab    keysym = 0xff09
	symShift  keysym = 0xffe1
)

// runeKeysym is the keysym that types r: Latin-1 characters are their own
// keysyms, every other character is 0x01000000 plus its code point.
func runeKeysym(r rune) keysym {
	if (r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xff) {
		return keysym(r)
	}
	return 0x01000000 | keysym(r)
}

// keymap caches the server's keyboard mapping (keycode → keysyms). The
// event loop marks it stale on MappingNotify; it is used under Conn.input.
type keymap struct {
	stale atomic.Bool
	valid bool
	// code maps a keysym to the key that types it; shift is set when the
	// keysym is in the key's second (shifted) column.
	code  map[keysym]keyPos
	spare []xproto.Keycode // keys with no keysyms at all
}

type keyPos struct {
	code  xproto.Keycode
	shift bool
}

func (k *keymap) invalidate() { k.stale.Store(true) }

// load fetches the mapping when it is missing or stale.
func (c *Conn) loadKeymap(force bool) error {
	k := &c.keymap
	if k.valid && !force && !k.stale.Load() {
		return nil
	}
	k.stale.Store(false) // before the fetch: a change during it marks it again
	lo, hi := c.setup.MinKeycode, c.setup.MaxKeycode
	r, err := xproto.GetKeyboardMapping(c.x, lo, byte(hi-lo+1)).Reply()
	if err != nil {
		return c.xerr("read the keyboard mapping", err)
	}
	per := int(r.KeysymsPerKeycode)
	k.code = map[keysym]keyPos{}
	k.spare = k.spare[:0]
	if per == 0 {
		k.valid = true
		return nil
	}
	// Only the first two columns (group 1, plain and shifted) are used:
	// further columns need a group switch or AltGr.
	for col := 0; col < min(per, 2); col++ {
		for i := 0; i+col < len(r.Keysyms); i += per {
			sym := keysym(r.Keysyms[i+col])
			if _, seen := k.code[sym]; sym != 0 && !seen {
				k.code[sym] = keyPos{code: lo + xproto.Keycode(i/per), shift: col == 1}
			}
		}
	}
	for i := 0; i+per <= len(r.Keysyms); i += per {
		if !slices.ContainsFunc(r.Keysyms[i:i+per], func(s xproto.Keysym) bool { return s != 0 }) {
			k.spare = append(k.spare, lo+xproto.Keycode(i/per))
		}
	}
	k.valid = true
	return nil
}

// Temporary key bindings. A keysym missing from the keyboard mapping is
// bound to a spare keycode (one with no keysyms), as xdotool does. The
// server applies a binding at once, so the key can be pressed right
// after; but a GTK app translates a key event with the mapping it fetches
// when it handles the event (after a MappingNotify), not the one in force
// when the event was sent. Undoing or changing a binding before the app
// has handled the key makes it see no symbol, or another one. So before
// a spare key is rebound, and before bindings are undone at the end of a
// call, the focused app is pinged (_NET_WM_PING): its answer comes after
// it has translated every earlier event.

// pingTimeout bounds the wait for an app to answer a ping. An app that
// does not answer in time is busy or hung; its bindings are undone later
// (restoreAfter), to give it a chance to catch up.
const (
	pingTimeout  = time.Second
	restoreAfter = 2 * time.Second
	// settleDelay is the wait instead of a ping for an app that does not
	// support _NET_WM_PING.
	settleDelay = 50 * time.Millisecond
)

// bindings are the temporary key bindings in force; used under Conn.input.
type bindings struct {
	code   map[keysym]xproto.Keycode
	order  []xproto.Keycode // least recently used first
	timer  *time.Timer      // undoes bindings an app was too busy to confirm
	serial uint32           // of the last ping
}

func (b *bindings) has(code xproto.Keycode) bool { return slices.Contains(b.order, code) }

// key returns the key that types sym, binding a spare key when none does.
// Call with c.input held.
func (c *Conn) key(sym keysym) (keyPos, error) {
	b := &c.bound
	if code, ok := b.code[sym]; ok {
		b.order = append(slices.DeleteFunc(b.order, func(k xproto.Keycode) bool { return k == code }), code)
		return keyPos{code: code}, nil
	}
	if err := c.loadKeymap(false); err != nil {
		return keyPos{}, err
	}
	if p, ok := c.keymap.code[sym]; ok && !b.has(p.code) {
		return p, nil
	}
	// Perhaps the mapping changed and no MappingNotify has arrived yet.
	if err := c.loadKeymap(true); err != nil {
		return keyPos{}, err
	}
	if p, ok := c.keymap.code[sym]; ok && !b.has(p.code) {
		return p, nil
	}
	return c.bind(sym)
}

// bind maps sym to a spare keycode, taking the least recently used bound
// one when every spare key is taken. Call with c.input held.
func (c *Conn) bind(sym keysym) (keyPos, error) {
	b := &c.bound
	if b.code == nil {
		b.code = map[keysym]xproto.Keycode{}
	}
	// The keymap lists as spare only keys no one has bound, us included.
	var code xproto.Keycode
	for _, s := range c.keymap.spare {
		if !b.has(s) {
			code = s
			break
		}
	}
	if code == 0 {
		if len(b.order) == 0 {
			return keyPos{}, fmt.Errorf("cannot type keysym 0x%x: it is not on the keyboard, and the keyboard mapping has no spare key to put it on", sym)
		}
		code = b.order[0]
		b.order = b.order[1:]
		maps.DeleteFunc(b.code, func(_ keysym, k xproto.Keycode) bool { return k == code })
		c.catchUp()
	}
	err := xproto.ChangeKeyboardMappingChecked(c.x, 1, code, 2, []xproto.Keysym{xproto.Keysym(sym), xproto.Keysym(sym)}).Check()
	c.keymap.invalidate()
	if err != nil {
		return keyPos{}, c.xerr(fmt.Sprintf("bind keysym 0x%x to spare key %d", sym, code), err)
	}
	b.code[sym] = code
	b.order = append(b.order, code)
	return keyPos{code: code}, nil
}

// finish ends a call that sent key events: it waits for the server to
// process them, then for the focused app to handle them, and undoes the
// temporary bindings. Call with c.input held.
func (c *Conn) finish() error {
	err := c.sync()
	if len(c.bound.order) == 0 || err != nil {
		return err
	}
	if !c.catchUp() {
		// Busy, hung, or deaf to pings: undo the bindings later, when
		// it has had time to handle the keys.
		if c.bound.timer == nil {
			c.bound.timer = time.AfterFunc(restoreAfter, c.restoreLater)
		} else {
			c.bound.timer.Reset(restoreAfter)
		}
		return nil
	}
	return c.restore()
}

// restoreLater undoes the bindings an app did not confirm in time.
func (c *Conn) restoreLater() {
	c.input.Lock()
	defer c.input.Unlock()
	if !c.closed() && len(c.bound.order) > 0 {
		c.catchUp()
		c.restore()
	}
}

// restore undoes every temporary binding. Call with c.input held.
func (c *Conn) restore() error {
	if c.bound.timer != nil {
		c.bound.timer.Stop()
	}
	var err error
	for _, code := range c.bound.order {
		e := xproto.ChangeKeyboardMappingChecked(c.x, 1, code, 2, []xproto.Keysym{0, 0}).Check()
		err = errors.Join(err, c.xerr(fmt.Sprintf("restore spare key %d", code), e))
	}
	if len(c.bound.order) > 0 {
		c.keymap.invalidate()
	}
	c.bound.order = nil
	clear(c.bound.code)
	return err
}

// closeKeys undoes the temporary bindings before the connection closes.
func (c *Conn) closeKeys() {
	c.input.Lock()
	defer c.input.Unlock()
	if len(c.bound.order) > 0 && !c.closed() {
		c.restore()
		c.sync()
	}
}

// catchUp waits until the app with the keyboard focus has handled every
// event sent to it so far, by pinging it (_NET_WM_PING) and waiting for
// its answer, at most pingTimeout. An app that does not support pings
// gets settleDelay instead. It reports whether the app answered.
func (c *Conn) catchUp() bool {
	id, err := c.activeID()
	ok := err == nil && id != 0
	if ok {
		protos, err := c.atomList(id, c.atoms.wmProtocols)
		ok = err == nil && slices.Contains(protos, c.atoms.netWMPing)
	}
	if !ok {
		time.Sleep(settleDelay)
		return false
	}
	c.bound.serial++
	serial := c.bound.serial
	w := c.expect(func(ev xgb.Event) bool {
		m, ok := ev.(xproto.ClientMessageEvent)
		return ok && m.Type == c.atoms.wmProtocols && m.Format == 32 && m.Window == c.root &&
			len(m.Data.Data32) >= 4 && m.Data.Data32[0] == uint32(c.atoms.netWMPing) && m.Data.Data32[3] == serial
	})
	defer w.cancel()
	// The app sends the message back to the root, where we listen for
	// SubstructureNotify; data[3] is ours, to know our answer.
	ping := xproto.ClientMessageEvent{
		Format: 32,
		Window: id,
		Type:   c.atoms.wmProtocols,
		Data:   xproto.ClientMessageDataUnionData32New([]uint32{uint32(c.atoms.netWMPing), 0, uint32(id), serial, 0}),
	}
	xproto.SendEvent(c.x, false, id, xproto.EventMaskNoEvent, string(ping.Bytes()))
	t := time.NewTimer(pingTimeout)
	defer t.Stop()
	select {
	case <-w.ch:
		return true
	case <-t.C:
	case <-c.done:
	}
	return false
}
