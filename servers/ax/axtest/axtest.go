//go:build unix

// Package axtest starts a private desktop for domo-ax's tests and
// benchmarks: an Xvfb display, a D-Bus session bus (which starts the
// AT-SPI2 bus on first use), optionally a window manager, and the apps to
// read. Each desktop has its own display number and XDG_RUNTIME_DIR, so
// runs never collide.
package axtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Options shape a desktop.
type Options struct {
	// WM runs matchbox-window-manager, which sets _NET_ACTIVE_WINDOW as a
	// real desktop does. Without it X focus is PointerRoot.
	WM bool
	// Width and Height of the screen; 1280×1024 when zero.
	Width, Height int
}

// Desktop is a running private desktop.
type Desktop struct {
	Display string // ":N"
	Bus     string // the session bus address
	Runtime string // XDG_RUNTIME_DIR
	// Env holds the variables that point a process at this desktop.
	Env   []string
	procs []*exec.Cmd
	owned string // a runtime directory Start made, removed by Close
}

// Python is the Python that has gi: another python3 may be first on PATH.
const Python = "/usr/bin/python3"

// Needs lists the commands a desktop with the test apps needs.
var Needs = []string{"Xvfb", "dbus-daemon", "gtk3-widget-factory", "matchbox-window-manager", Python}

// Missing returns the first of Needs (and extra) that is not installed.
func Missing(extra ...string) string {
	for _, bin := range append(append([]string{}, Needs...), extra...) {
		if _, err := exec.LookPath(bin); err != nil {
			return bin
		}
	}
	if err := exec.Command(Python, "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk").Run(); err != nil {
		return "python3-gi with gir1.2-gtk-3.0"
	}
	return ""
}

// Require skips a test loudly when the desktop packages are missing, and
// fails it under CI, where they must be installed.
func Require(tb testing.TB, extra ...string) {
	tb.Helper()
	if bin := Missing(extra...); bin != "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI=true and %s is missing: scripts/setup.sh installs it", bin)
		}
		tb.Skipf("SKIPPING DESKTOP TEST: %s is missing (run `go tool task setup`)", bin)
	}
}

// New starts a desktop for one test, points the test's environment at it
// (DISPLAY, DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR) and stops it when
// the test ends.
func New(t *testing.T, o Options) *Desktop {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d, err := start(ctx, o, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	for _, kv := range d.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return d
}

// Start starts a desktop; Close stops it. It does not change this
// process's environment: use Env, or Setenv.
func Start(ctx context.Context, o Options) (*Desktop, error) {
	dir, err := os.MkdirTemp("", "domo-desktop-")
	if err != nil {
		return nil, err
	}
	d, err := start(ctx, o, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	d.owned = dir
	return d, nil
}

// Setenv points this process at the desktop.
func (d *Desktop) Setenv() {
	for _, kv := range d.Env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

func start(ctx context.Context, o Options, runtimeDir string) (d *Desktop, err error) {
	if o.Width == 0 {
		o.Width, o.Height = 1280, 1024
	}
	if err := os.Chmod(runtimeDir, 0o700); err != nil {
		return nil, err
	}
	d = &Desktop{Runtime: runtimeDir}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()

	// Xvfb picks a free display and writes its number to fd 3.
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", o.Width, o.Height), "-nolisten", "tcp")
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	x.ExtraFiles = []*os.File{w}
	if err := d.launch(x); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("start Xvfb: %w", err)
	}
	w.Close()
	display, err := readLine(ctx, r)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("no display number from Xvfb: %w", err)
	}
	d.Display = ":" + display

	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	bus.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "DISPLAY="+d.Display)
	out, err := bus.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.launch(bus); err != nil {
		return nil, fmt.Errorf("start dbus-daemon: %w", err)
	}
	if d.Bus, err = readLine(ctx, out); err != nil {
		return nil, fmt.Errorf("dbus-daemon gave no address: %w", err)
	}
	d.Env = []string{
		"DISPLAY=" + d.Display,
		"DBUS_SESSION_BUS_ADDRESS=" + d.Bus,
		"XDG_RUNTIME_DIR=" + runtimeDir,
		"XDG_SESSION_TYPE=x11",
		// Either would hide GTK apps from AT-SPI.
		"NO_AT_BRIDGE=",
		"GTK_A11Y=",
		"WAYLAND_DISPLAY=",
	}
	if o.WM {
		if _, err := d.Launch("matchbox-window-manager", "-use_titlebar", "no"); err != nil {
			return nil, fmt.Errorf("start the window manager: %w", err)
		}
	}
	return d, nil
}

func readLine(ctx context.Context, r interface{ Read([]byte) (int, error) }) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		ch <- result{strings.TrimSpace(s), err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return "", res.err
		}
		return res.s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Command returns a command that runs on the desktop.
func (d *Desktop) Command(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = append(os.Environ(), d.Env...)
	return c
}

// Launch starts a program on the desktop, in its own process group; Close
// kills it. It returns the running command.
func (d *Desktop) Launch(name string, args ...string) (*exec.Cmd, error) {
	c := d.Command(name, args...)
	if err := d.launch(c); err != nil {
		return nil, err
	}
	return c, nil
}

func (d *Desktop) launch(c *exec.Cmd) error {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		return err
	}
	d.procs = append(d.procs, c)
	return nil
}

// Close stops every program the desktop started, newest first, and the
// desktop itself.
func (d *Desktop) Close() {
	for i := len(d.procs) - 1; i >= 0; i-- {
		c := d.procs[i]
		if c.ProcessState == nil {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			c.Wait()
		}
	}
	d.procs = nil
	if d.owned != "" {
		os.RemoveAll(d.owned)
	}
}

// Kill stops one program the desktop started and waits for it.
func Kill(c *exec.Cmd) error {
	if c.ProcessState != nil {
		return nil
	}
	err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	c.Wait()
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// TestApp is the path of domo-ax's GTK test app (testdata/axapp.py). Run
// it as Python, TestApp(), "--out", FILE [, "--title", TITLE].
func TestApp() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "axapp.py")
}
