package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// DuckDuckGo scrapes DuckDuckGo's HTML endpoint, which needs no key. It
// has no news vertical: in news mode it searches the web with the
// recency filter.
type DuckDuckGo struct {
	f        *Fetcher
	endpoint string
}

var _ Provider = (*DuckDuckGo)(nil)

// NewDuckDuckGo returns a provider for DuckDuckGo's HTML endpoint; an
// empty endpoint means https://html.duckduckgo.com/html/.
func NewDuckDuckGo(f *Fetcher, endpoint string) Provider {
	if strings.TrimSpace(endpoint) == "" {
		endpoint = "https://html.duckduckgo.com/html/"
	}
	return &DuckDuckGo{f: f, endpoint: strings.TrimSpace(endpoint)}
}

// Name implements Provider.
func (d *DuckDuckGo) Name() string { return "duckduckgo" }

var (
	ddgResult  = cascadia.MustCompile("div.result")
	ddgTitle   = cascadia.MustCompile("a.result__a")
	ddgSnippet = cascadia.MustCompile(".result__snippet")
	ddgURL     = cascadia.MustCompile(".result__url")
	// ddgPage matches what every results page has, with or without
	// results; a page without it is not a results page.
	ddgPage = cascadia.MustCompile("#links, div.results, .no-results, div.serp__results")
)

// ddgRegions maps a country code to DuckDuckGo's region where they
// differ, and gives the usual language of a region when the query names
// none.
var (
	ddgRegions   = map[string]string{"gb": "uk"}
	ddgLanguages = map[string]string{
		"de": "de", "at": "de", "fr": "fr", "es": "es", "mx": "es", "ar": "es", "it": "it", "nl": "nl",
		"br": "pt", "pt": "pt", "jp": "jp", "kr": "kr", "cn": "zh", "tw": "tzh", "ru": "ru", "pl": "pl",
		"se": "sv", "dk": "da", "no": "no", "fi": "fi", "tr": "tr",
	}
)

// Search implements Provider.
func (d *DuckDuckGo) Search(ctx context.Context, q Query) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, errors.New("duckduckgo: a query is needed; DuckDuckGo has no headlines")
	}
	form := url.Values{"q": {q.Text}, "b": {""}}
	if kl := ddgRegion(q.Region, q.Language); kl != "" {
		form.Set("kl", kl)
	}
	if df := map[string]string{"day": "d", "week": "w", "month": "m", "year": "y"}[q.Recency]; df != "" {
		form.Set("df", df)
	}
	resp, err := d.f.Fetch(ctx, Request{
		Method: http.MethodPost,
		URL:    d.endpoint,
		Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Referer": {"https://html.duckduckgo.com/"}},
		Body:   []byte(form.Encode()),
	})
	if resp != nil && ddgAnomaly(resp.Body) {
		return nil, errors.New("duckduckgo: DuckDuckGo is rate-limiting this address (it answered with its bot check); wait a few minutes or use another provider")
	}
	if err != nil {
		return nil, fmt.Errorf("duckduckgo: %w", err)
	}
	doc, err := html.Parse(strings.NewReader(resp.Text()))
	if err != nil {
		return nil, fmt.Errorf("duckduckgo: the page cannot be parsed: %w", err)
	}
	results := ddgResult.MatchAll(doc)
	if len(results) == 0 && ddgPage.MatchFirst(doc) == nil {
		if page, ok := htmlPage(resp.ContentType, resp.Text()); ok {
			return nil, fmt.Errorf("duckduckgo: the answer is not a results page but %s; the page layout may have changed", page)
		}
		return nil, errors.New("duckduckgo: the answer is not a results page; the page layout may have changed")
	}
	now := time.Now()
	hits := newHitList(q.Max)
	for _, r := range results {
		if ddgIsAd(r) {
			continue
		}
		a := ddgTitle.MatchFirst(r)
		if a == nil {
			continue
		}
		h := Hit{Title: nodeText(a), URL: ddgLink(resp.URL, attr(a, "href"))}
		if s := ddgSnippet.MatchFirst(r); s != nil {
			h.Snippet = nodeText(s)
		}
		if u := ddgURL.MatchFirst(r); u != nil {
			if h.URL == "" {
				h.URL = ddgLink(resp.URL, attr(u, "href"))
			}
			// A date, when DuckDuckGo has one, follows the shown address.
			for sib := u.NextSibling; sib != nil; sib = sib.NextSibling {
				if t := hitDate(nodeText(sib), now); !t.IsZero() {
					h.Published = t
					break
				}
			}
		}
		if h.URL == "" {
			continue
		}
		if !hits.add(h) {
			break
		}
	}
	return hits.hits, nil
}

// ddgRegion builds DuckDuckGo's kl parameter ("us-en", "uk-en", "de-de").
func ddgRegion(region, lang string) string {
	region, lang = strings.ToLower(region), strings.ToLower(lang)
	if region == "" {
		return ""
	}
	if lang == "" {
		lang = ddgLanguages[region]
		if lang == "" {
			lang = "en"
		}
	}
	if r, ok := ddgRegions[region]; ok {
		region = r
	}
	return region + "-" + lang
}

// ddgAnomaly reports DuckDuckGo's bot check, which it serves (with 202 or
// 403) instead of results when it suspects automated use.
func ddgAnomaly(body []byte) bool {
	return bytes.Contains(body, []byte("anomaly-modal")) || bytes.Contains(body, []byte("bots use DuckDuckGo too")) ||
		bytes.Contains(body, []byte("/anomaly.js"))
}

// ddgIsAd reports a sponsored result.
func ddgIsAd(n *html.Node) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == "result--ad" || c == "result--ad--small" {
			return true
		}
	}
	if a := ddgTitle.MatchFirst(n); a != nil {
		href := attr(a, "href")
		return strings.Contains(href, "duckduckgo.com/y.js") || strings.Contains(href, "ad_domain=")
	}
	return false
}

// ddgLink resolves a result link and unwraps DuckDuckGo's redirect
// (//duckduckgo.com/l/?uddg=<escaped address>&rut=…).
func ddgLink(base *url.URL, href string) string {
	abs := resolve(base, href)
	if abs == "" {
		return ""
	}
	u, err := url.Parse(abs)
	if err != nil {
		return ""
	}
	if host := strings.ToLower(u.Hostname()); (host == "duckduckgo.com" || strings.HasSuffix(host, ".duckduckgo.com")) && u.Path == "/l/" {
		return resolve(nil, u.Query().Get("uddg"))
	}
	return abs
}

// nodeText is the text of n and its descendants, white space collapsed.
func nodeText(n *html.Node) string { return strings.Join(strings.Fields(textOf(n)), " ") }
