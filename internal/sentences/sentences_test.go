package sentences

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var splitTests = []struct {
	name string
	text string
	want []string
}{
	{name: "empty", text: "", want: nil},
	{name: "only space", text: " \n\t\n ", want: nil},
	{name: "two sentences", text: "Hello world. This is a test.", want: []string{"Hello world.", "This is a test."}},
	{name: "no end", text: "  just words  ", want: []string{"just words"}},
	{name: "question and exclamation", text: "Really?! Yes! OK.", want: []string{"Really?!", "Yes!", "OK."}},
	{name: "titles", text: "Mr. Smith met Dr. Jones. They talked.", want: []string{"Mr. Smith met Dr. Jones.", "They talked."}},
	{name: "e.g. and i.e.", text: "Use a tool, e.g. A hammer. Or i.e. This one. Done.", want: []string{"Use a tool, e.g. A hammer.", "Or i.e. This one.", "Done."}},
	{name: "etc. vs.", text: "Apples, pears, etc. Then cats vs. Dogs. End.", want: []string{"Apples, pears, etc. Then cats vs. Dogs.", "End."}},
	{name: "U.S.", text: "The U.S. Senate voted. It passed.", want: []string{"The U.S. Senate voted.", "It passed."}},
	{name: "initials", text: "J. R. R. Tolkien wrote it. Really.", want: []string{"J. R. R. Tolkien wrote it.", "Really."}},
	{name: "pronoun I ends", text: "It was I. Then we left.", want: []string{"It was I.", "Then we left."}},
	{name: "decimal", text: "Pi is 3.14 roughly. Yes.", want: []string{"Pi is 3.14 roughly.", "Yes."}},
	{name: "version inside", text: "Upgrade to v1.2.3 now. Done.", want: []string{"Upgrade to v1.2.3 now.", "Done."}},
	{name: "version at end", text: "Use v1.2.3. Then restart.", want: []string{"Use v1.2.3.", "Then restart."}},
	{name: "number at end", text: "The answer is 3. Four is wrong.", want: []string{"The answer is 3.", "Four is wrong."}},
	{name: "ellipsis then lowercase", text: "Wait... what happened? Nothing.", want: []string{"Wait... what happened?", "Nothing."}},
	{name: "ellipsis then capital", text: "I thought so… Then it rained.", want: []string{"I thought so…", "Then it rained."}},
	{name: "period then lowercase", text: "It costs approx. five dollars. OK.", want: []string{"It costs approx. five dollars.", "OK."}},
	{name: "url", text: "See https://example.com/a.b?c=d&e=f.g for more. It helps.", want: []string{"See https://example.com/a.b?c=d&e=f.g for more.", "It helps."}},
	{name: "url at end", text: "Go to example.com. It is fast.", want: []string{"Go to example.com.", "It is fast."}},
	{name: "quote closes", text: `He said "Stop." Then he left.`, want: []string{`He said "Stop."`, "Then he left."}},
	{name: "emphasis closes", text: "**Note.** Read this (carefully.) Now!", want: []string{"**Note.**", "Read this (carefully.)", "Now!"}},
	{name: "cjk", text: "你好。我很好！你呢？", want: []string{"你好。", "我很好！", "你呢？"}},
	{name: "cjk closing bracket", text: "他说「好。」然后走了。", want: []string{"他说「好。」", "然后走了。"}},
	{name: "blank line ends", text: "Title\n\nBody text\n \nMore", want: []string{"Title", "Body text", "More"}},
	{name: "soft line break", text: "This line\ncontinues here. Next.", want: []string{"This line\ncontinues here.", "Next."}},
	{name: "list", text: "Steps:\n- open the file\n* save it\n+ close it\nDone.", want: []string{"Steps:", "- open the file", "* save it", "+ close it", "Done."}},
	{name: "numbered list", text: "1. First step\n2) Second step\n10. Tenth step", want: []string{"1. First step", "2) Second step", "10. Tenth step"}},
	{name: "list item with sentences", text: "- First. Second\n- Third", want: []string{"- First.", "Second", "- Third"}},
	{name: "heading", text: "# Title\nText here.\n## Sub\nMore.", want: []string{"# Title", "Text here.", "## Sub", "More."}},
	{name: "emphasis is no bullet", text: "**bold**\n*it* goes on", want: []string{"**bold**\n*it* goes on"}},
	{name: "table rows", text: "| a | b |\n|---|---|\n| 1 | 2 |", want: []string{"| a | b |", "|---|---|", "| 1 | 2 |"}},
	{name: "code fence is one piece", text: "Run this:\n```sh\nls -l. X\n\necho hi. There\n```\nThen check.", want: []string{"Run this:", "```sh\nls -l. X\n\necho hi. There\n```", "Then check."}},
	{name: "tilde fence unclosed", text: "~~~\ncode. More code", want: []string{"~~~\ncode. More code"}},
	{name: "inline triple backticks", text: "Use `` ` `` here. Ok.", want: []string{"Use `` ` `` here.", "Ok."}},
	{name: "nbsp and tabs", text: "One.\u00a0Two.\tThree.", want: []string{"One.", "Two.", "Three."}},
}

