// Package atspi reads the Linux desktop's accessibility tree over AT-SPI2,
// talking D-Bus directly: there is no maintained Go client. It finds the
// accessibility bus through the session bus, lists the applications, and
// walks an application's tree with many D-Bus calls in flight at once,
// bounded in nodes and time, so a hung application yields a partial tree.
package atspi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The AT-SPI2 names this package uses.
const (
	registry      = "org.a11y.atspi.Registry"
	rootPath      = dbus.ObjectPath("/org/a11y/atspi/accessible/root")
	ifaceAccess   = "org.a11y.atspi.Accessible"
	ifaceProps    = "org.freedesktop.DBus.Properties"
	nullPath      = dbus.ObjectPath("/org/a11y/atspi/null")
	busName       = "org.a11y.Bus"
	busPath       = dbus.ObjectPath("/org/a11y/bus")
	busGetAddress = "org.a11y.Bus.GetAddress"
)

// Ref names one accessible object: the D-Bus name of its application and
// its object path.
type Ref struct {
	Bus  string
	Path dbus.ObjectPath
}

func (r Ref) valid() bool { return r.Bus != "" && r.Path != "" && r.Path != nullPath }

// Conn is a connection to the accessibility bus.
type Conn struct {
	bus *dbus.Conn
}

// Connect finds the accessibility bus through the session bus (which
// starts it on first use) and connects to it.
func Connect(ctx context.Context) (*Conn, error) {
	session, err := dbus.ConnectSessionBus(dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("no D-Bus session bus (is DBUS_SESSION_BUS_ADDRESS set?): %w", err)
	}
	defer session.Close()
	var addr string
	if err := session.Object(busName, busPath).CallWithContext(ctx, busGetAddress, 0).Store(&addr); err != nil {
		return nil, fmt.Errorf("the session bus has no accessibility bus (is at-spi2-core installed?): %w", err)
	}
	// Not WithContext: godbus closes a connection when its context ends,
	// and this one outlives the call that opens it.
	bus, err := dbus.Connect(addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the accessibility bus at %s: %w", addr, err)
	}
	return &Conn{bus: bus}, nil
}

// Close ends the connection.
func (c *Conn) Close() error { return c.bus.Close() }

// Root is the desktop: its children are the applications.
func Root() Ref { return Ref{Bus: registry, Path: rootPath} }

// Children lists an object's children.
func (c *Conn) Children(ctx context.Context, r Ref) ([]Ref, error) {
	var kids []Ref
	if err := c.bus.Object(r.Bus, r.Path).CallWithContext(ctx, ifaceAccess+".GetChildren", 0).Store(&kids); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(kids, func(k Ref) bool { return !k.valid() }), nil
}

// Node is one accessible object as read by a walk.
type Node struct {
	Ref
	Role   string
	Name   string
	States States
	// Value is a text field's text (its first MaxValue characters) or a
	// range's number, for the roles that carry one.
	Value string
	// Bounds is the extents on screen, when the walk asked for them.
	Bounds   Rect
	Children []*Node
	// unread counts the children a walk did not descend to.
	unread int
	// Err says why the node could not be read whole (a hung or vanished
	// application); what was read is kept.
	Err error
}

// Limits bound a walk.
type Limits struct {
	// MaxNodes is the most nodes read; MaxDepth the deepest level (the
	// root is level 0).
	MaxNodes, MaxDepth int
	// InFlight is how many nodes may be read at once.
	InFlight int
	// Bounds reads each node's extents on screen too.
	Bounds bool
}

// Walk reads the tree under root, level by level, reading up to
// Limits.InFlight nodes at once, each with its four calls (role, name,
// states, children) in flight together. When ctx ends or a limit is
// reached it returns what it has read, with truncated set.
func (c *Conn) Walk(ctx context.Context, root Ref, l Limits) (tree *Node, count int, truncated bool) {
	if l.InFlight <= 0 {
		l.InFlight = 32
	}
	sem := make(chan struct{}, l.InFlight)
	tree = &Node{Ref: root}
	level := []*Node{tree}
	count = 1
	for depth := 0; len(level) > 0; depth++ {
		leaf := l.MaxDepth > 0 && depth >= l.MaxDepth
		kids := make([][]Ref, len(level))
		var wg sync.WaitGroup
		for i, n := range level {
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					n.Err = ctx.Err()
					return
				}
				defer func() { <-sem }()
				kids[i] = c.read(ctx, n, !leaf, l.Bounds)
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			return tree, count, true
		}
		var next []*Node
		for i, n := range level {
			if leaf && n.unread > 0 {
				truncated = true
			}
			for _, k := range kids[i] {
				if l.MaxNodes > 0 && count >= l.MaxNodes {
					truncated = true
					break
				}
				child := &Node{Ref: k}
				n.Children = append(n.Children, child)
				next = append(next, child)
				count++
			}
		}
		level = next
	}
	return tree, count, truncated
}

