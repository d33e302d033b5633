package llm

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

func TestThinkSplitter(t *testing.T) {
	tests := []struct {
		name, content      string
		reasoning, visible string
	}{
		{name: "none", content: "Plain answer.", visible: "Plain answer."},
		{name: "leading block", content: "<think>\nStep one.\n</think>\n\nThe answer.", reasoning: "\nStep one.\n", visible: "The answer."},
		{name: "blanks first", content: "\n <think>x</think>y", reasoning: "x", visible: "y"},
		{name: "left open", content: "<think>still thinking", reasoning: "still thinking"},
		{name: "not at the start", content: "A <think>b</think>", visible: "A <think>b</think>"},
		{name: "another tag", content: "<thinking>b</thinking>", visible: "<thinking>b</thinking>"},
		{name: "only blanks", content: "\n\n", visible: "\n\n"},
		{name: "close tag lookalike", content: "<think>a </thin b</think>c", reasoning: "a </thin b", visible: "c"},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 2, 3, 7, 100} {
			var ts thinkSplitter
			var reasoning, visible strings.Builder
			r := func(s string) { reasoning.WriteString(s) }
			v := func(s string) { visible.WriteString(s) }
			for p := range slices.Chunk([]byte(tt.content), size) {
				ts.feed(string(p), r, v)
			}
			ts.finish(r, v)
			if reasoning.String() != tt.reasoning || visible.String() != tt.visible {
				t.Errorf("%s in pieces of %d: reasoning %q, visible %q; want %q, %q", tt.name, size, &reasoning, &visible, tt.reasoning, tt.visible)
			}
		}
	}
}

// TestToolIndexer feeds chunks as servers send them, indexes missing or
// reused, through the accumulator.
func TestToolIndexer(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string // each chunk's delta.tool_calls
		want   string
	}{
		{
			name:   "indexed",
			chunks: []string{`[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{\"p\":"}}]`, `[{"index":0,"function":{"arguments":"1}"}}]`, `[{"index":1,"id":"b","function":{"name":"list_directory","arguments":"{}"}}]`},
			want:   `read_file{"p":1} list_directory{}`,
		},
		{
			name:   "no index, two in one chunk",
			chunks: []string{`[{"id":"a","function":{"name":"read_file","arguments":"{}"}},{"id":"b","function":{"name":"list_directory","arguments":"{}"}}]`},
			want:   `read_file{} list_directory{}`,
		},
		{
			name:   "no index, streamed arguments",
			chunks: []string{`[{"id":"a","function":{"name":"read_file","arguments":""}}]`, `[{"function":{"arguments":"{}"}}]`, `[{"id":"b","function":{"name":"list_directory"}}]`, `[{"function":{"arguments":"{}"}}]`},
			want:   `read_file{} list_directory{}`,
		},
		{
			name:   "both at index 0",
			chunks: []string{`[{"index":0,"id":"a","function":{"name":"read_file","arguments":"{}"}},{"index":0,"id":"b","function":{"name":"list_directory","arguments":"{}"}}]`},
			want:   `read_file{} list_directory{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var acc openai.ChatCompletionAccumulator
			var x toolIndexer
			for _, calls := range tt.chunks {
				var chunk openai.ChatCompletionChunk
				raw := `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":` + calls + `}}]}`
				if err := json.Unmarshal([]byte(raw), &chunk); err != nil {
					t.Fatal(err)
				}
				x.fix(&chunk)
				if !acc.AddChunk(chunk) {
					t.Fatalf("accumulator refused %s", raw)
				}
			}
			var got []ToolCall
			for _, tc := range acc.Choices[0].Message.ToolCalls {
				got = append(got, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
			if callsString(got) != tt.want {
				t.Errorf("calls = %s, want %s", callsString(got), tt.want)
			}
		})
	}
}
