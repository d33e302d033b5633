package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Brave asks the Brave Search API, which needs a subscription key.
type Brave struct {
	f    *Fetcher
	key  string
	base string
}

var _ Provider = (*Brave)(nil)

// NewBrave returns a provider for the Brave Search API with key; an
// empty base means https://api.search.brave.com.
func NewBrave(f *Fetcher, key, base string) Provider {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		base = "https://api.search.brave.com"
	}
	return &Brave{f: f, key: strings.TrimSpace(key), base: base}
}

// Name implements Provider.
func (b *Brave) Name() string { return "brave" }

// braveResult is one web or news result.
type braveResult struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	// Age is relative ("2 hours ago") or a date ("November 19, 2026");
	// PageAge is a timestamp without a zone.
	Age       string `json:"age"`
	PageAge   string `json:"page_age"`
	Thumbnail struct {
		Src string `json:"src"`
	} `json:"thumbnail"`
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
	MetaURL struct {
		Favicon string `json:"favicon"`
	} `json:"meta_url"`
}

// braveAnswer holds both shapes: web search nests results under "web",
// news search has them at the top.
type braveAnswer struct {
	Web struct {
		Results []braveResult `json:"results"`
	} `json:"web"`
	Results []braveResult `json:"results"`
}

// braveError is the body of a failed call.
type braveError struct {
	Error struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	} `json:"error"`
}

// Search implements Provider.
func (b *Brave) Search(ctx context.Context, q Query) ([]Hit, error) {
	if b.key == "" {
		return nil, errors.New("brave: no API key is configured")
	}
	if strings.TrimSpace(q.Text) == "" {
		return nil, errors.New("brave: a query is needed; the Brave API has no headlines")
	}
	path, most := "/res/v1/web/search", 20
	if q.News {
		path, most = "/res/v1/news/search", 50
	}
	v := url.Values{"q": {q.Text}, "count": {strconv.Itoa(min(askFor(q.Max), most))}}
	if f := map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}[q.Recency]; f != "" {
		v.Set("freshness", f)
	}
	if q.Region != "" {
		v.Set("country", strings.ToUpper(q.Region))
	}
	if q.Language != "" {
		v.Set("search_lang", strings.ToLower(q.Language))
	}
	resp, err := b.f.Fetch(ctx, Request{
		URL:    b.base + path + "?" + v.Encode(),
		Header: http.Header{"Accept": {"application/json"}, "X-Subscription-Token": {b.key}},
	})
	if se := (*StatusError)(nil); errors.As(err, &se) {
		var be braveError
		if resp != nil {
			_ = json.Unmarshal(resp.Body, &be)
		}
		detail := ""
		if be.Error.Detail != "" {
			detail = ": " + be.Error.Detail
		}
		switch {
		case se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden || strings.Contains(be.Error.Code, "TOKEN"):
			return nil, fmt.Errorf("brave: the API key was refused (%d %s%s); check the key in the Brave Search API dashboard", se.Status, http.StatusText(se.Status), detail)
		case se.Status == http.StatusTooManyRequests:
			return nil, fmt.Errorf("brave: rate limited (429%s); the plan's per-second or monthly quota is used up", detail)
		case be.Error.Detail != "":
			return nil, fmt.Errorf("brave: %d %s%s", se.Status, http.StatusText(se.Status), detail)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	var a braveAnswer
	if err := decodeJSONAnswer(resp, &a); err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	results := a.Web.Results
	if q.News || len(results) == 0 {
		results = a.Results
	}
	now := time.Now()
	hits := newHitList(q.Max)
	for _, r := range results {
		h := Hit{
			Title:     hitText(r.Title),
			URL:       resolve(resp.URL, r.URL),
			Snippet:   hitText(r.Description),
			Published: hitDate(r.PageAge, now),
			Publisher: hitText(r.Profile.Name),
			Image:     resolve(resp.URL, r.Thumbnail.Src),
			Favicon:   resolve(resp.URL, r.MetaURL.Favicon),
		}
		if h.Published.IsZero() {
			h.Published = hitDate(r.Age, now)
		}
		if !hits.add(h) {
			break
		}
	}
	return hits.hits, nil
}
