package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// navigation is what a navigation ended with.
type navigation struct {
	Status  int64
	Loading bool // the page had not finished loading when we stopped waiting
}

// checkURL refuses what the browser must not open: schemes other than
// http(s), about:blank and data:, file:// unless allowed, and origins the
// policy blocks.
func (b *Browser) checkURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return "", fmt.Errorf("%q is not a URL: give an absolute address such as https://example.com/", raw)
	}
	if u.Scheme == "" && u.Host == "" && !strings.HasPrefix(raw, "/") {
		// "example.com/page": the scheme was left out.
		u, err = url.Parse("https://" + raw)
		if err != nil {
			return "", fmt.Errorf("%q is not a URL: give an absolute address such as https://example.com/", raw)
		}
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", fmt.Errorf("%q has no host: give an absolute address such as https://example.com/", raw)
		}
		if err := b.opts.Origins.check(u); err != nil {
			return "", err
		}
	case "about":
		if u.Opaque != "blank" {
			return "", fmt.Errorf("%s: only about:blank may be opened", raw)
		}
	case "data":
	case "file":
		if !b.opts.AllowFile {
			return "", errors.New("file:// URLs are refused: domo-browser opens local files only when started with --allow-file-urls")
		}
	default:
		return "", fmt.Errorf("the %s: scheme is refused: only http, https, about:blank and data URLs open in the browser", u.Scheme)
	}
	return u.String(), nil
}

// metadataHosts are the cloud metadata services: no page a person browses
// lives there, and a prompt-injected model must not be sent there.
var metadataHosts = map[string]bool{
	"169.254.169.254": true, "fd00:ec2::254": true, "100.100.100.200": true,
	"metadata.google.internal": true, "metadata": true, "169.254.170.2": true,
}

// navigate opens url in the tab and waits for it to load, up to the
// navigation timeout. A page still loading then is not an error: what has
// arrived can be read.
func (t *Tab) navigate(ctx context.Context, raw string) (navigation, error) {
	u, err := t.b.checkURL(raw)
	if err != nil {
		return navigation{}, err
	}
	if d := t.pendingDialog(); d != nil {
		return navigation{}, dialogError(d)
	}
	t.mu.Lock()
	t.loaded, t.status, t.loading = make(chan struct{}), 0, true
	loaded := t.loaded
	t.mu.Unlock()
	cctx, cancel := t.callCtx(ctx, t.b.opts.NavTimeout)
	defer cancel()
	res, err := chromedp.Call(cctx, page.Navigate, page.NavigateParams{URL: u})
	if err != nil {
		return navigation{}, t.wrap(err)
	}
	if res.ErrorText != "" {
		return navigation{}, navError(u, res.ErrorText)
	}
	if res.LoaderID == "" {
		// Same-document navigation (a #fragment): nothing loads.
		return navigation{Status: t.mainStatus()}, nil
	}
	return t.waitLoad(ctx, cctx, loaded)
}

// waitLoad waits for the load event, a dialog, or the timeout.
func (t *Tab) waitLoad(ctx, cctx context.Context, loaded chan struct{}) (navigation, error) {
	t.mu.Lock()
	dialog := t.dialogCh
	t.mu.Unlock()
	select {
	case <-loaded:
	case <-dialog:
	case <-cctx.Done():
		if ctx.Err() != nil {
			return navigation{}, ctx.Err()
		}
		if s := t.b.session; s != nil && !s.alive() {
			return navigation{}, t.wrap(cctx.Err())
		}
		return navigation{Status: t.mainStatus(), Loading: true}, nil
	}
	return navigation{Status: t.mainStatus()}, nil
}

func (t *Tab) mainStatus() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

func navError(u, text string) error {
	switch {
	case strings.Contains(text, "ERR_BLOCKED_BY_CLIENT"):
		return fmt.Errorf("cannot open %s: the origin policy of domo-browser blocks it", u)
	case strings.Contains(text, "ERR_NAME_NOT_RESOLVED"):
		return fmt.Errorf("cannot open %s: the host name does not resolve (%s); check the address", u, text)
	case strings.Contains(text, "ERR_CONNECTION_REFUSED"):
		return fmt.Errorf("cannot open %s: the connection was refused (%s); is the server running?", u, text)
	}
	return fmt.Errorf("cannot open %s: %s", u, text)
}

