package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFetchCacheAndUserAgent: a page read twice is fetched once, and every
// request names domo-web.
func TestFetchCacheAndUserAgent(t *testing.T) {
	var hits atomic.Int32
	var agents []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		agents = append(agents, r.UserAgent())
		if r.URL.Path == "/error" {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "page ", r.URL.Path)
	}))
	defer srv.Close()
	f, err := NewFetcher(FetcherOptions{Allow: []string{"127.0.0.1"}, CacheTTL: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/a"})
		if err != nil || string(r.Body) != "page /a" {
			t.Fatalf("fetch: %v", err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("three reads of one page made %d requests", n)
	}
	// Errors are not kept: the next try asks again.
	f.Fetch(context.Background(), Request{URL: srv.URL + "/error"})
	f.Fetch(context.Background(), Request{URL: srv.URL + "/error"})
	if n := hits.Load(); n != 3 {
		t.Errorf("two reads of a failing page made %d requests in all, want 3", n)
	}
	time.Sleep(300 * time.Millisecond)
	f.Fetch(context.Background(), Request{URL: srv.URL + "/a"})
	if n := hits.Load(); n != 4 {
		t.Errorf("an expired page was not fetched again (%d requests)", n)
	}
	for _, ua := range agents {
		if !strings.HasPrefix(ua, "domo-web/") {
			t.Errorf("User-Agent %q", ua)
		}
	}
}

// TestFetchRobots: with Robots on, pages robots.txt disallows are refused
// and robots.txt is asked for once per site; search API calls are not
// pages and are not checked.
func TestFetchRobots(t *testing.T) {
	var robotsAsked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsAsked.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n\nUser-agent: domo-web\nDisallow: /no-domo\n")
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	polite, _ := NewFetcher(FetcherOptions{Allow: []string{"127.0.0.1"}, Robots: true, CacheTTL: -1})
	plain, _ := NewFetcher(FetcherOptions{Allow: []string{"127.0.0.1"}, CacheTTL: -1})
	for path, allowed := range map[string]bool{"/public/a": true, "/private/b": true, "/no-domo": false, "/no-domo/x": false} {
		// domo-web's own group replaces the * group, as robots.txt means.
		_, err := polite.Fetch(context.Background(), Request{URL: srv.URL + path, Page: true})
		if (err == nil) != allowed {
			t.Errorf("%s with robots: err = %v, want allowed=%v", path, err, allowed)
		}
		if err != nil && !strings.Contains(err.Error(), "robots.txt") {
			t.Errorf("%s: the refusal does not name robots.txt: %v", path, err)
		}
		if _, err := plain.Fetch(context.Background(), Request{URL: srv.URL + path, Page: true}); err != nil {
			t.Errorf("%s without robots: %v", path, err)
		}
	}
	if _, err := polite.Fetch(context.Background(), Request{URL: srv.URL + "/no-domo"}); err != nil {
		t.Errorf("a non-page request was checked against robots.txt: %v", err)
	}
	if n := robotsAsked.Load(); n != 1 {
		t.Errorf("robots.txt was fetched %d times", n)
	}
}
