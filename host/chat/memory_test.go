package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestMemoryCommand(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantTool string // "" when no tool may run
		wantArgs string
		wantOut  string
	}{
		{name: "list", line: "/memory", wantTool: "memory_list", wantArgs: `{"limit":20}`},
		{name: "list by name", line: "/memory list", wantTool: "memory_list", wantArgs: `{"limit":20}`},
		{name: "search", line: "/memory search green  tea", wantTool: "memory_recall", wantArgs: `{"limit":20,"query":"green  tea"}`},
		{name: "search without words", line: "/memory search", wantOut: "usage: /memory"},
		{name: "forget", line: "/memory forget m12, 13 M4", wantTool: "memory_forget", wantArgs: `{"ids":["m12","m13","m4"]}`},
		{name: "forget a word", line: "/memory forget tea", wantOut: "usage: /memory forget ID"},
		{name: "forget nothing", line: "/memory forget", wantOut: "usage: /memory forget ID"},
		{name: "stats", line: "/memory stats", wantTool: "memory_stats", wantArgs: `{}`},
		{name: "unknown", line: "/memory purge", wantOut: "usage: /memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			var tool, args string
			r := &REPL{T: Plain(&out), Host: Host{Memory: func(_ context.Context, w io.Writer, name string, a map[string]any) error {
				b, _ := json.Marshal(a)
				tool, args = name, string(b)
				fmt.Fprintln(w, "the tool's text")
				return nil
			}}}
			r.command(context.Background(), tt.line)
			if tool != tt.wantTool || args != tt.wantArgs {
				t.Errorf("called %q %s, want %q %s", tool, args, tt.wantTool, tt.wantArgs)
			}
			if tt.wantOut != "" && !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output %q, want %q", out.String(), tt.wantOut)
			}
			if tt.wantTool != "" && out.String() != "the tool's text\n" {
				t.Errorf("output %q", out.String())
			}
		})
	}
	t.Run("an error is shown cleaned", func(t *testing.T) {
		var out strings.Builder
		r := &REPL{T: Plain(&out), Host: Host{Memory: func(context.Context, io.Writer, string, map[string]any) error {
			return errors.New("memory is off\x1b[2J")
		}}}
		r.command(context.Background(), "/memory")
		if got := out.String(); !strings.Contains(got, "memory is off") || strings.ContainsRune(got, '\x1b') {
			t.Errorf("output %q", got)
		}
	})
	t.Run("not available", func(t *testing.T) {
		var out strings.Builder
		r := &REPL{T: Plain(&out)}
		r.command(context.Background(), "/memory stats")
		if out.String() != "not available\n" {
			t.Errorf("output %q", out.String())
		}
	})
}
