package web

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Engine routes searches to providers and reads the top results.
type Engine struct {
	Fetch *Fetcher
	// Web and News are the providers tried in order, for web pages and for
	// news.
	Web, News []Provider
	// ProviderTimeout bounds one provider's search (default 8 s).
	ProviderTimeout time.Duration
	// PageTimeout bounds reading one page; ReadTimeout all the reading of
	// one search (defaults 8 s and 12 s).
	PageTimeout, ReadTimeout time.Duration
	// PerSite is how many pages of one site are read at a time (default 3);
	// Parallel how many pages are read at a time in all (default 6).
	PerSite, Parallel int
	// ContentChars bounds each source's extracted text (default 6000).
	ContentChars int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// unwrapper is a provider whose links point at itself and must be
// followed to the article (Google News).
type unwrapper interface {
	Unwrap(ctx context.Context, link string) string
}

func (e *Engine) defaults() {
	e.ProviderTimeout = cmp.Or(e.ProviderTimeout, 8*time.Second)
	e.PageTimeout = cmp.Or(e.PageTimeout, 8*time.Second)
	e.ReadTimeout = cmp.Or(e.ReadTimeout, 12*time.Second)
	e.PerSite = cmp.Or(e.PerSite, 3)
	e.Parallel = cmp.Or(e.Parallel, 6)
	e.ContentChars = cmp.Or(e.ContentChars, 6000)
	if e.Now == nil {
		e.Now = time.Now
	}
}

// SearchOptions are the choices of one search beyond the query.
type SearchOptions struct {
	// Read is how many of the top results to fetch and extract; 0 reads
	// none.
	Read int
	// Progress, when set, is told as pages are read.
	Progress func(done, total int, msg string)
}

// Search asks the providers in turn until one has results, de-duplicates
// them per site, and reads the top ones.
func (e *Engine) Search(ctx context.Context, q Query, o SearchOptions) (SearchResult, error) {
	e.defaults()
	res := SearchResult{Query: q.Text, Mode: "web", Recency: q.Recency}
	providers := e.Web
	if q.News {
		res.Mode = "news"
		providers = e.News
	}
	if len(providers) == 0 {
		return res, fmt.Errorf("no %s search provider is configured: set --searxng-url, a Brave key, or allow DuckDuckGo with --providers", res.Mode)
	}
	want := q.Max
	pq := q
	pq.Max = q.Max*2 + 2
	var failures []string
	var hits []Hit
	var used Provider
	for _, p := range providers {
		pctx, cancel := context.WithTimeout(ctx, e.ProviderTimeout)
		h, err := p.Search(pctx, pq)
		cancel()
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s failed: %v", p.Name(), err))
			continue
		}
		if len(h) == 0 {
			res.Notes = append(res.Notes, p.Name()+" found nothing")
			continue
		}
		hits, used = h, p
		break
	}
	res.Notes = append(res.Notes, failures...)
	if used == nil {
		if len(failures) == len(providers) {
			return res, fmt.Errorf("every search provider failed: %s", strings.Join(failures, "; "))
		}
		return res, nil
	}
	res.Provider = used.Name()
	if u, ok := used.(unwrapper); ok {
		e.unwrapAll(ctx, u, hits, want*2)
	}
	cands := e.candidates(hits, q.News, &res)
	srcs := make([]Source, len(cands))
	for i, h := range cands {
		srcs[i] = e.source(h, res.Provider)
	}
	if o.Read > 0 {
		srcs = e.readAll(ctx, srcs, min(o.Read, want), want, q.News, o.Progress, &res)
	}
	if len(srcs) > want {
		srcs = srcs[:want]
	}
	for i := range srcs {
		srcs[i].N = i + 1
		if srcs[i].Status == "" {
			srcs[i].Status = "not read"
		}
	}
	res.Sources = srcs
	return res, nil
}

