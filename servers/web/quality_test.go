package web_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/domo-agent/domo/servers/web"
)

// The quality corpus is a set of article pages recorded as sites serve
// them, each a different layout, with what the extracted text must keep
// (the article's own sentences) and must drop (navigation, banners,
// newsletter boxes, related headlines, comments). A failure here names
// the page and the phrase, so a change to extraction shows what it
// gained and what it broke.

// qualityDump, when set, is a directory where each page's extracted Text
// and Markdown are written, to see what extraction made of a page.
var qualityDump = flag.String("quality.dump", "", "write each corpus page's extracted text and Markdown to this directory")

// articleCase is one entry of testdata/articles/manifest.json.
type articleCase struct {
	File string `json:"file"`
	// Kind names the layout, for the summary only.
	Kind string `json:"kind"`
	URL  string `json:"url"`
	// Charset is what the file's bytes are in; the test does not pass it
	// to Extract, so detection from the document is exercised.
	Charset string `json:"charset"`
	Title   string `json:"title"`
	// Key phrases must appear in Text, compared after collapsing runs of
	// white space.
	Key []string `json:"key"`
	// Absent strings are boilerplate that must appear in neither Text nor
	// Markdown.
	Absent []string `json:"absent"`
	// Published, when set, is a prefix of the publication time in RFC
	// 3339 (usually just the date).
	Published string `json:"published,omitempty"`
	// Language, Image and Favicon, when set, must equal the Page's.
	Language string `json:"language,omitempty"`
	Image    string `json:"image,omitempty"`
	Favicon  string `json:"favicon,omitempty"`
	// Markdown phrases must appear verbatim in Markdown (code fences,
	// headings).
	Markdown []string `json:"markdown,omitempty"`
}

// unusableCase is one entry of testdata/articles/unusable/manifest.json.
type unusableCase struct {
	File     string `json:"file"`
	URL      string `json:"url"`
	Unusable string `json:"unusable"`
}

// pageResult is what one page scored, for the summary table.
type pageResult struct {
	file, kind, method string
	keys, keysFound    int
	leaked             int
	words              int
	failed             bool
}

func TestQualityArticles(t *testing.T) {
	dir := filepath.Join("testdata", "articles")
	var cases []articleCase
	readManifest(t, filepath.Join(dir, "manifest.json"), &cases)
	if len(cases) < 22 {
		t.Errorf("manifest has %d pages, want at least 22", len(cases))
	}

	results := make([]pageResult, len(cases))
	t.Run("pages", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.File, func(t *testing.T) {
				t.Parallel()
				// Stays marked failed if checkArticle stops the test early.
				results[i] = pageResult{file: c.File, kind: c.Kind, keys: len(c.Key), failed: true}
				results[i] = checkArticle(t, dir, c)
			})
		}
	})
	logSummary(t, results)
}

// checkArticle extracts one page and reports every way it falls short,
// not just the first.
func checkArticle(t *testing.T, dir string, c articleCase) (r pageResult) {
	r = pageResult{file: c.File, kind: c.Kind, keys: len(c.Key)}
	defer func() { r.failed = t.Failed() }()

	if len(c.Key) < 3 || len(c.Absent) < 3 {
		t.Errorf("%s: manifest entry needs at least 3 key and 3 absent strings, has %d and %d", c.File, len(c.Key), len(c.Absent))
	}
	body, err := os.ReadFile(filepath.Join(dir, c.File))
	if err != nil {
		t.Fatal(err)
	}
	utf8Charset := c.Charset == "" || strings.EqualFold(c.Charset, "utf-8")
	if !utf8Charset && utf8.Valid(body) {
		t.Errorf("%s: manifest says %s but the file is valid UTF-8, so it does not exercise charset detection", c.File, c.Charset)
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatalf("%s: bad url in manifest: %v", c.File, err)
	}

	p, err := web.Extract(body, "text/html", u)
	if err != nil {
		t.Errorf("%s: Extract: %v", c.File, err)
		return r
	}
	// Markdown is rendered on demand, as the tools do for format=markdown.
	p.RenderMarkdown(u)
	r.method = p.Method
	r.words = len(strings.Fields(p.Text))
	dumpPage(t, c.File, p)

	if p.Unusable != "" {
		t.Errorf("%s: flagged unusable (%q), but it is an article", c.File, p.Unusable)
	}
	if !strings.Contains(strings.ToLower(p.Title), strings.ToLower(c.Title)) {
		t.Errorf("%s: title %q does not contain %q", c.File, p.Title, c.Title)
	}
	text := collapse(p.Text)
	for _, k := range c.Key {
		if strings.Contains(text, collapse(k)) {
			r.keysFound++
		} else {
			t.Errorf("%s: key phrase missing from Text: %q", c.File, k)
		}
	}
	markdown := collapse(p.Markdown)
	for _, a := range c.Absent {
		a = collapse(a)
		inText, inMarkdown := strings.Contains(text, a), strings.Contains(markdown, a)
		if inText || inMarkdown {
			r.leaked++
			t.Errorf("%s: boilerplate leaked into %s: %q", c.File, where(inText, inMarkdown), a)
		}
	}
	for _, m := range c.Markdown {
		if !strings.Contains(p.Markdown, m) {
			t.Errorf("%s: Markdown lacks %q", c.File, m)
		}
	}
	if c.Published != "" && !publishedMatches(p.Published, c.Published) {
		t.Errorf("%s: published %v, want %s", c.File, p.Published, c.Published)
	}
	if c.Language != "" && !strings.EqualFold(baseLanguage(p.Language), c.Language) {
		t.Errorf("%s: language %q, want %q", c.File, p.Language, c.Language)
	}
	if c.Image != "" && p.Image != c.Image {
		t.Errorf("%s: image %q, want %q", c.File, p.Image, c.Image)
	}
	if c.Favicon != "" && p.Favicon != c.Favicon {
		t.Errorf("%s: favicon %q, want %q", c.File, p.Favicon, c.Favicon)
	}

	// A server that names its charset must get the same text.
	if !utf8Charset {
		p2, err := web.Extract(body, "text/html; charset="+c.Charset, u)
		if err != nil {
			t.Errorf("%s: Extract with charset=%s: %v", c.File, c.Charset, err)
			return r
		}
		text2 := collapse(p2.Text)
		for _, k := range c.Key {
			if !strings.Contains(text2, collapse(k)) {
				t.Errorf("%s: with charset=%s in Content-Type, key phrase missing: %q", c.File, c.Charset, k)
			}
		}
	}
	return r
}

