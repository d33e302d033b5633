package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// target is a loopback server that counts every request it gets: an
// attack has failed only if the target was never reached.
type target struct {
	*httptest.Server
	hits atomic.Int32
}

func newTarget(t *testing.T, h http.HandlerFunc) *target {
	t.Helper()
	tg := &target{}
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "secret: the metadata token is hunter2")
	}))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) port() string {
	u, _ := url.Parse(tg.URL)
	return u.Port()
}

// fakeDNS answers lookups from a table; a name may answer differently on
// each lookup, as a rebinding attacker's DNS server does.
type fakeDNS struct {
	mu      sync.Mutex
	answers map[string][][]string
	asked   map[string]int
}

func (d *fakeDNS) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	seq, ok := d.answers[strings.ToLower(host)]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := d.asked[host]
	d.asked[host]++
	ips := seq[min(n, len(seq)-1)]
	var out []netip.Addr
	for _, s := range ips {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func fetcherWithDNS(t *testing.T, allow []string, answers map[string][][]string) *Fetcher {
	t.Helper()
	f, err := NewFetcher(FetcherOptions{Allow: allow, Timeout: 3 * time.Second, CacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDNS{answers: answers, asked: map[string]int{}}
	f.guard.lookup = d.lookup
	return f
}

// TestSSRFDirect tries every spelling of a non-public address.
func TestSSRFDirect(t *testing.T) {
	tg := newTarget(t, nil)
	f := fetcherWithDNS(t, nil, map[string][][]string{
		"internal.example": {{"127.0.0.1"}},
		"intranet.example": {{"10.1.2.3"}},
		"v6.example":       {{"::1"}},
	})
	port := tg.port()
	attacks := []string{
		"http://127.0.0.1:" + port + "/",
		"http://127.0.0.2:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[0:0:0:0:0:ffff:7f00:1]:" + port + "/",
		"http://localhost:" + port + "/",
		"http://LOCALHOST.:" + port + "/",
		"http://app.localhost:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://2130706433:" + port + "/",
		"http://0x7f000001:" + port + "/",
		"http://127.1:" + port + "/",
		"http://internal.example:" + port + "/",
		"http://v6.example:" + port + "/",
		"http://intranet.example/",
		"http://10.0.0.1/",
		"http://172.16.5.4/",
		"http://192.168.1.1/admin",
		"http://169.254.169.254/latest/meta-data/iam/security-credentials/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://100.100.100.200/latest/meta-data/",
		"http://[fe80::1]/",
		"http://100.64.0.1/",
		"http://[64:ff9b::7f00:1]/",
		"http://[2002:7f00:1::]/",
		"http://224.0.0.1/",
	}
	for _, a := range attacks {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := f.Fetch(ctx, Request{URL: a})
		cancel()
		switch {
		case err == nil:
			t.Errorf("%s: fetched", a)
		case !errors.Is(err, ErrBlocked) && !strings.Contains(err.Error(), "cannot resolve"):
			// Spellings the resolver rejects outright are safe too, but
			// every other refusal must be the guard's.
			t.Errorf("%s: refused for the wrong reason: %v", a, err)
		}
	}
	if n := tg.hits.Load(); n != 0 {
		t.Fatalf("the loopback target was reached %d times", n)
	}
	for _, bad := range []string{"file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://example.com/", "http://user:pw@example.com/", "javascript:alert(1)"} {
		if _, err := f.Fetch(context.Background(), Request{URL: bad}); err == nil {
			t.Errorf("%s: fetched", bad)
		}
	}
}

// TestSSRFErrorsAreClear checks that a refusal names the address and its
// kind, so a model knows not to retry.
func TestSSRFErrorsAreClear(t *testing.T) {
	f := fetcherWithDNS(t, nil, map[string][][]string{"internal.example": {{"10.1.2.3"}}})
	_, err := f.Fetch(context.Background(), Request{URL: "http://169.254.169.254/"})
	if err == nil || !strings.Contains(err.Error(), "cloud metadata") {
		t.Errorf("metadata: %v", err)
	}
	_, err = f.Fetch(context.Background(), Request{URL: "http://internal.example/"})
	if err == nil || !strings.Contains(err.Error(), "internal.example resolves to 10.1.2.3, a private address") {
		t.Errorf("private name: %v", err)
	}
}

// TestSSRFRebinding: a name that answers with a public address and a
// loopback one, or public first and loopback on the next lookup, never
// gets a connection to loopback.
func TestSSRFRebinding(t *testing.T) {
	tg := newTarget(t, nil)
	f := fetcherWithDNS(t, nil, map[string][][]string{
		// 192.0.2.1 is TEST-NET: blocked too, so the only way through would
		// be the loopback answer.
		"mixed.example":  {{"192.0.2.1", "127.0.0.1"}},
		"rebind.example": {{"203.0.113.9"}, {"127.0.0.1"}, {"127.0.0.1"}},
	})
	for _, host := range []string{"mixed.example", "rebind.example", "rebind.example", "rebind.example"} {
		_, err := f.Fetch(context.Background(), Request{URL: "http://" + host + ":" + tg.port() + "/", NoCache: true})
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: want a refusal, got %v", host, err)
		}
	}
	if n := tg.hits.Load(); n != 0 {
		t.Fatalf("the loopback target was reached %d times", n)
	}
}

// TestSSRFRedirects: an allowed server redirects, directly or through a
// chain, to loopback, metadata and other schemes; every hop is checked.
func TestSSRFRedirects(t *testing.T) {
	secret := newTarget(t, nil)
	var hop *target
	hop = newTarget(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+secret.port()+"/", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+secret.port()+"/", http.StatusMovedPermanently)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
		case "/to-internal-name":
			http.Redirect(w, r, "http://internal.example:"+secret.port()+"/", http.StatusFound)
		case "/chain":
			http.Redirect(w, r, "/chain2", http.StatusFound)
		case "/chain2":
			http.Redirect(w, r, "http://trusted.example:"+hop.port()+"/to-loopback", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/meta-refresh":
			fmt.Fprint(w, `<meta http-equiv="refresh" content="0;url=http://127.0.0.1/">`)
		default:
			fmt.Fprint(w, "fine")
		}
	})
	// Only the name trusted.example is allowed, not the address it has.
	f := fetcherWithDNS(t, []string{"trusted.example"}, map[string][][]string{
		"trusted.example":  {{"127.0.0.1"}},
		"internal.example": {{"127.0.0.1"}},
	})
	base := "http://trusted.example:" + hop.port()
	if r, err := f.Fetch(context.Background(), Request{URL: base + "/"}); err != nil || string(r.Body) != "fine" {
		t.Fatalf("the allowed host itself: %v", err)
	}
	for _, path := range []string{"/to-loopback", "/to-localhost", "/to-metadata", "/to-internal-name", "/chain"} {
		_, err := f.Fetch(context.Background(), Request{URL: base + path})
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: want a refusal, got %v", path, err)
		}
	}
	if _, err := f.Fetch(context.Background(), Request{URL: base + "/to-file"}); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("redirect to file: %v", err)
	}
	if _, err := f.Fetch(context.Background(), Request{URL: base + "/loop"}); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("redirect loop: %v", err)
	}
	// A meta refresh is not followed: the page is returned as it is.
	if r, err := f.Fetch(context.Background(), Request{URL: base + "/meta-refresh"}); err != nil || !strings.Contains(string(r.Body), "refresh") {
		t.Errorf("meta refresh: %v", err)
	}
	if n := secret.hits.Load(); n != 0 {
		t.Fatalf("the secret target was reached %d times", n)
	}
}

// TestAllowlistOpens: the allowlist, by address or prefix, is the one way
// to reach a local server.
func TestAllowlistOpens(t *testing.T) {
	tg := newTarget(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	for _, allow := range []string{"127.0.0.1", "127.0.0.0/8", "::ffff:127.0.0.1"} {
		f, err := NewFetcher(FetcherOptions{Allow: []string{allow}, CacheTTL: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Fetch(context.Background(), Request{URL: tg.URL}); err != nil {
			t.Errorf("allow %s: %v", allow, err)
		}
	}
	if _, err := NewFetcher(FetcherOptions{Allow: []string{"http://x/y"}}); err == nil {
		t.Error("a URL in the allowlist was accepted")
	}
}

func TestPublic(t *testing.T) {
	for ip, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true, "93.184.216.34": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.31.255.255": false, "192.168.0.1": false, "169.254.1.1": false,
		"0.0.0.0": false, "::": false, "::1": false, "fc00::1": false, "fe80::1": false, "ff02::1": false,
		"::ffff:10.0.0.1": false, "100.64.0.1": false, "198.18.0.1": false, "240.0.0.1": false, "255.255.255.255": false,
	} {
		if got, _ := Public(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Public(%s) = %v, want %v", ip, got, want)
		}
	}
}
