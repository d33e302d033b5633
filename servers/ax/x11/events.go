package x11

import (
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// atoms are the interned names this package uses beyond the predefined
// ones (PRIMARY, STRING, WM_NAME, …).
type atoms struct {
	utf8String, netWMName, netWMPID, wmState             xproto.Atom
	netActiveWindow, netClientList, netSupportingWMCheck xproto.Atom
	clipboard, targets, timestampTarget, text, incr      xproto.Atom
	textPlainUTF8, multiple, wmProtocols, netWMPing      xproto.Atom
	// property is where selections are delivered to us; timestamp is the
	// property we touch to learn the server's time.
	property, timestamp xproto.Atom
}

func (c *Conn) internAtoms() error {
	a := &c.atoms
	want := []struct {
		name string
		atom *xproto.Atom
	}{
		{"UTF8_STRING", &a.utf8String},
		{"_NET_WM_NAME", &a.netWMName},
		{"_NET_WM_PID", &a.netWMPID},
		{"WM_STATE", &a.wmState},
		{"_NET_ACTIVE_WINDOW", &a.netActiveWindow},
		{"_NET_CLIENT_LIST", &a.netClientList},
		{"_NET_SUPPORTING_WM_CHECK", &a.netSupportingWMCheck},
		{"CLIPBOARD", &a.clipboard},
		{"TARGETS", &a.targets},
		{"TIMESTAMP", &a.timestampTarget},
		{"TEXT", &a.text},
		{"INCR", &a.incr},
		{"text/plain;charset=utf-8", &a.textPlainUTF8},
		{"MULTIPLE", &a.multiple},
		{"WM_PROTOCOLS", &a.wmProtocols},
		{"_NET_WM_PING", &a.netWMPing},
		{"DOMO_SELECTION", &a.property},
		{"DOMO_TIMESTAMP", &a.timestamp},
	}
	// Send every request before reading any reply: one round trip.
	cookies := make([]xproto.InternAtomCookie, len(want))
	for i, w := range want {
		cookies[i] = xproto.InternAtom(c.x, false, uint16(len(w.name)), w.name)
	}
	for i, w := range want {
		r, err := cookies[i].Reply()
		if err != nil {
			return c.xerr("intern atom "+w.name, err)
		}
		*w.atom = r.Atom
	}
	return nil
}

// atomName returns an atom's name, or its number when the server does not
// know it.
func (c *Conn) atomName(a xproto.Atom) string {
	r, err := xproto.GetAtomName(c.x, a).Reply()
	if err != nil {
		return fmt.Sprintf("atom %d", a)
	}
	return r.Name
}

// A waiter receives the events its match function accepts, from the time
// it is registered until it is cancelled.
type waiter struct {
	c     *Conn
	match func(xgb.Event) bool
	ch    chan xgb.Event
	done  chan struct{}
	once  sync.Once
}

// expect registers a waiter. Register it before sending the request that
// causes the event, so the event cannot slip past.
func (c *Conn) expect(match func(xgb.Event) bool) *waiter {
	w := &waiter{c: c, match: match, ch: make(chan xgb.Event, 64), done: make(chan struct{})}
	c.waitMu.Lock()
	c.waiters[w] = struct{}{}
	c.waitMu.Unlock()
	return w
}

// cancel stops deliveries to w. It first releases an event loop blocked
// on w, then unregisters it.
func (w *waiter) cancel() {
	w.once.Do(func() {
		close(w.done)
		w.c.waitMu.Lock()
		delete(w.c.waiters, w)
		w.c.waitMu.Unlock()
	})
}

// events is the connection's single reader of X events. It serves
// selection requests itself (they need no replies, so it never blocks on
// the server) and hands everything else to the waiters that match.
func (c *Conn) events() {
	defer close(c.done)
	for {
		ev, xerr := c.x.WaitForEvent()
		if ev == nil && xerr == nil {
			return // closed or lost
		}
		if xerr != nil {
			// Errors of unchecked requests, such as a SendEvent to a
			// requestor that has gone: nothing waits for them.
			continue
		}
		switch e := ev.(type) {
		case xproto.SelectionRequestEvent:
			c.serveSelection(e)
		case xproto.SelectionClearEvent:
			c.sel.lost(e)
		case xproto.PropertyNotifyEvent:
			if e.State == xproto.PropertyDelete {
				c.continueTransfer(e)
			}
		case xproto.MappingNotifyEvent:
			if e.Request == xproto.MappingKeyboard {
				c.keymap.invalidate()
			}
		}
		c.deliver(ev)
	}
}

func (c *Conn) deliver(ev xgb.Event) {
	c.waitMu.Lock()
	defer c.waitMu.Unlock()
	for w := range c.waiters {
		if !w.match(ev) {
			continue
		}
		// Block rather than drop: a waiter reads promptly, and cancel
		// releases us if it stops.
		select {
		case w.ch <- ev:
		case <-w.done:
		}
	}
}
