package atspi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/godbus/dbus/v5"
)

// The AT-SPI2 interfaces an object may implement.
const (
	ifaceAction    = "org.a11y.atspi.Action"
	ifaceComponent = "org.a11y.atspi.Component"
	ifaceText      = "org.a11y.atspi.Text"
	ifaceEditable  = "org.a11y.atspi.EditableText"
	ifaceValue     = "org.a11y.atspi.Value"
	ifaceSelection = "org.a11y.atspi.Selection"
	ifaceApp       = "org.a11y.atspi.Application"
)

// coordScreen asks Component for screen coordinates.
const coordScreen = uint32(0)

// ErrGone means the object or its application no longer exists.
var ErrGone = errors.New("the element no longer exists")

// ErrNoInterface means the object does not implement the interface a call
// needs (a label has no Action).
var ErrNoInterface = errors.New("the element does not offer this")

// gone reports whether a D-Bus error means the object or its application
// has gone away.
func gone(err error) bool {
	var de dbus.Error
	if errors.As(err, &de) {
		switch de.Name {
		case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.UnknownObject",
			"org.freedesktop.DBus.Error.NameHasNoOwner":
			return true
		}
	}
	return false
}

// noInterface reports whether a D-Bus error says the object lacks the
// method's interface.
func noInterface(err error) bool {
	var de dbus.Error
	return errors.As(err, &de) && (de.Name == "org.freedesktop.DBus.Error.UnknownMethod" ||
		de.Name == "org.freedesktop.DBus.Error.UnknownInterface" || de.Name == "org.freedesktop.DBus.Error.NotSupported")
}

// call makes one method call on r and stores its reply in out.
func (c *Conn) call(ctx context.Context, r Ref, method string, out []any, args ...any) error {
	err := c.bus.Object(r.Bus, r.Path).CallWithContext(ctx, method, 0, args...).Store(out...)
	switch {
	case err == nil:
		return nil
	case gone(err):
		return fmt.Errorf("%v: %w", err, ErrGone)
	case noInterface(err):
		return fmt.Errorf("%v: %w", err, ErrNoInterface)
	}
	return err
}

func (c *Conn) prop(ctx context.Context, r Ref, iface, name string) (dbus.Variant, error) {
	var v dbus.Variant
	err := c.call(ctx, r, ifaceProps+".Get", []any{&v}, iface, name)
	return v, err
}

// Interfaces lists the AT-SPI interfaces r implements, without their
// "org.a11y.atspi." prefix: Action, Component, Text, EditableText, ...
func (c *Conn) Interfaces(ctx context.Context, r Ref) ([]string, error) {
	var names []string
	if err := c.call(ctx, r, ifaceAccess+".GetInterfaces", []any{&names}); err != nil {
		return nil, err
	}
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, "org.a11y.atspi.")
	}
	return names, nil
}

// Read reads one object's role, name and states, and its value when its
// role carries one.
func (c *Conn) Read(ctx context.Context, r Ref, bounds bool) (*Node, error) {
	n := &Node{Ref: r}
	c.read(ctx, n, false, bounds)
	if n.Err != nil {
		// A node read in part would show wrong states.
		if gone(n.Err) {
			return nil, ErrGone
		}
		return nil, n.Err
	}
	return n, nil
}

// Action is one action an object offers.
type Action struct {
	Name, Description, KeyBinding string
}

// Actions lists the actions r offers.
func (c *Conn) Actions(ctx context.Context, r Ref) ([]Action, error) {
	var out []Action
	if err := c.call(ctx, r, ifaceAction+".GetActions", []any{&out}); err != nil {
		return nil, err
	}
	return out, nil
}

// DoAction performs r's action number i.
func (c *Conn) DoAction(ctx context.Context, r Ref, i int) error {
	var ok bool
	if err := c.call(ctx, r, ifaceAction+".DoAction", []any{&ok}, int32(i)); err != nil {
		return err
	}
	if !ok {
		return errors.New("the application refused the action")
	}
	return nil
}

// Rect is an object's extents in screen coordinates.
type Rect struct{ X, Y, W, H int }

