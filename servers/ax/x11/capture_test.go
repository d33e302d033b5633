//go:build unix

package x11

import (
	"image"
	"image/color"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/ax/axtest"
	"golang.org/x/image/draw"
)

// TestConvert checks the pixel layouts other than the common BGRX, which
// Xvfb at depth 24 does not exercise.
func TestConvert(t *testing.T) {
	want := color.RGBA{R: 0xf8, G: 0x84, B: 0x10, A: 0xff}
	tests := []struct {
		name string
		f    pixelFormat
		src  []byte
		want color.RGBA
	}{
		{"BGRX LSB", format(32, true, 0xff0000, 0xff00, 0xff), []byte{0x10, 0x84, 0xf8, 0}, want},
		{"XRGB MSB", format(32, false, 0xff0000, 0xff00, 0xff), []byte{0, 0xf8, 0x84, 0x10}, want},
		{"RGBX LSB (BGR masks)", format(32, true, 0xff, 0xff00, 0xff0000), []byte{0xf8, 0x84, 0x10, 0}, want},
		{"24 bits per pixel", format(24, true, 0xff0000, 0xff00, 0xff), []byte{0x10, 0x84, 0xf8}, want},
		// 0xf8>>3 = 31, 0x84>>2 = 33, 0x10>>3 = 2 → 0xfc22, scaled back up.
		{"RGB565 LSB", format(16, true, 0xf800, 0x7e0, 0x1f), []byte{0x22, 0xfc}, color.RGBA{R: 255, G: 133, B: 16, A: 255}},
		{"30-bit", format(32, true, 0x3ff00000, 0xffc00, 0x3ff), []byte{0x40, 0x40, 0x08, 0x3e}, want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]byte, 8)
			src := append(append([]byte{}, tt.src...), tt.src...)
			tt.f.convert(dst, src)
			for i := 0; i < 8; i += 4 {
				got := color.RGBA{dst[i], dst[i+1], dst[i+2], dst[i+3]}
				if got != tt.want {
					t.Errorf("pixel %d = %v, want %v", i/4, got, tt.want)
				}
			}
		})
	}
}

func format(bpp int, lsb bool, r, g, b uint32) pixelFormat {
	f := pixelFormat{bpp: bpp, pad: 32, lsb: lsb, red: r, green: g, blue: b}
	f.setShifts()
	return f
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
