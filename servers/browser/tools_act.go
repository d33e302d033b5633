package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// actOn runs an action on the element of ref; did says what was done to
// it, named as its snapshot line.
func (s *Server) actOn(ctx context.Context, ref string, did func(what string) string, fn func(ctx context.Context, t *Tab) error) (*mcp.CallToolResult, error) {
	return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
		return s.b.act(ctx, t, did(t.line(ctx, ref)), func(ctx context.Context) error { return fn(ctx, t) })
	})
}

type refArgs struct {
	Ref string `json:"ref" jsonschema:"the element's ref from the latest snapshot, e.g. e12"`
}

type clickArgs struct {
	Ref       string   `json:"ref" jsonschema:"the element's ref from the latest snapshot, e.g. e12"`
	Button    string   `json:"button,omitempty" jsonschema:"left (default), right or middle"`
	Double    bool     `json:"double_click,omitempty" jsonschema:"click twice"`
	Modifiers []string `json:"modifiers,omitempty" jsonschema:"keys held during the click: Alt, Control, Meta, Shift"`
}

func (s *Server) clickTool() mcpkit.Tool {
	return mcpkit.NewTool("browser_click",
		"Click an element by its ref. Returns what changed: a new page's snapshot, a new tab, a dialog, or the lines that appeared and went.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in clickArgs) (*mcp.CallToolResult, error) {
			return s.actOn(ctx, in.Ref, func(what string) string { return "Clicked " + what + "." }, func(ctx context.Context, t *Tab) error {
				return t.click(ctx, in.Ref, in.Button, in.Double, in.Modifiers)
			})
		},
		mcpkit.Title("Click"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { mcpkit.SetEnum(sc, "button", "left", "right", "middle") }),
	)
}

type typeArgs struct {
	Ref    string `json:"ref" jsonschema:"the text field's ref, e.g. e12"`
	Text   string `json:"text" jsonschema:"the text; it replaces what the field holds (empty clears it)"`
	Submit bool   `json:"submit,omitempty" jsonschema:"press Enter afterwards"`
	Slowly bool   `json:"slowly,omitempty" jsonschema:"type key by key, for pages that react to each key press"`
}

func (a *typeArgs) Validate() error {
	if utf8.RuneCountInString(a.Text) > 100_000 {
		return errors.New("text is longer than 100,000 characters")
	}
	return nil
}

func (s *Server) typeTool() mcpkit.Tool {
	return mcpkit.NewTool("browser_type",
		"Type text into a text field by its ref, replacing what it holds; submit presses Enter afterwards. Returns what changed.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in typeArgs) (*mcp.CallToolResult, error) {
			did := func(what string) string {
				d := fmt.Sprintf("Typed %d characters into %s", utf8.RuneCountInString(in.Text), what)
				if in.Submit {
					d += " and pressed Enter"
				}
				return d + "."
			}
			return s.actOn(ctx, in.Ref, did, func(ctx context.Context, t *Tab) error {
				return t.typeText(ctx, in.Ref, in.Text, in.Submit, in.Slowly)
			})
		},
		mcpkit.Title("Type text"),
	)
}

type formField struct {
	Ref   string `json:"ref" jsonschema:"the field's ref"`
	Value string `json:"value" jsonschema:"text for a text field; true or false for a checkbox, radio or switch; an option's label or value for a select"`
}

type fillArgs struct {
	Fields []formField `json:"fields" jsonschema:"the fields to fill, in order"`
}

func (a *fillArgs) Validate() error {
	if len(a.Fields) == 0 {
		return errors.New("fields is empty: give at least one {ref, value}")
	}
	return nil
}

func (s *Server) fillForm() mcpkit.Tool {
	return mcpkit.NewTool("browser_fill_form",
		"Fill several form fields at once: text fields get text, checkboxes/radios/switches true or false, selects an option. Returns what changed.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in fillArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				return s.b.act(ctx, t, fmt.Sprintf("Filled %d fields.", len(in.Fields)), func(ctx context.Context) error {
					for _, f := range in.Fields {
						if err := t.fill(ctx, f); err != nil {
							return fmt.Errorf("field %s: %w", f.Ref, err)
						}
					}
					return nil
				})
			})
		},
		mcpkit.Title("Fill a form"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { sc.Properties["fields"].MinItems = new(1) }),
	)
}

// fill sets one form field by what kind of element it is.
func (t *Tab) fill(ctx context.Context, f formField) error {
	_, st, err := t.element(ctx, f.Ref, "")
	if err != nil {
		return err
	}
	switch {
	case st.Checked != nil:
		switch strings.ToLower(strings.TrimSpace(f.Value)) {
		case "true", "on", "yes", "checked", "1":
			return t.setChecked(ctx, f.Ref, true)
		case "false", "off", "no", "unchecked", "0", "":
			return t.setChecked(ctx, f.Ref, false)
		}
		return fmt.Errorf("a checkbox, radio or switch takes true or false, not %q", f.Value)
	case st.Select:
		_, err := t.selectOptions(ctx, f.Ref, []string{f.Value})
		return err
	}
	return t.typeText(ctx, f.Ref, f.Value, false, false)
}

