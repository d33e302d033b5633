package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

//go:embed snapshot.js
var snapshotJS string

// worldName names the isolated world Domo's page script runs in: pages
// cannot see or change its functions, and it cannot see theirs.
const worldName = "domo"

// Ring sizes of what a tab remembers for the console and network tools.
const (
	maxConsole  = 500
	maxRequests = 500
)

// Tab is one page of the browser and what Domo tracks about it.
type Tab struct {
	b      *Browser
	id     int // stable number shown to the model
	ctx    context.Context
	cancel context.CancelFunc

	// Set on the read loop, read by tool calls.
	mu      sync.Mutex
	worlds  map[cdp.FrameID]world // Domo's world in each frame's document
	doc     int                   // counts main-frame documents
	mainID  cdp.FrameID
	loading bool
	// expectNav is set by an action that likely navigates (a link's
	// click), so settle waits longer for the navigation to start.
	expectNav bool
	loaded    chan struct{} // closed by the load event of the current document
	status    int64         // HTTP status of the main document
	dialog    *page.EventJavascriptDialogOpening
	dialogCh  chan struct{} // closed when a dialog opens
	console   []consoleEntry
	requests  []*request
	byID      map[network.RequestID]*request
	inflight  int

	// popups receives pages this tab opens, for the session to adopt.
	popups chan<- target.ID

	// Tool-call state (under Browser.mu).
	issued []refRange
	last   []string // lines of the last snapshot, for diffs
}

type refRange struct{ from, to, doc int }

// world is an execution context of Domo's isolated world.
type world struct {
	id     runtime.ExecutionContextID
	unique string
}

type consoleEntry struct {
	Level string `json:"level"`
	Text  string `json:"text"`
	URL   string `json:"url,omitempty"`
	Line  int64  `json:"line,omitempty"`
}

