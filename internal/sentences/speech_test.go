package sentences

import (
	"slices"
	"testing"
)

func TestForSpeech(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "plain text stays", in: "Pi is 3.14, see v1.2.3.", want: "Pi is 3.14, see v1.2.3."},
		{name: "emphasis", in: "Some **bold**, *italic*, __strong__ and ~~old~~ words.", want: "Some bold, italic, strong and old words."},
		{name: "inline code", in: "Call `os.Exit(1)` now.", want: "Call os.Exit(1) now."},
		{name: "snake case is no emphasis", in: "Set max_line_len here.", want: "Set max_line_len here."},
		{name: "heading", in: "## Results\nAll good.", want: "Results\n\nAll good."},
		{name: "bullets", in: "Steps:\n\n- open it\n* save it\n", want: "Steps:\n\nopen it\n\nsave it"},
		{name: "ordered list keeps numbers", in: "3. third\n4. fourth", want: "3. third\n\n4. fourth"},
		{name: "task list", in: "- [ ] buy milk\n- [x] call mum", want: "buy milk\n\ncall mum"},
		{name: "link", in: "Read [the docs](https://go.dev/doc/) first.", want: "Read the docs first."},
		{name: "bare url", in: "It is at https://www.github.com/domo/domo?tab=1 today.", want: "It is at github.com today."},
		{name: "angle url", in: "See <https://example.org:8080/x>.", want: "See example.org."},
		{name: "email", in: "Mail <me@example.org>.", want: "Mail me@example.org."},
		{name: "image alt", in: "![a red car](car.png)", want: "a red car"},
		{name: "code block said once", in: "Run:\n\n```sh\nls -l\n```\n\nThen:\n\n```\nrm x\n```\n\n    indented code\n\nDone.", want: "Run:\n\nCode omitted.\n\nThen:\n\nDone."},
		{name: "only code", in: "```go\nfmt.Println()\n```", want: "Code omitted."},
		{name: "table", in: "| Name | Age |\n|------|-----|\n| Ann  | 31  |\n| Bob | |", want: "Name, Age\n\nAnn, 31\n\nBob"},
		{name: "table row alone", in: "| Ann | 31 |", want: "Ann, 31"},
		{name: "table delimiter alone", in: "|---|:---:|", want: ""},
		{name: "html dropped", in: "Hello <b>there</b>.\n\n<div>\nblock\n</div>\n\n<!-- note -->", want: "Hello there."},
		{name: "escapes and entities", in: `AT&amp;T \*not emphasis\* &#65;`, want: "AT&T *not emphasis* A"},
		{name: "whitespace collapsed", in: "  lots   of\n   space\there  ", want: "lots of space here"},
		{name: "quote", in: "> quoted words\n> go on", want: "quoted words go on"},
		{name: "thematic break", in: "one\n\n---\n\ntwo", want: "one\n\ntwo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ForSpeech(tt.in); got != tt.want {
				t.Errorf("ForSpeech(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestForSpeechThenSplit checks that the blocks ForSpeech makes end
// sentences.
func TestForSpeechThenSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "heading and list", in: "# Plan\n- buy milk\n- call Dr. Who\n\nThat is all.", want: []string{"Plan", "buy milk", "call Dr. Who", "That is all."}},
		{name: "table rows", in: "| a | b |\n|---|---|\n| 1 | 2 |", want: []string{"a, b", "1, 2"}},
		{name: "code between", in: "Try this:\n```\nx := 1\n```\nIt works.", want: []string{"Try this:", "Code omitted.", "It works."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Split(ForSpeech(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
