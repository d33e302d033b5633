package ax

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/domo-agent/domo/servers/ax/atspi"
)

// appWait bounds how long one app may take to say its name and windows in
// a listing.
const appWait = time.Second

// listApps reads every app on the accessibility bus.
func (d *Desktop) listApps(ctx context.Context) ([]*atspi.App, error) {
	bus, err := d.bus(ctx)
	if err != nil {
		return nil, err
	}
	apps, err := bus.Apps(ctx, appWait)
	if err != nil {
		return nil, fmt.Errorf("list the apps on the accessibility bus: %w", err)
	}
	return apps, nil
}

func appOf(a *atspi.App) *app { return &app{Bus: a.Bus, PID: a.PID, Name: a.Name} }

// focusedPID is the process that owns the focused window, or 0 when X
// cannot tell.
func (d *Desktop) focusedPID() int {
	x, err := d.display()
	if err != nil {
		return 0
	}
	w, ok, err := x.ActiveWindow()
	if err != nil || !ok {
		return 0
	}
	return w.PID
}

// ownsFocus reports whether the app of pid, with these top-level windows,
// owns the focused window: by X's focus (focusPID, 0 when X cannot tell),
// else by its windows' active state.
func ownsFocus(focusPID, pid int, windows []*atspi.Node) bool {
	if focusPID > 0 {
		return pid == focusPID
	}
	return (&atspi.App{Windows: windows}).Active()
}

// focused picks the app that owns the focused window among apps.
func (d *Desktop) focused(apps []*atspi.App) (*atspi.App, error) {
	focus := d.focusedPID()
	for _, a := range apps {
		if ownsFocus(focus, a.PID, a.Windows) {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no app has the focused window; name one with app (ax_list_apps lists them: %s)", appNames(apps))
}

func appNames(apps []*atspi.App) string {
	var names []string
	for _, a := range apps {
		if a.Name != "" {
			names = append(names, strconv.Quote(a.Name))
		}
	}
	if len(names) == 0 {
		return "none is running"
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ", ")
}

// pickApp finds the app a call names: "" or "focused" for the one owning
// the focused window, a pid, an app name, or a window title. A name that
// matches several apps is an error listing them.
func (d *Desktop) pickApp(ctx context.Context, query string) (*atspi.App, error) {
	apps, err := d.listApps(ctx)
	if err != nil {
		return nil, err
	}
	q := strings.TrimSpace(query)
	if q == "" || strings.EqualFold(q, "focused") {
		return d.focused(apps)
	}
	if pid, err := strconv.Atoi(strings.TrimPrefix(q, "pid:")); err == nil {
		for _, a := range apps {
			if a.PID == pid {
				return a, nil
			}
		}
		return nil, fmt.Errorf("no app with pid %d is on the accessibility bus (running apps: %s)", pid, appNames(apps))
	}
	lq := strings.ToLower(q)
	tiers := []func(a *atspi.App) bool{
		func(a *atspi.App) bool { return strings.EqualFold(a.Name, q) },
		func(a *atspi.App) bool {
			return slices.ContainsFunc(a.Windows, func(w *atspi.Node) bool { return strings.EqualFold(w.Name, q) })
		},
		func(a *atspi.App) bool { return strings.Contains(strings.ToLower(a.Name), lq) },
		func(a *atspi.App) bool {
			return slices.ContainsFunc(a.Windows, func(w *atspi.Node) bool { return strings.Contains(strings.ToLower(w.Name), lq) })
		},
	}
	for _, match := range tiers {
		var found []*atspi.App
		for _, a := range apps {
			if match(a) {
				found = append(found, a)
			}
		}
		switch {
		case len(found) == 1:
			return found[0], nil
		case len(found) > 1:
			var list []string
			for _, a := range found {
				list = append(list, fmt.Sprintf("%q pid %d", a.Name, a.PID))
			}
			return nil, fmt.Errorf("%q matches %d apps (%s); pass the pid as app", q, len(found), strings.Join(list, "; "))
		}
	}
	return nil, fmt.Errorf("no app named %q is on the accessibility bus (running apps: %s); ax_open_app starts one", q, appNames(apps))
}

// errLostFocus starts the context lock's refusal.
var errLostFocus = errors.New("target app lost focus")

// lock checks that a still owns the focused window, so input meant for it
// cannot land in another app. It changes nothing.
func (d *Desktop) lock(ctx context.Context, a *app) error {
	refuse := func(who string) error {
		return fmt.Errorf("%w: %s no longer owns the focused window (%s has it), so nothing was done. "+
			"Bring it back with ax_action(ref, \"focus\") on one of its elements, or take ax_get_ui_state(app=\"focused\") to work with the app that has focus",
			errLostFocus, a, who)
	}
	bus, err := d.bus(ctx)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	if alive, err := bus.Alive(actx, a.Bus); err == nil && !alive {
		return fmt.Errorf("%w: %s has exited, so nothing was done; take ax_get_ui_state(app=\"focused\") to work with the app that has focus, or ax_open_app to start it again", errLostFocus, a)
	}
	if x, err := d.display(); err == nil {
		w, ok, err := x.ActiveWindow()
		if err == nil {
			switch {
			case !ok:
				return refuse("no window")
			case w.PID == a.PID:
				return nil
			case w.PID > 0:
				return refuse(d.describeWindow(ctx, w.Title, w.PID))
			}
		}
	}
	// No X, or a window that does not say its process: ask the app
	// whether one of its windows is the active one.
	tree, _, _ := bus.Walk(actx, atspi.Ref{Bus: a.Bus, Path: atspi.Root().Path}, atspi.Limits{MaxDepth: 1})
	if actx.Err() != nil {
		return notAnswering(a, d.o.Timeout)
	}
	if (&atspi.App{Windows: tree.Children}).Active() {
		return nil
	}
	return refuse("another app")
}

// describeWindow names a window and the app it belongs to.
func (d *Desktop) describeWindow(ctx context.Context, title string, pid int) string {
	if apps, err := d.listApps(ctx); err == nil {
		for _, a := range apps {
			if a.PID == pid && a.Name != "" {
				return fmt.Sprintf("window %q of %s", title, appOf(a))
			}
		}
	}
	return fmt.Sprintf("window %q of pid %d", title, pid)
}
