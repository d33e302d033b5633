// Package browser is domo-browser: an MCP server that lets a model read and
// operate web pages in Chromium through the DevTools protocol. Pages are
// shown to the model as compact accessibility snapshots in which every
// actionable element carries a ref ([ref=e12]) that the action tools take.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// Options configure the browser a Browser drives.
type Options struct {
	// Chrome is the browser executable; empty finds one.
	Chrome string
	// Headed shows a window instead of running headless.
	Headed bool
	// UserDataDir keeps a persistent profile; empty uses a throw-away one.
	UserDataDir string
	// CDPEndpoint attaches to a running Chrome (http://127.0.0.1:9222 or
	// a ws:// address) instead of starting one.
	CDPEndpoint string
	// Origins limits which sites pages may load.
	Origins Origins
	// AllowFile lets browser_navigate open file:// URLs.
	AllowFile bool
	// DownloadsDir is where downloads go; empty makes a private temporary
	// directory at launch.
	DownloadsDir string
	// Width and Height are the viewport of a headless browser.
	Width, Height int
	// NavTimeout bounds waiting for a page to load; ActionTimeout bounds one
	// step of an action.
	NavTimeout, ActionTimeout time.Duration
	// StartTimeout bounds launching or attaching to the browser.
	StartTimeout time.Duration
}

func (o *Options) defaults() {
	if o.Width <= 0 || o.Height <= 0 {
		o.Width, o.Height = 1280, 800
	}
	if o.NavTimeout <= 0 {
		o.NavTimeout = 15 * time.Second
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 10 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
}

// chromeCandidates are the executables tried, in order, when none is given.
var chromeCandidates = []string{
	"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
	"chrome", "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
	"/Applications/Chromium.app/Contents/MacOS/Chromium",
}

// FindChrome returns the first Chrome or Chromium found.
func FindChrome() (string, error) {
	for _, c := range chromeCandidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chrome or Chromium found: install chromium (Debian: apt install chromium) or give --chrome PATH")
}

// Browser owns one Chromium (launched lazily, relaunched after a crash) and
// its tabs. Tool calls are serialised: one model drives one browser.
type Browser struct {
	opts Options

	mu      sync.Mutex // held for the whole of a tool call
	session *session   // nil until the first call, and after a crash
	nextRef int        // refs are unique across tabs and documents
	tabSeq  int

	// downloads is the launch-time download directory when none was given.
	tmpDownloads string
}

// session is one running browser and its tabs.
type session struct {
	allocCancel context.CancelFunc
	root        context.Context // the first tab's context; owns the browser
	rootCancel  context.CancelFunc
	tabs        []*Tab
	cur         int
	remote      bool

	dmu       sync.Mutex
	downloads []download
	popups    chan target.ID
}

type download struct {
	guid, name, path, state string
}

// New makes a Browser; nothing starts until the first tool call.
func New(o Options) *Browser {
	o.defaults()
	return &Browser{opts: o, nextRef: 1}
}

// Close ends the browser (or detaches from a remote one) and removes the
// throw-away profile and temporary downloads directory.
func (b *Browser) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop()
	if b.tmpDownloads != "" {
		os.RemoveAll(b.tmpDownloads)
		b.tmpDownloads = ""
	}
}

func (b *Browser) stop() {
	s := b.session
	if s == nil {
		return
	}
	b.session = nil
	for _, t := range s.tabs {
		if t.ctx != s.root { // the first tab's context owns the browser
			t.cancel()
		}
	}
	if !s.remote {
		// A graceful close lets Chromium write a persistent profile out;
		// wait for it to exit before the allocator kills what is left.
		var proc *os.Process
		if c := chromedp.FromContext(s.root); c != nil && c.Browser != nil {
			proc = c.Browser.Process()
		}
		ctx, cancel := context.WithTimeout(s.root, 3*time.Second)
		_ = chromedp.Cancel(ctx)
		cancel()
		for deadline := time.Now().Add(5 * time.Second); proc != nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if proc.Signal(syscall.Signal(0)) != nil {
				break
			}
		}
	}
	s.rootCancel()
	s.allocCancel()
}

// errBrowserGone marks calls that failed because Chromium went away.
var errBrowserGone = errors.New("the browser stopped")

// goneError is what a call that Chromium's death ended tells the model.
func goneError() error {
	return fmt.Errorf("%w: Chromium exited (it crashed or was killed) during this call; the next browser call starts a new browser, so open the page again", errBrowserGone)
}