func TestQualityUnusable(t *testing.T) {
	dir := filepath.Join("testdata", "articles", "unusable")
	var cases []unusableCase
	readManifest(t, filepath.Join(dir, "manifest.json"), &cases)
	if len(cases) < 3 {
		t.Errorf("unusable manifest has %d pages, want at least 3", len(cases))
	}
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(filepath.Join(dir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(c.URL)
			if err != nil {
				t.Fatalf("%s: bad url in manifest: %v", c.File, err)
			}
			p, err := web.Extract(body, "text/html", u)
			if err != nil {
				t.Fatalf("%s: Extract: %v", c.File, err)
			}
			if !strings.Contains(p.Unusable, c.Unusable) {
				t.Errorf("%s: Unusable = %q, want it to say %q (extracted %d words by %s: %.200q)",
					c.File, p.Unusable, c.Unusable, len(strings.Fields(p.Text)), p.Method, p.Text)
			}
		})
	}
}

func dumpPage(t *testing.T, file string, p *web.Page) {
	if *qualityDump == "" {
		return
	}
	if err := os.MkdirAll(*qualityDump, 0o755); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(*qualityDump, strings.TrimSuffix(file, ".html"))
	meta := fmt.Sprintf("title: %s\nbyline: %s\nsite: %s\npublished: %v\nlanguage: %s\nimage: %s\nfavicon: %s\nmethod: %s\nunusable: %s\n\n",
		p.Title, p.Byline, p.Site, p.Published, p.Language, p.Image, p.Favicon, p.Method, p.Unusable)
	for ext, s := range map[string]string{".txt": meta + p.Text, ".md": p.Markdown} {
		if err := os.WriteFile(base+ext, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readManifest(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// collapse turns every run of white space (including no-break spaces)
// into one space, so line wrapping and paragraph breaks do not matter.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func where(inText, inMarkdown bool) string {
	switch {
	case inText && inMarkdown:
		return "Text and Markdown"
	case inText:
		return "Text"
	default:
		return "Markdown"
	}
}

// publishedMatches accepts the time as the page stated it or in UTC; the
// corpus' times are chosen so both fall on the same day.
func publishedMatches(got time.Time, want string) bool {
	if got.IsZero() {
		return false
	}
	return strings.HasPrefix(got.Format(time.RFC3339), want) ||
		strings.HasPrefix(got.UTC().Format(time.RFC3339), want)
}

// baseLanguage reduces "de-DE" or "en_GB" to "de" or "en".
func baseLanguage(tag string) string {
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		return tag[:i]
	}
	return tag
}

func logSummary(t *testing.T, results []pageResult) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "page\tkind\tmethod\twords\tkey found\tleaked\t")
	var keys, found, leaked, failed int
	for _, r := range results {
		mark := ""
		if r.failed {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d/%d\t%d\t%s\n", r.file, r.kind, r.method, r.words, r.keysFound, r.keys, r.leaked, mark)
		keys += r.keys
		found += r.keysFound
		leaked += r.leaked
	}
	fmt.Fprintf(tw, "total: %d pages, %d failed\t\t\t\t%d/%d\t%d\t\n", len(results), failed, found, keys, leaked)
	tw.Flush()
	t.Logf("extraction quality:\n%s", b.String())
}
