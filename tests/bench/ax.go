package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/domo-agent/domo/servers/ax/atspi"
	"github.com/domo-agent/domo/servers/ax/axtest"
)

// benchAx times domo-ax on a private Xvfb desktop: ax_get_ui_state on
// gtk3-widget-factory and ax_action press on the test app's button, over
// stdio; and, for the same tree, a walk of one D-Bus call at a time and a
// walk with pyatspi (what Python desktop servers use).
func benchAx(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	if bin := axtest.Missing(); bin != "" {
		return fmt.Errorf("%s is missing: run `go tool task setup`", bin)
	}
	bin := filepath.Join(tmp, "domo-ax")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./servers/ax/cmd/domo-ax")
	var buildOut bytes.Buffer
	build.Dir, build.Stdout, build.Stderr = root, &buildOut, &buildOut
	if err := build.Run(); err != nil {
		return fmt.Errorf("build domo-ax: %v\n%s", err, buildOut.String())
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := axtest.Start(sctx, axtest.Options{WM: true})
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := d.Launch("gtk3-widget-factory"); err != nil {
		return err
	}
	log := filepath.Join(tmp, "axapp.log")
	if _, err := d.Launch(axtest.Python, axtest.TestApp(), "--out", log); err != nil {
		return err
	}
	s, err := start(ctx, server{name: "domo-ax", argv: []string{bin}, env: d.Env})
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.initialize(); err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := toolCall(s, "ax_list_apps", map[string]any{})
		if list = resultText(list); err == nil && strings.Contains(list, `"gtk3-widget-factory"`) && strings.Contains(list, "Domo Test App") {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the apps never showed on the accessibility bus: %v %s", err, list)
		}
		time.Sleep(100 * time.Millisecond)
	}

	runs := 30
	fmt.Fprintf(w, "domo-ax on Xvfb + AT-SPI2 (%s), %d runs each\n", atspiVersion(), runs)
	state := func(args map[string]any) (string, error) {
		raw, err := toolCall(s, "ax_get_ui_state", args)
		return resultText(raw), err
	}
	factory := map[string]any{"app": "gtk3-widget-factory"}
	var snap string
	for range 3 {
		if snap, err = state(factory); err != nil {
			return err
		}
	}
	times, err := timeRuns(runs, func() error { _, err := state(factory); return err })
	if err != nil {
		return err
	}
	lines := strings.Count(snap, "\n")
	refs := len(regexp.MustCompile(`@e\d+`).FindAllString(snap, -1))
	fmt.Fprintf(w, "  ax_get_ui_state gtk3-widget-factory: median %s, p90 %s (target ≤ 60 ms: %s); %d lines, %d refs, %d bytes\n",
		fmtMS(median(times)), fmtMS(p90(times)), met(median(times) <= 60*time.Millisecond), lines, refs, len(snap))

	// The same tree read in-process: concurrently as domo-ax does, one
	// call at a time, and with pyatspi.
	restore := setenv(d.Env)
	defer restore()
	conn, err := atspi.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	apps, err := conn.Apps(ctx, time.Second)
	if err != nil {
		return err
	}
	var app *atspi.App
	for _, a := range apps {
		if a.Name == "gtk3-widget-factory" {
			app = a
		}
	}
	if app == nil {
		return fmt.Errorf("gtk3-widget-factory is not on the accessibility bus")
	}
	var nodes int
	walk, err := timeRuns(runs, func() error { _, nodes, _ = conn.Walk(ctx, app.Ref, atspi.Limits{MaxNodes: 5000}); return nil })
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  concurrent walk in-process: median %s for %d nodes\n", fmtMS(median(walk)), nodes)
	seq, seqNodes, err := sequentialWalks(ctx, app.Ref, 10)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  one call at a time: median %s for %d nodes (%.1f× domo-ax's walk)\n", fmtMS(median(seq)), seqNodes, ratio(median(seq), median(walk)))
	if py, pyNodes, err := pyatspiWalks(ctx, root, d.Env, 10); err != nil {
		fmt.Fprintf(w, "  pyatspi: not measured: %v\n", err)
	} else {
		cold, warm := py[:len(py)/2], py[len(py)/2:]
		fmt.Fprintf(w, "  pyatspi (python3-pyatspi), %d nodes: median %s with its cache cleared (%.2f× domo-ax's walk), %s from its cache; ax_get_ui_state over stdio is %.2f× its uncached walk\n",
			pyNodes, fmtMS(median(cold)), ratio(median(cold), median(walk)), fmtMS(median(warm)), ratio(median(times), median(cold)))
	}

	// ax_action press on the test app's Save button, with the context lock
	// checked and the element read back each time.
	appSnap, err := state(map[string]any{"app": "domo-test-app"})
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`push button "Save" (@e\d+)`).FindStringSubmatch(appSnap)
	if m == nil {
		return fmt.Errorf("no Save button in the test app:\n%s", appSnap)
	}
	if _, err := toolCall(s, "ax_action", map[string]any{"ref": m[1], "action": "focus"}); err != nil {
		return err
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		if _, err := toolCall(s, "ax_action", map[string]any{"ref": m[1], "action": "press"}); err == nil {
			break
		} else if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	press, err := timeRuns(runs, func() error {
		_, err := toolCall(s, "ax_action", map[string]any{"ref": m[1], "action": "press"})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  ax_action press (lock check, action, read-back): median %s, p90 %s (target ≤ 10 ms: %s)\n",
		fmtMS(median(press)), fmtMS(p90(press)), met(median(press) <= 10*time.Millisecond))
	return nil
}

func timeRuns(n int, f func() error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

func fmtMS(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// setenv points this process at the desktop and returns what undoes it.
func setenv(env []string) func() {
	var undo []func()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		undo = append(undo, func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// sequentialWalks reads the tree under app one D-Bus call at a time, as a
// simple client does: role, name, states and children of each node in
// turn.
func sequentialWalks(ctx context.Context, app atspi.Ref, runs int) ([]time.Duration, int, error) {
	session, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, 0, err
	}
	var addr string
	err = session.Object("org.a11y.Bus", "/org/a11y/bus").CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr)
	session.Close()
	if err != nil {
		return nil, 0, err
	}
	bus, err := dbus.Connect(addr)
	if err != nil {
		return nil, 0, err
	}
	defer bus.Close()
	type ref struct {
		Bus  string
		Path dbus.ObjectPath
	}
	var walk func(r ref) (int, error)
	walk = func(r ref) (int, error) {
		obj := bus.Object(r.Bus, r.Path)
		var role string
		var name dbus.Variant
		var states []uint32
		var kids []ref
		if err := obj.CallWithContext(ctx, "org.a11y.atspi.Accessible.GetRoleName", 0).Store(&role); err != nil {
			return 0, err
		}
		if err := obj.CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, "org.a11y.atspi.Accessible", "Name").Store(&name); err != nil {
			return 0, err
		}
		if err := obj.CallWithContext(ctx, "org.a11y.atspi.Accessible.GetState", 0).Store(&states); err != nil {
			return 0, err
		}
		if err := obj.CallWithContext(ctx, "org.a11y.atspi.Accessible.GetChildren", 0).Store(&kids); err != nil {
			return 0, err
		}
		n := 1
		for _, k := range kids {
			if k.Path == "/org/a11y/atspi/null" {
				continue
			}
			c, err := walk(k)
			if err != nil {
				return 0, err
			}
			n += c
		}
		return n, nil
	}
	var nodes int
	times, err := timeRuns(runs, func() error {
		var err error
		nodes, err = walk(ref{app.Bus, app.Path})
		return err
	})
	return times, nodes, err
}

// pyatspiWalks runs testdata/ax_walk.py, which walks the widget factory
// with pyatspi and prints each walk's time.
func pyatspiWalks(ctx context.Context, root string, env []string, runs int) ([]time.Duration, int, error) {
	if err := exec.Command(axtest.Python, "-c", "import pyatspi").Run(); err != nil {
		return nil, 0, fmt.Errorf("python3-pyatspi is not installed (`go tool task setup` installs it)")
	}
	cmd := exec.CommandContext(ctx, axtest.Python, filepath.Join(root, "tests/bench/testdata/ax_walk.py"), "gtk3-widget-factory", strconv.Itoa(runs))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("%v: %s", err, out)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 {
		return nil, 0, fmt.Errorf("ax_walk.py printed %q", out)
	}
	nodes, _ := strconv.Atoi(fields[0])
	var times []time.Duration // uncached walks, then cached ones
	for _, f := range fields[1:] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("ax_walk.py printed %q", f)
		}
		times = append(times, time.Duration(v*float64(time.Millisecond)))
	}
	if len(times) != 2*runs {
		return nil, 0, fmt.Errorf("ax_walk.py printed %d times, want %d", len(times), 2*runs)
	}
	return times, nodes, nil
}

// atspiVersion is the installed at-spi2-core's version.
func atspiVersion() string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "at-spi2-core").Output()
	if err != nil {
		return "at-spi2-core"
	}
	return "at-spi2-core " + string(out)
}