type selectArgs struct {
	Ref    string   `json:"ref" jsonschema:"the select's ref"`
	Values []string `json:"values" jsonschema:"the options to select, by label or value (several only for a multiple select)"`
}

func (a *selectArgs) Validate() error {
	if len(a.Values) == 0 {
		return errors.New("values is empty: give the option to select")
	}
	return nil
}

func (s *Server) selectOption() mcpkit.Tool {
	return mcpkit.NewTool("browser_select_option",
		"Select options of a select element (a combobox or listbox in the snapshot) by label or value. Returns what changed.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in selectArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				what := t.line(ctx, in.Ref)
				var picked []string
				text, err := s.b.act(ctx, t, "", func(ctx context.Context) error {
					var err error
					picked, err = t.selectOptions(ctx, in.Ref, in.Values)
					return err
				})
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("Selected %s in %s.", strings.Join(quoteAll(picked), ", "), what) + text, nil
			})
		},
		mcpkit.Title("Select an option"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { sc.Properties["values"].MinItems = new(1) }),
	)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

type keyArgs struct {
	Key string `json:"key" jsonschema:"a key name or character, with modifiers joined by +: Enter, Escape, ArrowDown, Tab, a, Control+A, Shift+Tab"`
}

func (a *keyArgs) Validate() error {
	if _, _, err := parseKey(strings.TrimSpace(a.Key)); err != nil {
		return err
	}
	return nil
}

func (s *Server) pressKey() mcpkit.Tool {
	return mcpkit.NewTool("browser_press_key",
		"Press a key (with modifiers) on whatever has the keyboard focus, e.g. Enter, Escape, ArrowDown, Control+A. Returns what changed.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in keyArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				return s.b.act(ctx, t, "Pressed "+in.Key+".", func(ctx context.Context) error {
					return t.pressKey(ctx, strings.TrimSpace(in.Key))
				})
			})
		},
		mcpkit.Title("Press a key"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { sc.Properties["key"].MinLength = new(1) }),
	)
}

func (s *Server) hoverTool() mcpkit.Tool {
	return mcpkit.NewTool("browser_hover",
		"Move the mouse over an element by its ref (to open a menu or show a tooltip). Returns what changed.",
		mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.Yes},
		func(ctx context.Context, _ mcp.CallToolRequest, in refArgs) (*mcp.CallToolResult, error) {
			return s.actOn(ctx, in.Ref, func(what string) string { return "Hovered over " + what + "." }, func(ctx context.Context, t *Tab) error {
				return t.hover(ctx, in.Ref)
			})
		},
		mcpkit.Title("Hover"),
	)
}

type dialogArgs struct {
	Accept     bool   `json:"accept" jsonschema:"true presses OK (accept), false presses Cancel (dismiss)"`
	PromptText string `json:"prompt_text,omitempty" jsonschema:"the answer typed into a prompt dialog"`
}

func (s *Server) handleDialog() mcpkit.Tool {
	return mcpkit.NewTool("browser_handle_dialog",
		"Answer the page's open alert, confirm, prompt or beforeunload dialog: accept (OK) or dismiss (Cancel), with text for a prompt.",
		acts,
		func(ctx context.Context, _ mcp.CallToolRequest, in dialogArgs) (*mcp.CallToolResult, error) {
			return s.do(ctx, func(ctx context.Context, t *Tab) (string, error) {
				d := t.pendingDialog()
				if d == nil {
					return "", errors.New("no dialog is open in the current tab")
				}
				before := t.last
				t.mu.Lock()
				doc := t.doc
				t.mu.Unlock()
				cctx, cancel := t.callCtx(ctx, s.b.opts.ActionTimeout)
				defer cancel()
				p := page.HandleJavaScriptDialogParams{Accept: in.Accept}
				if in.PromptText != "" {
					p.PromptText = in.PromptText
				}
				if _, err := chromedp.Call(cctx, page.HandleJavaScriptDialog, p); err != nil {
					return "", t.wrap(err)
				}
				// The event that says it closed may trail the reply.
				t.mu.Lock()
				if t.dialog == d {
					t.dialog = nil
					t.dialogCh = make(chan struct{})
				}
				t.mu.Unlock()
				verb := "Accepted"
				if !in.Accept {
					verb = "Dismissed"
				}
				t.settle(ctx, doc)
				if before == nil {
					before = []string{}
				}
				return s.b.report(ctx, t, fmt.Sprintf("%s the %s dialog %q.", verb, d.Type, d.Message), before, doc)
			})
		},
		mcpkit.Title("Answer a dialog"),
	)
}
