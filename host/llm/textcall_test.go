package llm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func knownTools(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// callsString renders calls compactly for comparison.
func callsString(calls []ToolCall) string {
	var parts []string
	for _, c := range calls {
		parts = append(parts, c.Name+c.Arguments)
	}
	return strings.Join(parts, " ")
}

var textCallCases = []struct {
	name, content string
	wantText      string
	wantCalls     string // callsString of the calls
}{
	{name: "prose", content: "Just an answer.\nOn two lines.", wantText: "Just an answer.\nOn two lines."},
	{
		name:      "tagged",
		content:   `<tool_call>{"name": "read_file", "arguments": {"path": "/a"}}</tool_call>`,
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "two tagged",
		content:   "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/a\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"list_directory\", \"arguments\": {}}\n</tool_call>",
		wantCalls: `read_file{"path":"/a"} list_directory{}`,
	},
	{
		name:      "prose before a tagged call",
		content:   "Let me look.\n<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"/a\"}}</tool_call>",
		wantText:  "Let me look.",
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "array in a tag",
		content:   `<tool_call>[{"name":"read_file","arguments":{"path":"/a"}},{"name":"read_file","arguments":{"path":"/b"}}]</tool_call>`,
		wantCalls: `read_file{"path":"/a"} read_file{"path":"/b"}`,
	},
	{
		name:      "tag left open at the end",
		content:   `<tool_call>{"name":"read_file","arguments":{"path":"/a"}}`,
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "fenced",
		content:   "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/a\"}}\n```",
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "fenced without a language, prose after",
		content:   "```\n{\"name\": \"list_directory\", \"arguments\": {}}\n```\nDone soon.",
		wantText:  "Done soon.",
		wantCalls: `list_directory{}`,
	},
	{
		name:      "bare with parameters",
		content:   `{"name": "read_file", "parameters": {"path": "/a"}}`,
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "bare after a line of prose",
		content:   "I'll read it.\n\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/a\"}}",
		wantText:  "I'll read it.",
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "two bare on their lines",
		content:   "{\"name\": \"read_file\", \"parameters\": {\"path\": \"/a\"}}\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"/b\"}}",
		wantCalls: `read_file{"path":"/a"} read_file{"path":"/b"}`,
	},
	{
		name:      "arguments as a string",
		content:   `<tool_call>{"name": "read_file", "arguments": "{\"path\": \"/a\"}"}</tool_call>`,
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:      "no arguments",
		content:   `{"name": "list_directory"}`,
		wantCalls: `list_directory{}`,
	},
	{
		name:      "OpenAI's own shape",
		content:   `{"type": "function", "function": {"name": "read_file", "arguments": {"path": "/a"}}}`,
		wantCalls: `read_file{"path":"/a"}`,
	},
	{
		name:     "unknown tool stays text",
		content:  `<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>`,
		wantText: `<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>`,
	},
	{
		name:     "malformed JSON stays text",
		content:  `<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>`,
		wantText: `<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>`,
	},
	{
		name:     "unclosed bare object stays text",
		content:  `{"name": "read_file", "arguments": {"path": "/a"}`,
		wantText: `{"name": "read_file", "arguments": {"path": "/a"}`,
	},
	{
		name:     "arguments not an object",
		content:  `{"name": "read_file", "arguments": [1, 2]}`,
		wantText: `{"name": "read_file", "arguments": [1, 2]}`,
	},
	{
		name:     "data that names a tool",
		content:  `{"name": "read_file", "size": 3}`,
		wantText: `{"name": "read_file", "size": 3}`,
	},
	{
		name:     "object in the middle of a line",
		content:  `Call it like {"name": "read_file", "arguments": {}} yourself.`,
		wantText: `Call it like {"name": "read_file", "arguments": {}} yourself.`,
	},
	{
		name:     "code block",
		content:  "Here:\n```python\nx = {\"name\": \"read_file\", \"arguments\": {}}\n{\"name\": \"read_file\", \"arguments\": {}}\n```\nbye",
		wantText: "Here:\n```python\nx = {\"name\": \"read_file\", \"arguments\": {}}\n{\"name\": \"read_file\", \"arguments\": {}}\n```\nbye",
	},
	{
		name:     "JSON code block that is not a call",
		content:  "```json\n{\"a\": 1}\n```\n{curly prose}",
		wantText: "```json\n{\"a\": 1}\n```\n{curly prose}",
	},
	{
		name:     "a lone tag mentioned in prose",
		content:  "Models print <tool_call> tags.",
		wantText: "Models print <tool_call> tags.",
	},
}

func TestParseTextToolCalls(t *testing.T) {
	known := knownTools("read_file", "list_directory")
	for _, tt := range textCallCases {
		t.Run(tt.name, func(t *testing.T) {
			text, calls := ParseTextToolCalls(tt.content, known)
			if text != tt.wantText || callsString(calls) != tt.wantCalls {
				t.Errorf("ParseTextToolCalls(%q)\n = %q, %q\nwant %q, %q", tt.content, text, callsString(calls), tt.wantText, tt.wantCalls)
			}
			for i, c := range calls {
				if !c.FromText || c.ID != fmt.Sprintf("call_%d", i+1) {
					t.Errorf("call %d = %+v, want FromText and ID call_%d", i, c, i+1)
				}
			}
		})
	}
}

// TestCallScannerChunking feeds every case in pieces of many sizes: the
// result must not depend on how the stream was cut, and what is emitted
// along the way is exactly the prose kept.
func TestCallScannerChunking(t *testing.T) {
	known := knownTools("read_file", "list_directory")
	for _, tt := range textCallCases {
		wantText, wantCalls := ParseTextToolCalls(tt.content, known)
		for _, size := range []int{1, 2, 3, 5, 8, 13, 1000} {
			var emitted strings.Builder
			s := newCallScanner(known, func(p string) { emitted.WriteString(p) })
			for p := range slices.Chunk([]byte(tt.content), size) {
				s.feed(string(p))
			}
			s.finish()
			text, calls := s.result()
			if text != wantText || callsString(calls) != callsString(wantCalls) {
				t.Errorf("%s in pieces of %d = %q, %q; want %q, %q", tt.name, size, text, callsString(calls), wantText, callsString(wantCalls))
			}
			if strings.TrimSpace(emitted.String()) != strings.TrimSpace(text) {
				t.Errorf("%s in pieces of %d emitted %q, want %q", tt.name, size, emitted.String(), text)
			}
		}
	}
}

// TestCallScannerHoldsBack checks what is passed on at once and what waits.
func TestCallScannerHoldsBack(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
		// emitted is what must have been passed on after each piece.
		emitted []string
	}{
		{
			name:    "prose flows",
			pieces:  []string{"Hello ", "there.\n", "Bye"},
			emitted: []string{"Hello ", "Hello there.\n", "Hello there.\nBye"},
		},
		{
			name:    "a tag waits until it closes",
			pieces:  []string{"Sure. <tool", "_call>{\"name\": \"read_file\", ", "\"arguments\": {}}</tool_call>", " Done."},
			emitted: []string{"Sure. ", "Sure. ", "Sure. ", "Sure.  Done."},
		},
		{
			name:    "an object at the start waits until its first key",
			pieces:  []string{"{", "\"na", "me\": \"read_file\"", ", \"arguments\": {}}"},
			emitted: []string{"", "", "", ""},
		},
		{
			name:    "an object whose first key is no call's is released",
			pieces:  []string{"{", "\"answer\": 42}"},
			emitted: []string{"", "{\"answer\": 42}"},
		},
		{
			name:    "a brace that opens no object is released",
			pieces:  []string{"{", "curly} prose"},
			emitted: []string{"", "{curly} prose"},
		},
		{
			name:    "a code block flows once its language is known",
			pieces:  []string{"``", "`go\nfunc", " main() {}\n", "```\nok"},
			emitted: []string{"", "```go\nfunc", "```go\nfunc main() {}\n", "```go\nfunc main() {}\n```\nok"},
		},
		{
			name:    "a json fence waits until it closes",
			pieces:  []string{"```json\n{\"a\":", " 1}\n", "```"},
			emitted: []string{"", "", "```json\n{\"a\": 1}\n```"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var emitted strings.Builder
			s := newCallScanner(knownTools("read_file"), func(p string) { emitted.WriteString(p) })
			for i, p := range tt.pieces {
				s.feed(p)
				if emitted.String() != tt.emitted[i] {
					t.Errorf("after %q emitted %q, want %q", p, emitted.String(), tt.emitted[i])
				}
			}
		})
	}
}

