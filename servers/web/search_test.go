package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scripted is a provider answering from a list, for testing the router's
// logic apart from any provider's parsing (each provider has its own tests
// against recorded responses).
type scripted struct {
	name  string
	hits  []Hit
	err   error
	delay time.Duration
	calls atomic.Int32
}

func (s *scripted) Name() string { return s.name }

func (s *scripted) Search(ctx context.Context, q Query) ([]Hit, error) {
	s.calls.Add(1)
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.hits, s.err
}

// articleHTML is a page readability takes for an article.
func articleHTML(title, body string) string {
	var paras strings.Builder
	for i := range 6 {
		fmt.Fprintf(&paras, "<p>%s Paragraph %d adds more detail about the story so that the page reads as a real article with enough words to count.</p>\n", body, i+1)
	}
	return `<!doctype html><html><head><title>` + title + `</title><meta property="og:type" content="article">
<meta property="article:published_time" content="2026-11-20T08:00:00Z"></head><body>
<nav><a href="/">Home</a> <a href="/world">World</a></nav><article><h1>` + title + `</h1>` + paras.String() + `</article>
<footer>Copyright Example Media</footer></body></html>`
}

// pages serves articles with per-path delays and statuses.
func pages(t *testing.T, delays map[string]time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := delays[r.URL.Path]; d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/fail"):
			http.Error(w, "down", http.StatusBadGateway)
		case strings.HasPrefix(r.URL.Path, "/consent"):
			fmt.Fprint(w, `<html><body><div class="consent"><h2>We value your privacy</h2><p>We and our partners use cookies. Accept all or manage preferences.</p><button>Accept all</button><button>Reject all</button></div></body></html>`)
		case r.URL.Path == "/" || r.URL.Path == "/world":
			var b strings.Builder
			b.WriteString(`<html><head><meta property="og:type" content="website"></head><body>`)
			for i := range 120 {
				fmt.Fprintf(&b, `<a href="/2026/11/story-number-%d">Story headline number %d here</a> `, i, i)
			}
			b.WriteString(`</body></html>`)
			fmt.Fprint(w, b.String())
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, articleHTML("Story at "+r.URL.Path, "The council approved the seawall plan for "+r.URL.Path+"."))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testEngine(t *testing.T, web, news []Provider) *Engine {
	t.Helper()
	f, err := NewFetcher(FetcherOptions{Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{Fetch: f, Web: web, News: news, PageTimeout: 2 * time.Second, ReadTimeout: 4 * time.Second}
}

func TestSearchFallsBackAndReads(t *testing.T) {
	srv := pages(t, nil)
	broken := &scripted{name: "first", err: errors.New("503")}
	empty := &scripted{name: "second"}
	good := &scripted{name: "third", hits: []Hit{
		{Title: "A", URL: srv.URL + "/2026/11/a-story-here", Snippet: "a"},
		{Title: "A again", URL: srv.URL + "/2026/11/a-story-here/?utm_source=x#top"},
		{Title: "B", URL: srv.URL + "/2026/11/b-story-here"},
	}}
	e := testEngine(t, []Provider{broken, empty, good}, nil)
	res, err := e.Search(context.Background(), Query{Text: "seawall", Max: 5}, SearchOptions{Read: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Provider != "third" || len(res.Sources) != 2 {
		t.Fatalf("provider %q, %d sources: %+v", res.Provider, len(res.Sources), res.Sources)
	}
	for i, s := range res.Sources {
		if s.N != i+1 || s.Status != "read" || !strings.Contains(s.Content, "seawall plan") || s.Published == "" {
			t.Errorf("source %d: %+v", i, s)
		}
	}
	if !strings.Contains(strings.Join(res.Notes, ";"), "first failed: 503") {
		t.Errorf("notes: %v", res.Notes)
	}
}

func TestSearchEveryProviderFails(t *testing.T) {
	e := testEngine(t, []Provider{&scripted{name: "a", err: errors.New("boom")}, &scripted{name: "b", delay: time.Minute}}, nil)
	e.ProviderTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := e.Search(context.Background(), Query{Text: "x", Max: 5}, SearchOptions{})
	if err == nil || !strings.Contains(err.Error(), "every search provider failed") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("a hung provider held the search for %s", time.Since(start))
	}
}

// TestSearchReplacesUnusablePages: failures, consent walls and section
// fronts give way to the next result, and in news mode fronts never count
// as articles.
func TestSearchReplacesUnusablePages(t *testing.T) {
	srv := pages(t, nil)
	p := &scripted{name: "news", hits: []Hit{
		{Title: "Home", URL: srv.URL + "/"},
		{Title: "Down", URL: srv.URL + "/fail/2026/11/x-y-z"},
		{Title: "Wall", URL: srv.URL + "/consent/2026/11/a-b-c"},
		{Title: "Good one", URL: srv.URL + "/2026/11/good-one-here"},
		{Title: "Good two", URL: srv.URL + "/2026/11/good-two-here"},
		{Title: "Good three", URL: srv.URL + "/2026/11/good-three-here"},
	}}
	e := testEngine(t, nil, []Provider{p})
	res, err := e.Search(context.Background(), Query{Text: "x", News: true, Max: 3}, SearchOptions{Read: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 3 {
		t.Fatalf("%d sources: %+v", len(res.Sources), res.Sources)
	}
	for _, s := range res.Sources {
		if s.Status != "read" || !strings.Contains(s.URL, "/good-") {
			t.Errorf("source: %s %s", s.Title, s.Status)
		}
	}
	if !strings.Contains(strings.Join(res.Notes, ";"), "section front") {
		t.Errorf("notes: %v", res.Notes)
	}
}

// TestSearchReadsInParallel: five pages on five sites, answering after
// 200 ms to 1 s, are all read in about the time of the slowest.
func TestSearchReadsInParallel(t *testing.T) {
	var hits []Hit
	delays := []time.Duration{600, 200, 1000, 400, 800}
	for i, d := range delays {
		srv := pages(t, map[string]time.Duration{"/a/2026/story-here-x": d * time.Millisecond})
		hits = append(hits, Hit{Title: fmt.Sprint("T", i), URL: srv.URL + "/a/2026/story-here-x"})
	}
	e := testEngine(t, []Provider{&scripted{name: "p", hits: hits}}, nil)
	start := time.Now()
	res, err := e.Search(context.Background(), Query{Text: "x", Max: 5}, SearchOptions{Read: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Sources {
		if s.Status != "read" {
			t.Errorf("%s: %s", s.URL, s.Status)
		}
	}
	// Generous: sequential reading would take 3 s. Timing targets live in
	// the benchmark, not here.
	if el := time.Since(start); el > 2800*time.Millisecond {
		t.Errorf("reading took %s: pages were not read in parallel", el)
	}
}

func TestSearchReadTimeLimit(t *testing.T) {
	srv := pages(t, map[string]time.Duration{"/slow/2026/a-b-c": time.Minute})
	fast := pages(t, nil)
	p := &scripted{name: "p", hits: []Hit{{Title: "slow", URL: srv.URL + "/slow/2026/a-b-c", Snippet: "snip"}, {Title: "fast", URL: fast.URL + "/2026/fast-one-here"}}}
	e := testEngine(t, []Provider{p}, nil)
	e.PageTimeout, e.ReadTimeout = 30*time.Second, 500*time.Millisecond
	start := time.Now()
	res, err := e.Search(context.Background(), Query{Text: "x", Max: 5}, SearchOptions{Read: 5})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the read limit did not hold: %s", time.Since(start))
	}
	if len(res.Sources) != 2 || res.Sources[0].Status != "read" || !strings.HasPrefix(res.Sources[1].Status, "not read") || res.Sources[1].Snippet != "snip" {
		t.Fatalf("sources: %+v", res.Sources)
	}
}

func TestIsFrontURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://news.example.com/":                                      true,
		"https://news.example.com/world":                                 true,
		"https://news.example.com/news/business/":                        true,
		"https://news.example.com/index.html":                            true,
		"https://news.example.com/2026/11/20/council-approves-seawall":   false,
		"https://news.example.com/world/europe-67812345":                 false,
		"https://news.example.com/article/seawall-plan-approved-by-all":  false,
		"https://news.example.com/story.html":                            false,
		"https://news.example.com/news/a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6": false,
	} {
		pu, _ := parseTestURL(u)
		if got := isFrontURL(pu); got != want {
			t.Errorf("isFrontURL(%s) = %v, want %v", u, got, want)
		}
	}
}

func parseTestURL(s string) (*url.URL, error) { return url.Parse(s) }
