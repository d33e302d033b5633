package x11

import (
	"errors"
	"fmt"
	"image"
	"math/bits"

	"github.com/jezek/xgb/xproto"
	"golang.org/x/image/draw"
)

// stripBytes bounds one GetImage reply. The X protocol limits requests,
// not replies, so a whole screen fits in one; strips only keep each
// buffer xgb allocates modest on a very large screen.
const stripBytes = 16 << 20

// pixelFormat is how the root window's pixels are laid out in a ZPixmap.
type pixelFormat struct {
	bpp, pad               int // bits per pixel; scanline pad in bits
	lsb                    bool
	red, green, blue       uint32
	rShift, gShift, bShift int
	rBits, gBits, bBits    int
}

// format reads the root window's pixel layout from the connection setup.
func (c *Conn) format() (pixelFormat, error) {
	var f pixelFormat
	depth := c.screen.RootDepth
	for _, pf := range c.setup.PixmapFormats {
		if pf.Depth == depth {
			f.bpp, f.pad = int(pf.BitsPerPixel), int(pf.ScanlinePad)
		}
	}
	for _, d := range c.screen.AllowedDepths {
		for _, v := range d.Visuals {
			if v.VisualId == c.screen.RootVisual {
				if v.Class != xproto.VisualClassTrueColor && v.Class != xproto.VisualClassDirectColor {
					return f, fmt.Errorf("the screen uses a %d-bit colour-mapped visual, which screenshots do not support", depth)
				}
				f.red, f.green, f.blue = v.RedMask, v.GreenMask, v.BlueMask
			}
		}
	}
	switch {
	case f.bpp != 8 && f.bpp != 16 && f.bpp != 24 && f.bpp != 32:
		return f, fmt.Errorf("the screen's depth %d has %d bits per pixel, which screenshots do not support", depth, f.bpp)
	case f.red == 0 || f.green == 0 || f.blue == 0:
		return f, errors.New("the X server did not describe the screen's colours")
	case f.pad == 0 || f.pad%8 != 0:
		return f, fmt.Errorf("the X server pads scanlines to %d bits, which screenshots do not support", f.pad)
	}
	f.lsb = c.setup.ImageByteOrder == xproto.ImageOrderLSBFirst
	f.setShifts()
	return f, nil
}

func (f *pixelFormat) setShifts() {
	f.rShift, f.rBits = bits.TrailingZeros32(f.red), bits.OnesCount32(f.red)
	f.gShift, f.gBits = bits.TrailingZeros32(f.green), bits.OnesCount32(f.green)
	f.bShift, f.bBits = bits.TrailingZeros32(f.blue), bits.OnesCount32(f.blue)
}

// Capture returns the pixels of rectangle r of the screen, with alpha
// 255. A rectangle reaching past the screen's edge is clipped to it; the
// image's bounds are the clipped rectangle, in screen coordinates.
func (c *Conn) Capture(r image.Rectangle) (*image.RGBA, error) {
	w, h := c.ScreenSize()
	screen := image.Rect(0, 0, w, h)
	if r.Empty() {
		return nil, fmt.Errorf("rectangle %v is empty: give a width and height of at least 1", r)
	}
	clip := r.Intersect(screen)
	if clip.Empty() {
		return nil, fmt.Errorf("rectangle %v is outside the %d×%d screen", r, w, h)
	}
	f, err := c.format()
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(clip)
	cw := clip.Dx()
	stride := (cw*f.bpp + f.pad - 1) / f.pad * f.pad / 8
	rows := max(1, stripBytes/stride)
	// Ask for every strip before reading any reply.
	type strip struct {
		y, n   int
		cookie xproto.GetImageCookie
	}
	var strips []strip
	for y := clip.Min.Y; y < clip.Max.Y; y += rows {
		n := min(rows, clip.Max.Y-y)
		strips = append(strips, strip{y, n, xproto.GetImage(c.x, xproto.ImageFormatZPixmap,
			xproto.Drawable(c.root), int16(clip.Min.X), int16(y), uint16(cw), uint16(n), 0xffffffff)})
	}
	for _, s := range strips {
		reply, err := s.cookie.Reply()
		if err != nil {
			return nil, c.xerr("read the screen", err)
		}
		if len(reply.Data) < stride*s.n {
			return nil, fmt.Errorf("the X server sent %d bytes for a %d×%d image, want %d", len(reply.Data), cw, s.n, stride*s.n)
		}
		for row := range s.n {
			src := reply.Data[row*stride:]
			dst := img.Pix[img.PixOffset(clip.Min.X, s.y+row):]
			f.convert(dst[:4*cw], src)
		}
	}
	return img, nil
}

// convert turns one scanline of X pixels into RGBA.
func (f *pixelFormat) convert(dst, src []byte) {
	if f.bpp == 32 && f.lsb && f.red == 0xff0000 && f.green == 0xff00 && f.blue == 0xff {
		// The common case (BGRX in memory): a byte shuffle.
		for i, j := 0, 0; i+3 < len(dst); i, j = i+4, j+4 {
			dst[i], dst[i+1], dst[i+2], dst[i+3] = src[j+2], src[j+1], src[j], 0xff
		}
		return
	}
	bpp := f.bpp / 8
	for i, j := 0, 0; i+3 < len(dst); i, j = i+4, j+bpp {
		var v uint32
		for k := range bpp {
			b := uint32(src[j+k])
			if f.lsb {
				v |= b << (8 * k)
			} else {
				v = v<<8 | b
			}
		}
		dst[i] = channel(v&f.red>>f.rShift, f.rBits)
		dst[i+1] = channel(v&f.green>>f.gShift, f.gBits)
		dst[i+2] = channel(v&f.blue>>f.bShift, f.bBits)
		dst[i+3] = 0xff
	}
}

// channel scales an n-bit colour value to 8 bits.
func channel(v uint32, n int) byte {
	switch {
	case n == 8:
		return byte(v)
	case n > 8:
		return byte(v >> (n - 8))
	default:
		return byte(v * 255 / (1<<n - 1))
	}
}

// Scale shrinks img to fit within maxW×maxH, keeping its aspect ratio.
// It returns img itself when it already fits, or when a limit is not
// positive.
func Scale(img image.Image, maxW, maxH int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if maxW <= 0 || maxH <= 0 || (w <= maxW && h <= maxH) {
		return img
	}
	f := min(float64(maxW)/float64(w), float64(maxH)/float64(h))
	nw, nh := max(1, int(float64(w)*f+0.5)), max(1, int(float64(h)*f+0.5))
	nw, nh = min(nw, maxW), min(nh, maxH)
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	scaler.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// scaler is the interpolator Scale uses, chosen by BenchmarkScale.
var scaler draw.Scaler = draw.ApproxBiLinear