// MaxValue is the most characters of a text field's value read.
const MaxValue = 200

// textRoles carry their value as text, rangeRoles as a number.
var (
	textRoles  = map[string]bool{"text": true, "entry": true, "password text": true}
	rangeRoles = map[string]bool{"spin button": true, "slider": true, "scroll bar": true, "progress bar": true, "level bar": true, "dial": true}
)

// read fills a node's role, name and states (and its value and bounds),
// and lists its children when children is set, with all its calls in
// flight at once.
func (c *Conn) read(ctx context.Context, n *Node, children, bounds bool) []Ref {
	obj := c.bus.Object(n.Bus, n.Path)
	type req struct {
		what, method string
		args         []any
	}
	reqs := []req{
		{"role", ifaceAccess + ".GetRoleName", nil},
		{"name", ifaceProps + ".Get", []any{ifaceAccess, "Name"}},
		{"states", ifaceAccess + ".GetState", nil},
	}
	if children {
		reqs = append(reqs, req{"children", ifaceAccess + ".GetChildren", nil})
	} else {
		// Only how many: a walk cut here says so.
		reqs = append(reqs, req{"childcount", ifaceProps + ".Get", []any{ifaceAccess, "ChildCount"}})
	}
	if bounds {
		reqs = append(reqs, req{"bounds", ifaceComponent + ".GetExtents", []any{coordScreen}})
	}
	send := func(r req) *dbus.Call {
		return obj.GoWithContext(ctx, r.method, 0, make(chan *dbus.Call, 1), r.args...)
	}
	calls := make([]*dbus.Call, len(reqs))
	for i, r := range reqs {
		calls[i] = send(r)
	}
	var errs []error
	var kids []Ref
	for i := 0; i < len(calls); i++ {
		call := calls[i]
		select {
		case <-call.Done:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
			n.Err = errors.Join(errs...)
			return kids
		}
		what := reqs[i].what
		if call.Err != nil {
			// A field without a value interface is no error.
			if what != "value" && what != "bounds" && what != "childcount" {
				errs = append(errs, fmt.Errorf("%s: %w", what, call.Err))
			}
			continue
		}
		var err error
		switch what {
		case "role":
			if err = call.Store(&n.Role); err == nil {
				// The value is asked for as soon as the role says there
				// is one, behind the calls already in flight.
				if textRoles[n.Role] {
					reqs = append(reqs, req{"value", ifaceText + ".GetText", []any{int32(0), int32(MaxValue)}})
					calls = append(calls, send(reqs[len(reqs)-1]))
				} else if rangeRoles[n.Role] {
					reqs = append(reqs, req{"value", ifaceProps + ".Get", []any{ifaceValue, "CurrentValue"}})
					calls = append(calls, send(reqs[len(reqs)-1]))
				}
			}
		case "name":
			var v dbus.Variant
			if err = call.Store(&v); err == nil {
				n.Name, _ = v.Value().(string)
			}
		case "states":
			var bits []uint32
			if err = call.Store(&bits); err == nil {
				n.States = statesOf(bits)
			}
		case "childcount":
			var v dbus.Variant
			if err = call.Store(&v); err == nil {
				if c, ok := v.Value().(int32); ok {
					n.unread = int(c)
				}
			}
		case "bounds":
			var e struct{ X, Y, W, H int32 }
			if err = call.Store(&e); err == nil {
				n.Bounds = Rect{int(e.X), int(e.Y), int(e.W), int(e.H)}
			}
		case "value":
			if len(call.Body) == 1 {
				switch v := call.Body[0].(type) {
				case string:
					n.Value = v
				case dbus.Variant:
					if f, ok := v.Value().(float64); ok {
						n.Value = strconv.FormatFloat(f, 'f', -1, 64)
					}
				}
			}
		case "children":
			if err = call.Store(&kids); err == nil {
				kids = slices.DeleteFunc(kids, func(k Ref) bool { return !k.valid() })
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	n.Err = errors.Join(errs...)
	return kids
}
