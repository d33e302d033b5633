package x11

import (
	"fmt"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// MaxClicks is the most presses one Click sends (3 is a triple click).
const MaxClicks = 5

// MaxScroll is the most wheel steps one Scroll sends.
const MaxScroll = 100

// Click moves the pointer to (x, y) in screen coordinates and clicks
// button (1 left, 2 middle, 3 right) count times: 2 is a double click. It
// returns once the X server has processed the events.
func (c *Conn) Click(x, y, button, count int) error {
	if button < 1 || button > 3 {
		return fmt.Errorf("button %d: use 1 (left), 2 (middle) or 3 (right)", button)
	}
	if count < 1 || count > MaxClicks {
		return fmt.Errorf("click count %d: use 1 to %d (2 is a double click)", count, MaxClicks)
	}
	return c.pointer(x, y, byte(button), count)
}

// Scroll moves the pointer to (x, y) and turns the wheel dy steps: down
// when dy is positive, up when negative.
func (c *Conn) Scroll(x, y, dy int) error {
	if dy == 0 || dy > MaxScroll || dy < -MaxScroll {
		return fmt.Errorf("scroll by %d steps: use 1 to %d to scroll down, -1 to -%d to scroll up", dy, MaxScroll, MaxScroll)
	}
	button := byte(5)
	if dy < 0 {
		button, dy = 4, -dy
	}
	return c.pointer(x, y, button, dy)
}

// Move moves the pointer to (x, y) without clicking, as a hover does.
func (c *Conn) Move(x, y int) error {
	return c.pointer(x, y, 0, 0)
}

func (c *Conn) pointer(x, y int, button byte, count int) error {
	w, h := c.ScreenSize()
	if x < 0 || y < 0 || x >= w || y >= h {
		return fmt.Errorf("point (%d, %d) is outside the %d×%d screen", x, y, w, h)
	}
	c.input.Lock()
	defer c.input.Unlock()
	// detail 0: the coordinates are absolute, on the root's screen.
	xtest.FakeInput(c.x, xproto.MotionNotify, 0, xproto.TimeCurrentTime, c.root, int16(x), int16(y), 0)
	for range count {
		xtest.FakeInput(c.x, xproto.ButtonPress, button, xproto.TimeCurrentTime, c.root, 0, 0, 0)
		xtest.FakeInput(c.x, xproto.ButtonRelease, button, xproto.TimeCurrentTime, c.root, 0, 0, 0)
	}
	return c.sync()
}
