package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// Google News links every item to a wrapper on news.google.com
// (/rss/articles/<id>), not to the article. This file finds the article
// behind the wrapper, cheapest way first.

// unwrapGoogleNews returns the article address behind link, a Google News
// wrapper link, or link itself when it cannot be found:
//
//  1. Old ids ("CBMi…") are base64url protobuf messages whose first
//     string field is the article's address; it is decoded without a
//     request.
//  2. Otherwise the wrapper is fetched (through f, so the address guard
//     applies to every hop): a redirect off the wrapper's host is the
//     article; else the page names it in a data-n-au attribute, a
//     canonical link or a meta refresh.
//  3. A page carrying a signature and timestamp (data-n-a-sg,
//     data-n-a-ts) is asked about through Google's batchexecute endpoint,
//     as news.google.com's own script does.
//  4. Last, the first link on the page to a host other than Google's.
func unwrapGoogleNews(ctx context.Context, f *Fetcher, link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return link
	}
	id := gnewsArticleID(u)
	if id == "" {
		return link
	}
	if a := decodeGoogleNewsID(id); a != "" {
		return a
	}
	resp, err := f.Fetch(ctx, Request{URL: link})
	if resp == nil {
		return link
	}
	if resp.URL.Host != u.Host && !isGoogleHost(resp.URL.Hostname()) {
		// Redirected to the article; even an error status there names it.
		return resp.URL.String()
	}
	if err != nil {
		return link
	}
	doc, err := html.Parse(strings.NewReader(resp.Text()))
	if err != nil {
		return link
	}
	offsite := func(ref string) string {
		a := resolve(resp.URL, ref)
		if a == "" {
			return ""
		}
		au, err := url.Parse(a)
		if err != nil || au.Host == u.Host || isGoogleHost(au.Hostname()) {
			return ""
		}
		return a
	}
	if n := gnewsAU.MatchFirst(doc); n != nil {
		if a := offsite(attr(n, "data-n-au")); a != "" {
			return a
		}
	}
	if n := gnewsCanonical.MatchFirst(doc); n != nil {
		if a := offsite(attr(n, "href")); a != "" {
			return a
		}
	}
	for _, n := range gnewsRefresh.MatchAll(doc) {
		c := attr(n, "content")
		if i := strings.Index(strings.ToLower(c), "url="); i >= 0 {
			if a := offsite(strings.Trim(c[i+4:], `'" `)); a != "" {
				return a
			}
		}
	}
	if n := gnewsSigned.MatchFirst(doc); n != nil {
		if a := offsite(gnewsBatchExecute(ctx, f, resp.URL, id, attr(n, "data-n-a-ts"), attr(n, "data-n-a-sg"))); a != "" {
			return a
		}
	}
	for _, n := range gnewsLinks.MatchAll(doc) {
		if a := offsite(attr(n, "href")); a != "" {
			return a
		}
	}
	return link
}

var (
	gnewsAU        = cascadia.MustCompile("[data-n-au]")
	gnewsCanonical = cascadia.MustCompile(`link[rel~="canonical"]`)
	gnewsRefresh   = cascadia.MustCompile(`meta[http-equiv="refresh" i]`)
	gnewsSigned    = cascadia.MustCompile("[data-n-a-sg][data-n-a-ts]")
	gnewsLinks     = cascadia.MustCompile("a[href]")
)

// gnewsArticleID is the id in a wrapper link's path
// (/rss/articles/<id>, /articles/<id>, /read/<id>), or "".
func gnewsArticleID(u *url.URL) string {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+1 < len(segs); i++ {
		if segs[i] == "articles" || segs[i] == "read" {
			return segs[i+1]
		}
	}
	return ""
}