// alive reports whether the session's browser still runs.
func (s *session) alive() bool {
	c := chromedp.FromContext(s.root)
	if c == nil || c.Browser == nil || s.root.Err() != nil {
		return false
	}
	if p := c.Browser.Process(); p != nil {
		return p.Signal(syscall.Signal(0)) == nil
	}
	ctx, cancel := context.WithTimeout(s.root, 2*time.Second)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, cdpbrowser.GetVersion, cdp.Empty{})
	return err == nil
}

// ensure starts the browser when none runs, or when the last one died.
func (b *Browser) ensure(ctx context.Context) (*session, error) {
	if b.session != nil {
		if b.session.alive() {
			return b.session, nil
		}
		slog.Warn("browser is gone; starting a new one")
		b.stop()
	}
	s, err := b.start(ctx)
	if err != nil && b.opts.CDPEndpoint == "" && ctx.Err() == nil {
		// Chromium sometimes dies while starting on a loaded machine;
		// once more before giving up.
		slog.Warn("the browser failed to start; trying once more", "err", err)
		s, err = b.start(ctx)
	}
	if err != nil {
		return nil, err
	}
	b.session = s
	return s, nil
}

func (b *Browser) allocator() (context.Context, context.CancelFunc, error) {
	o := b.opts
	if o.CDPEndpoint != "" {
		ctx, cancel := remote.NewAllocator(context.Background(), o.CDPEndpoint)
		return ctx, cancel, nil
	}
	path := o.Chrome
	if path == "" {
		p, err := FindChrome()
		if err != nil {
			return nil, nil, err
		}
		path = p
	} else if _, err := exec.LookPath(path); err != nil {
		return nil, nil, fmt.Errorf("--chrome %s: %v", path, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,MediaRouter,OptimizationHints"),
		chromedp.WindowSize(o.Width, o.Height),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root inside its sandbox.
		opts = append(opts, chromedp.NoSandbox)
	}
	if o.UserDataDir != "" {
		opts = append(opts, chromedp.UserDataDir(o.UserDataDir))
	}
	if o.Headed {
		opts = append(opts, chromedp.VisibleWindow)
	}
	ctx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	return ctx, cancel, nil
}

// start launches or attaches. The browser's life is bound to a context with
// no deadline; the launch itself is bounded by StartTimeout and by ctx.
func (b *Browser) start(ctx context.Context) (*session, error) {
	if dir := b.opts.UserDataDir; dir != "" && b.opts.CDPEndpoint == "" {
		waitProfileFree(dir, 5*time.Second)
	}
	actx, acancel, err := b.allocator()
	if err != nil {
		return nil, err
	}
	root, rcancel := chromedp.NewContext(actx)
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(root) }()
	timer := time.NewTimer(b.opts.StartTimeout)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		err = fmt.Errorf("the browser did not start within %s", b.opts.StartTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		rcancel()
		acancel()
		return nil, b.startError(err)
	}
	s := &session{allocCancel: acancel, root: root, rootCancel: rcancel, remote: b.opts.CDPEndpoint != "", popups: make(chan target.ID, 8)}
	if err := b.setDownloads(root); err != nil {
		slog.Warn("downloads stay off", "err", err)
	}
	if err := chromedp.ListenBrowser(root, s.browserEvent); err != nil {
		rcancel()
		acancel()
		return nil, err
	}
	tab, err := b.attach(ctx, s, root, rcancel)
	if err != nil {
		rcancel()
		acancel()
		return nil, err
	}
	s.tabs = []*Tab{tab}
	return s, nil
}

func (b *Browser) startError(err error) error {
	switch {
	case errors.Is(err, chromedp.ErrNoDisplay):
		return errors.New("--headed needs a display, and neither DISPLAY nor WAYLAND_DISPLAY is set: run headless or set DISPLAY")
	case b.opts.CDPEndpoint != "":
		return fmt.Errorf("cannot attach to the browser at %s: %v (start Chrome with --remote-debugging-port=9222 and give its address)", b.opts.CDPEndpoint, err)
	case b.opts.UserDataDir != "":
		return fmt.Errorf("cannot start the browser with profile %s: %v (is another Chrome using that profile?)", b.opts.UserDataDir, err)
	}
	return fmt.Errorf("cannot start the browser: %v", err)
}

// setDownloads sends downloads to the configured directory, or to a private
// temporary one. Attached to someone's own Chrome, their settings stay.
func (b *Browser) setDownloads(ctx context.Context) error {
	dir := b.opts.DownloadsDir
	if b.opts.CDPEndpoint != "" && dir == "" {
		return nil
	}
	if dir == "" {
		if b.tmpDownloads == "" {
			d, err := os.MkdirTemp("", "domo-browser-downloads-")
			if err != nil {
				return err
			}
			b.tmpDownloads = d
		}
		dir = b.tmpDownloads
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	_, err = chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: abs, EventsEnabled: new(true),
	})
	return err
}

