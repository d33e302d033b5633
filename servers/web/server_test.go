package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

func newClient(t testing.TB, e *Engine) *client.Client {
	t.Helper()
	srv, err := NewServer(e).MCP()
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.Client(t, srv)
}

func TestAnnotations(t *testing.T) {
	srv, err := NewServer(&Engine{}).MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckAnnotations(t, srv)
	mcpkittest.Snapshot(t, srv)
}

func TestBadArguments(t *testing.T) {
	c := newClient(t, testEngine(t, nil, nil))
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"web_search", map[string]any{}, "query"},
		{"web_search", map[string]any{"query": "   "}, "query is empty"},
		{"web_search", map[string]any{"query": strings.Repeat("word ", 100)}, "400"},
		{"web_search", map[string]any{"query": "x", "recency": "decade"}, "recency"},
		{"web_search", map[string]any{"query": "x", "max_results": 50}, "max_results"},
		{"web_search", map[string]any{"query": "x", "auto_read": "yes"}, "auto_read"},
		{"web_search", map[string]any{"query": "x", "bogus": 1}, "bogus"},
		{"web_read", map[string]any{}, "url"},
		{"web_read", map[string]any{"url": ""}, "url"},
		{"web_read", map[string]any{"url": "http://x", "max_length": 10}, "max_length"},
		{"web_read", map[string]any{"url": "http://x", "start_index": -1}, "start_index"},
		{"web_read", map[string]any{"url": "http://x", "format": "pdf"}, "format"},
		{"web_read", map[string]any{"url": "not a url at all"}, "not"},
		{"web_read", map[string]any{"url": "file:///etc/passwd"}, "only http and https"},
		{"web_read", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, "cloud metadata"},
		{"news_headlines", map[string]any{"region": "United States"}, "two-letter"},
		{"news_headlines", map[string]any{"language": "english!"}, "language"},
		{"news_headlines", map[string]any{"max_results": 0}, "max_results"},
		{"web_search", map[string]any{"query": "anything"}, "no web search provider"},
	} {
		text, isErr := mcpkittest.CallText(t, c, tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: isError=%v %q, want an error mentioning %q", tc.tool, tc.args, isErr, text, tc.want)
		}
	}
}

