package x11

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/ax/axtest"
	"golang.org/x/image/draw"
)

// patience bounds every wait for the desktop to react. Tests poll until
// the effect shows, and never assert how long it took.
const patience = 15 * time.Second

// app is a running test app (testdata/axapp.py) and the log it writes.
type app struct {
	cmd *exec.Cmd
	log string
	win Window
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
	a := &app{log: filepath.Join(t.TempDir(), title+".log")}
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
	deadline := time.Now().Add(patience)
	for {
		b, _ := os.ReadFile(a.log)
		for l := range strings.SplitSeq(string(b), "\n") {
			if l == line {
				return
			}
		}
		if time.Now().After(deadline) {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Fatalf("the app never logged %q; its last lines: %q", line, lines[max(0, len(lines)-5):])
		}
		time.Sleep(20 * time.Millisecond)
	}
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
		t.Logf("windows: %+v", ws)
		for _, want := range []*app{a, b} {
			found := false
			for _, w := range ws {
				if w.PID == want.cmd.Process.Pid {
					found = true
					if w.ID != want.win.ID || w.Title != filepath.Base(strings.TrimSuffix(want.log, ".log")) {
						t.Errorf("window of pid %d = %+v, want id 0x%x and the app's title", w.PID, w, want.win.ID)
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
}

// clickArea finds the centre of the test app's "Click area": it is the
// 40-pixel-high event box just above the list of items, whose white
// background is the lowest tall white region of the window. A row of
// dark text pixels (its label) must be there, or the layout is not what
// this expects.
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
			t.Fatalf("found no list at x=%d of %v (white from y=%d to %d); is the test app laid out differently?", probe, r, top, bottom)
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

// TestCaptureStrips takes a screenshot too big for one reply, and checks
// the strips join up: the rows on either side of a join match a small
// screenshot of just those rows.
func TestCaptureStrips(t *testing.T) {
	const w, h = 3840, 2400 // 36 MiB: three strips
	d := axtest.New(t, axtest.Options{WM: true, Width: w, Height: h})
	c := connect(t)
	launch(t, d, c, "A") // the window manager makes it fill the screen
	rows := stripBytes / (w * 4)
	join := image.Rect(0, rows-2, w, rows+2)
	deadline := time.Now().Add(patience)
	for {
		full, err := c.Capture(image.Rect(0, 0, w, h))
		if err != nil {
			t.Fatal(err)
		}
		part, err := c.Capture(join)
		if err != nil {
			t.Fatal(err)
		}
		if full.Bounds().Dx() != w || full.Bounds().Dy() != h {
			t.Fatalf("screenshot is %v, want %d×%d", full.Bounds(), w, h)
		}
		same := colours(part) > 2 // the app has painted those rows
		for y := join.Min.Y; y < join.Max.Y && same; y++ {
			for x := 0; x < w && same; x++ {
				same = full.RGBAAt(x, y) == part.RGBAAt(x, y)
			}
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			save(t, full)
			t.Fatalf("rows %d to %d of a full screenshot differ from a screenshot of those rows", join.Min.Y, join.Max.Y)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestNoWindowManager(t *testing.T) {
	d := axtest.New(t, axtest.Options{})
	c := connect(t)
	ctx := context.Background()

	// Nobody has copied anything on a new desktop.
	if _, err := c.ReadClipboard(ctx, "clipboard"); !errors.Is(err, ErrNoOwner) {
		t.Errorf("ReadClipboard on a new desktop = %v, want ErrNoOwner", err)
	}

	a := launch(t, d, c, "A")
	b := launch(t, d, c, "B")
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
}

func TestCapture(t *testing.T) {
	d := axtest.New(t, axtest.Options{})
	c := connect(t)
	launch(t, d, c, "A")
	w, h := c.ScreenSize()
	if w != 1280 || h != 1024 {
		t.Errorf("ScreenSize() = %d×%d, want 1280×1024", w, h)
	}
	full := image.Rect(0, 0, w, h)
	var img *image.RGBA
	deadline := time.Now().Add(patience)
	for {
		var err error
		if img, err = c.Capture(full); err != nil {
			t.Fatal(err)
		}
		if n := colours(img); n > 10 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the screenshot has %d colours: blank", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if img.Bounds() != full {
		t.Errorf("full screenshot bounds %v, want %v", img.Bounds(), full)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 255 {
			t.Fatalf("pixel %d has alpha %d, want 255", i/4, img.Pix[i])
		}
	}

	// The part matches the whole wherever the screen did not change
	// between the shots (the entry's cursor blinks).
	sub := image.Rect(10, 20, 110, 70)
	part, err := c.Capture(sub)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Capture(full)
	if err != nil {
		t.Fatal(err)
	}
	if part.Bounds() != sub {
		t.Errorf("Capture(%v) bounds %v", sub, part.Bounds())
	}
	same := 0
	for y := sub.Min.Y; y < sub.Max.Y; y++ {
		for x := sub.Min.X; x < sub.Max.X; x++ {
			if want := img.RGBAAt(x, y); want == again.RGBAAt(x, y) {
				if part.RGBAAt(x, y) != want {
					t.Fatalf("pixel (%d, %d) of the part is %v, the full screenshots have %v", x, y, part.RGBAAt(x, y), want)
				}
				same++
			}
		}
	}
	if same < sub.Dx()*sub.Dy()/2 {
		t.Errorf("only %d pixels of %v were the same in two screenshots", same, sub)
	}
	if part, err := c.Capture(image.Rect(w-10, h-10, w+10, h+10)); err != nil || part.Bounds() != image.Rect(w-10, h-10, w, h) {
		t.Errorf("Capture across the edge = %v, %v; want it clipped to the screen", part.Bounds(), err)
	}
	for _, r := range []image.Rectangle{image.Rect(w, 0, w+10, 10), image.Rect(-20, -20, -10, -10), image.Rect(5, 5, 5, 10)} {
		if _, err := c.Capture(r); err == nil {
			t.Errorf("Capture(%v) succeeded, want an error", r)
		}
	}

	s := Scale(img, 640, 640)
	if got := s.Bounds(); got.Dx() != 640 || got.Dy() != 512 {
		t.Errorf("Scale(1280×1024, 640, 640) is %v, want 640×512", got)
	}
	if got := Scale(part, 640, 640); got != image.Image(part) {
		t.Error("Scale of an image that fits did not return it unchanged")
	}
	if got := Scale(img, 0, 100); got != image.Image(img) {
		t.Error("Scale with a zero limit did not return the image unchanged")
	}
	if got := Scale(img, 1, 1000).Bounds(); got.Dx() != 1 || got.Dy() != 1 {
		t.Errorf("Scale(1280×1024, 1, 1000) is %v, want 1×1", got)
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

func BenchmarkScale(b *testing.B) {
	// A screen-like image: flat areas with text-like detail.
	img := image.NewRGBA(image.Rect(0, 0, 1280, 1024))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7 % 251)
	}
	scalers := []struct {
		name   string
		scaler draw.Scaler
	}{
		{"NearestNeighbor", draw.NearestNeighbor},
		{"ApproxBiLinear", draw.ApproxBiLinear},
		{"BiLinear", draw.BiLinear},
		{"CatmullRom", draw.CatmullRom},
	}
	for _, tc := range scalers {
		b.Run(tc.name, func(b *testing.B) {
			old := scaler
			scaler = tc.scaler
			defer func() { scaler = old }()
			for b.Loop() {
				Scale(img, 640, 640)
			}
		})
	}
}

func BenchmarkPressKeys(b *testing.B) {
	desktop(b, axtest.Options{})
	c := connect(b)
	keys, err := ParseKeys("shift+left")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if err := c.PressKeys(ctx, keys); err != nil {
			b.Fatal(err)
		}
	}
}
