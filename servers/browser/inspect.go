package browser

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// hasText reports whether the page's visible text contains s, ignoring
// case. A document caught mid-change answers false, and the next poll asks
// again; a dialog or a dead browser is an error.
func (t *Tab) hasText(ctx context.Context, s string) (bool, error) {
	var has bool
	if _, err := t.call(ctx, "hasText", s, &has); err != nil {
		if d := t.pendingDialog(); d != nil {
			return false, dialogError(d)
		}
		if errors.Is(err, errBrowserGone) {
			return false, err
		}
		return false, nil
	}
	return has, nil
}

// maxShotHeight bounds a full-page screenshot, in CSS pixels.
const maxShotHeight = 16384

// screenshot captures the viewport, the full page or one element.
func (t *Tab) screenshot(ctx context.Context, in screenshotArgs) ([]byte, string, error) {
	if d := t.pendingDialog(); d != nil {
		return nil, "", dialogError(d)
	}
	cctx, cancel := t.callCtx(ctx, t.b.opts.NavTimeout)
	defer cancel()
	p := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng}
	if in.Format == "jpeg" {
		p.Format, p.Quality = page.CaptureScreenshotFormatJpeg, new(int64(80))
	}
	desc := "Screenshot of the viewport of " + t.pageHeader(ctx)
	switch ref := strings.TrimPrefix(strings.TrimSpace(in.Ref), "@"); {
	case ref != "":
		obj, err := t.resolve(cctx, ref)
		if err != nil {
			return nil, "", err
		}
		_, _ = chromedp.Call(cctx, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj})
		q, err := chromedp.Call(cctx, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj})
		if err != nil || len(q.Quads) == 0 {
			return nil, "", fmt.Errorf("%s has no visible box to take a picture of", t.line(cctx, ref))
		}
		m, err := chromedp.Call(cctx, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, "", t.wrap(err)
		}
		x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, quad := range q.Quads {
			for i := 0; i+1 < len(quad); i += 2 {
				x0, x1 = min(x0, quad[i]), max(x1, quad[i])
				y0, y1 = min(y0, quad[i+1]), max(y1, quad[i+1])
			}
		}
		if x1-x0 < 1 || y1-y0 < 1 {
			return nil, "", fmt.Errorf("%s has no visible box to take a picture of", t.line(cctx, ref))
		}
		p.Clip = &page.Viewport{X: x0 + float64(m.CSSLayoutViewport.PageX), Y: y0 + float64(m.CSSLayoutViewport.PageY), Width: x1 - x0, Height: y1 - y0, Scale: 1}
		p.CaptureBeyondViewport = new(true)
		desc = "Screenshot of " + t.line(cctx, ref)
	case in.FullPage:
		m, err := chromedp.Call(cctx, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, "", t.wrap(err)
		}
		w, h := m.CSSContentSize.Width, m.CSSContentSize.Height
		desc = "Screenshot of the full page of " + t.pageHeader(ctx)
		if h > maxShotHeight {
			desc += fmt.Sprintf(" (the first %d of %.0f pixels of its height)", maxShotHeight, h)
			h = maxShotHeight
		}
		p.Clip = &page.Viewport{X: 0, Y: 0, Width: w, Height: h, Scale: 1}
		p.CaptureBeyondViewport = new(true)
	}
	res, err := chromedp.Call(cctx, page.CaptureScreenshot, p)
	if err != nil {
		return nil, "", t.wrap(err)
	}
	return res.Data, desc, nil
}

// evaluate runs the model's function in the page's own world, with the
// element of ref as its argument when given.
func (t *Tab) evaluate(ctx context.Context, in evaluateArgs) (string, error) {
	if d := t.pendingDialog(); d != nil {
		return "", dialogError(d)
	}
	cctx, cancel := t.callCtx(ctx, t.b.opts.ActionTimeout)
	defer cancel()
	fn := strings.TrimSpace(in.Function)
	var (
		res *runtime.RemoteObject
		exc *runtime.ExceptionDetails
	)
	if ref := strings.TrimPrefix(strings.TrimSpace(in.Ref), "@"); ref != "" {
		obj, err := t.resolve(cctx, ref)
		if err != nil {
			return "", err
		}
		node, err := chromedp.Call(cctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj})
		if err != nil {
			return "", t.wrap(err)
		}
		main, err := chromedp.Call(cctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: node.Node.BackendNodeID})
		if err != nil {
			return "", t.wrap(err)
		}
		r, err := chromedp.Call(cctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn, ObjectID: main.Object.ObjectID, ReturnByValue: new(true), AwaitPromise: new(true),
			Arguments: []*runtime.CallArgument{{ObjectID: main.Object.ObjectID}},
		})
		if err != nil {
			return "", t.wrap(err)
		}
		res, exc = r.Result, r.ExceptionDetails
	} else {
		r, err := chromedp.Call(cctx, runtime.Evaluate, runtime.EvaluateParams{
			Expression: "(" + fn + ")()", ReturnByValue: new(true), AwaitPromise: new(true),
		})
		if err != nil {
			return "", t.wrap(err)
		}
		res, exc = r.Result, r.ExceptionDetails
	}
	if exc != nil {
		return "", fmt.Errorf("the function threw: %s", excText(exc))
	}
	if res == nil || res.Type == "undefined" {
		return "undefined", nil
	}
	if len(res.Value) == 0 {
		return res.Description, nil
	}
	out := string(res.Value)
	if len(out) > 50_000 {
		out = out[:50_000] + "… (cut at 50,000 bytes)"
	}
	return out, nil
}
