package argcheck

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	s, err := Compile("read", []byte(`{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		want       []string // substrings of the error; none means valid
	}{
		{"valid", `{"path":"a","head":2}`, nil},
		{"missing", `{}`, []string{"missing property 'path'"}},
		{"wrong type and range", `{"path":7,"head":0}`, []string{"path: got number, want string", "head: minimum: got 0, want 1"}},
		{"unknown property", `{"path":"a","mode":"x"}`, []string{"additional properties 'mode'"}},
		{"not JSON", `{"path":`, []string{"not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Check([]byte(tt.args))
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := Compile("bad", []byte(`{"type":"nonsense"}`)); err == nil {
		t.Error("a schema with an unknown type compiled")
	}
}