// decodeGoogleNewsID returns the article address carried in an old-style
// id: base64url (unpadded) of a protobuf message, 0x08 0x13 then field 4
// (tag 0x22) holding the address as a length-prefixed string, sometimes
// followed by the AMP address. Newer ids carry an opaque token ("AU_yq…")
// there instead; for them it returns "".
func decodeGoogleNewsID(id string) string {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(id, "="))
	if err != nil {
		return ""
	}
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return ""
		}
		b = b[n:]
		switch key & 7 {
		case 0: // varint
			_, n := binary.Uvarint(b)
			if n <= 0 {
				return ""
			}
			b = b[n:]
		case 1: // 64-bit
			if len(b) < 8 {
				return ""
			}
			b = b[8:]
		case 5: // 32-bit
			if len(b) < 4 {
				return ""
			}
			b = b[4:]
		case 2: // length-delimited
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return ""
			}
			s := b[n : n+int(l)]
			b = b[n+int(l):]
			if a := articleAddress(s); a != "" {
				return a
			}
		default:
			return ""
		}
	}
	return ""
}

// articleAddress returns s when it is a plausible http(s) address of an
// article, not one of Google's.
func articleAddress(s []byte) string {
	if !bytes.HasPrefix(s, []byte("http://")) && !bytes.HasPrefix(s, []byte("https://")) || !utf8.Valid(s) {
		return ""
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f {
			return ""
		}
	}
	u, err := url.Parse(string(s))
	if err != nil || !strings.Contains(u.Hostname(), ".") || isGoogleHost(u.Hostname()) {
		return ""
	}
	return u.String()
}

// isGoogleHost reports Google's own hosts, which are never the article.
func isGoogleHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range []string{"gstatic.com", "googleusercontent.com", "googleapis.com", "googletagmanager.com", "doubleclick.net", "youtube.com"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	for _, label := range strings.Split(host, ".") {
		if label == "google" {
			return true
		}
	}
	return false
}

// gnewsBatchExecute asks the wrapper host's batchexecute endpoint for the
// article behind id, signed with the page's timestamp and signature, the
// way news.google.com's script does. It returns "" on any failure.
func gnewsBatchExecute(ctx context.Context, f *Fetcher, page *url.URL, id, ts, sig string) string {
	if ts == "" || sig == "" {
		return ""
	}
	inner, err := json.Marshal([]any{"garturlreq",
		[]any{[]any{"X", "X", []any{"X", "X"}, nil, nil, 1, 1, "US:en", nil, 1, nil, nil, nil, nil, nil, 0, 1}, "X", "X", 1, []any{1, 1, 1}, 1, 1, nil, 0, 0, nil, 0},
		id, json.Number(ts), sig})
	if err != nil {
		return ""
	}
	req, err := json.Marshal([]any{[]any{[]any{"Fbv4je", string(inner), nil, "generic"}}})
	if err != nil {
		return ""
	}
	endpoint := &url.URL{Scheme: page.Scheme, Host: page.Host, Path: "/_/DotsSplashUi/data/batchexecute"}
	resp, err := f.Fetch(ctx, Request{
		Method:   http.MethodPost,
		URL:      endpoint.String(),
		Header:   http.Header{"Content-Type": {"application/x-www-form-urlencoded;charset=UTF-8"}, "Referer": {"https://news.google.com/"}},
		Body:     []byte(url.Values{"f.req": {string(req)}}.Encode()),
		MaxBytes: 256 << 10,
	})
	if err != nil {
		return ""
	}
	return batchExecuteURL(resp.Body)
}

// batchExecuteURL reads the address out of a batchexecute answer: after
// the ")]}'" guard, an array of envelopes ["wrb.fr", rpc, payload, …]
// whose payload is JSON text ["garturlres", "<address>", …].
func batchExecuteURL(body []byte) string {
	i := bytes.IndexByte(body, '[')
	if i < 0 {
		return ""
	}
	var envelopes [][]any
	if err := json.NewDecoder(bytes.NewReader(body[i:])).Decode(&envelopes); err != nil {
		return ""
	}
	for _, e := range envelopes {
		if len(e) < 3 || e[0] != "wrb.fr" {
			continue
		}
		payload, ok := e[2].(string)
		if !ok {
			continue
		}
		var res []any
		if json.Unmarshal([]byte(payload), &res) != nil || len(res) < 2 {
			continue
		}
		if s, ok := res[1].(string); ok {
			if a := articleAddress([]byte(s)); a != "" {
				return a
			}
		}
	}
	return ""
}
