package browser

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto/network"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type getTextArgs struct {
	Ref        string `json:"ref,omitempty" jsonschema:"read only this element (by ref); empty reads the whole page"`
	MaxLength  int    `json:"max_length,omitempty" jsonschema:"the most characters to return"`
	StartIndex int    `json:"start_index,omitempty" jsonschema:"the character to start at, to read a long page in parts"`
}

func (s *Server) getText() mcpkit.Tool {
	return mcpkit.NewTool("browser_get_text",
		"The readable text of the page, or of one element by ref, as the page shows it (after scripts ran). Long text comes in parts: pass start_index.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in getTextArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				ref := strings.TrimPrefix(strings.TrimSpace(in.Ref), "@")
				if ref != "" {
					if _, err := t.resolve(ctx, ref); err != nil {
						return "", err
					}
				}
				cctx, cancel := t.callCtx(ctx, s.b.opts.ActionTimeout)
				defer cancel()
				var text string
				if _, err := t.call(cctx, "readText", ref, &text); err != nil {
					return "", t.refError(ref, err)
				}
				return pageOf(text, in.StartIndex, cmp.Or(in.MaxLength, 20000)), nil
			})
		},
		mcpkit.Title("Read the page's text"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			mcpkit.SetInt(sc, "max_length", 100, 1_000_000, 20000)
			mcpkit.SetInt(sc, "start_index", 0, math.MaxInt32, 0)
		}),
	)
}

// pageOf cuts text to max runes from start, saying how to read on.
func pageOf(text string, start, max int) string {
	runes := []rune(text)
	if start >= len(runes) && len(runes) > 0 {
		return fmt.Sprintf("start_index %d is past the end: the text has %d characters", start, len(runes))
	}
	end := min(start+max, len(runes))
	out := string(runes[start:end])
	if end < len(runes) {
		out += fmt.Sprintf("\n\n[… %d more characters: call again with start_index=%d]", len(runes)-end, end)
	}
	return out
}

type findArgs struct {
	Text       string `json:"text,omitempty" jsonschema:"text the element shows or is named by (case-insensitive, a part is enough)"`
	Role       string `json:"role,omitempty" jsonschema:"the role, e.g. button, link, textbox, heading"`
	Name       string `json:"name,omitempty" jsonschema:"a part of the accessible name"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"the most matches to list"`
}

func (a *findArgs) Validate() error {
	a.Text, a.Role, a.Name = strings.TrimSpace(a.Text), strings.ToLower(strings.TrimSpace(a.Role)), strings.TrimSpace(a.Name)
	if a.Text == "" && a.Role == "" && a.Name == "" {
		return errors.New("give text, or role and/or name, to find")
	}
	return nil
}

func (s *Server) findTool() mcpkit.Tool {
	return mcpkit.NewTool("browser_find",
		"Find elements by visible text, or by role and name, anywhere on the page (even beyond a truncated snapshot); returns their snapshot lines with refs.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in findArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				f, err := t.find(ctx, findOptions{Text: in.Text, Role: in.Role, Name: in.Name, Max: cmp.Or(in.MaxResults, 20)})
				if err != nil {
					return "", err
				}
				if f.Matches == 0 {
					return "No element matches. Check the spelling, or take browser_snapshot to see what the page holds.", nil
				}
				return fmt.Sprintf("%d matches:\n%s", f.Matches, f.Text), nil
			})
		},
		mcpkit.Title("Find elements"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetInt(sc, "max_results", 1, 200, 20) }),
	)
}

func (s *Server) getURL() mcpkit.Tool {
	return mcpkit.NewTool("browser_get_url",
		"The current tab's URL and title.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				u, title := t.info(ctx)
				return fmt.Sprintf("URL: %s\nTitle: %s\nTab: %d", u, title, t.id), nil
			})
		},
		mcpkit.Title("Current URL"),
	)
}

type screenshotArgs struct {
	Ref      string `json:"ref,omitempty" jsonschema:"only this element, by ref"`
	FullPage bool   `json:"full_page,omitempty" jsonschema:"the whole scrollable page, not just the viewport"`
	Format   string `json:"format,omitempty" jsonschema:"png (default) or jpeg"`
}

func (s *Server) screenshot() mcpkit.Tool {
	return mcpkit.NewTool("browser_screenshot",
		"A picture of the viewport, the full page, or one element (by ref). To act on the page, use browser_snapshot's refs, not the picture.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in screenshotArgs) (*mcp.CallToolResult, error) {
			var (
				img  []byte
				mime = "image/png"
				desc string
			)
			res, err := s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				var err error
				img, desc, err = t.screenshot(ctx, in)
				return desc, err
			})
			if err != nil || res == nil {
				return res, err
			}
			if in.Format == "jpeg" {
				mime = "image/jpeg"
			}
			return mcp.NewToolResultImage(desc, base64.StdEncoding.EncodeToString(img), mime), nil
		},
		mcpkit.Title("Screenshot"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetEnum(sc, "format", "png", "jpeg") }),
	)
}

