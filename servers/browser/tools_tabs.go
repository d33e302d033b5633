package browser

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type tabsArgs struct {
	Action string `json:"action" jsonschema:"list, new, select or close"`
	Index  int    `json:"index,omitempty" jsonschema:"the tab number (as listed) to select or close; close without it closes the current tab"`
	URL    string `json:"url,omitempty" jsonschema:"for new: the page to open in the new tab"`
}

func (s *Server) tabs() mcpkit.Tool {
	return mcpkit.NewTool("browser_tabs",
		"List the open tabs, open a new one (optionally at a URL), select one to work in, or close one.",
		mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.No, OpenWorld: mcpkit.Yes},
		func(ctx context.Context, _ mcp.CallToolRequest, in tabsArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				return s.b.tabsAction(ctx, in)
			})
		},
		mcpkit.Title("Tabs"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetEnum(sc, "action", "list", "new", "select", "close")
			sc.Properties["index"].Minimum = new(1.0)
		}),
	)
}

func (b *Browser) tabsAction(ctx context.Context, in tabsArgs) (string, error) {
	s := b.session
	find := func() (int, error) {
		for i, t := range s.tabs {
			if t.id == in.Index {
				return i, nil
			}
		}
		return 0, fmt.Errorf("there is no tab %d: %s", in.Index, b.listTabs(ctx))
	}
	switch in.Action {
	case "new":
		if in.URL != "" {
			if _, err := b.checkURL(in.URL); err != nil {
				return "", err
			}
		}
		t, err := b.newTab(ctx, s, "")
		if err != nil {
			return "", err
		}
		if in.URL == "" {
			return fmt.Sprintf("Opened tab %d (blank), now the current tab.", t.id), nil
		}
		nav, err := t.navigate(ctx, in.URL)
		if err != nil {
			return "", err
		}
		return b.pageReport(ctx, t, nav, fmt.Sprintf("Opened tab %d, now the current tab", t.id))
	case "select":
		if in.Index == 0 {
			return "", errors.New("select needs index: the tab's number from the list")
		}
		i, err := find()
		if err != nil {
			return "", err
		}
		s.cur = i
		t := s.tabs[i]
		_, _ = chromedp.Call(t.ctx, page.BringToFront, cdp.Empty{})
		return b.pageReport(ctx, t, navigation{}, fmt.Sprintf("Selected tab %d", t.id))
	case "close":
		i := s.cur
		if in.Index != 0 {
			var err error
			if i, err = find(); err != nil {
				return "", err
			}
		}
		t := s.tabs[i]
		if len(s.tabs) == 1 {
			// Closing the last tab would end the browser: show a blank page.
			if _, err := t.navigate(ctx, "about:blank"); err != nil {
				return "", err
			}
			t.last = nil
			return fmt.Sprintf("Tab %d was the only tab: it now shows a blank page.", t.id), nil
		}
		if t.ctx == s.root {
			// The first tab's context owns the browser: close only the page.
			if _, err := chromedp.CallBrowser(t.ctx, target.CloseTarget, target.CloseTargetParams{TargetID: t.targetID()}); err != nil {
				return "", t.wrap(err)
			}
		} else {
			t.cancel()
		}
		s.tabs = append(s.tabs[:i], s.tabs[i+1:]...)
		if s.cur >= i && s.cur > 0 {
			s.cur--
		}
		return fmt.Sprintf("Closed tab %d. %s", t.id, b.listTabs(ctx)), nil
	}
	return b.listTabs(ctx), nil
}

func (b *Browser) listTabs(ctx context.Context) string {
	s := b.session
	var out strings.Builder
	fmt.Fprintf(&out, "%d open tabs:\n", len(s.tabs))
	for i, t := range s.tabs {
		cur := " "
		if i == s.cur {
			cur = "*"
		}
		u, title := t.info(ctx)
		fmt.Fprintf(&out, "%s %d. %s — %s\n", cur, t.id, title, u)
	}
	out.WriteString("(* marks the current tab)")
	return out.String()
}

type waitArgs struct {
	Text     string  `json:"text,omitempty" jsonschema:"wait until this text appears on the page"`
	TextGone string  `json:"text_gone,omitempty" jsonschema:"wait until this text is gone from the page"`
	Time     float64 `json:"time,omitempty" jsonschema:"just wait this many seconds"`
	Timeout  float64 `json:"timeout,omitempty" jsonschema:"the most seconds to wait for the text"`
}

func (a *waitArgs) Validate() error {
	if a.Text == "" && a.TextGone == "" && a.Time == 0 {
		return errors.New("give text, text_gone or time to wait for")
	}
	return nil
}

func (s *Server) waitFor() mcpkit.Tool {
	return mcpkit.NewTool("browser_wait_for",
		"Wait until text appears on the page or is gone from it (up to timeout seconds), or for a number of seconds. Returns what changed meanwhile.",
		mcpkit.Annotations{ReadOnly: mcpkit.Yes, Destructive: mcpkit.No, Idempotent: mcpkit.No, OpenWorld: mcpkit.Yes},
		func(ctx context.Context, _ mcp.CallToolRequest, in waitArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				return s.b.wait(ctx, t, in)
			})
		},
		mcpkit.Title("Wait for text"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			sc.Properties["time"].Minimum, sc.Properties["time"].Maximum = new(0.0), new(60.0)
			sc.Properties["timeout"].Minimum, sc.Properties["timeout"].Maximum = new(0.1), new(120.0)
			sc.Properties["timeout"].Default = json.RawMessage("10")
		}),
	)
}

func (b *Browser) wait(ctx context.Context, t *Tab, in waitArgs) (string, error) {
	if t.last == nil {
		if _, err := t.snapshot(ctx, snapOptions{}); err != nil {
			return "", err
		}
	}
	before := t.last
	t.mu.Lock()
	doc := t.doc
	t.mu.Unlock()
	if in.Time > 0 {
		if !sleepCtx(ctx, time.Duration(in.Time*float64(time.Second))) {
			return "", ctx.Err()
		}
	}
	start := time.Now()
	want := in.Text
	gone := false
	if want == "" {
		want, gone = in.TextGone, true
	}
	if want != "" {
		limit := time.Duration(cmp.Or(in.Timeout, 10) * float64(time.Second))
		for {
			has, err := t.hasText(ctx, want)
			if err != nil {
				return "", err
			}
			if has != gone {
				break
			}
			if time.Since(start) > limit {
				state := "did not appear"
				if gone {
					state = "is still there"
				}
				return "", fmt.Errorf("waited %s: %q %s; take browser_snapshot to see the page", limit.Round(100*time.Millisecond), want, state)
			}
			if !sleepCtx(ctx, 100*time.Millisecond) {
				return "", ctx.Err()
			}
		}
	}
	did := fmt.Sprintf("Waited %s.", time.Since(start).Round(10*time.Millisecond)+time.Duration(in.Time*float64(time.Second)))
	if want != "" {
		verb := "appeared"
		if gone {
			verb = "is gone"
		}
		did = fmt.Sprintf("%q %s after %s.", want, verb, time.Since(start).Round(10*time.Millisecond))
	}
	return b.report(ctx, t, did, before, doc)
}
