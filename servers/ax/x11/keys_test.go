package x11

import (
	"strings"
	"testing"
)

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // Combo.String() of each
		syms []keysym
	}{
		{name: "shortcut", in: "ctrl+shift+t", want: []string{"ctrl+shift+t"}, syms: []keysym{'t'}},
		{name: "case-insensitive", in: "Ctrl+Shift+T", want: []string{"ctrl+shift+t"}, syms: []keysym{'t'}},
		{name: "modifier order is canonical", in: "shift+ctrl+t", want: []string{"ctrl+shift+t"}},
		{name: "repeated modifier", in: "ctrl+ctrl+a", want: []string{"ctrl+a"}},
		{name: "enter", in: "Enter", want: []string{"enter"}, syms: []keysym{0xff0d}},
		{name: "return alias", in: "return", want: []string{"enter"}},
		{name: "sequence", in: "ctrl+a  ctrl+c", want: []string{"ctrl+a", "ctrl+c"}},
		{name: "function key", in: "alt+F4", want: []string{"alt+f4"}, syms: []keysym{0xffc1}},
		{name: "f24", in: "f24", want: []string{"f24"}, syms: []keysym{0xffd5}},
		{name: "shift tab", in: "shift+Tab", want: []string{"shift+tab"}, syms: []keysym{0xff09}},
		{name: "plus by name", in: "ctrl+plus", want: []string{"ctrl++"}, syms: []keysym{'+'}},
		{name: "plus literal", in: "ctrl++", want: []string{"ctrl++"}, syms: []keysym{'+'}},
		{name: "plus alone", in: "+", want: []string{"+"}},
		{name: "only a modifier", in: "super", want: []string{"super"}},
		{name: "only modifiers", in: "ctrl+shift", want: []string{"ctrl+shift"}},
		{name: "modifier aliases", in: "control+option+cmd+x ctl+meta+win+y", want: []string{"ctrl+alt+super+x", "ctrl+super+y"}},
		{name: "key aliases", in: "esc del pgup pgdn pageup pagedown", want: []string{"escape", "delete", "pageup", "pagedown", "pageup", "pagedown"}},
		{name: "arrows", in: "up down left right", syms: []keysym{0xff52, 0xff54, 0xff51, 0xff53}},
		{name: "named keys", in: "space tab backspace home end insert menu printscreen", want: []string{"space", "tab", "backspace", "home", "end", "insert", "menu", "printscreen"}},
		{name: "punctuation names", in: "minus comma period slash", want: []string{"-", ",", ".", "/"}},
		{name: "characters", in: "a 1 / é", want: []string{"a", "1", "/", "é"}, syms: []keysym{'a', '1', '/', 0xe9}},
		{name: "non-latin-1", in: "ctrl+€", want: []string{"ctrl+€"}, syms: []keysym{0x010020ac}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKeys(tt.in)
			if err != nil {
				t.Fatalf("ParseKeys(%q): %v", tt.in, err)
			}
			var names []string
			for _, k := range got {
				names = append(names, k.String())
			}
			if tt.want != nil && strings.Join(names, " ") != strings.Join(tt.want, " ") {
				t.Errorf("ParseKeys(%q) = %q, want %q", tt.in, names, tt.want)
			}
			for i, s := range tt.syms {
				if i < len(got) && got[i].sym != s {
					t.Errorf("ParseKeys(%q)[%d] keysym = 0x%x, want 0x%x", tt.in, i, got[i].sym, s)
				}
			}
		})
	}
}

func TestParseKeysErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // in the error
	}{
		{name: "empty", in: "  ", want: "no keys given"},
		{name: "unknown key", in: "ctrl+foo", want: `unknown key "foo"; use a single character`},
		{name: "f25", in: "f25", want: "unknown key"},
		{name: "f0", in: "f0", want: "unknown key"},
		{name: "key before modifier", in: "t+ctrl", want: `"t" is not a modifier`},
		{name: "two keys", in: "a+b", want: "only the last part may be a key"},
		{name: "empty part", in: "ctrl++a", want: "empty part"},
		{name: "trailing plus", in: "ctrl+", want: "empty part"},
		{name: "control character", in: "\x01", want: "is not a key name"},
		{name: "too many", in: strings.Repeat("a ", MaxCombos+1), want: "at most 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseKeys(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseKeys(%q) error = %v, want one containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestTextKeysyms(t *testing.T) {
	got, err := textKeysyms("a\r\nb\tc\rü€")
	if err != nil {
		t.Fatal(err)
	}
	want := []keysym{'a', symReturn, 'b', symTab, 'c', symReturn, 0xfc, 0x010020ac}
	if len(got) != len(want) {
		t.Fatalf("textKeysyms = %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("textKeysyms[%d] = 0x%x, want 0x%x", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"bell\a", "\xff", "del\x7f", "c1\u0085"} {
		if _, err := textKeysyms(bad); err == nil {
			t.Errorf("textKeysyms(%q) succeeded, want an error", bad)
		}
	}
}