type consoleArgs struct {
	Level string `json:"level,omitempty" jsonschema:"only messages of this level or worse: debug, info, warning, error"`
	Clear bool   `json:"clear,omitempty" jsonschema:"forget the messages after listing them"`
}

var levelRank = map[string]int{"verbose": 0, "debug": 0, "log": 1, "info": 1, "dir": 1, "table": 1, "trace": 1, "startGroup": 1, "warning": 2, "warn": 2, "error": 3, "assert": 3, "exception": 3}

func (s *Server) consoleMessages() mcpkit.Tool {
	return mcpkit.NewTool("browser_console_messages",
		"The current tab's console messages and uncaught errors, oldest first (the last 500).",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in consoleArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				t.mu.Lock()
				msgs := append([]consoleEntry(nil), t.console...)
				if in.Clear {
					t.console = nil
				}
				t.mu.Unlock()
				min := levelRank[in.Level]
				var out strings.Builder
				n := 0
				for _, m := range msgs {
					if levelRank[m.Level] < min {
						continue
					}
					n++
					fmt.Fprintf(&out, "[%s] %s", m.Level, m.Text)
					if m.URL != "" {
						fmt.Fprintf(&out, " (%s:%d)", m.URL, m.Line)
					}
					out.WriteString("\n")
				}
				if n == 0 {
					return "No console messages.", nil
				}
				return fmt.Sprintf("%d console messages:\n%s", n, out.String()), nil
			})
		},
		mcpkit.Title("Console messages"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetEnum(sc, "level", "debug", "info", "warning", "error") }),
	)
}

type networkArgs struct {
	Filter string `json:"filter,omitempty" jsonschema:"only requests whose URL contains this"`
	Static bool   `json:"include_static,omitempty" jsonschema:"include images, fonts, stylesheets and scripts"`
	Clear  bool   `json:"clear,omitempty" jsonschema:"forget the requests after listing them"`
}

func (s *Server) networkRequests() mcpkit.Tool {
	return mcpkit.NewTool("browser_network_requests",
		"The current tab's network requests, oldest first (the last 500): method, URL, status, type, size or failure.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, in networkArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				t.mu.Lock()
				var reqs []request
				for _, r := range t.requests {
					reqs = append(reqs, *r)
				}
				if in.Clear {
					t.requests, t.byID = nil, map[network.RequestID]*request{}
				}
				t.mu.Unlock()
				var out strings.Builder
				n := 0
				for _, r := range reqs {
					if !in.Static && isStatic(r.Type) || in.Filter != "" && !strings.Contains(r.URL, in.Filter) {
						continue
					}
					n++
					fmt.Fprintf(&out, "%s %s → ", r.Method, r.URL)
					switch {
					case r.Failure != "":
						fmt.Fprintf(&out, "failed: %s", r.Failure)
					case r.Status != 0:
						fmt.Fprintf(&out, "%d", r.Status)
					default:
						out.WriteString("pending")
					}
					fmt.Fprintf(&out, " [%s", strings.ToLower(r.Type))
					if r.Size > 0 {
						fmt.Fprintf(&out, ", %d bytes", r.Size)
					}
					out.WriteString("]\n")
				}
				if n == 0 {
					return "No matching requests.", nil
				}
				return fmt.Sprintf("%d requests:\n%s", n, out.String()), nil
			})
		},
		mcpkit.Title("Network requests"),
	)
}

func isStatic(typ string) bool {
	switch typ {
	case "Image", "Font", "Stylesheet", "Script", "Media", "Manifest", "Other", "Ping", "Prefetch":
		return true
	}
	return false
}

type evaluateArgs struct {
	Function string `json:"function" jsonschema:"a JavaScript function, e.g. () => document.title, or (el) => el.value when ref is given; its result is returned as JSON"`
	Ref      string `json:"ref,omitempty" jsonschema:"an element passed to the function as its argument"`
}

func (s *Server) evaluate() mcpkit.Tool {
	return mcpkit.NewTool("browser_evaluate",
		"Run a JavaScript function in the page (the page's own world) and return its result as JSON. It can do anything the page can.",
		mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.No, OpenWorld: mcpkit.Yes},
		func(ctx context.Context, _ mcp.CallToolRequest, in evaluateArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				return t.evaluate(ctx, in)
			})
		},
		mcpkit.Title("Run JavaScript"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { sc.Properties["function"].MinLength = new(1) }),
	)
}