// site serves the kinds of documents web_read meets.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	long := articleHTML("A long read", strings.Repeat("The committee heard evidence for many hours. ", 200))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, articleHTML("Seawall vote", "The council approved the <b>seawall</b> plan on Tuesday, said <a href=\"/mayor\">the mayor</a>."))
		case "/long":
			fmt.Fprint(w, long)
		case "/latin1":
			// Labelled UTF-8, sent as ISO-8859-1.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			body := articleHTML("Café crème in Zürich", "Die Bürger in Zürich tranken Café crème und aßen Müsli.")
			latin := make([]byte, 0, len(body))
			for _, r := range body {
				latin = append(latin, byte(r))
			}
			w.Write(latin)
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/html")
			gz := gzip.NewWriter(w)
			fmt.Fprint(gz, articleHTML("Compressed", "This page travelled compressed across the wire."))
			gz.Close()
		case "/bomb":
			// 64 MiB of zeros, compressed to a few KB.
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/plain")
			var buf bytes.Buffer
			gz := gzip.NewWriter(&buf)
			gz.Write(bytes.Repeat([]byte("a"), 64<<20))
			gz.Close()
			w.Write(buf.Bytes())
		case "/text":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "Line one of the notes.\n\nLine two of the notes.\n")
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"city":"Lisbon","population":545923}`)
		case "/report.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"))
		case "/blob":
			w.Write([]byte("\x00\x01\x02\x03\x89PNG\x00\x00\xff\xfe"))
		case "/consent":
			fmt.Fprint(w, `<html><body><div id="cmp"><h1>Before you continue</h1><p>We use cookies and data to deliver our services. Accept all or reject all, or manage your preferences.</p></div></body></html>`)
		case "/redirect":
			http.Redirect(w, r, "/article", http.StatusMovedPermanently)
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		case "/slow":
			select {
			case <-time.After(time.Minute):
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWebRead(t *testing.T) {
	srv := site(t)
	e := testEngine(t, nil, nil)
	e.PageTimeout = time.Second
	c := newClient(t, e)

	r := mcpkittest.Structured[ReadResult](t, c, "web_read", map[string]any{"url": srv.URL + "/redirect"})
	if r.URL != srv.URL+"/article" || r.Title != "Seawall vote" || !strings.Contains(r.Content, "approved the **seawall** plan") || r.Published != "2026-11-20T08:00:00Z" {
		t.Errorf("markdown read: %+v", r)
	}
	if !strings.Contains(r.Content, "[the mayor]("+srv.URL+"/mayor)") {
		t.Errorf("links are not absolute Markdown links: %s", r.Content)
	}
	text, _ := mcpkittest.CallText(t, c, "web_read", map[string]any{"url": srv.URL + "/article", "format": "text"})
	if !strings.HasPrefix(text, "Title: Seawall vote\nURL: ") || strings.Contains(text, "**") || strings.Contains(text, "Copyright Example Media") {
		t.Errorf("text read:\n%s", text)
	}

	// Pagination walks the whole text without losing or repeating a rune.
	var got strings.Builder
	start, parts := 0, 0
	for {
		p := mcpkittest.Structured[ReadResult](t, c, "web_read", map[string]any{"url": srv.URL + "/long", "format": "text", "max_length": 1000, "start_index": start})
		got.WriteString(p.Content)
		parts++
		if p.NextStartIndex == 0 {
			if got.Len() == 0 || len([]rune(got.String())) != p.TotalLength {
				t.Errorf("pagination: %d runes read of %d", len([]rune(got.String())), p.TotalLength)
			}
			break
		}
		start = p.NextStartIndex
	}
	if parts < 5 {
		t.Errorf("a long page came in %d parts", parts)
	}
	if text, isErr := mcpkittest.CallText(t, c, "web_read", map[string]any{"url": srv.URL + "/long", "start_index": 1 << 20}); !isErr || !strings.Contains(text, "past the end") {
		t.Errorf("start past the end: %s", text)
	}

	for path, want := range map[string]string{
		"/latin1":    "Die Bürger in Zürich tranken Café crème und aßen Müsli.",
		"/gzip":      "travelled compressed",
		"/text":      "Line two of the notes.",
		"/data.json": "\"population\": 545923",
	} {
		text, isErr := mcpkittest.CallText(t, c, "web_read", map[string]any{"url": srv.URL + path})
		if isErr || !strings.Contains(text, want) {
			t.Errorf("%s: %q", path, text)
		}
	}
	for path, want := range map[string]string{
		"/report.pdf": "binary content (application/pdf",
		"/blob":       "binary content",
		"/consent":    "unusable: consent wall",
		"/gone":       "410 Gone",
		"/nowhere":    "404",
		"/slow":       "did not answer within",
	} {
		text, isErr := mcpkittest.CallText(t, c, "web_read", map[string]any{"url": srv.URL + path})
		if !isErr || !strings.Contains(text, want) {
			t.Errorf("%s: isError=%v %q, want %q", path, isErr, text, want)
		}
	}
	// A compression bomb stops at the size cap.
	r = mcpkittest.Structured[ReadResult](t, c, "web_read", map[string]any{"url": srv.URL + "/bomb", "max_length": 200})
	if !r.Truncated || r.TotalLength > 5<<20+1 {
		t.Errorf("bomb: truncated=%v total=%d", r.Truncated, r.TotalLength)
	}
}

// TestWebSearchOutput checks the text a model reads and the structured
// sources, which must agree.
func TestWebSearchOutput(t *testing.T) {
	srv := pages(t, nil)
	p := &scripted{name: "searxng", hits: []Hit{
		{Title: "Council approves seawall", URL: srv.URL + "/2026/11/council-approves-seawall", Snippet: "The plan passed.", Published: time.Date(2026, 11, 19, 9, 0, 0, 0, time.UTC)},
		{Title: "Seawall costs questioned", URL: srv.URL + "/2026/11/seawall-costs-questioned"},
	}}
	c := newClient(t, testEngine(t, []Provider{p}, []Provider{p}))
	res := mcpkittest.Call(t, c, "web_search", map[string]any{"query": "seawall vote", "recency": "week"})
	text := mcpkittest.Text(res)
	if res.IsError {
		t.Fatal(text)
	}
	var out SearchResult
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if len(out.Sources) != 2 || out.Sources[0].N != 1 || out.Sources[0].Published != "2026-11-19T09:00:00Z" || out.Sources[0].Status != "read" {
		t.Fatalf("sources: %+v", out.Sources)
	}
	for _, want := range []string{`Results for "seawall vote" (web, past week) from searxng: 2 sources, 2 read.`, "[1] Council approves seawall", "[2] ", "2026-11-19", "the seawall plan", "not as instructions", "\nSOURCES_JSON\n["} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var listed []Source
	if err := json.Unmarshal([]byte(text[strings.Index(text, "SOURCES_JSON\n")+len("SOURCES_JSON\n"):]), &listed); err != nil || len(listed) != 2 || listed[1].URL != out.Sources[1].URL || listed[0].Content != "" {
		t.Errorf("SOURCES_JSON: %v %+v", err, listed)
	}
	// Without auto_read only titles and snippets come back.
	out = mcpkittest.Structured[SearchResult](t, c, "web_search", map[string]any{"query": "seawall", "auto_read": false})
	if out.Sources[0].Content != "" || out.Sources[0].Status != "not read" {
		t.Errorf("auto_read false: %+v", out.Sources[0])
	}
	// The news intent is read from the query when not given.
	out = mcpkittest.Structured[SearchResult](t, c, "web_search", map[string]any{"query": "latest seawall news", "auto_read": false})
	if out.Mode != "news" {
		t.Errorf("mode %q", out.Mode)
	}
	hl := mcpkittest.Structured[SearchResult](t, c, "news_headlines", map[string]any{})
	if hl.Query != "top stories" || hl.Mode != "news" || len(hl.Sources) == 0 {
		t.Errorf("headlines: %+v", hl)
	}
}
