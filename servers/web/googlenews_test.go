package web

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// gnewsID builds an old-style article id around addr, as Google did.
func gnewsID(addr string) string {
	b := []byte{0x08, 0x13, 0x22}
	b = binary.AppendUvarint(b, uint64(len(addr)))
	b = append(b, addr...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestProviderGoogleNewsDecode(t *testing.T) {
	for _, id := range gnewsIDs(t) {
		if got := decodeGoogleNewsID(id.ID); got != id.URL {
			t.Errorf("decodeGoogleNewsID(%.20s…) = %q, want %q", id.ID, got, id.URL)
		}
	}
	long := "https://www.example.com/" + strings.Repeat("a-very-long-slug-", 12) + "123456"
	tests := []struct{ name, id, want string }{
		{"short", gnewsID("https://example.com/a"), "https://example.com/a"},
		{"two-byte length", gnewsID(long), long},
		{"padded", gnewsID("https://example.com/ab") + "==", "https://example.com/ab"},
		{"opaque token", gnewsID("AU_yqLMsomethingopaque"), ""},
		{"google's own address", gnewsID("https://news.google.com/stories/abc"), ""},
		{"not base64", "!!!", ""},
		{"cut short", gnewsID(long)[:40], ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := decodeGoogleNewsID(tt.id); got != tt.want {
			t.Errorf("%s: decodeGoogleNewsID = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestProviderGoogleNewsUnwrap(t *testing.T) {
	article := newProvServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!DOCTYPE html><html><head><title>Zurich tram</title></head><body><p>The article.</p></body></html>")
	})
	// Opaque ids, whose token the decoder cannot read.
	var (
		redirectID = gnewsID("AU_yqLMredirectsToTheArticleOnThePublishersSite")
		auID       = gnewsID("AU_yqLNcarriesDataNAuInTheWrapperPage")
		signedID   = gnewsID("AU_yqLOneedsBatchExecuteWithSignatureAndTime")
		refreshID  = gnewsID("AU_yqLPhasAMetaRefreshToTheArticle")
		missingID  = gnewsID("AU_yqLQisGoneFromTheServerEntirely")
	)
	var batch struct {
		sync.Mutex
		req string
	}
	wrapper := newProvServer(t, func(w http.ResponseWriter, r *http.Request) {
		page := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, `<!doctype html><html lang="en-US"><head><title>Google News</title><link rel="canonical" href="https://news.google.com/"></head><body>`+
				`<a href="https://accounts.google.com/ServiceLogin">Sign in</a>`+body+`<a href="https://policies.google.com/privacy">Privacy</a></body></html>`)
		}
		switch r.URL.Path {
		case "/rss/articles/" + redirectID:
			http.Redirect(w, r, article.URL+"/2026/11/20/zurich-tram?utm_source=gn", http.StatusFound)
		case "/rss/articles/" + auID:
			page(`<c-wiz jsrenderer="ZtY2ie"><div jscontroller="aLI87" data-n-au="https://www.thelocal.ch/20261120/zurich-tram-vote-what-changes-for-commuters" data-n-cvid="2"></div></c-wiz>`)
		case "/rss/articles/" + signedID:
			page(`<c-wiz><div jscontroller="aLI87" jsname="dIDt5" data-n-a-id="` + signedID + `" data-n-a-ts="1795158000" data-n-a-sg="AZ5r3eRj9Pq"></div></c-wiz>`)
		case "/_/DotsSplashUi/data/batchexecute":
			batch.Lock()
			batch.req = r.PostForm.Get("f.req")
			batch.Unlock()
			payload, _ := json.Marshal([]any{"garturlres", "https://www.ft.com/content/3f9a1c2e-zurich-trams", 1})
			env, _ := json.Marshal([]any{[]any{"wrb.fr", "Fbv4je", string(payload), nil, nil, nil, "generic"}, []any{"di", 12}})
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = io.WriteString(w, ")]}'\n\n"+string(env))
		case "/rss/articles/" + refreshID:
			page(`<meta http-equiv="Refresh" content="0; URL='https://www.zuonline.ch/affoltern-tram-construction-2028'">`)
		default:
			http.NotFound(w, r)
		}
	})
	g := NewGoogleNews(provFetcher(t, FetcherOptions{}), wrapper.URL+"/rss").(*GoogleNews)
	ids := gnewsIDs(t)
	tests := []struct {
		name, link, want string
	}{
		{"decodable id", "https://news.google.com/rss/articles/" + ids[0].ID + "?oc=5", ids[0].URL},
		{"redirect", wrapper.URL + "/rss/articles/" + redirectID + "?oc=5", article.URL + "/2026/11/20/zurich-tram?utm_source=gn"},
		{"data-n-au", wrapper.URL + "/rss/articles/" + auID + "?oc=5", "https://www.thelocal.ch/20261120/zurich-tram-vote-what-changes-for-commuters"},
		{"batchexecute", wrapper.URL + "/rss/articles/" + signedID, "https://www.ft.com/content/3f9a1c2e-zurich-trams"},
		{"meta refresh", wrapper.URL + "/rss/articles/" + refreshID, "https://www.zuonline.ch/affoltern-tram-construction-2028"},
		{"gone", wrapper.URL + "/rss/articles/" + missingID + "?oc=5", wrapper.URL + "/rss/articles/" + missingID + "?oc=5"},
		{"not a wrapper", "https://www.bbc.com/news/articles/c0kv4x1zp3do", "https://www.bbc.com/news/articles/c0kv4x1zp3do"},
		{"not a link", "::", "::"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if got := g.Unwrap(ctx, tt.link); got != tt.want {
				t.Errorf("Unwrap = %q, want %q", got, tt.want)
			}
		})
	}
	batch.Lock()
	if !strings.Contains(batch.req, signedID) || !strings.Contains(batch.req, "1795158000") || !strings.Contains(batch.req, "AZ5r3eRj9Pq") || !strings.Contains(batch.req, "garturlreq") {
		t.Errorf("batchexecute was asked %q", batch.req)
	}
	batch.Unlock()
	// Two of the links are answered without a request: the decodable id
	// and the other site's.
	if n := wrapper.count(); n != 6 {
		t.Errorf("the wrapper server got %d requests, want 6", n)
	}
}
