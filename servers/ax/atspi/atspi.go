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
	bus, err := dbus.Connect(addr, dbus.WithContext(ctx))
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
	var kids []struct {
		Bus  string
		Path dbus.ObjectPath
	}
	if err := c.bus.Object(r.Bus, r.Path).CallWithContext(ctx, ifaceAccess+".GetChildren", 0).Store(&kids); err != nil {
		return nil, err
	}
	out := make([]Ref, 0, len(kids))
	for _, k := range kids {
		if ref := (Ref{Bus: k.Bus, Path: k.Path}); ref.valid() {
			out = append(out, ref)
		}
	}
	return out, nil
}

// Node is one accessible object as read by a walk.
type Node struct {
	Ref
	Role     string
	Name     string
	States   States
	Children []*Node
	// Err says why the node could not be read whole (a hung or vanished
	// application); what was read is kept.
	Err error
}

// Limits bound a walk.
type Limits struct {
	// MaxNodes is the most nodes read; MaxDepth the deepest level (the
	// root is level 0).
	MaxNodes, MaxDepth int
	// InFlight is how many D-Bus calls may wait at once.
	InFlight int
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
				kids[i] = c.read(ctx, n, !leaf)
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			return tree, count, true
		}
		var next []*Node
		for i, n := range level {
			if leaf && len(kids[i]) > 0 {
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

// read fills a node's role, name and states, and lists its children when
// children is set, with all its calls in flight at once.
func (c *Conn) read(ctx context.Context, n *Node, children bool) []Ref {
	obj := c.bus.Object(n.Bus, n.Path)
	reqs := []struct {
		what, method string
		args         []any
	}{
		{"role", ifaceAccess + ".GetRoleName", nil},
		{"name", ifaceProps + ".Get", []any{ifaceAccess, "Name"}},
		{"states", ifaceAccess + ".GetState", nil},
		{"children", ifaceAccess + ".GetChildren", nil},
	}
	if !children {
		reqs = reqs[:3]
	}
	calls := make([]*dbus.Call, len(reqs))
	for i, r := range reqs {
		calls[i] = obj.GoWithContext(ctx, r.method, 0, make(chan *dbus.Call, 1), r.args...)
	}
	var errs []error
	var kids []Ref
	for i, call := range calls {
		select {
		case <-call.Done:
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
			n.Err = errors.Join(errs...)
			return kids
		}
		if call.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", reqs[i].what, call.Err))
			continue
		}
		var err error
		switch reqs[i].what {
		case "role":
			err = call.Store(&n.Role)
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
		case "children":
			var refs []struct {
				Bus  string
				Path dbus.ObjectPath
			}
			if err = call.Store(&refs); err == nil {
				for _, r := range refs {
					if ref := (Ref{Bus: r.Bus, Path: r.Path}); ref.valid() {
						kids = append(kids, ref)
					}
				}
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", reqs[i].what, err))
		}
	}
	n.Err = errors.Join(errs...)
	return kids
}