// Empty reports whether the rectangle has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Extents returns r's position and size on the screen.
func (c *Conn) Extents(ctx context.Context, r Ref) (Rect, error) {
	var e struct{ X, Y, W, H int32 }
	if err := c.call(ctx, r, ifaceComponent+".GetExtents", []any{&e}, coordScreen); err != nil {
		return Rect{}, err
	}
	return Rect{int(e.X), int(e.Y), int(e.W), int(e.H)}, nil
}

// GrabFocus gives r the keyboard focus within its application.
func (c *Conn) GrabFocus(ctx context.Context, r Ref) error {
	var ok bool
	if err := c.call(ctx, r, ifaceComponent+".GrabFocus", []any{&ok}); err != nil {
		return err
	}
	if !ok {
		return errors.New("the application would not give it the focus")
	}
	return nil
}

// ScrollTo scrolls r's ancestors so that r is on screen.
func (c *Conn) ScrollTo(ctx context.Context, r Ref) error {
	var ok bool
	// 4 is ATSPI_SCROLL_ANYWHERE: the least scrolling that shows it.
	if err := c.call(ctx, r, ifaceComponent+".ScrollTo", []any{&ok}, uint32(4)); err != nil {
		return err
	}
	if !ok {
		return errors.New("the application did not scroll it into view")
	}
	return nil
}

// Text returns up to max characters of r's text.
func (c *Conn) Text(ctx context.Context, r Ref, max int) (string, error) {
	var s string
	err := c.call(ctx, r, ifaceText+".GetText", []any{&s}, int32(0), int32(max))
	return s, err
}

// SetText replaces r's text.
func (c *Conn) SetText(ctx context.Context, r Ref, text string) error {
	var ok bool
	if err := c.call(ctx, r, ifaceEditable+".SetTextContents", []any{&ok}, text); err != nil {
		return err
	}
	if !ok {
		return errors.New("the application refused the text (is the field read-only?)")
	}
	return nil
}

// Range is a Value object's current value and bounds.
type Range struct{ Current, Min, Max, Step float64 }

// Value reads r's numeric value and its bounds.
func (c *Conn) Value(ctx context.Context, r Ref) (Range, error) {
	var props map[string]dbus.Variant
	if err := c.call(ctx, r, ifaceProps+".GetAll", []any{&props}, ifaceValue); err != nil {
		return Range{}, err
	}
	f := func(k string) float64 { v, _ := props[k].Value().(float64); return v }
	return Range{Current: f("CurrentValue"), Min: f("MinimumValue"), Max: f("MaximumValue"), Step: f("MinimumIncrement")}, nil
}

// SetValue sets r's numeric value.
func (c *Conn) SetValue(ctx context.Context, r Ref, v float64) error {
	return c.call(ctx, r, ifaceProps+".Set", nil, ifaceValue, "CurrentValue", dbus.MakeVariant(v))
}

// Parent returns r's parent.
func (c *Conn) Parent(ctx context.Context, r Ref) (Ref, error) {
	v, err := c.prop(ctx, r, ifaceAccess, "Parent")
	if err != nil {
		return Ref{}, err
	}
	var p Ref
	if err := dbus.Store([]any{v.Value()}, &p); err != nil {
		return Ref{}, fmt.Errorf("parent: %w", err)
	}
	return p, nil
}

// IndexInParent returns r's position among its parent's children.
func (c *Conn) IndexInParent(ctx context.Context, r Ref) (int, error) {
	var i int32
	err := c.call(ctx, r, ifaceAccess+".GetIndexInParent", []any{&i})
	return int(i), err
}

// SelectChild selects the child number i of the Selection object r.
func (c *Conn) SelectChild(ctx context.Context, r Ref, i int) error {
	var ok bool
	if err := c.call(ctx, r, ifaceSelection+".SelectChild", []any{&ok}, int32(i)); err != nil {
		return err
	}
	if !ok {
		return errors.New("the application refused the selection")
	}
	return nil
}

// PID returns the process id of the application that owns bus name.
func (c *Conn) PID(ctx context.Context, bus string) (int, error) {
	var pid uint32
	err := c.bus.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetConnectionUnixProcessID", 0, bus).Store(&pid)
	if err != nil {
		if gone(err) {
			return 0, ErrGone
		}
		return 0, err
	}
	return int(pid), nil
}

// Alive reports whether bus name still has an owner.
func (c *Conn) Alive(ctx context.Context, bus string) (bool, error) {
	var ok bool
	err := c.bus.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, bus).Store(&ok)
	return ok, err
}