// unwrapAll follows the first n wrapper links to their articles, a few at
// a time.
func (e *Engine) unwrapAll(ctx context.Context, u unwrapper, hits []Hit, n int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range hits[:min(n, len(hits))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			uctx, cancel := context.WithTimeout(ctx, e.PageTimeout/2)
			defer cancel()
			hits[i].URL = u.Unwrap(uctx, hits[i].URL)
		}()
	}
	wg.Wait()
}

// candidates drops repeated pages and, in news mode, home pages and
// section fronts, then orders the rest so that each site appears once
// before any site appears twice.
func (e *Engine) candidates(hits []Hit, news bool, res *SearchResult) []Hit {
	seen := map[string]bool{}
	var first, rest []Hit
	perSite := map[string]int{}
	fronts := 0
	for _, h := range hits {
		u, err := url.Parse(h.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		key := canonicalURL(u)
		if seen[key] {
			continue
		}
		seen[key] = true
		if news && isFrontURL(u) {
			fronts++
			continue
		}
		site := siteOf(u)
		perSite[site]++
		if perSite[site] == 1 {
			first = append(first, h)
		} else {
			rest = append(rest, h)
		}
	}
	if fronts > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("left out %d home page(s) or section front(s)", fronts))
	}
	return append(first, rest...)
}

// trackingParams are query parameters that do not change a page.
var trackingParams = regexp.MustCompile(`^(utm_\w+|fbclid|gclid|mc_cid|mc_eid|ref|ref_src|cmpid|ocid|smid|taid|guccounter|_ga)$`)

// canonicalURL is a page's identity for de-duplication: no scheme, no
// "www.", no fragment, no tracking parameters, no trailing slash.
func canonicalURL(u *url.URL) string {
	q := u.Query()
	for k := range q {
		if trackingParams.MatchString(strings.ToLower(k)) {
			q.Del(k)
		}
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	s := siteOf(u) + p
	if enc := q.Encode(); enc != "" {
		s += "?" + enc
	}
	return strings.ToLower(s)
}

// reArticlePath matches path segments that name an article: an id, a date
// or a slug of several words.
var reArticlePath = regexp.MustCompile(`\d{3,}|\d{4}/\d{1,2}|[a-z0-9]+(-[a-z0-9]+){2,}|_[a-z0-9]+_|\.s?html?$|\.php`)

// isFrontURL reports whether u looks like a home page or section front
// rather than an article: the root, or a short path of plain section
// words ("/world", "/news/business/").
func isFrontURL(u *url.URL) bool {
	p := strings.Trim(strings.ToLower(u.Path), "/")
	if p == "" || p == "index.html" || p == "index.php" {
		return u.RawQuery == "" || !strings.Contains(u.RawQuery, "id=")
	}
	segs := strings.Split(p, "/")
	if len(segs) > 3 || reArticlePath.MatchString(p) {
		return false
	}
	for _, s := range segs {
		if len(s) > 24 {
			return false
		}
	}
	return u.RawQuery == ""
}

func (e *Engine) source(h Hit, provider string) Source {
	s := Source{Title: h.Title, URL: h.URL, Snippet: h.Snippet, Image: h.Image, Provider: provider}
	if u, err := url.Parse(h.URL); err == nil {
		s.Site = siteOf(u)
		s.Favicon = cmp.Or(h.Favicon, resolve(u, "/favicon.ico"))
	}
	if h.Publisher != "" {
		s.Site = h.Publisher
	}
	if !h.Published.IsZero() {
		s.Published = h.Published.UTC().Format(time.RFC3339)
	}
	return s
}

// readAll reads up to n of the sources, replacing a page that fails or is
// unusable by the next one, until want pages are read or time is up.
// Pages are read in parallel, at most PerSite at a time from one site.
func (e *Engine) readAll(ctx context.Context, srcs []Source, n, want int, news bool, progress func(done, total int, msg string), res *SearchResult) []Source {
	ctx, cancel := context.WithTimeout(ctx, e.ReadTimeout)
	defer cancel()
	type outcome struct {
		i   int
		src Source
	}
	done := make(chan outcome)
	sites := map[string]chan struct{}{}
	global := make(chan struct{}, e.Parallel)
	next, running, good, finished := 0, 0, 0, 0
	start := func() {
		i := next
		next++
		running++
		// Politeness is per server: host and port.
		host := srcs[i].URL
		if u, err := url.Parse(host); err == nil {
			host = u.Host
		}
		sem := sites[host]
		if sem == nil {
			sem = make(chan struct{}, e.PerSite)
			sites[host] = sem
		}
		go func() {
			src := srcs[i]
			select {
			case global <- struct{}{}:
				select {
				case sem <- struct{}{}:
					e.read(ctx, &src, news)
					<-sem
				case <-ctx.Done():
				}
				<-global
			case <-ctx.Done():
			}
			done <- outcome{i, src}
		}()
	}
	for next < len(srcs) && next < n {
		start()
	}
	timedOut := false
	for running > 0 {
		o := <-done
		running--
		finished++
		if o.src.Status == "" && ctx.Err() != nil {
			o.src.Status = "not read: time limit"
			timedOut = true
		}
		srcs[o.i] = o.src
		if o.src.Status == "read" {
			good++
		} else if next < len(srcs) && ctx.Err() == nil && good+running < n {
			start()
		}
		if progress != nil {
			progress(finished, max(n, next), o.src.Site)
		}
	}
	if timedOut {
		res.Notes = append(res.Notes, fmt.Sprintf("reading stopped at the %s limit", e.ReadTimeout))
	}
	// Read and usable pages first, in their ranking order; then the rest.
	var ok, other []Source
	for i, s := range srcs {
		if i < next && s.Status == "read" {
			ok = append(ok, s)
		} else if i < next || len(ok)+len(other) < want {
			other = append(other, s)
		}
	}
	return append(ok, other...)
}

// read fetches and extracts one source, filling its content and status.
func (e *Engine) read(ctx context.Context, s *Source, news bool) {
	pctx, cancel := context.WithTimeout(ctx, e.PageTimeout)
	defer cancel()
	resp, err := e.Fetch.Fetch(pctx, Request{URL: s.URL, Page: true})
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		s.Status = "failed: " + err.Error()
		return
	}
	p, err := Extract(resp.Body, resp.Header.Get("Content-Type"), resp.URL)
	if err != nil {
		s.Status = "failed: " + err.Error()
		return
	}
	s.URL = resp.URL.String()
	if news && (isFrontURL(resp.URL) || isFront(p)) {
		s.Status = "unusable: a home page or section front, not an article"
		return
	}
	if p.Unusable != "" {
		s.Status = "unusable: " + p.Unusable
		return
	}
	e.fill(s, p)
	s.Status = "read"
}