// back goes one entry back in the tab's history.
func (t *Tab) back(ctx context.Context) (navigation, error) {
	if d := t.pendingDialog(); d != nil {
		return navigation{}, dialogError(d)
	}
	cctx, cancel := t.callCtx(ctx, t.b.opts.NavTimeout)
	defer cancel()
	h, err := chromedp.Call(cctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return navigation{}, t.wrap(err)
	}
	if h.CurrentIndex <= 0 {
		return navigation{}, errors.New("there is no previous page in this tab's history")
	}
	t.mu.Lock()
	t.loaded, t.loading = make(chan struct{}), true
	loaded := t.loaded
	doc := t.doc
	t.mu.Unlock()
	prev := h.Entries[h.CurrentIndex-1]
	if _, err := chromedp.Call(cctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: prev.ID}); err != nil {
		return navigation{}, t.wrap(err)
	}
	// The back/forward cache restores a page without a load event; a
	// same-document entry changes nothing at all.
	for range 20 {
		t.mu.Lock()
		changed := t.doc != doc
		t.mu.Unlock()
		if changed {
			break
		}
		if !sleepCtx(cctx, 5*time.Millisecond) {
			break
		}
	}
	select {
	case <-loaded:
		return navigation{Status: t.mainStatus()}, nil
	case <-time.After(50 * time.Millisecond):
	}
	return t.waitLoadShort(ctx, cctx, loaded)
}

// waitLoadShort is waitLoad for a navigation that may never fire a load
// event (a page restored from the back/forward cache): it gives up
// quietly once the document is interactive.
func (t *Tab) waitLoadShort(ctx, cctx context.Context, loaded chan struct{}) (navigation, error) {
	for {
		select {
		case <-loaded:
			return navigation{Status: t.mainStatus()}, nil
		default:
		}
		state, err := chromedp.Run(cctx, chromedp.Evaluate[string](`document.readyState`))
		if err == nil && state == "complete" {
			return navigation{Status: t.mainStatus()}, nil
		}
		if !sleepCtx(cctx, 20*time.Millisecond) {
			if ctx.Err() != nil {
				return navigation{}, ctx.Err()
			}
			return navigation{Status: t.mainStatus(), Loading: true}, nil
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// settle waits briefly for what an action set off: a navigation that
// starts within a moment, then its load, then requests in flight, each
// bounded, so a page that never goes quiet does not stall the call.
func (t *Tab) settle(ctx context.Context, doc int) {
	cctx, cancel := t.callCtx(ctx, t.b.opts.NavTimeout)
	defer cancel()
	t.mu.Lock()
	window := 60 * time.Millisecond
	if t.expectNav {
		window, t.expectNav = time.Second, false
	}
	t.mu.Unlock()
	deadline := time.Now().Add(window)
	for time.Now().Before(deadline) {
		t.mu.Lock()
		started := t.loading || t.doc != doc || t.dialog != nil
		t.mu.Unlock()
		if started {
			break
		}
		if !sleepCtx(cctx, 5*time.Millisecond) {
			return
		}
	}
	t.mu.Lock()
	loading, loaded, dialog := t.loading, t.loaded, t.dialog
	t.mu.Unlock()
	if dialog != nil {
		return
	}
	if loading {
		t.waitLoad(ctx, cctx, loaded)
	}
	quiet := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(quiet) {
		t.mu.Lock()
		busy := t.inflight > 0 && t.dialog == nil
		t.mu.Unlock()
		if !busy || !sleepCtx(cctx, 10*time.Millisecond) {
			return
		}
	}
}

var reRef = regexp.MustCompile(`^e[1-9][0-9]{0,8}$`)

// resolve finds the element of a ref in the tab's current document, or
// says precisely why it cannot.
func (t *Tab) resolve(ctx context.Context, ref string) (runtime.RemoteObjectID, error) {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "@")
	if !reRef.MatchString(ref) {
		return "", fmt.Errorf("%q is not a ref: refs look like e12, as shown in [ref=e12] by browser_snapshot", ref)
	}
	obj, err := t.call(ctx, "el", ref, nil)
	if err != nil {
		return "", t.refError(ref, err)
	}
	if obj == nil || obj.ObjectID == "" {
		return "", fmt.Errorf("ref %s has no element: take a new snapshot with browser_snapshot", ref)
	}
	return obj.ObjectID, nil
}

// refError explains a ref the page script did not accept.
func (t *Tab) refError(ref string, err error) error {
	var se *scriptError
	if !errors.As(err, &se) {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(ref, "e"))
	if strings.HasPrefix(se.msg, "stale") {
		return fmt.Errorf("ref %s is stale: its element is no longer on the page (the page changed); take a new snapshot with browser_snapshot and use its refs", ref)
	}
	owner, doc, ok := t.b.refOwner(n)
	switch {
	case !ok:
		return fmt.Errorf("ref %s was never given out: use a ref from the latest browser_snapshot or browser_find of this tab", ref)
	case owner != t:
		return fmt.Errorf("ref %s belongs to tab %d, not the current tab %d: select that tab with browser_tabs, or take a new snapshot here", ref, owner.id, t.id)
	case doc != t.doc:
		return fmt.Errorf("ref %s is stale: it came from an earlier page of this tab, which has navigated since; take a new snapshot with browser_snapshot and use its refs", ref)
	}
	return fmt.Errorf("ref %s is stale: take a new snapshot with browser_snapshot and use its refs", ref)
}
