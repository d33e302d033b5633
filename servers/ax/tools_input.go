package ax

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/ax/atspi"
	"github.com/domo-agent/domo/servers/ax/x11"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// inputTarget settles where keys go. With a ref, that element's app must
// own the focused window, and the element gets the keyboard focus. Without
// one, the app of the latest snapshot or action must still own it. It
// returns what the keys went to.
func (d *Desktop) inputTarget(ctx context.Context, ref string) (string, *refEntry, error) {
	if ref != "" {
		e, _, err := d.resolve(ctx, ref, false)
		if err != nil {
			return "", nil, err
		}
		if err := d.lock(ctx, e.app); err != nil {
			return "", nil, err
		}
		fctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
		defer cancel()
		if err := d.a11y.GrabFocus(fctx, e.obj); err != nil {
			if fctx.Err() != nil && ctx.Err() == nil {
				return "", nil, notAnswering(e.app, d.o.Timeout)
			}
			return "", nil, fmt.Errorf("give %s the focus: %w", e, err)
		}
		d.target = e.app
		return e.String() + " of " + e.app.String(), e, nil
	}
	if d.target != nil {
		if err := d.lock(ctx, d.target); err != nil {
			return "", nil, err
		}
		return "the focused element of " + d.target.String(), nil, nil
	}
	x, err := d.display()
	if err != nil {
		return "", nil, err
	}
	if w, ok, err := x.ActiveWindow(); err == nil && ok {
		return fmt.Sprintf("window %q (pid %d), the focused one", w.Title, w.PID), nil, nil
	}
	return "the focused window", nil, nil
}

type keyboardArgs struct {
	Keys   string `json:"keys" jsonschema:"a key or shortcut such as Enter, ctrl+shift+t, alt+F4, shift+Tab; several separated by spaces are pressed in turn (ctrl+a ctrl+c)"`
	Ref    string `json:"ref,omitempty" jsonschema:"give this element the focus first, e.g. @e12"`
	Repeat int    `json:"repeat,omitempty" jsonschema:"press the keys this many times"`
}

func (a *keyboardArgs) Validate() error {
	_, err := x11.ParseKeys(a.Keys)
	return err
}

func (s *Server) keyboardTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_keyboard",
		"Press a key or shortcut (ctrl+shift+t, Enter, alt+F4, ctrl+a ctrl+c) in the focused window. "+
			"Refused with \"target app lost focus\" when the app you were working with no longer has the focused window.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in keyboardArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) {
				combos, err := x11.ParseKeys(in.Keys)
				if err != nil {
					return "", err
				}
				x, err := d.display()
				if err != nil {
					return "", err
				}
				to, _, err := d.inputTarget(ctx, in.Ref)
				if err != nil {
					return "", err
				}
				n := max(in.Repeat, 1)
				for range n {
					if err := x.PressKeys(ctx, combos); err != nil {
						return "", err
					}
				}
				times := ""
				if n > 1 {
					times = fmt.Sprintf(" %d times", n)
				}
				return fmt.Sprintf("Pressed %s%s in %s.", in.Keys, times, to), nil
			})
		},
		mcpkit.Title("Press keys"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetInt(sc, "repeat", 1, 100, 1) }))
}

type typeTextArgs struct {
	Text   string `json:"text" jsonschema:"the text to type, as keystrokes; newlines press Enter"`
	Ref    string `json:"ref,omitempty" jsonschema:"give this element the focus first, e.g. @e12"`
	Submit bool   `json:"submit,omitempty" jsonschema:"press Enter afterwards"`
}

func (a *typeTextArgs) Validate() error {
	if a.Text == "" && !a.Submit {
		return errors.New("text is empty")
	}
	if utf8.RuneCountInString(a.Text) > 10_000 {
		return errors.New("text is longer than 10,000 characters; to fill a field, use ax_action set_value")
	}
	if !utf8.ValidString(a.Text) {
		return errors.New("text is not valid UTF-8")
	}
	return nil
}