// isFront reports whether an extracted page is a list of links rather than
// an article.
func isFront(p *Page) bool {
	if p.Type == "article" {
		return false
	}
	return p.Links > 80 && p.LinkWords > p.Words || p.Type == "website" && p.Links > 40 && p.LinkWords*2 > p.Words
}

func (e *Engine) fill(s *Source, p *Page) {
	if p.Title != "" && (s.Title == "" || len(s.Title) < 12) {
		s.Title = p.Title
	}
	if s.Published == "" && !p.Published.IsZero() {
		s.Published = p.Published.UTC().Format(time.RFC3339)
	}
	if p.Image != "" && s.Image == "" {
		s.Image = p.Image
	}
	// The page's own icon beats a guessed /favicon.ico, not one the
	// provider gave.
	if p.Favicon != "" && (s.Favicon == "" || strings.HasSuffix(s.Favicon, "/favicon.ico")) {
		s.Favicon = p.Favicon
	}
	s.Content = clip(p.Text, e.ContentChars)
}

// clip cuts s to at most n bytes at a sentence or word boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	for i := len(cut) - 1; i > n*3/4; i-- {
		if (cut[i] == '.' || cut[i] == '!' || cut[i] == '?') && (i+1 == len(cut) || cut[i+1] == ' ' || cut[i+1] == '\n') {
			return cut[:i+1] + " …"
		}
	}
	if i := strings.LastIndexAny(cut, " \n"); i > n/2 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + " …"
}
