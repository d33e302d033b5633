//go:build linux

package atspi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/ax/axtest"
)

func TestWalkWidgetFactory(t *testing.T) {
	d := axtest.New(t, axtest.Options{})
	if _, err := d.Launch("gtk3-widget-factory"); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var factory Ref
	for factory.Bus == "" {
		apps, err := c.Children(ctx, Root())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range apps {
			n := &Node{Ref: a}
			c.read(ctx, n, false, false)
			if strings.Contains(strings.ToLower(n.Name), "widget") {
				factory = a
			}
		}
		if factory.Bus == "" {
			if ctx.Err() != nil {
				t.Fatal("gtk3-widget-factory never showed up on the accessibility bus")
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	var best time.Duration
	var count int
	var tree *Node
	for range 5 {
		start := time.Now()
		var trunc bool
		tree, count, trunc = c.Walk(ctx, factory, Limits{MaxNodes: 5000})
		d := time.Since(start)
		if trunc {
			t.Errorf("walk truncated at %d nodes", count)
		}
		if best == 0 || d < best {
			best = d
		}
	}
	t.Logf("gtk3-widget-factory: %d nodes, best of 5 walks %s", count, best)
	roles := map[string]int{}
	var names []string
	var visit func(n *Node)
	visit = func(n *Node) {
		roles[n.Role]++
		if n.Name != "" {
			names = append(names, n.Role+" "+n.Name)
		}
		for _, k := range n.Children {
			visit(k)
		}
	}
	visit(tree)
	if roles["push button"] == 0 || roles["frame"] == 0 || count < 100 {
		t.Errorf("the tree lacks known widgets: %d nodes, roles %v", count, roles)
	}

	// A walk bounded in depth says it was cut.
	if _, _, trunc := c.Walk(ctx, factory, Limits{MaxDepth: 2}); !trunc {
		t.Error("a walk cut at depth 2 does not say so")
	}
	// A walk bounded in nodes stops there and says so.
	_, n, trunc := c.Walk(ctx, factory, Limits{MaxNodes: 20})
	if n > 20 || !trunc {
		t.Errorf("a 20-node walk read %d nodes, truncated %v", n, trunc)
	}
}
