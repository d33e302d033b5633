package browser

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Origins says which sites pages may load from. An entry is an origin
// (https://example.com, http://localhost:3000), a host (example.com, any
// scheme and port), a host and port (localhost:3000), or a wildcard for a
// domain and its subdomains (*.example.com). Block wins over Allow; with an
// Allow list, everything else is blocked.
type Origins struct {
	Allow, Block []string
}

func (o Origins) active() bool { return len(o.Allow) > 0 || len(o.Block) > 0 }

// Validate reports entries that are not origins, hosts or wildcards.
func (o Origins) Validate() error {
	for _, list := range [][]string{o.Allow, o.Block} {
		for _, e := range list {
			if _, err := parseOrigin(e); err != nil {
				return err
			}
		}
	}
	return nil
}

type originPattern struct {
	scheme, host, port string
	wildcard           bool
}

func parseOrigin(e string) (originPattern, error) {
	e = strings.ToLower(strings.TrimSpace(e))
	var p originPattern
	if scheme, rest, ok := strings.Cut(e, "://"); ok {
		p.scheme, e = scheme, strings.TrimSuffix(rest, "/")
	}
	if strings.HasPrefix(e, "*.") {
		p.wildcard, e = true, e[2:]
	}
	if h, port, err := net.SplitHostPort(e); err == nil {
		p.host, p.port = h, port
	} else {
		p.host = strings.Trim(e, "[]")
	}
	if p.host == "" || strings.ContainsAny(p.host, "/?#*@ ") {
		return p, fmt.Errorf("%q is not an origin: give https://example.com, example.com, localhost:3000 or *.example.com", e)
	}
	return p, nil
}

func (p originPattern) match(u *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	if p.scheme != "" && p.scheme != scheme {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if p.wildcard {
		if host != p.host && !strings.HasSuffix(host, "."+p.host) {
			return false
		}
	} else if host != p.host {
		return false
	}
	if p.port == "" {
		return true
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}[scheme]
	}
	return port == p.port
}

func matchAny(list []string, u *url.URL) bool {
	for _, e := range list {
		if p, err := parseOrigin(e); err == nil && p.match(u) {
			return true
		}
	}
	return false
}

// check refuses a network URL the policy blocks; other URLs (data:,
// about:, blob:) are not the policy's business.
func (o Origins) check(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
	default:
		return nil
	}
	if metadataHosts[strings.Trim(strings.ToLower(u.Hostname()), "[].")] {
		return fmt.Errorf("%s is a cloud metadata address, which hands out credentials: domo-browser never opens it", u.Hostname())
	}
	if matchAny(o.Block, u) {
		return fmt.Errorf("%s is blocked by domo-browser's --blocked-origins", originOf(u))
	}
	if len(o.Allow) > 0 && !matchAny(o.Allow, u) {
		return fmt.Errorf("%s is not in domo-browser's --allowed-origins (%s)", originOf(u), strings.Join(o.Allow, ", "))
	}
	return nil
}

func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// enforce makes the tab ask before requests and fails those the policy
// blocks, so a page cannot frame or redirect to a blocked site either.
// Without allowed or blocked origins only documents are checked (for the
// metadata addresses), which costs one round trip a page. tabCtx is the
// tab's context; ctx bounds setting it up.
func (o Origins) enforce(tabCtx, ctx context.Context) error {
	pattern := &fetch.RequestPattern{URLPattern: "*"}
	if !o.active() {
		pattern.ResourceType = network.ResourceTypeDocument
	}
	paused := chromedp.Events(tabCtx, fetch.RequestPaused)
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{pattern}}); err != nil {
		return fmt.Errorf("apply the origin policy: %v", err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			u, perr := url.Parse(ev.Request.URL)
			if perr == nil && o.check(u) != nil {
				slog.Debug("blocked by the origin policy", "url", ev.Request.URL)
				_, err = chromedp.Call(tabCtx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			} else {
				_, err = chromedp.Call(tabCtx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			}
			if err != nil && tabCtx.Err() != nil {
				return
			}
		}
	}()
	return nil
}
