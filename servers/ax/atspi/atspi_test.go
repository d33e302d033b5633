package atspi

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// desktop starts a private X display (Xvfb) and D-Bus session bus for one
// test and points the test's environment at them. It skips loudly when the
// packages are missing, and fails under CI, where they must be installed.
func desktop(t *testing.T) []string {
	t.Helper()
	for _, bin := range []string{"Xvfb", "dbus-daemon", "gtk3-widget-factory"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and %s is missing: scripts/setup.sh installs it", bin)
			}
			t.Skipf("SKIPPING DESKTOP TEST: %s is missing (run `go tool task setup`)", bin)
		}
	}
	runtime := t.TempDir()
	os.Chmod(runtime, 0o700)
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	x.ExtraFiles = []*os.File{w}
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { x.Process.Kill(); x.Wait() })
	display, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("Xvfb gave no display: %v", err)
	}
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	bus.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime)
	if err := bus.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Process.Kill(); bus.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon gave no address: %v", err)
	}
	env := map[string]string{
		"DISPLAY":                  ":" + strings.TrimSpace(display),
		"DBUS_SESSION_BUS_ADDRESS": strings.TrimSpace(addr),
		"XDG_RUNTIME_DIR":          runtime,
		"NO_AT_BRIDGE":             "",
		"GTK_A11Y":                 "",
	}
	var list []string
	for k, v := range env {
		t.Setenv(k, v)
		list = append(list, k+"="+v)
	}
	return list
}

func TestWalkWidgetFactory(t *testing.T) {
	env := desktop(t)
	app := exec.Command("gtk3-widget-factory")
	app.Env = append(os.Environ(), env...)
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Process.Kill(); app.Wait() })

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
			c.read(ctx, n, false)
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

	// A walk bounded in nodes stops there and says so.
	_, n, trunc := c.Walk(ctx, factory, Limits{MaxNodes: 20})
	if n > 20 || !trunc {
		t.Errorf("a 20-node walk read %d nodes, truncated %v", n, trunc)
	}
}