func (s *Server) typeTextTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_type_text",
		"Type text as keystrokes into the focused element (or the element of ref). To replace a field's whole text, ax_action set_value is faster.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in typeTextArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) {
				x, err := d.display()
				if err != nil {
					return "", err
				}
				to, e, err := d.inputTarget(ctx, in.Ref)
				if err != nil {
					return "", err
				}
				if err := x.TypeText(ctx, in.Text); err != nil {
					return "", err
				}
				if in.Submit {
					enter, _ := x11.ParseKeys("Enter")
					if err := x.PressKeys(ctx, enter); err != nil {
						return "", err
					}
				}
				out := fmt.Sprintf("Typed %d characters into %s", utf8.RuneCountInString(in.Text), to)
				if in.Submit {
					out += " and pressed Enter"
				}
				out += "."
				if e != nil {
					if v := d.typedValue(ctx, e, in.Text); v != "" {
						out += " It now holds " + v + "."
					}
				}
				return out, nil
			})
		},
		mcpkit.Title("Type text"))
}

type mouseClickArgs struct {
	X      int    `json:"x" jsonschema:"screen x in pixels (ax_get_ui_state bounds; a scaled screenshot's coordinates must be scaled back)"`
	Y      int    `json:"y" jsonschema:"screen y in pixels"`
	Button string `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Double bool   `json:"double,omitempty" jsonschema:"click twice"`
}

func (s *Server) mouseClickTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_mouse_click",
		"Click at a point on the screen. A fallback for what the accessibility tree does not show: prefer ax_action with a ref, which cannot miss.",
		mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.No, OpenWorld: mcpkit.No},
		func(ctx context.Context, _ mcp.CallToolRequest, in mouseClickArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) {
				x, err := d.display()
				if err != nil {
					return "", err
				}
				w, h := x.ScreenSize()
				if in.X < 0 || in.Y < 0 || in.X >= w || in.Y >= h {
					return "", fmt.Errorf("(%d,%d) is off the screen, which is %dx%d", in.X, in.Y, w, h)
				}
				to, _, err := d.inputTarget(ctx, "")
				if err != nil {
					return "", err
				}
				button := map[string]int{"": 1, "left": 1, "middle": 2, "right": 3}[in.Button]
				count := 1
				if in.Double {
					count = 2
				}
				if err := x.Click(in.X, in.Y, button, count); err != nil {
					return "", err
				}
				return fmt.Sprintf("Clicked %s at (%d,%d) with %s focused.", cmp.Or(in.Button, "left"), in.X, in.Y, to), nil
			})
		},
		mcpkit.Title("Click at a point"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetEnum(sc, "button", "left", "right", "middle")
			lo, hi := 0.0, 65535.0
			for _, p := range []string{"x", "y"} {
				sc.Properties[p].Minimum, sc.Properties[p].Maximum = &lo, &hi
			}
		}))
}

type screenshotArgs struct {
	Ref       string `json:"ref,omitempty" jsonschema:"only this element, by ref"`
	App       string `json:"app,omitempty" jsonschema:"only this app's window: \"focused\", its name, a window title or its pid"`
	MaxWidth  int    `json:"max_width,omitempty" jsonschema:"scale the picture down to at most this width"`
	MaxHeight int    `json:"max_height,omitempty" jsonschema:"scale the picture down to at most this height"`
	Format    string `json:"format,omitempty" jsonschema:"png (default) or jpeg (smaller)"`
}

func (a *screenshotArgs) Validate() error {
	if a.Ref != "" && a.App != "" {
		return errors.New("give ref or app, not both")
	}
	return nil
}

func (s *Server) screenshotTool() mcpkit.Tool {
	return mcpkit.NewTool("ax_screenshot",
		"A picture of the screen, an app's window (app) or one element (ref). A fallback: ax_get_ui_state shows the same as text, with refs to act on.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in screenshotArgs) (*mcp.CallToolResult, error) {
			var data []byte
			res, err := s.do(ctx, func(ctx context.Context, d *Desktop) (string, error) {
				var desc string
				var err error
				data, desc, err = d.screenshot(ctx, in)
				return desc, err
			})
			if err != nil || res == nil || res.IsError {
				return res, err
			}
			mime := "image/png"
			if in.Format == "jpeg" {
				mime = "image/jpeg"
			}
			return mcp.NewToolResultImage(res.Content[0].(mcp.TextContent).Text, base64.StdEncoding.EncodeToString(data), mime), nil
		},
		mcpkit.Title("Screenshot"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetEnum(sc, "format", "png", "jpeg")
			mcpkit.SetInt(sc, "max_width", 64, 8192, 1280)
			mcpkit.SetInt(sc, "max_height", 64, 8192, 1024)
		}))
}

func (d *Desktop) screenshot(ctx context.Context, in screenshotArgs) ([]byte, string, error) {
	x, err := d.display()
	if err != nil {
		return nil, "", err
	}
	sw, sh := x.ScreenSize()
	area, what := image.Rect(0, 0, sw, sh), "the screen"
	switch {
	case in.Ref != "":
		e, n, err := d.resolve(ctx, in.Ref, true)
		if err != nil {
			return nil, "", err
		}
		if n.Bounds.Empty() || !n.States.Has(atspi.StateShowing) {
			return nil, "", fmt.Errorf("%s is not on screen; use ax_action scroll_into_view first", e)
		}
		area, what = image.Rect(n.Bounds.X, n.Bounds.Y, n.Bounds.X+n.Bounds.W, n.Bounds.Y+n.Bounds.H), e.String()
	case in.App != "":
		a, err := d.pickApp(ctx, in.App)
		if err != nil {
			return nil, "", err
		}
		wins, err := x.Windows()
		if err != nil {
			return nil, "", err
		}
		found := false
		for _, w := range wins {
			if w.PID == a.PID && w.Visible && w.W > 0 && w.H > 0 {
				area, what, found = image.Rect(w.X, w.Y, w.X+w.W, w.Y+w.H), fmt.Sprintf("window %q of %s", w.Title, appOf(a)), true
				break
			}
		}
		if !found {
			return nil, "", fmt.Errorf("%s has no window on screen", appOf(a))
		}
	}
	area = area.Intersect(image.Rect(0, 0, sw, sh))
	if area.Empty() {
		return nil, "", fmt.Errorf("%s is off the screen", what)
	}
	img, err := x.Capture(area)
	if err != nil {
		return nil, "", err
	}
	scaled := x11.Scale(img, cmp.Or(in.MaxWidth, 1280), cmp.Or(in.MaxHeight, 1024))
	var buf bytes.Buffer
	if in.Format == "jpeg" {
		err = jpeg.Encode(&buf, scaled, &jpeg.Options{Quality: 80})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, scaled)
	}
	if err != nil {
		return nil, "", err
	}
	b := scaled.Bounds()
	desc := fmt.Sprintf("Screenshot of %s: %dx%d at (%d,%d) on a %dx%d screen", what, area.Dx(), area.Dy(), area.Min.X, area.Min.Y, sw, sh)
	if b.Dx() != area.Dx() {
		desc += fmt.Sprintf(", scaled to %dx%d: multiply the picture's coordinates by %.3f and add (%d,%d) for ax_mouse_click",
			b.Dx(), b.Dy(), float64(area.Dx())/float64(b.Dx()), area.Min.X, area.Min.Y)
	} else if area.Min != (image.Point{}) {
		desc += fmt.Sprintf(": add (%d,%d) to the picture's coordinates for ax_mouse_click", area.Min.X, area.Min.Y)
	}
	return buf.Bytes(), desc + ".", nil
}

// typedValue reads a field back after typing into it, once it shows the
// text.
func (d *Desktop) typedValue(ctx context.Context, e *refEntry, typed string) string {
	n, err := d.settle(ctx, e, func(n *atspi.Node) bool { return strings.Contains(n.Value, typed) })
	if err != nil {
		return ""
	}
	return valueText(n)
}