type request struct {
	id       network.RequestID
	Method   string `json:"method"`
	URL      string `json:"url"`
	Type     string `json:"type"`
	Status   int64  `json:"status,omitempty"`
	MIME     string `json:"mime,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Failure  string `json:"failure,omitempty"`
	finished bool
}

func newTab(b *Browser, id int, ctx context.Context, cancel context.CancelFunc) *Tab {
	return &Tab{b: b, id: id, ctx: ctx, cancel: cancel, loaded: make(chan struct{}), dialogCh: make(chan struct{}), byID: map[network.RequestID]*request{}, worlds: map[cdp.FrameID]world{}}
}

func (t *Tab) targetID() target.ID {
	if c := chromedp.FromContext(t.ctx); c != nil && c.Target != nil {
		return c.Target.TargetID
	}
	return ""
}

// init starts listening to the tab's events and applies the origin policy.
func (t *Tab) init(ctx context.Context) error {
	if err := chromedp.Listen(t.ctx, t.event); err != nil {
		return err
	}
	go t.readConsole()
	cctx, cancel := t.callCtx(ctx, t.b.opts.ActionTimeout)
	defer cancel()
	// Chromium makes Domo's world and runs the page script in every new
	// document as it is created, so a snapshot right after a load finds it
	// ready.
	if _, err := chromedp.Call(cctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: snapshotJS, WorldName: worldName,
	}); err != nil {
		return err
	}
	tree, err := chromedp.Call(cctx, page.GetFrameTree, cdp.Empty{})
	if err == nil && tree.FrameTree != nil && tree.FrameTree.Frame != nil {
		t.mu.Lock()
		t.mainID = tree.FrameTree.Frame.ID
		t.mu.Unlock()
	}
	if o := t.b.opts; !o.Headed && o.CDPEndpoint == "" {
		// A headless window's viewport is smaller than the window by an
		// amount that varies; pin it so pages and pictures are the size asked.
		if _, err := chromedp.Call(cctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(o.Width), Height: int64(o.Height), DeviceScaleFactor: 1,
		}); err != nil {
			return err
		}
	}
	return t.b.opts.Origins.enforce(t.ctx, cctx)
}

// callCtx is a context for one step: it ends with the tool call, after d,
// or when the tab closes, and it runs against this tab.
func (t *Tab) callCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(t.ctx, d)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// readConsole keeps the last console messages and exceptions.
func (t *Tab) readConsole() {
	for m, err := range chromedp.Console(t.ctx) {
		if err != nil {
			return
		}
		e := consoleEntry{Level: string(m.Type), Text: m.Text, URL: m.URL, Line: m.Line + 1}
		if m.IsException() {
			e.Level = "error"
			e.Text = "uncaught " + m.String()
		}
		t.mu.Lock()
		t.console = append(t.console, e)
		if len(t.console) > maxConsole {
			t.console = t.console[len(t.console)-maxConsole:]
		}
		t.mu.Unlock()
	}
}

// event runs on the tab's read loop, in order. It must be quick and must
// not call the browser.
func (t *Tab) event(ev any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventFrameNavigated:
		if ev.Frame.ParentID == "" {
			t.mainID = ev.Frame.ID
			t.doc++
		}
	case *page.EventFrameStartedLoading:
		t.startLoading(ev.FrameID)
	case *page.EventFrameRequestedNavigation:
		t.startLoading(ev.FrameID)
	case *page.EventFrameStartedNavigating:
		t.startLoading(ev.FrameID)
	case *page.EventLoadEventFired:
		t.stopLoading()
	case *page.EventFrameStoppedLoading:
		// Also ends a navigation that became a download or was cancelled,
		// which fires no load event.
		if ev.FrameID == t.mainID {
			t.stopLoading()
		}
	case *runtime.EventExecutionContextCreated:
		if ev.Context.Name == worldName {
			var aux struct {
				FrameID cdp.FrameID `json:"frameId"`
			}
			if json.Unmarshal(ev.Context.AuxData, &aux) == nil && aux.FrameID != "" {
				t.worlds[aux.FrameID] = world{id: ev.Context.ID, unique: ev.Context.UniqueID}
			}
		}
	case *runtime.EventExecutionContextDestroyed:
		for f, w := range t.worlds {
			if w.unique == ev.ExecutionContextUniqueID {
				delete(t.worlds, f)
			}
		}
	case *runtime.EventExecutionContextsCleared:
		clear(t.worlds)
	case *page.EventJavascriptDialogOpening:
		t.dialog = ev
		select {
		case <-t.dialogCh:
		default:
			close(t.dialogCh)
		}
	case *page.EventJavascriptDialogClosed:
		t.dialog = nil
		t.dialogCh = make(chan struct{})
	case *network.EventRequestWillBeSent:
		r := &request{id: ev.RequestID, Method: ev.Request.Method, URL: ev.Request.URL, Type: string(ev.Type)}
		if old, ok := t.byID[ev.RequestID]; ok && !old.finished {
			// A redirect: the earlier hop ends here.
			old.finished = true
			if ev.RedirectResponse != nil {
				old.Status = ev.RedirectResponse.Status
			}
			t.inflight--
		}
		t.byID[ev.RequestID] = r
		t.requests = append(t.requests, r)
		t.inflight++
		if len(t.requests) > maxRequests {
			drop := t.requests[0]
			t.requests = t.requests[1:]
			if t.byID[drop.id] == drop {
				delete(t.byID, drop.id)
			}
		}
	case *network.EventResponseReceived:
		if r, ok := t.byID[ev.RequestID]; ok {
			r.Status, r.MIME = ev.Response.Status, ev.Response.MimeType
			if ev.Type == network.ResourceTypeDocument && ev.FrameID == t.mainID {
				t.status = ev.Response.Status
			}
		}
	case *network.EventLoadingFinished:
		if r, ok := t.byID[ev.RequestID]; ok && !r.finished {
			r.finished, r.Size = true, int64(ev.EncodedDataLength)
			t.inflight--
		}
	case *network.EventLoadingFailed:
		if r, ok := t.byID[ev.RequestID]; ok && !r.finished {
			r.finished, r.Failure = true, ev.ErrorText
			if ev.BlockedReason != "" {
				r.Failure = "blocked: " + string(ev.BlockedReason)
			}
			t.inflight--
		}
	case *target.EventTargetCreated:
		if ev.TargetInfo.Type == "page" && ev.TargetInfo.OpenerID != "" {
			select {
			case t.popups <- ev.TargetInfo.TargetID:
			default:
			}
		}
	}
}

// startLoading notes that the main frame began to navigate: its next load
// event is the one to wait for. Called with t.mu held.
func (t *Tab) startLoading(frame cdp.FrameID) {
	if frame != t.mainID || t.loading {
		return
	}
	t.loading = true
	select {
	case <-t.loaded:
		t.loaded = make(chan struct{})
	default:
	}
}

// stopLoading ends the wait for the current load. Called with t.mu held.
func (t *Tab) stopLoading() {
	t.loading = false
	select {
	case <-t.loaded:
	default:
		close(t.loaded)
	}
}

// pendingDialog is the open dialog, if any.
func (t *Tab) pendingDialog() *page.EventJavascriptDialogOpening {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dialog
}

// dialogError is what every page-reading call says while a dialog blocks
// the page.
func dialogError(d *page.EventJavascriptDialogOpening) error {
	return fmt.Errorf("a %s dialog is open and blocks the page (%q): answer it with browser_handle_dialog first", d.Type, d.Message)
}

// ensureWorld makes Domo's isolated world in the main frame, with the page
// script loaded, when the current document does not have it yet.
func (t *Tab) ensureWorld(ctx context.Context) (runtime.ExecutionContextID, error) {
	t.mu.Lock()
	frame := t.mainID
	w, ok := t.worlds[frame]
	t.mu.Unlock()
	if ok {
		return w.id, nil
	}
	if frame == "" {
		tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return 0, err
		}
		frame = tree.FrameTree.Frame.ID
	}
	res, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID: frame, WorldName: worldName, GrantUniveralAccess: new(true),
	})
	if err != nil {
		return 0, err
	}
	if _, exc, err := t.evalIn(ctx, res.ExecutionContextID, snapshotJS, true); err != nil || exc != nil {
		return 0, fmt.Errorf("load the page script: %v%v", err, excText(exc))
	}
	t.mu.Lock()
	t.worlds[frame] = world{id: res.ExecutionContextID}
	t.mu.Unlock()
	return res.ExecutionContextID, nil
}

func (t *Tab) evalIn(ctx context.Context, world runtime.ExecutionContextID, expr string, byValue bool) (*runtime.RemoteObject, *runtime.ExceptionDetails, error) {
	res, err := chromedp.Call(ctx, runtime.Evaluate, runtime.EvaluateParams{
		Expression: expr, ContextID: world, ReturnByValue: new(byValue), AwaitPromise: new(true), Silent: new(true),
	})
	if err != nil {
		return nil, nil, err
	}
	return res.Result, res.ExceptionDetails, nil
}

func excText(exc *runtime.ExceptionDetails) string {
	if exc == nil {
		return ""
	}
	if exc.Exception != nil && exc.Exception.Description != "" {
		d, _, _ := strings.Cut(exc.Exception.Description, "\n    at ")
		return d
	}
	return exc.Text
}

// forgetWorld drops a world that no longer answers, so the next call
// makes it again.
func (t *Tab) forgetWorld(id runtime.ExecutionContextID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for f, w := range t.worlds {
		if w.id == id {
			delete(t.worlds, f)
		}
	}
}

// scriptError is an exception thrown by the page script, which speaks to
// the model ("stale: …", "unknown: …").
type scriptError struct{ msg string }

func (e *scriptError) Error() string { return e.msg }

// call runs fn(args) of the page script in the isolated world and decodes
// its JSON result into out (nil: keep the remote object, returned).
func (t *Tab) call(ctx context.Context, fn string, arg any, out any) (*runtime.RemoteObject, error) {
	if d := t.pendingDialog(); d != nil {
		return nil, dialogError(d)
	}
	a, err := json.Marshal(arg)
	if err != nil {
		return nil, err
	}
	expr := "__domo." + fn + "(" + string(a) + ")"
	ctx, cancel := t.callCtx(ctx, t.b.opts.ActionTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		w, err := t.ensureWorld(ctx)
		if err != nil {
			return nil, t.wrap(err)
		}
		obj, exc, err := t.evalIn(ctx, w, expr, out != nil)
		if err != nil && attempt == 0 && strings.Contains(err.Error(), "context") {
			// The document changed under us: make the world again.
			t.forgetWorld(w)
			continue
		}
		if err != nil {
			return nil, t.wrap(err)
		}
		if exc != nil {
			msg := excText(exc)
			msg = strings.TrimPrefix(msg, "Error: ")
			return nil, &scriptError{msg}
		}
		if out != nil && obj != nil {
			if err := json.Unmarshal(obj.Value, out); err != nil {
				return nil, fmt.Errorf("decode %s: %v", fn, err)
			}
		}
		return obj, nil
	}
}

// wrap turns low-level failures into errors a model can act on.
func (t *Tab) wrap(err error) error {
	if err == nil {
		return nil
	}
	if d := t.pendingDialog(); d != nil {
		return dialogError(d)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the page did not answer in time (%v): it may be busy; try again, or browser_navigate elsewhere", err)
	}
	if s := t.b.session; s != nil && !s.alive() {
		return goneError()
	}
	return err
}

// info is the tab's URL and title.
func (t *Tab) info(ctx context.Context) (url, title string) {
	c := chromedp.FromContext(t.ctx)
	if c == nil || c.Target == nil {
		return "", ""
	}
	ctx, cancel := t.callCtx(ctx, t.b.opts.ActionTimeout)
	defer cancel()
	res, err := chromedp.CallBrowser(ctx, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: c.Target.TargetID})
	if err != nil || res.TargetInfo == nil {
		return "", ""
	}
	return res.TargetInfo.URL, res.TargetInfo.Title
}
