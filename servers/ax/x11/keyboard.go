package x11

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// fake sends one key event through XTEST. Call with c.input held.
func (c *Conn) fake(press bool, code xproto.Keycode) {
	typ := byte(xproto.KeyRelease)
	if press {
		typ = xproto.KeyPress
	}
	xtest.FakeInput(c.x, typ, byte(code), xproto.TimeCurrentTime, c.root, 0, 0, 0)
}

// tap presses and releases the key for sym, holding shift when the key
// needs it and held does not already hold it.
func (c *Conn) tap(sym keysym, heldShift bool) error {
	p, err := c.key(sym)
	if err != nil {
		return err
	}
	var shift keyPos
	if p.shift && !heldShift {
		if shift, err = c.key(symShift); err != nil {
			return err
		}
		c.fake(true, shift.code)
	}
	c.fake(true, p.code)
	c.fake(false, p.code)
	if shift.code != 0 {
		c.fake(false, shift.code)
	}
	return nil
}

// PressKeys presses each combo in turn through XTEST: its modifiers
// down, the key pressed and released, the modifiers up in reverse order.
// A key that needs shift in the keyboard mapping ("plus") gets it. It
// returns once the X server has processed every event.
func (c *Conn) PressKeys(ctx context.Context, combos []Combo) error {
	c.input.Lock()
	defer c.input.Unlock()
	for i, k := range combos {
		if err := ctx.Err(); err != nil {
			return errors.Join(fmt.Errorf("stopped after %d of %d key combos: %w", i, len(combos), err), c.finish())
		}
		if err := c.combo(k); err != nil {
			return errors.Join(fmt.Errorf("key combo %q: %w", k, err), c.finish())
		}
	}
	return c.finish()
}

func (c *Conn) combo(k Combo) error {
	sym := k.sym
	if k.Key != "" && sym == 0 {
		// A Combo built by hand rather than by ParseKeys.
		var err error
		if _, sym, err = keyName(k.Key); err != nil {
			return err
		}
	}
	var held []xproto.Keycode
	defer func() {
		for i := len(held) - 1; i >= 0; i-- {
			c.fake(false, held[i])
		}
	}()
	shift := false
	for _, given := range k.Mods {
		m := modAliases[strings.ToLower(given)]
		i := slices.IndexFunc(modifiers, func(x modifier) bool { return x.name == m })
		if i < 0 {
			return fmt.Errorf("unknown modifier %q: use ctrl, shift, alt or super", given)
		}
		p, err := c.key(modifiers[i].sym)
		if err != nil {
			return err
		}
		c.fake(true, p.code)
		held = append(held, p.code)
		shift = shift || m == "shift"
	}
	if k.Key == "" {
		return nil
	}
	return c.tap(sym, shift)
}

// TypeText types text as key presses through XTEST, into whatever has the
// keyboard focus: "\n" is Return and "\t" Tab. Characters the keyboard
// lacks are bound to spare keys for a moment (see bindings). It stops
// between characters when ctx ends. Other control characters are refused
// before anything is typed.
func (c *Conn) TypeText(ctx context.Context, text string) error {
	syms, err := textKeysyms(text)
	if err != nil {
		return err
	}
	c.input.Lock()
	defer c.input.Unlock()
	for i, sym := range syms {
		if err := ctx.Err(); err != nil {
			return errors.Join(fmt.Errorf("typing stopped after %d of %d characters: %w", i, len(syms), err), c.finish())
		}
		if err := c.tap(sym, false); err != nil {
			return errors.Join(fmt.Errorf("typing stopped after %d of %d characters: %w", i, len(syms), err), c.finish())
		}
	}
	return c.finish()
}

// textKeysyms converts text to the keysyms to type, one per character.
func textKeysyms(text string) ([]keysym, error) {
	if !utf8.ValidString(text) {
		return nil, errors.New("text is not valid UTF-8")
	}
	runes := []rune(text)
	syms := make([]keysym, 0, len(runes))
	for i, r := range runes {
		switch {
		case r == '\n':
			syms = append(syms, symReturn)
		case r == '\r':
			if i+1 >= len(runes) || runes[i+1] != '\n' {
				syms = append(syms, symReturn)
			}
		case r == '\t':
			syms = append(syms, symTab)
		case unicode.IsControl(r):
			return nil, fmt.Errorf("text has control character %U at character %d, which cannot be typed; use key presses for special keys", r, i+1)
		default:
			syms = append(syms, runeKeysym(r))
		}
	}
	return syms, nil
}
