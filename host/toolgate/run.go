package toolgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/internal/textdist"
	"github.com/domo-agent/domo/policy"
)

var errCallTimeout = errors.New("the call timed out")

// run records the start, calls the server and records the end.
func (g *Gate) run(ctx context.Context, c Call, t mcpclient.Tool, ev audit.Event, args json.RawMessage) Result {
	start := ev
	start.Event = audit.KindCallStart
	if _, err := g.opts.Log.Append(start); err != nil {
		return Result{Status: audit.StatusDenied, IsError: true,
			Text: fmt.Sprintf("%s was not run: the audit log cannot be written (%v)", c.Name, err)}
	}
	if c.Running != nil {
		c.Running()
	}
	timeout := DefaultTimeout
	if sc, ok := g.opts.ServerConfig[t.Server]; ok && sc.Timeout > 0 {
		timeout = time.Duration(sc.Timeout)
	}
	began := time.Now()
	res := g.send(ctx, c, t, args, timeout)
	res.Duration = time.Since(began)

	end := ev
	end.Event, end.Args = audit.KindCallEnd, nil
	end.Status, end.IsError, end.DurationMS = res.Status, res.IsError, res.Duration.Milliseconds()
	end.Result = res.Text
	if _, err := g.opts.Log.Append(end); err != nil {
		res.AuditErr = err
	}
	return res
}

// send makes the MCP call and classifies how it ended.
func (g *Gate) send(ctx context.Context, c Call, t mcpclient.Tool, args json.RawMessage, timeout time.Duration) Result {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	fail := func(status, text string) Result { return Result{Status: status, IsError: true, Text: text} }
	stopped := func() (Result, bool) {
		switch {
		case context.Cause(ctx) == errCallTimeout:
			return fail(audit.StatusTimeout, fmt.Sprintf("%s timed out after %s and was stopped.", c.Name, timeout)), true
		case ctx.Err() != nil:
			return fail(audit.StatusCanceled, fmt.Sprintf("%s was cancelled by the user.", c.Name)), true
		}
		return Result{}, false
	}

	sess, err := g.opts.Servers.Session(ctx, t.Server)
	if err != nil {
		if r, ok := stopped(); ok {
			return r
		}
		return fail(audit.StatusCrashed, fmt.Sprintf("%s could not run: %v", c.Name, err))
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = t.Tool.Name
	req.Params.Arguments = args
	if c.Progress != nil {
		token, done := g.opts.Servers.ProgressToken(c.Progress)
		defer done()
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	out, err := sess.CallTool(ctx, req)
	if err != nil {
		if r, ok := stopped(); ok {
			return r
		}
		if errors.Is(err, transport.ErrTransportClosed) {
			return fail(audit.StatusCrashed, fmt.Sprintf("server %s stopped during the call to %s; it is being restarted, so the call may be tried again.", t.Server, c.Name))
		}
		return fail(audit.StatusError, fmt.Sprintf("%s failed: %v", c.Name, err))
	}
	res := Result{Status: audit.StatusOK, Content: out.Content, Structured: out.StructuredContent, IsError: out.IsError}
	if out.IsError {
		res.Status = audit.StatusError
	}
	res.Text = resultText(out)
	return res
}

// resultText renders a tool result as the text the model reads: its text
// parts, placeholders for media, and the structured content when there is
// no text.
func resultText(out *mcp.CallToolResult) string {
	var parts []string
	for _, c := range out.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			parts = append(parts, c.Text)
		case mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes of base64]", c.MIMEType, len(c.Data)))
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes of base64]", c.MIMEType, len(c.Data)))
		case mcp.EmbeddedResource:
			if r, ok := c.Resource.(mcp.TextResourceContents); ok {
				parts = append(parts, r.Text)
			} else {
				parts = append(parts, "[embedded resource]")
			}
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		}
	}
	if len(parts) == 0 && out.StructuredContent != nil {
		if b, err := json.Marshal(out.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// denial is what the model reads when a call does not run: what happened
// and what to do next.
func denial(name string, pt policy.Tool, d policy.Decision, by, reason string) string {
	switch by {
	case "no_terminal":
		if pt.Risk == policy.RiskDestructive {
			return fmt.Sprintf("%s was denied: it is destructive, destructive tools ask before every call, and there is no terminal to ask on. Run it from `domo chat` or `domo call` in a terminal.", name)
		}
		return fmt.Sprintf("%s was denied: it needs the user's permission (%s) and there is no terminal to ask on. To allow it, run again with --allow %s, or `domo permissions set %s always`.", name, d.Rule, pt.Group, pt.Group)
	case "user":
		msg := fmt.Sprintf("The user denied %s.", name)
		if reason = strings.TrimSpace(reason); reason != "" {
			msg += " Their reason: " + strings.TrimRight(reason, ".!") + "."
		}
		return msg + " Do not retry it; continue without it or ask the user."
	}
	return fmt.Sprintf("%s is not allowed: %s. Do not retry it; tell the user if it is needed.", name, d.Rule)
}

// unknownTool names the tools closest to name, so the model can correct
// itself.
func unknownTool(name string, cat []mcpclient.Tool) string {
	type scored struct {
		name string
		d    int
	}
	var all []scored
	for _, t := range cat {
		all = append(all, scored{t.Name, textdist.Levenshtein(name, t.Name)})
	}
	slices.SortStableFunc(all, func(a, b scored) int { return a.d - b.d })
	var names []string
	for i := 0; i < len(all) && i < 8; i++ {
		names = append(names, all[i].name)
	}
	if len(names) == 0 {
		return fmt.Sprintf("there is no tool named %q, and no tools are available.", name)
	}
	return fmt.Sprintf("there is no tool named %q. Closest tools: %s.", name, strings.Join(names, ", "))
}
