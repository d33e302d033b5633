package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// FetcherOptions configure a Fetcher. Zero values take the defaults.
type FetcherOptions struct {
	// Allow opens the address guard to these names, addresses and
	// prefixes.
	Allow []string
	// UserAgent defaults to "domo-web/VERSION (+https://github.com/domo-agent/domo)".
	UserAgent string
	// Timeout bounds one request, redirects and body included (default 15 s).
	Timeout time.Duration
	// MaxBytes caps a body after decompression (default 5 MiB).
	MaxBytes int64
	// MaxRedirects caps redirect hops (default 5).
	MaxRedirects int
	// CacheTTL is how long GET responses are kept (default 10 min; negative
	// turns the cache off). CacheBytes bounds the cache (default 64 MiB).
	CacheTTL   time.Duration
	CacheBytes int64
	// Robots makes the fetcher honour robots.txt for page fetches.
	Robots bool
}

// Fetcher makes every HTTP request of the server. It is safe for
// concurrent use.
type Fetcher struct {
	opts   FetcherOptions
	guard  *Guard
	client *http.Client
	cache  *cache
	robots *robots
}

// Request is one request for a Fetcher.
type Request struct {
	Method string // GET when empty
	URL    string
	Header http.Header
	Body   []byte
	// MaxBytes overrides the fetcher's body cap when positive.
	MaxBytes int64
	// Timeout overrides the fetcher's timeout when positive.
	Timeout time.Duration
	// Page marks a fetch of a page on the user's behalf (not a search API
	// call): robots.txt applies to it when enabled.
	Page bool
	// NoCache skips the cache for this request.
	NoCache bool
}

// Response is a fetched response. Body holds the bytes as received (after
// transfer decompression), not converted to UTF-8: Text does that.
type Response struct {
	// URL is the final address, after redirects.
	URL    *url.URL
	Status int
	Header http.Header
	// ContentType is the media type, lowercased, without parameters.
	ContentType string
	Body        []byte
	// Truncated is set when the body was cut at the size cap.
	Truncated bool
	// Elapsed is how long the fetch took (zero for a cached answer).
	Elapsed time.Duration
}

// Text returns the body decoded to UTF-8, using the declared charset, the
// document's own declaration or detection, in that order of trust.
func (r *Response) Text() string {
	return decodeText(r.Body, r.Header.Get("Content-Type"))
}

// StatusError is returned for a response whose status is not 2xx.
type StatusError struct {
	URL    string
	Status int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// Version is set by the server binary; it goes into the User-Agent.
var Version = "dev"

// NewFetcher returns a fetcher with opts.
func NewFetcher(opts FetcherOptions) (*Fetcher, error) {
	g, err := NewGuard(opts.Allow)
	if err != nil {
		return nil, err
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "domo-web/" + Version + " (+https://github.com/domo-agent/domo)"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 5 << 20
	}
	if opts.MaxRedirects <= 0 {
		opts.MaxRedirects = 5
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = 10 * time.Minute
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
	}
	f := &Fetcher{opts: opts, guard: g}
	tr := &http.Transport{
		// No proxy from the environment: a proxy would connect on our
		// behalf to addresses the guard never sees.
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	if opts.CacheTTL > 0 {
		f.cache = newCache(opts.CacheTTL, opts.CacheBytes)
	}
	if opts.Robots {
		f.robots = &robots{f: f, hosts: map[string]*robotsEntry{}}
	}
	return f, nil
}

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.opts.MaxRedirects {
		return fmt.Errorf("stopped after %d redirects (from %s)", f.opts.MaxRedirects, via[0].URL.Redacted())
	}
	if err := f.checkURL(req.URL); err != nil {
		return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
	}
	return nil
}

// checkURL refuses what may never be fetched, whatever it resolves to.
func (f *Fetcher) checkURL(u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return fmt.Errorf("only http and https addresses can be fetched, not %q", u.Scheme+":")
	}
	if u.User != nil {
		return errors.New("addresses with a user name or password are refused")
	}
	if u.Hostname() == "" {
		return errors.New("the address has no host")
	}
	return f.guard.CheckHost(u.Hostname())
}

