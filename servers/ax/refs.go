package ax

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/domo-agent/domo/servers/ax/atspi"
)

// app is one running application as domo-ax knows it: its bus name on the
// accessibility bus and its process. A restarted app is a new app.
type app struct {
	Bus  string
	PID  int
	Name string
}

func (a *app) String() string {
	if a.PID > 0 {
		return fmt.Sprintf("%q (pid %d)", a.Name, a.PID)
	}
	return fmt.Sprintf("%q", a.Name)
}

// refEntry is what a ref stands for.
type refEntry struct {
	n    int
	app  *app
	obj  atspi.Ref
	role string
	name string
}

func (e *refEntry) String() string {
	if e.name != "" {
		return fmt.Sprintf("%s %q @e%d", e.role, e.name, e.n)
	}
	return fmt.Sprintf("%s @e%d", e.role, e.n)
}

// refTable hands out refs. Numbers are never reused, and an element keeps
// its number in every snapshot of the same app, so a ref stays good for as
// long as its element and app live.
type refTable struct {
	next  int
	byN   map[int]*refEntry
	byObj map[atspi.Ref]*refEntry
}

// maxRefs bounds the table: past it, refs of apps other than the one being
// read are forgotten.
const maxRefs = 200_000

func newRefTable() refTable {
	return refTable{byN: map[int]*refEntry{}, byObj: map[atspi.Ref]*refEntry{}}
}

// give returns n's ref in app a, handing out a new one the first time.
func (t *refTable) give(a *app, n *atspi.Node) *refEntry {
	if e := t.byObj[n.Ref]; e != nil && e.app.Bus == a.Bus {
		e.role, e.name = n.Role, n.Name
		return e
	}
	if len(t.byN) >= maxRefs {
		t.forgetAllBut(a.Bus)
	}
	t.next++
	e := &refEntry{n: t.next, app: a, obj: n.Ref, role: n.Role, name: n.Name}
	t.byN[e.n] = e
	t.byObj[n.Ref] = e
	return e
}

func (t *refTable) forgetAllBut(bus string) {
	for n, e := range t.byN {
		if e.app.Bus != bus {
			delete(t.byN, n)
			delete(t.byObj, e.obj)
		}
	}
}

// parseRef reads "@e12", "e12" or "12".
func parseRef(s string) (int, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "@")
	t = strings.TrimPrefix(t, "e")
	n, err := strconv.Atoi(t)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a ref: refs look like @e12, from ax_get_ui_state or ax_find", s)
	}
	return n, nil
}

// lookup finds what ref stands for, without checking that it still lives.
func (t *refTable) lookup(ref string) (*refEntry, error) {
	n, err := parseRef(ref)
	if err != nil {
		return nil, err
	}
	e := t.byN[n]
	if e == nil {
		if n <= t.next {
			return nil, fmt.Errorf("@e%d is no longer known (refs of other apps were dropped); take a new ax_get_ui_state", n)
		}
		return nil, fmt.Errorf("@e%d was never given out; take ax_get_ui_state or ax_find for refs", n)
	}
	return e, nil
}

// resolve finds the element of ref and reads it afresh, or says why the
// ref is stale.
func (d *Desktop) resolve(ctx context.Context, ref string, bounds bool) (*refEntry, *atspi.Node, error) {
	e, err := d.refs.lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	bus, err := d.bus(ctx)
	if err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	if alive, err := bus.Alive(rctx, e.app.Bus); err == nil && !alive {
		return nil, nil, fmt.Errorf("@e%d is stale: the app %s it came from has exited or restarted; take a new ax_get_ui_state", e.n, e.app)
	}
	n, err := bus.Read(rctx, e.obj, bounds)
	switch {
	case errors.Is(err, atspi.ErrGone) || err == nil && n.States.Has(atspi.StateDefunct):
		return nil, nil, fmt.Errorf("@e%d is stale: %s is gone from %s; take a new ax_get_ui_state", e.n, e, e.app)
	case rctx.Err() != nil && ctx.Err() == nil:
		return nil, nil, notAnswering(e.app, d.o.Timeout)
	case err != nil:
		return nil, nil, fmt.Errorf("read %s: %w", e, err)
	}
	return e, n, nil
}

// notAnswering is the error for an app that did not answer in time.
func notAnswering(a *app, limit time.Duration) error {
	return fmt.Errorf("%s did not answer within %s: its main loop may be blocked (busy or hung); try again shortly", a, limit)
}
