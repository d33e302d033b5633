package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/mmcdole/gofeed/rss"
	"golang.org/x/net/html"
)

// GoogleNews searches Google News through its RSS feeds, which need no
// key. Its items link to wrappers on news.google.com; Search decodes the
// ones whose id carries the article's address, and Unwrap follows the
// rest, which costs a request or two, so the router calls it only for the
// hits it keeps.
type GoogleNews struct {
	f    *Fetcher
	base string
}

var _ Provider = (*GoogleNews)(nil)

// NewGoogleNews returns a provider for the Google News RSS feeds at base;
// an empty base means https://news.google.com/rss. The value is a
// *GoogleNews, whose Unwrap the router uses on the hits it keeps.
func NewGoogleNews(f *Fetcher, base string) Provider {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		base = "https://news.google.com/rss"
	}
	return &GoogleNews{f: f, base: base}
}

// Name implements Provider.
func (g *GoogleNews) Name() string { return "googlenews" }

// gnewsWhen maps a recency to the feed's "when:" operator.
var gnewsWhen = map[string]string{"day": "1d", "week": "7d", "month": "30d", "year": "1y"}

// Search implements Provider. An empty query asks for the top headlines
// of the region's edition; the recency then filters them by date, since
// the headlines feed takes no "when:".
func (g *GoogleNews) Search(ctx context.Context, q Query) ([]Hit, error) {
	lang, region := strings.ToLower(q.Language), strings.ToUpper(q.Region)
	if lang == "" {
		lang = "en"
	}
	if region == "" {
		region = "US"
	}
	v := url.Values{"hl": {lang + "-" + region}, "gl": {region}, "ceid": {region + ":" + lang}}
	addr := g.base + "?" + v.Encode()
	text := strings.TrimSpace(q.Text)
	if text != "" {
		if w := gnewsWhen[q.Recency]; w != "" {
			text += " when:" + w
		}
		v.Set("q", text)
		addr = g.base + "/search?" + v.Encode()
	}
	resp, err := g.f.Fetch(ctx, Request{URL: addr, Header: http.Header{"Accept": {"application/rss+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.5"}}})
	se := (*StatusError)(nil)
	limited := errors.As(err, &se) && se.Status == http.StatusTooManyRequests
	if limited || resp != nil && strings.HasPrefix(resp.URL.Path, "/sorry/") {
		return nil, errors.New("googlenews: Google is rate-limiting this address (429 or its /sorry/ page); wait a while or use another provider")
	}
	if err != nil {
		return nil, fmt.Errorf("googlenews: %w", err)
	}
	feed, err := parseGoogleNewsFeed(resp)
	if err != nil {
		return nil, fmt.Errorf("googlenews: %w", err)
	}
	now := time.Now()
	var since time.Time
	if text == "" {
		since = recencySince(q.Recency, now)
	}
	hits := newHitList(q.Max)
	for _, it := range feed.Items {
		h := g.hit(it, resp.URL, now)
		if !since.IsZero() && !h.Published.IsZero() && h.Published.Before(since) {
			continue
		}
		if !hits.add(h) {
			break
		}
	}
	return hits.hits, nil
}

// Unwrap returns the article address behind a Google News wrapper link,
// fetching the wrapper when its id does not carry the address. A link
// that is not a wrapper (already unwrapped, or another site's) is
// returned as it is, and so is a wrapper that cannot be followed; it
// never fails. ctx bounds the requests.
func (g *GoogleNews) Unwrap(ctx context.Context, link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return link
	}
	if h := strings.ToLower(u.Host); h != "news.google.com" && !g.ownHost(h) {
		return link
	}
	return unwrapGoogleNews(ctx, g.f, link)
}

func (g *GoogleNews) ownHost(host string) bool {
	b, err := url.Parse(g.base)
	return err == nil && strings.EqualFold(b.Host, host)
}

func (g *GoogleNews) hit(it *rss.Item, base *url.URL, now time.Time) Hit {
	h := Hit{Title: hitText(it.Title), URL: resolve(base, strings.TrimSpace(it.Link))}
	if it.Source != nil {
		h.Publisher = hitText(it.Source.Title)
	}
	if h.Publisher != "" {
		h.Title = strings.TrimSpace(strings.TrimSuffix(h.Title, " - "+h.Publisher))
	}
	if u, err := url.Parse(h.URL); err == nil {
		if id := gnewsArticleID(u); id != "" {
			if a := decodeGoogleNewsID(id); a != "" {
				h.URL = a
			}
		}
	}
	if it.PubDateParsed != nil {
		h.Published = it.PubDateParsed.UTC()
	} else {
		h.Published = hitDate(it.PubDate, now)
	}
	h.Snippet = gnewsSnippet(it.Description, h.Title)
	return h
}

// reXMLDecl matches a feed's XML declaration, which may name a charset.
var reXMLDecl = regexp.MustCompile(`^\s*<\?xml[^>]*\?>`)

// parseGoogleNewsFeed parses the feed from bytes fetched by the Fetcher.
// The body is decoded to UTF-8 first (trusting neither the header nor the
// declaration blindly), so the declaration is rewritten to say UTF-8, or
// the parser would decode it a second time.
func parseGoogleNewsFeed(resp *Response) (*rss.Feed, error) {
	text := resp.Text()
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("the feed was empty")
	}
	if page, ok := htmlPage(resp.ContentType, text); ok {
		return nil, fmt.Errorf("expected an RSS feed but got %s", page)
	}
	text = reXMLDecl.ReplaceAllLiteralString(text, `<?xml version="1.0" encoding="UTF-8"?>`)
	feed, err := new(rss.Parser).Parse(strings.NewReader(text))
	if err != nil {
		if resp.Truncated {
			return nil, fmt.Errorf("the feed is larger than the %d-byte limit and was cut off", len(resp.Body))
		}
		return nil, fmt.Errorf("the answer is not a valid RSS feed: %w", err)
	}
	return feed, nil
}

var (
	gnewsItems  = cascadia.MustCompile("li")
	gnewsAnchor = cascadia.MustCompile("a")
	gnewsFont   = cascadia.MustCompile("font")
)

// gnewsSnippet makes a snippet of an item's description, which is HTML:
// the headline and publisher again, or for a story covered by several
// outlets a list of their headlines. The item's own headline is left
// out, so the snippet lists only the related coverage.
func gnewsSnippet(desc, title string) string {
	if !strings.Contains(desc, "<") {
		if s := hitText(desc); s != title {
			return s
		}
		return ""
	}
	doc, err := html.Parse(strings.NewReader(desc))
	if err != nil {
		return ""
	}
	entries := gnewsItems.MatchAll(doc)
	if len(entries) == 0 {
		entries = []*html.Node{doc}
	}
	var related []string
	for _, e := range entries {
		a := gnewsAnchor.MatchFirst(e)
		if a == nil || strings.Contains(attr(a, "href"), "/stories/") {
			continue // "View Full Coverage on Google News"
		}
		head := nodeText(a)
		if head == "" || head == title || strings.HasPrefix(head, title+" - ") {
			continue
		}
		if f := gnewsFont.MatchFirst(e); f != nil && nodeText(f) != "" {
			head += " (" + nodeText(f) + ")"
		}
		related = append(related, head)
	}
	if len(related) == 0 {
		return ""
	}
	return "Related coverage: " + strings.Join(related, "; ")
}