// browserEvent runs on the browser's read loop: it records downloads. It
// must not block or call the browser.
func (s *session) browserEvent(ev any) {
	switch ev := ev.(type) {
	case *cdpbrowser.EventDownloadWillBegin:
		s.dmu.Lock()
		s.downloads = append(s.downloads, download{guid: ev.GUID, name: ev.SuggestedFilename, state: "started"})
		s.dmu.Unlock()
	case *cdpbrowser.EventDownloadProgress:
		s.dmu.Lock()
		for i := range s.downloads {
			if s.downloads[i].guid == ev.GUID {
				s.downloads[i].state = string(ev.State)
				if ev.FilePath != "" {
					s.downloads[i].path = ev.FilePath
				}
			}
		}
		s.dmu.Unlock()
	}
}

// attach wraps a chromedp tab context in a Tab.
func (b *Browser) attach(ctx context.Context, s *session, tctx context.Context, cancel context.CancelFunc) (*Tab, error) {
	b.tabSeq++
	t := newTab(b, b.tabSeq, tctx, cancel)
	t.popups = s.popups
	if err := t.init(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// tab returns the current tab, starting the browser if needed.
func (b *Browser) tab(ctx context.Context) (*Tab, error) {
	s, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	b.adoptPopups(ctx, s)
	if len(s.tabs) == 0 {
		if _, err := b.newTab(ctx, s, ""); err != nil {
			return nil, err
		}
	}
	return s.tabs[s.cur], nil
}

// adoptPopups attaches to pages that pages opened (target=_blank, window.open)
// and makes the newest one current, as a browser window would.
func (b *Browser) adoptPopups(ctx context.Context, s *session) []*Tab {
	var added []*Tab
	for {
		select {
		case id := <-s.popups:
			if slices.ContainsFunc(s.tabs, func(t *Tab) bool { return t.targetID() == id }) {
				continue
			}
			tctx, cancel := chromedp.NewContext(s.root, chromedp.WithTargetID(id))
			t, err := b.attach(ctx, s, tctx, cancel)
			if err != nil {
				cancel()
				slog.Debug("cannot attach to a new page", "err", err)
				continue
			}
			s.tabs = append(s.tabs, t)
			s.cur = len(s.tabs) - 1
			added = append(added, t)
		default:
			return added
		}
	}
}

// newTab opens a tab (optionally at url) and makes it current.
func (b *Browser) newTab(ctx context.Context, s *session, url string) (*Tab, error) {
	tctx, cancel := chromedp.NewContext(s.root)
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tctx) }()
	select {
	case err := <-done:
		if err != nil {
			cancel()
			return nil, err
		}
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	t, err := b.attach(ctx, s, tctx, cancel)
	if err != nil {
		cancel()
		return nil, err
	}
	s.tabs = append(s.tabs, t)
	s.cur = len(s.tabs) - 1
	if url != "" {
		if _, err := t.navigate(ctx, url); err != nil {
			return t, err
		}
	}
	return t, nil
}

// takeDownloads returns the downloads seen since the last call.
func (s *session) takeDownloads() []download {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	var done, rest []download
	for _, d := range s.downloads {
		if d.state == "started" || d.state == string(cdpbrowser.DownloadProgressStateInProgress) {
			rest = append(rest, d)
		} else {
			done = append(done, d)
		}
	}
	s.downloads = rest
	return done
}

// claimRefs records that refs [from, to) were issued in tab t's current
// document, so a later use of one elsewhere gets a precise error.
func (b *Browser) claimRefs(t *Tab, next int) {
	if next > b.nextRef {
		t.issued = append(t.issued, refRange{from: b.nextRef, to: next, doc: t.doc})
		b.nextRef = next
	}
}

// refOwner finds which tab and document issued ref number n.
func (b *Browser) refOwner(n int) (*Tab, int, bool) {
	if b.session == nil {
		return nil, 0, false
	}
	for _, t := range b.session.tabs {
		for _, r := range t.issued {
			if n >= r.from && n < r.to {
				return t, r.doc, true
			}
		}
	}
	return nil, 0, false
}

// waitProfileFree waits, up to limit, until no live process holds the
// profile's SingletonLock. A Chromium still exiting holds it, and a new
// one started on the profile meanwhile hands over to it and exits at once.
// A lock whose process is gone is stale: Chromium takes it over.
func waitProfileFree(dir string, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		// The lock is a symlink to "hostname-pid".
		target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
		if err != nil {
			return
		}
		pid, err := strconv.Atoi(target[strings.LastIndex(target, "-")+1:])
		if err != nil || pid <= 0 {
			return
		}
		if p, err := os.FindProcess(pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
			return
		}
	}
}
