package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// robots fetches and keeps each host's robots.txt for a day.
type robots struct {
	f     *Fetcher
	mu    sync.Mutex
	hosts map[string]*robotsEntry
}

type robotsEntry struct {
	once    sync.Once
	data    *robotstxt.RobotsData
	fetched time.Time
}

// check refuses u when the site's robots.txt disallows it for domo-web.
// A robots.txt that cannot be fetched allows everything, as crawlers treat
// it.
func (r *robots) check(ctx context.Context, u *url.URL) error {
	key := u.Scheme + "://" + u.Host
	r.mu.Lock()
	e := r.hosts[key]
	if e == nil || time.Since(e.fetched) > 24*time.Hour && !e.fetched.IsZero() {
		e = &robotsEntry{}
		r.hosts[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		e.fetched = time.Now()
		resp, err := r.f.Fetch(ctx, Request{URL: key + "/robots.txt", MaxBytes: 512 << 10, Timeout: 5 * time.Second, NoCache: true})
		var se *StatusError
		switch {
		case err == nil:
			e.data, _ = robotstxt.FromStatusAndBytes(resp.Status, resp.Body)
		case errors.As(err, &se):
			e.data, _ = robotstxt.FromStatusAndBytes(se.Status, nil)
		}
	})
	if e.data == nil {
		return nil
	}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if path == "" {
		path = "/"
	}
	if !e.data.TestAgent(path, "domo-web") {
		return fmt.Errorf("%s disallows %s for robots (robots.txt is respected because of --respect-robots)", u.Host, path)
	}
	return nil
}
