//go:build unix

package x11

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/ax/axtest"
)

// patience bounds every wait for the desktop to react. Tests poll until
// the effect shows, and never assert how long it took.
const patience = 15 * time.Second

// app is a running test app (testdata/axapp.py) and the log it writes.
type app struct {
	cmd   *exec.Cmd
	title string
	log   string
	win   Window
}

// connect opens a connection to the test's desktop.
func connect(t testing.TB) *Conn {
	t.Helper()
	c, err := Connect("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// launch starts the test app with a title and waits until it is shown
// and its window is listed.
func launch(t testing.TB, d *axtest.Desktop, c *Conn, title string) *app {
	t.Helper()
	a := &app{title: title, log: filepath.Join(t.TempDir(), title+".log")}
	var err error
	if a.cmd, err = d.Launch(axtest.Python, axtest.TestApp(), "--out", a.log, "--title", title); err != nil {
		t.Fatal(err)
	}
	a.waitLog(t, "ready")
	a.win = waitWindow(t, c, a.cmd.Process.Pid)
	return a
}

// waitWindow polls Windows until one belongs to pid.
func waitWindow(t testing.TB, c *Conn, pid int) Window {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		ws, err := c.Windows()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.PID == pid {
				return w
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no window of pid %d among %v", pid, ws)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLog polls the app's log until it has the line.
func (a *app) waitLog(t testing.TB, line string) {
	t.Helper()
	a.waitLogFunc(t, short(line), func(l string) bool { return l == line })
}

// waitLogFunc polls the app's log until a line satisfies ok; want says
// what is awaited.
func (a *app) waitLogFunc(t testing.TB, want string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		b, _ := os.ReadFile(a.log)
		for l := range strings.SplitSeq(string(b), "\n") {
			if ok(l) {
				return
			}
		}
		if time.Now().After(deadline) {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			for i, l := range lines {
				lines[i] = short(l)
			}
			t.Fatalf("the app never logged %s; its last lines: %q", want, lines[max(0, len(lines)-5):])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// short quotes s, cut to a length fit for a message.
func short(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// activate makes w active and checks ActiveWindow agrees.
func activate(t *testing.T, c *Conn, w Window) {
	t.Helper()
	if err := c.Activate(w.ID); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.ActiveWindow()
	if err != nil || !ok || got.ID != w.ID {
		t.Fatalf("after Activate(%v), ActiveWindow() = %v, %v, %v", w, got, ok, err)
	}
}

func TestConnectErrors(t *testing.T) {
	t.Setenv("DISPLAY", "")
	if _, err := Connect(""); err == nil || !strings.Contains(err.Error(), "DISPLAY is not set") {
		t.Errorf("Connect(\"\") without DISPLAY: error %v, want one saying DISPLAY is not set", err)
	}
	_, err := Connect(":9876")
	if err == nil || !strings.Contains(err.Error(), `display ":9876"`) || !strings.Contains(err.Error(), "is an X server running") {
		t.Errorf("Connect(\":9876\"): error %v, want one naming the display and asking for an X server", err)
	}
	if _, err := Connect("no-such-display"); err == nil {
		t.Error("Connect(\"no-such-display\") succeeded")
	}
}

func TestWindowManager(t *testing.T) {
	d := axtest.New(t, axtest.Options{WM: true})
	c := connect(t)
	a := launch(t, d, c, "A")
	b := launch(t, d, c, "B")

	t.Run("Windows", func(t *testing.T) {
		ws, err := c.Windows()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			t.Logf("%v at (%d, %d) %d×%d visible=%v", w, w.X, w.Y, w.W, w.H, w.Visible)
		}
		for _, want := range []*app{a, b} {
			found := false
			for _, w := range ws {
				if w.PID == want.cmd.Process.Pid {
					found = true
					if w.ID != want.win.ID || w.Title != want.title || w.W == 0 || w.H == 0 {
						t.Errorf("window of pid %d = %+v, want id 0x%x, title %q and a size", w.PID, w, want.win.ID, want.title)
					}
				}
			}
			if !found {
				t.Errorf("no window of pid %d in %+v", want.cmd.Process.Pid, ws)
			}
		}
	})

	t.Run("Activate", func(t *testing.T) {
		activate(t, c, a.win)
		activate(t, c, b.win)
		activate(t, c, a.win)
		if err := c.Activate(0x7fffff); !errors.Is(err, ErrNoWindow) {
			t.Errorf("Activate(no such window) = %v, want ErrNoWindow", err)
		}
	})

	ctx := context.Background()
	t.Run("PressKeys", func(t *testing.T) {
		activate(t, c, a.win)
		keys, err := ParseKeys("ctrl+shift+t")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		a.waitLog(t, "shortcut ctrl+shift+t")
	})

	t.Run("TypeText", func(t *testing.T) {
		activate(t, c, b.win)
		const text = "héllo wörld €1!"
		start := time.Now()
		if err := c.TypeText(ctx, text); err != nil {
			t.Fatal(err)
		}
		t.Logf("typed %q in %v", text, time.Since(start))
		b.waitLog(t, "name="+text)

		// A longer text, to measure.
		keys, _ := ParseKeys("ctrl+a backspace")
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		b.waitLog(t, "name=")
		long := strings.Repeat("The quick brown fox jumps over the lazy dog 0123456789. ", 8)
		start = time.Now()
		if err := c.TypeText(ctx, long); err != nil {
			t.Fatal(err)
		}
		sent := time.Since(start)
		b.waitLog(t, "name="+long)
		t.Logf("typed %d ASCII characters: sent in %v, shown after %v (%.0f chars/s)", len(long), sent, time.Since(start), float64(len(long))/time.Since(start).Seconds())

		keys, _ = ParseKeys("ctrl+a backspace")
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		b.waitLog(t, "name=")
		exotic := "ÀÉÎÕÜ€ŁŚŻąęł→←↑↓αβγδεζηθ日本語ひらがな✓✗" // mostly not on a US keyboard
		start = time.Now()
		if err := c.TypeText(ctx, exotic); err != nil {
			t.Fatal(err)
		}
		sent = time.Since(start)
		b.waitLog(t, "name="+exotic)
		n := len([]rune(exotic))
		t.Logf("typed %d characters not on the keyboard: sent in %v, shown after %v (%.0f chars/s)", n, sent, time.Since(start), float64(n)/time.Since(start).Seconds())

		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := c.TypeText(cctx, "never"); !errors.Is(err, context.Canceled) {
			t.Errorf("TypeText with a cancelled context = %v, want context.Canceled", err)
		}
		if err := c.TypeText(ctx, "bell\a"); err == nil {
			t.Error("TypeText of a control character succeeded")
		}
	})

	t.Run("Click", func(t *testing.T) {
		activate(t, c, a.win)
		x, y := clickArea(t, c, a.win)
		if err := c.Click(x, y, 3, 1); err != nil {
			t.Fatal(err)
		}
		a.waitLog(t, "area clicked button=3")
		if err := c.Click(x, y, 1, 1); err != nil {
			t.Fatal(err)
		}
		a.waitLog(t, "area clicked button=1")
		w, h := c.ScreenSize()
		for _, p := range []image.Point{{-1, 0}, {0, -1}, {w, 0}, {0, h}} {
			if err := c.Click(p.X, p.Y, 1, 1); err == nil || !strings.Contains(err.Error(), "outside") {
				t.Errorf("Click(%d, %d) = %v, want an error saying it is outside the screen", p.X, p.Y, err)
			}
		}
		if err := c.Click(x, y, 4, 1); err == nil {
			t.Error("Click with button 4 succeeded")
		}
		if err := c.Click(x, y, 1, 0); err == nil {
			t.Error("Click with count 0 succeeded")
		}
	})

	t.Run("Clipboard", func(t *testing.T) {
		for _, text := range []string{"héllo €, 日本語 ✓", "", strings.Repeat("0123456789abcdé\n", 100_000/17), strings.Repeat("incremental ünïcode ", 600_000/22)} {
			if err := c.WriteClipboard("clipboard", text); err != nil {
				t.Fatal(err)
			}
			got, err := c.ReadClipboard(ctx, "clipboard")
			if err != nil {
				t.Fatalf("read back %d bytes: %v", len(text), err)
			}
			if got != text {
				t.Errorf("wrote %d bytes %.20q…, read back %d bytes %.20q…", len(text), text, len(got), got)
			}
		}
		if err := c.WriteClipboard("clipboard", strings.Repeat("x", MaxClipboard+1)); err == nil {
			t.Error("WriteClipboard of more than MaxClipboard succeeded")
		}
		if err := c.WriteClipboard("nonsense", "x"); err == nil {
			t.Error("WriteClipboard to an unknown selection succeeded")
		}

		// Another application pastes what we wrote.
		activate(t, c, a.win)
		const pasted = "pasted ✓ by domo"
		if err := c.WriteClipboard("clipboard", pasted); err != nil {
			t.Fatal(err)
		}
		keys, _ := ParseKeys("ctrl+a ctrl+v")
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		a.waitLog(t, "name="+pasted)

		// A text too big for one request goes incrementally (INCR).
		big := strings.Repeat("big paste ✓ ", 300_000/14)
		if err := c.WriteClipboard("clipboard", big); err != nil {
			t.Fatal(err)
		}
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		// GtkEntry keeps only the first 64 KiB or so, but pastes only once
		// the whole transfer is done.
		a.waitLogFunc(t, "the start of the big paste", func(l string) bool {
			text, ok := strings.CutPrefix(l, "name=")
			return ok && len(text) > 60_000 && strings.HasPrefix(big, text)
		})

		// We read what another application copied.
		keys, _ = ParseKeys("ctrl+a backspace")
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		const copied = "copied from the app ü"
		if err := c.TypeText(ctx, copied); err != nil {
			t.Fatal(err)
		}
		a.waitLog(t, "name="+copied)
		keys, _ = ParseKeys("ctrl+a ctrl+c")
		// Selecting the text made the app the owner of PRIMARY too.
		defer func() {
			if got, err := c.ReadClipboard(ctx, "primary"); err != nil || got != copied {
				t.Errorf("ReadClipboard(primary) after selecting in the app = %q, %v; want %q", got, err, copied)
			}
		}()
		if err := c.PressKeys(ctx, keys); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(patience)
		for {
			got, err := c.ReadClipboard(ctx, "clipboard")
			if err == nil && got == copied {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after ctrl+c in the app, ReadClipboard = %q, %v; want %q", got, err, copied)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if c.Owns("clipboard") {
			t.Error("Owns(clipboard) is still true after the app copied")
		}
	})

	// One connection serves many callers at once (run with -race).
	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		keys, _ := ParseKeys("shift")
		ops := []func(i int) error{
			func(int) error { _, err := c.Capture(image.Rect(0, 0, 100, 100)); return err },
			func(int) error { _, err := c.Windows(); return err },
			func(int) error { _, _, err := c.ActiveWindow(); return err },
			func(int) error { return c.PressKeys(ctx, keys) },
			func(i int) error { return c.WriteClipboard("primary", fmt.Sprint("text ", i)) },
			func(int) error {
				_, err := c.ReadClipboard(ctx, "primary")
				if errors.Is(err, ErrNoOwner) {
					return nil
				}
				return err
			},
		}
		for _, op := range ops {
			wg.Go(func() {
				for i := range 20 {
					if err := op(i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// clickArea finds the centre of the test app's "Click area" on a
// screenshot: it is the 40-pixel-high event box just above the list of
// items, which fills the bottom of the window down to its margin and is
// not in the window's background colour. Dark pixels (its label) must be
// there, or the layout is not what this expects.
func clickArea(t *testing.T, c *Conn, w Window) (x, y int) {
	t.Helper()
	// The pointer must not hover over the list, whose rows light up.
	if err := c.Move(w.X+1, w.Y+1); err != nil {
		t.Fatal(err)
	}
	r := image.Rect(w.X, w.Y, w.X+w.W, w.Y+w.H)
	// The list's rows are left-aligned text: probe at three quarters of
	// the width, scanning up from the bottom.
	probe := r.Min.X + r.Dx()*3/4
	// Poll until the app has painted the list, and two screenshots agree.
	var img *image.RGBA
	last, top, bottom := -1, 0, 0
	deadline := time.Now().Add(patience)
	for {
		var err error
		if img, err = c.Capture(r); err != nil {
			t.Fatal(err)
		}
		// Below the list is the window's margin, in its background colour;
		// the list is not (white, or a lit row), up to the 4-pixel gap
		// above it.
		bg := img.RGBAAt(r.Min.X+2, r.Max.Y-2)
		isBG := func(y int) bool { return img.RGBAAt(probe, y) == bg }
		bottom = r.Max.Y - 1
		for bottom > r.Min.Y && isBG(bottom) {
			bottom--
		}
		top = bottom
		for top > r.Min.Y && !isBG(top-1) {
			top--
		}
		if bottom-top >= 100 && top == last {
			break
		}
		if time.Now().After(deadline) {
			save(t, img)
			t.Fatalf("found no list at x=%d of %v (from y=%d to %d); is the test app laid out differently?", probe, r, top, bottom)
		}
		last = top
		time.Sleep(50 * time.Millisecond)
	}
	// The event box is 40 pixels high, 4 (the box's spacing) above the
	// list; its label is centred.
	x, y = r.Min.X+r.Dx()/2, top-4-20
	dark := 0
	for py := y - 15; py <= y+15; py++ {
		for px := x - 100; px < x+100; px++ {
			if p := img.RGBAAt(px, py); p.R < 100 && p.G < 100 && p.B < 100 {
				dark++
			}
		}
	}
	if dark < 20 {
		save(t, img)
		t.Fatalf("no label text around (%d, %d), where the click area should be", x, y)
	}
	return x, y
}

// save keeps a screenshot for a failing test to look at.
func save(t *testing.T, img image.Image) {
	f := filepath.Join(os.TempDir(), strings.ReplaceAll(t.Name(), "/", "_")+".png")
	var b bytes.Buffer
	if png.Encode(&b, img) == nil && os.WriteFile(f, b.Bytes(), 0o644) == nil {
		t.Logf("screenshot saved to %s", f)
	}
}

// colours counts the distinct colours in img, up to 1000.
func colours(img *image.RGBA) int {
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 1000; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			seen[img.RGBAAt(x, y)] = true
		}
	}
	return len(seen)
}

func TestNoWindowManager(t *testing.T) {
	d := axtest.New(t, axtest.Options{})
	c := connect(t)
	ctx := context.Background()

	// Nobody has copied anything on a new desktop, nor has the focus.
	if _, err := c.ReadClipboard(ctx, "clipboard"); !errors.Is(err, ErrNoOwner) {
		t.Errorf("ReadClipboard on a new desktop = %v, want ErrNoOwner", err)
	}
	if w, ok, err := c.ActiveWindow(); ok || err != nil {
		t.Errorf("ActiveWindow on a new desktop = %v, %v, %v; want nothing", w, ok, err)
	}

	a := launch(t, d, c, "A")
	b := launch(t, d, c, "B")
	ws, err := c.Windows()
	if err != nil || len(ws) != 2 {
		t.Errorf("Windows() = %v, %v; want the two apps' windows", ws, err)
	}
	activate(t, c, a.win)
	activate(t, c, b.win)
	activate(t, c, a.win)

	if err := c.TypeText(ctx, "typed without a WM ß"); err != nil {
		t.Fatal(err)
	}
	a.waitLog(t, "name=typed without a WM ß")

	// Without a window manager windows keep the size the app asked for.
	x, y := clickArea(t, c, a.win)
	if err := c.Click(x, y, 3, 1); err != nil {
		t.Fatal(err)
	}
	a.waitLog(t, "area clicked button=3")

	// The wheel scrolls the list under the pointer: its pixels move.
	list := image.Rect(a.win.X, y+30, a.win.X+a.win.W, a.win.Y+a.win.H-10)
	before, err := c.Capture(list)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Scroll(x, y+100, 3); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(patience)
	for {
		after, err := c.Capture(list)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before.Pix, after.Pix) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list did not move after Scroll")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.Scroll(x, y, 0); err == nil {
		t.Error("Scroll by 0 succeeded")
	}
}

// desktop starts a desktop for a benchmark.
func desktop(b *testing.B, o axtest.Options) *axtest.Desktop {
	b.Helper()
	axtest.Require(b)
	d, err := axtest.Start(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.Close)
	for _, kv := range d.Env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	return d
}

func BenchmarkCapture(b *testing.B) {
	d := desktop(b, axtest.Options{WM: true})
	c := connect(b)
	launch(b, d, c, "A") // a full screen of widgets, not a black one
	w, h := c.ScreenSize()
	b.Run("GetImage", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.Capture(image.Rect(0, 0, w, h)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetImage+Scale", func(b *testing.B) {
		for b.Loop() {
			img, err := c.Capture(image.Rect(0, 0, w, h))
			if err != nil {
				b.Fatal(err)
			}
			Scale(img, 640, 640)
		}
	})
	b.Run("GetImage+PNG", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			img, err := c.Capture(image.Rect(0, 0, w, h))
			if err != nil {
				b.Fatal(err)
			}
			buf.Reset()
			if err := png.Encode(&buf, img); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPressKeys(b *testing.B) {
	d := desktop(b, axtest.Options{WM: true})
	c := connect(b)
	launch(b, d, c, "A")
	ctx := context.Background()
	for _, keys := range []string{
		// Not on the keyboard: bound to a spare key, the app pinged, the
		// key restored. First, as the next floods the app with events.
		"€",
		"shift+left",
	} {
		b.Run(keys, func(b *testing.B) {
			combos, err := ParseKeys(keys)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := c.PressKeys(ctx, combos); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