func FuzzParseTextToolCalls(f *testing.F) {
	for _, tt := range textCallCases {
		f.Add(tt.content, uint8(3))
	}
	f.Add("<tool_call><tool_call>{\"name\":\"read_file\"}</tool_call>", uint8(1))
	f.Add("```\n```json\n{\"name\":\"read_file\",\"arguments\":\"\"}\n```", uint8(2))
	f.Add("{\"name\":\"read_file\",\"arguments\":\"{\\\"\"}", uint8(0))
	known := knownTools("read_file", "list_directory")
	f.Fuzz(func(t *testing.T, content string, size uint8) {
		text, calls := ParseTextToolCalls(content, known)
		if len(calls) == 0 && text != content {
			t.Fatalf("no calls, but the text changed: %q -> %q", content, text)
		}
		for _, c := range calls {
			var args map[string]any
			if !known(c.Name) || json.Unmarshal([]byte(c.Arguments), &args) != nil || args == nil {
				t.Fatalf("bad call %+v from %q", c, content)
			}
		}
		s := newCallScanner(known, nil)
		for p := range slices.Chunk([]byte(content), int(size%16)+1) {
			s.feed(string(p))
		}
		s.finish()
		if t2, c2 := s.result(); t2 != text || callsString(c2) != callsString(calls) {
			t.Fatalf("chunked result differs for %q: %q %q vs %q %q", content, t2, callsString(c2), text, callsString(calls))
		}
	})
}
