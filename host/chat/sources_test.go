package chat

import (
	"testing"

	"github.com/domo-agent/domo/host/agent"
)

func TestSourceList(t *testing.T) {
	sources := []agent.Source{
		{N: 1, Title: "NASA delays Mars\nsample return", URL: "https://www.bbc.co.uk/news/mars", Site: "bbc.co.uk", Published: "2026-11-20T08:00:00Z"},
		{N: 3, Title: "Evil \x1b]0;owned\x07 title", URL: "javascript:alert(1)", Site: "evil.example"},
		{N: 4, Title: "", URL: "https://x.example/a", Published: "yesterday"},
	}
	tests := []struct {
		name  string
		links bool
		want  string
	}{
		{"plain", false, "Sources:\n" +
			"  [1] NASA delays Mars sample return — bbc.co.uk, 20 Nov 2026\n" +
			"      https://www.bbc.co.uk/news/mars\n" +
			"  [3] Evil \\u001b]0;owned\\u0007 title — evil.example\n" +
			"      javascript:alert(1)\n" +
			"  [4] https://x.example/a — yesterday\n" +
			"      https://x.example/a\n"},
		{"hyperlinks", true, "Sources:\n" +
			"  [1] \x1b]8;;https://www.bbc.co.uk/news/mars\x1b\\NASA delays Mars sample return\x1b]8;;\x1b\\ — bbc.co.uk, 20 Nov 2026\n" +
			"  [3] Evil \\u001b]0;owned\\u0007 title — evil.example\n" +
			"      javascript:alert(1)\n" +
			"  [4] \x1b]8;;https://x.example/a\x1b\\https://x.example/a\x1b]8;;\x1b\\ — yesterday\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term := &Term{Links: tt.links}
			if got := term.SourceList(sources); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	if got := (&Term{}).SourceList(nil); got != "" {
		t.Errorf("no sources: %q", got)
	}
}
