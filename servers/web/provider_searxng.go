package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SearxNG asks a SearxNG instance through its JSON API.
type SearxNG struct {
	f    *Fetcher
	base string
}

var _ Provider = (*SearxNG)(nil)

// NewSearxNG returns a provider for the SearxNG instance at baseURL (e.g.
// "http://searx.lan:8080" or "https://example.org/searx"). The instance
// must allow the json format in settings.yml (search.formats).
func NewSearxNG(f *Fetcher, baseURL string) Provider {
	// An address copied from the browser may end in the search page.
	base := strings.TrimSuffix(strings.TrimRight(strings.TrimSpace(baseURL), "/"), "/search")
	return &SearxNG{f: f, base: base}
}

// Name implements Provider.
func (s *SearxNG) Name() string { return "searxng" }

// searxAnswer is the part of SearxNG's JSON answer that is used.
type searxAnswer struct {
	Results []struct {
		Title         string `json:"title"`
		URL           string `json:"url"`
		Content       string `json:"content"`
		PublishedDate any    `json:"publishedDate"` // a string in several formats, a number, or null
		ImgSrc        string `json:"img_src"`
		Thumbnail     string `json:"thumbnail"`
	} `json:"results"`
	// UnresponsiveEngines lists [engine, reason] pairs.
	UnresponsiveEngines [][]string `json:"unresponsive_engines"`
}

// Search implements Provider. With no results, it fails when the
// instance reports that its engines failed (a CAPTCHA, a timeout), so the
// router tries another provider instead of concluding there is nothing.
func (s *SearxNG) Search(ctx context.Context, q Query) ([]Hit, error) {
	if s.base == "" {
		return nil, errors.New("searxng: no instance address is configured")
	}
	v := url.Values{"q": {q.Text}, "format": {"json"}, "pageno": {"1"}, "categories": {"general"}}
	if q.News {
		v.Set("categories", "news")
	}
	switch q.Recency {
	case "day", "week", "month", "year":
		v.Set("time_range", q.Recency)
	}
	if lang := strings.ToLower(q.Language); lang != "" {
		if q.Region != "" {
			lang += "-" + strings.ToUpper(q.Region)
		}
		v.Set("language", lang)
	}
	resp, err := s.f.Fetch(ctx, Request{URL: s.base + "/search?" + v.Encode(), Header: http.Header{"Accept": {"application/json"}}})
	if se := (*StatusError)(nil); errors.As(err, &se) {
		switch se.Status {
		case http.StatusForbidden:
			return nil, errors.New("searxng: the instance refused format=json (403 Forbidden); enable json in its settings.yml under search.formats (formats: [html, json]) and restart it")
		case http.StatusTooManyRequests:
			return nil, errors.New("searxng: the instance's limiter is rate-limiting this client (429); add this host to its pass list or turn the limiter off for a private instance")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	var a searxAnswer
	if err := decodeJSONAnswer(resp, &a); err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	now := time.Now()
	hits := newHitList(q.Max)
	for _, r := range a.Results {
		h := Hit{
			Title:     hitText(r.Title),
			URL:       resolve(resp.URL, r.URL),
			Snippet:   hitText(r.Content),
			Published: searxDate(r.PublishedDate, now),
			Image:     resolve(resp.URL, cmp.Or(r.Thumbnail, r.ImgSrc)),
		}
		if !hits.add(h) {
			break
		}
	}
	if len(hits.hits) == 0 && len(a.UnresponsiveEngines) > 0 {
		var failed []string
		for _, e := range a.UnresponsiveEngines {
			failed = append(failed, strings.Join(e, ": "))
		}
		return nil, fmt.Errorf("searxng: no results, and these engines failed: %s", strings.Join(failed, "; "))
	}
	return hits.hits, nil
}

// searxDate reads publishedDate, which engines fill in differently.
func searxDate(v any, now time.Time) time.Time {
	switch d := v.(type) {
	case string:
		return hitDate(d, now)
	case float64:
		if t := time.Unix(int64(d), 0).UTC(); d > 0 && t.Before(now) {
			return t
		}
	}
	return time.Time{}
}
