package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/domo-agent/domo/tests/testenv"
)

// TestWebInspector drives domo-web with the MCP Inspector CLI: it lists
// the tools, searches a local SearxNG whose results point at local
// article pages, reads one, and is refused a cloud-metadata address.
func TestWebInspector(t *testing.T) {
	bin := testenv.Binary(t, "domo-web")
	article := func(title, sentence string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<html><head><title>%s</title><meta property="og:type" content="article"></head><body><nav><a href="/">Home</a> <a href="/world">World</a></nav><article><h1>%s</h1>`, title, title)
		for i := range 5 {
			fmt.Fprintf(&b, "<p>%s This is paragraph %d of a report long enough to be taken for an article by the extractor.</p>", sentence, i+1)
		}
		b.WriteString(`</article><footer>Subscribe to our newsletter</footer></body></html>`)
		return b.String()
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/2026/11/harbour-ferry-returns":
			fmt.Fprint(w, article("Harbour ferry returns", "The harbour ferry resumed service on Monday after a two-year refit."))
		case "/2026/11/ferry-fares-frozen":
			fmt.Fprint(w, article("Ferry fares frozen", "The council froze ferry fares until the end of next year."))
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": []map[string]any{
			{"title": "Harbour ferry returns", "url": site.URL + "/2026/11/harbour-ferry-returns", "content": "The ferry is back.", "engine": "local"},
			{"title": "Ferry fares frozen", "url": site.URL + "/2026/11/ferry-fares-frozen", "content": "Fares stay.", "engine": "local"},
		}})
	}))
	defer searx.Close()
	target := []string{bin, "--providers", "searxng", "--searxng-url", searx.URL, "--allow", "127.0.0.1"}

	out, code := inspect(t, target, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\n%s", code, out)
	}
	for _, name := range []string{`"web_search"`, `"web_read"`, `"news_headlines"`} {
		if !strings.Contains(out, name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}

	out, code = inspect(t, target, "--method", "tools/call", "--tool-name", "web_search", "--tool-args-json", `{"query":"harbour ferry","max_results":2}`)
	if code != 0 {
		t.Fatalf("web_search: exit %d\n%s", code, out)
	}
	for _, want := range []string{"[1] Harbour ferry returns", "resumed service on Monday", "[2] Ferry fares frozen", "froze ferry fares", "SOURCES_JSON"} {
		if !strings.Contains(out, want) {
			t.Errorf("web_search output lacks %q\n%s", want, out)
		}
	}
	if strings.Contains(out, "Subscribe to our newsletter") {
		t.Errorf("the footer leaked into the search results")
	}

	out, code = inspect(t, target, "--method", "tools/call", "--tool-name", "web_read", "--tool-args-json", `{"url":"`+site.URL+`/2026/11/ferry-fares-frozen","format":"text"}`)
	if code != 0 || !strings.Contains(out, "Title: Ferry fares frozen") || !strings.Contains(out, "froze ferry fares until the end of next year") {
		t.Errorf("web_read: exit %d\n%s", code, out)
	}

	// Without the allowlist entry the same pages are out of reach, and a
	// metadata address always is: the refusal is an isError result (the
	// Inspector exits 5), not a broken connection.
	out, code = inspect(t, []string{bin}, "--method", "tools/call", "--tool-name", "web_read", "--tool-arg", "url="+site.URL+"/2026/11/ferry-fares-frozen")
	if code != 5 || !strings.Contains(out, "loopback") {
		t.Errorf("reading a loopback page without --allow: exit %d\n%s", code, out)
	}
	out, code = inspect(t, target, "--method", "tools/call", "--tool-name", "web_read", "--tool-arg", "url=http://169.254.169.254/latest/meta-data/")
	if code != 5 || !strings.Contains(out, "cloud metadata") {
		t.Errorf("reading the metadata address: exit %d\n%s", code, out)
	}
}
