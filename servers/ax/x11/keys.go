package x11

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Combo is one key press, possibly with modifiers held: "ctrl+shift+t".
type Combo struct {
	// Mods are the modifiers held, canonical and in the order ctrl,
	// shift, alt, super.
	Mods []string
	// Key is the canonical key name ("t", "enter", "f4", "/"); "" when
	// the combo is only modifiers, which are then pressed and released.
	Key string
	sym keysym
}

// String is the combo in the form ParseKeys reads.
func (k Combo) String() string {
	parts := append([]string{}, k.Mods...)
	if k.Key != "" {
		parts = append(parts, k.Key)
	}
	return strings.Join(parts, "+")
}

// MaxCombos is the most combos one ParseKeys accepts.
const MaxCombos = 50

// modifier is a modifier's canonical name and the keysym pressed for it.
type modifier struct {
	name string
	sym  keysym
}

// modifiers in canonical order.
var modifiers = []modifier{
	{"ctrl", 0xffe3},  // Control_L
	{"shift", 0xffe1}, // Shift_L
	{"alt", 0xffe9},   // Alt_L
	{"super", 0xffeb}, // Super_L
}

var modAliases = map[string]string{
	"ctrl": "ctrl", "control": "ctrl", "ctl": "ctrl",
	"shift": "shift",
	"alt":   "alt", "option": "alt", "opt": "alt",
	"super": "super", "cmd": "super", "command": "super", "meta": "super", "win": "super", "windows": "super",
}

// keyNames maps the canonical names of keys that are not single
// characters to keysyms.
var keyNames = map[string]keysym{
	"enter": 0xff0d, "tab": 0xff09, "escape": 0xff1b, "backspace": 0xff08,
	"delete": 0xffff, "insert": 0xff63, "home": 0xff50, "end": 0xff57,
	"pageup": 0xff55, "pagedown": 0xff56,
	"left": 0xff51, "up": 0xff52, "right": 0xff53, "down": 0xff54,
	"space": 0x20, "menu": 0xff67, "printscreen": 0xff61, "pause": 0xff13,
	"scrolllock": 0xff14, "numlock": 0xff7f, "capslock": 0xffe5,
}

// keyAliases maps other spellings to canonical names; names of punctuation
// map to the character itself.
var keyAliases = map[string]string{
	"return": "enter", "esc": "escape", "del": "delete", "ins": "insert",
	"pgup": "pageup", "page_up": "pageup", "prior": "pageup",
	"pgdn": "pagedown", "pgdown": "pagedown", "page_down": "pagedown", "next": "pagedown",
	"arrowleft": "left", "arrowup": "up", "arrowright": "right", "arrowdown": "down",
	"spacebar": "space", "bksp": "backspace", "back": "backspace",
	"print": "printscreen", "prtsc": "printscreen", "prtscr": "printscreen", "apps": "menu",
	"plus": "+", "minus": "-", "hyphen": "-", "comma": ",", "period": ".", "dot": ".",
	"slash": "/", "backslash": "\\", "semicolon": ";", "colon": ":",
	"apostrophe": "'", "quote": "'", "doublequote": "\"", "grave": "`", "backtick": "`",
	"equal": "=", "equals": "=", "bracketleft": "[", "bracketright": "]",
	"braceleft": "{", "braceright": "}", "parenleft": "(", "parenright": ")",
	"less": "<", "greater": ">", "question": "?", "exclam": "!", "at": "@",
	"numbersign": "#", "hash": "#", "dollar": "$", "percent": "%", "asciicircum": "^",
	"caret": "^", "ampersand": "&", "asterisk": "*", "star": "*", "underscore": "_",
	"bar": "|", "pipe": "|", "asciitilde": "~", "tilde": "~",
}

// someKeys is what an unknown-key error suggests.
const someKeys = "a single character (a, 1, /), enter, tab, escape, backspace, delete, " +
	"space, up, down, left, right, home, end, pageup, pagedown, insert, f1…f24, menu, " +
	"printscreen, plus, minus, comma, period, slash; modifiers ctrl, shift, alt, super"

// ParseKeys reads a space-separated sequence of key combos such as
// "ctrl+a ctrl+c", "alt+F4", "shift+Tab", "ctrl+plus" or "super". Names
// are case-insensitive, and a single letter means that key: "ctrl+T" is
// the same as "ctrl+t" (add shift for the capital, or use TypeText).
func ParseKeys(s string) ([]Combo, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, errors.New("no keys given: name keys such as \"ctrl+c\" or \"enter\", separated by spaces")
	}
	if len(fields) > MaxCombos {
		return nil, fmt.Errorf("%d key combos given: at most %d per call", len(fields), MaxCombos)
	}
	out := make([]Combo, 0, len(fields))
	for _, f := range fields {
		k, err := parseCombo(f)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

func parseCombo(s string) (Combo, error) {
	// "+" is a separator, so "ctrl++" and "+" name the plus key.
	var parts []string
	switch {
	case s == "+":
		parts = []string{"+"}
	case strings.HasSuffix(s, "++"):
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
	default:
		parts = strings.Split(s, "+")
	}
	var k Combo
	mods := map[string]bool{}
	for i, p := range parts {
		if p == "" {
			return Combo{}, fmt.Errorf("key combo %q has an empty part: write combos as ctrl+shift+t (use \"plus\" for the + key)", s)
		}
		last := i == len(parts)-1
		if m, ok := modAliases[strings.ToLower(p)]; ok {
			mods[m] = true
			continue
		}
		if !last {
			return Combo{}, fmt.Errorf("key combo %q: %q is not a modifier (ctrl, shift, alt, super); only the last part may be a key", s, p)
		}
		name, sym, err := keyName(p)
		if err != nil {
			return Combo{}, fmt.Errorf("key combo %q: %w", s, err)
		}
		k.Key, k.sym = name, sym
	}
	for _, m := range modifiers {
		if mods[m.name] {
			k.Mods = append(k.Mods, m.name)
		}
	}
	return k, nil
}

// keyName returns the canonical name and keysym of a key that is not a
// modifier.
func keyName(p string) (string, keysym, error) {
	if utf8.RuneCountInString(p) == 1 {
		r, _ := utf8.DecodeRuneInString(p)
		if r == utf8.RuneError || unicode.IsControl(r) {
			return "", 0, fmt.Errorf("%q is not a key name", p)
		}
		r = unicode.ToLower(r)
		return string(r), runeKeysym(r), nil
	}
	lower := strings.ToLower(p)
	if a, ok := keyAliases[lower]; ok {
		lower = a
		if utf8.RuneCountInString(lower) == 1 {
			r, _ := utf8.DecodeRuneInString(lower)
			return lower, runeKeysym(r), nil
		}
	}
	if sym, ok := keyNames[lower]; ok {
		return lower, sym, nil
	}
	var n int
	if _, err := fmt.Sscanf(lower, "f%d", &n); err == nil && fmt.Sprintf("f%d", n) == lower && n >= 1 && n <= 24 {
		return lower, keysym(0xffbe + n - 1), nil // F1 is 0xffbe; F1…F35 are consecutive
	}
	return "", 0, fmt.Errorf("unknown key %q; use %s", p, someKeys)
}

// KeyNames lists the key names ParseKeys knows besides single characters
// and f1…f24, sorted; for documentation and error messages.
func KeyNames() []string {
	var names []string
	for n := range keyNames {
		names = append(names, n)
	}
	for n := range keyAliases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