// ParseURL parses and checks an address given by a model or a user.
func (f *Fetcher) ParseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid URL: %v", raw, err)
	}
	if u.Scheme == "" && !strings.HasPrefix(raw, "//") && strings.Contains(raw, ".") {
		// "example.com/page": the scheme was left out.
		if u2, err := url.Parse("https://" + raw); err == nil {
			u = u2
		}
	}
	if err := f.checkURL(u); err != nil {
		return nil, err
	}
	u.Fragment = ""
	return u, nil
}

// Fetch performs req. A non-2xx status is returned as a *StatusError along
// with the response.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	u, err := f.ParseURL(req.URL)
	if err != nil {
		return nil, err
	}
	key := ""
	if method == http.MethodGet && f.cache != nil && !req.NoCache {
		key = u.String()
		if r, ok := f.cache.get(key); ok {
			return r, statusErr(r)
		}
	}
	if req.Page && f.robots != nil {
		if err := f.robots.check(ctx, u); err != nil {
			return nil, err
		}
	}
	timeout := f.opts.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		hr.Header[k] = vs
	}
	hr.Header.Set("User-Agent", f.opts.UserAgent)
	if hr.Header.Get("Accept") == "" {
		hr.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	}
	if hr.Header.Get("Accept-Language") == "" {
		hr.Header.Set("Accept-Language", "en;q=0.9,*;q=0.5")
	}
	start := time.Now()
	resp, err := f.client.Do(hr)
	if err != nil {
		return nil, f.explain(u, err, timeout)
	}
	defer resp.Body.Close()
	limit := f.opts.MaxBytes
	if req.MaxBytes > 0 {
		limit = req.MaxBytes
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, f.explain(u, err, timeout)
	}
	r := &Response{URL: resp.Request.URL, Status: resp.StatusCode, Header: resp.Header, Body: b, Elapsed: time.Since(start)}
	if int64(len(b)) > limit {
		r.Body, r.Truncated = b[:limit], true
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		r.ContentType = strings.ToLower(mt)
	}
	if key != "" && resp.StatusCode/100 == 2 {
		f.cache.put(key, r)
		if final := r.URL.String(); final != key {
			f.cache.put(final, r)
		}
	}
	return r, statusErr(r)
}

func statusErr(r *Response) error {
	if r.Status/100 != 2 {
		return &StatusError{URL: r.URL.Redacted(), Status: r.Status}
	}
	return nil
}

// explain turns transport errors into messages a model can act on.
func (f *Fetcher) explain(u *url.URL, err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, ErrBlocked):
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s did not answer within %s", u.Host, timeout.Round(time.Millisecond))
	case errors.Is(err, context.Canceled):
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("fetching %s: %v", u.Redacted(), ue.Err)
	}
	return fmt.Errorf("fetching %s: %v", u.Redacted(), err)
}

// cache keeps successful GET responses for a while, bounded in bytes.
type cache struct {
	ttl   time.Duration
	max   int64
	mu    sync.Mutex
	size  int64
	items map[string]cached
	order []string // insertion order, oldest first
}

type cached struct {
	r       *Response
	expires time.Time
}

func newCache(ttl time.Duration, max int64) *cache {
	return &cache{ttl: ttl, max: max, items: map[string]cached{}}
}

func (c *cache) get(key string) (*Response, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || time.Now().After(e.expires) {
		return nil, false
	}
	r := *e.r
	r.Elapsed = 0
	return &r, true
}

func (c *cache) put(key string, r *Response) {
	n := int64(len(r.Body))
	if n > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[key]; ok {
		c.size -= int64(len(old.r.Body))
	} else {
		c.order = append(c.order, key)
	}
	c.items[key] = cached{r: r, expires: time.Now().Add(c.ttl)}
	c.size += n
	for c.size > c.max && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		if e, ok := c.items[k]; ok {
			c.size -= int64(len(e.r.Body))
			delete(c.items, k)
		}
	}
}