func TestSplit(t *testing.T) {
	for _, tt := range splitTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Split(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestSplitLongRuns(t *testing.T) {
	commas := strings.Repeat("one two three four five six, ", 20)
	spaces := strings.Repeat("word ", 120)
	tests := []struct {
		name     string
		text     string
		firstEnd string // how the first piece must end
		badEnd   string // how no piece may end
	}{
		{name: "cut after a comma", text: commas, firstEnd: ","},
		{name: "cut at a space", text: spaces, firstEnd: "word"},
		{name: "no space at all", text: strings.Repeat("x", 600), firstEnd: "x"},
		{name: "thousands are not cut", text: strings.Repeat("about 3,000 of them ", 30), badEnd: ","},
		{name: "cjk comma", text: strings.Repeat("我们今天去公园，", 60), firstEnd: "，"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.text)
			if len(got) < 2 {
				t.Fatalf("got %d pieces, want several", len(got))
			}
			if !strings.HasSuffix(got[0], tt.firstEnd) {
				t.Errorf("first piece %q does not end with %q", got[0], tt.firstEnd)
			}
			for _, s := range got {
				if n := utf8.RuneCountInString(s); n > maxRunes {
					t.Errorf("piece of %d runes: %q", n, s)
				}
				if tt.badEnd != "" && strings.HasSuffix(s, tt.badEnd) {
					t.Errorf("piece ends with %q: %q", tt.badEnd, s)
				}
			}
			if strings.Join(strings.Fields(strings.Join(got, "")), "") != strings.Join(strings.Fields(tt.text), "") {
				t.Errorf("pieces lost text: %q", got)
			}
		})
	}
}

func TestSplitterWaitsForNextCharacter(t *testing.T) {
	tests := []struct {
		name   string
		deltas []string
		want   [][]string // Add's answer for each delta
		flush  string
	}{
		{
			name:   "decimal across deltas",
			deltas: []string{"It is 3.", "14 exactly. ", "Yes"},
			want:   [][]string{nil, nil, {"It is 3.14 exactly."}},
			flush:  "Yes",
		},
		{
			name:   "sentence ends when the space arrives",
			deltas: []string{"Hello.", " ", "World", "!"},
			want:   [][]string{nil, nil, {"Hello."}, nil},
			flush:  "World!",
		},
		{
			name:   "abbreviation needs no look ahead",
			deltas: []string{"Dr.", " Who", "? Yes. "},
			want:   [][]string{nil, nil, {"Dr. Who?"}},
			flush:  "Yes.",
		},
		{
			name:   "list item ends at its newline",
			deltas: []string{"- one", "\n- two", "\n"},
			want:   [][]string{nil, {"- one"}, {"- two"}},
			flush:  "",
		},
		{
			name:   "fence waits for its closing line",
			deltas: []string{"```\nx. Y\n", "``", "`", "\nAfter."},
			want:   [][]string{nil, nil, nil, {"```\nx. Y\n```"}},
			flush:  "After.",
		},
		{
			name:   "character split across deltas",
			deltas: []string{"Fin\xe2\x80", "\xa6 Then"},
			want:   [][]string{nil, {"Fin…"}},
			flush:  "Then",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Splitter
			for i, d := range tt.deltas {
				if got := s.Add(d); !slices.Equal(got, tt.want[i]) {
					t.Errorf("Add(%q) = %q, want %q", d, got, tt.want[i])
				}
			}
			if got := s.Flush(); got != tt.flush {
				t.Errorf("Flush() = %q, want %q", got, tt.flush)
			}
			if got := s.Flush(); got != "" {
				t.Errorf("second Flush() = %q, want empty", got)
			}
		})
	}
}

// TestSplitterMatchesSplit feeds texts in random pieces, cutting
// characters in two too, and wants the sentences Split finds.
func TestSplitterMatchesSplit(t *testing.T) {
	var parts []string
	for _, tt := range splitTests {
		parts = append(parts, tt.text)
	}
	parts = append(parts, strings.Repeat("one two three, ", 30), strings.Repeat("我们今天去公园，", 40),
		"\n", "\n\n", "- ", "12. ", "## ", "```", "...", "… ", "e.g. ", " 3.", "14", "Mr. ", "。")
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(parts[rng.IntN(len(parts))])
			if rng.IntN(2) == 0 {
				b.WriteString(" ")
			}
		}
		text := b.String()
		want := Split(text)

		var s Splitter
		var got []string
		for rest := text; rest != ""; {
			n := min(len(rest), 1+rng.IntN(12))
			got = append(got, s.Add(rest[:n])...)
			rest = rest[n:]
		}
		if last := s.Flush(); last != "" {
			got = append(got, last)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: text %q\nstreamed %q\n   Split %q", iter, text, got, want)
		}
	}
}

func TestSplitNeverEmpty(t *testing.T) {
	for _, tt := range splitTests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range Split(tt.text) {
				if s == "" || s != strings.TrimSpace(s) {
					t.Errorf("sentence %q is empty or untrimmed", s)
				}
			}
		})
	}
}
