package atspi

import (
	"context"
	"sync"
	"time"
)

// App is one application on the accessibility bus.
type App struct {
	Ref
	Name string
	PID  int
	// Windows are its top-level windows (frames, dialogs), read with
	// their names and states but not their children.
	Windows []*Node
	// Err says why the app could not be read (a hung app does not
	// answer); Name and Windows are then what was read.
	Err error
}

// Active reports whether one of the app's windows is the active one.
func (a *App) Active() bool {
	for _, w := range a.Windows {
		if w.States.Has(StateActive) {
			return true
		}
	}
	return false
}

// Apps lists the applications on the desktop, reading them all at once.
// An app that does not answer within each is listed with Err set rather
// than holding up the rest.
func (c *Conn) Apps(ctx context.Context, each time.Duration) ([]*App, error) {
	// The registry and the bus daemon answer at once; bound them anyway,
	// so that nothing waits for ever.
	rctx, cancel := context.WithTimeout(ctx, 5*each)
	refs, err := c.Children(rctx, Root())
	cancel()
	if err != nil {
		return nil, err
	}
	apps := make([]*App, len(refs))
	var wg sync.WaitGroup
	for i, r := range refs {
		apps[i] = &App{Ref: r}
		wg.Go(func() {
			a := apps[i]
			actx, cancel := context.WithTimeout(ctx, each)
			defer cancel()
			if pid, err := c.PID(actx, r.Bus); err == nil {
				a.PID = pid
			}
			tree, _, _ := c.Walk(actx, r, Limits{MaxDepth: 1})
			a.Name, a.Windows, a.Err = tree.Name, tree.Children, tree.Err
			for _, w := range a.Windows {
				if a.Err == nil && w.Err != nil {
					a.Err = w.Err
				}
			}
		})
	}
	wg.Wait()
	return apps, nil
}
