package x11

import (
	"image/color"
	"testing"
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
