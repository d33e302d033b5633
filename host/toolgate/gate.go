// Package toolgate is the audited permission client: the one code path by
// which the host calls a tool, whether the model asked for it or a person
// did (`domo call`). Each call is looked up in the catalogue, its arguments
// checked against the tool's input schema, decided by policy (asking the
// user when policy says ask), and recorded in the audit log before it runs
// and after it ends, whatever the outcome.
//
// Every call attempt writes exactly one permission_decision event. A call
// that runs adds a tool_call_start and a tool_call_end, and the end is
// written on every path: success, tool error, timeout, cancellation and
// server crash. A call that cannot be audited does not run.
//
// It must not decide anything itself (policy does) nor touch the terminal
// (the Prompter does).
package toolgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/internal/argcheck"
	"github.com/domo-agent/domo/policy"
)

// DefaultTimeout bounds a call whose server config sets no timeout.
const DefaultTimeout = 2 * time.Minute

// Servers is what the gate needs of the supervisor.
type Servers interface {
	Lookup(name string) (mcpclient.Tool, bool)
	Catalogue() []mcpclient.Tool
	Session(ctx context.Context, server string) (*client.Client, error)
	ProgressToken(fn func(mcpclient.Progress)) (mcp.ProgressToken, func())
}

var _ Servers = (*mcpclient.Supervisor)(nil)

// Log is where the gate records; *audit.Writer is one.
type Log interface {
	Append(audit.Event) (audit.Event, error)
}

var _ Log = (*audit.Writer)(nil)

// Options configure a Gate.
type Options struct {
	Servers Servers
	Log     Log
	// Permissions and Memory give the policy and the tool catalogue.
	Permissions config.Permissions
	Memory      bool
	// ServerConfig gives a server's settings (its call timeout).
	ServerConfig map[string]config.Server
	// Prompter asks the user; nil means nobody can be asked.
	Prompter Prompter
	// Persist saves an "always" answer as the group's policy.
	Persist func(group string, p policy.GroupPolicy) error
	// Session names the host session in the audit log.
	Session string
	// Allow are groups allowed for this session from the start
	// (`--allow GROUP`), as if the user had answered "session".
	Allow []string
}

// Call is one request to run a tool.
type Call struct {
	Name string          // the catalogue name
	Args json.RawMessage // a JSON object; empty means {}
	Turn int             // the conversation turn, for the audit log
	// Intent is the turn's intent state in intent mode; nil otherwise.
	Intent *policy.Turn
	// Progress receives the tool's progress notifications. It runs on the
	// session's read goroutine: keep it quick.
	Progress func(mcpclient.Progress)
	// Running is called once the call is allowed and about to be sent.
	Running func()
}

// Result is how a call ended.
type Result struct {
	Status string // an audit.Status* constant
	// Text is what the model reads: the tool's text, or why nothing ran.
	Text       string
	Content    []mcp.Content
	Structured any
	IsError    bool
	// Cancel is set when the user answered "cancel the turn".
	Cancel   bool
	Decision policy.Decision
	Tool     policy.Tool
	Duration time.Duration
	// AuditErr is set when the end of the call could not be recorded.
	AuditErr error
}

// Gate is the audited permission client. It is safe for concurrent use;
// prompts are asked one at a time.
type Gate struct {
	opts Options

	mu      sync.Mutex
	policy  policy.Config
	grants  policy.Grants
	schemas map[string]schemaEntry

	promptMu sync.Mutex
	calls    atomic.Uint64
}

type schemaEntry struct {
	raw    string
	schema *argcheck.Schema
	err    error
}

// New returns a gate.
func New(opts Options) *Gate {
	g := &Gate{opts: opts, policy: opts.Permissions.Policy(opts.Memory), schemas: map[string]schemaEntry{}}
	for _, group := range opts.Allow {
		g.grants.Grant(group)
	}
	return g
}

// Reset drops the session's grants (on /new).
func (g *Gate) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants.Reset()
	for _, group := range g.opts.Allow {
		g.grants.Grant(group)
	}
}

// Decide says what policy would do with a call of the named tool now,
// without asking or recording anything (for listings).
func (g *Gate) Decide(name string, turn *policy.Turn) (policy.Tool, policy.Decision, bool) {
	t, ok := g.opts.Servers.Lookup(name)
	if !ok {
		return policy.Tool{}, policy.Decision{}, false
	}
	pt := g.opts.Permissions.Tool(t.Server, t.Tool.Name)
	g.mu.Lock()
	defer g.mu.Unlock()
	return pt, policy.Decide(g.policy, pt, &g.grants, turn, false), true
}

// Policy returns the policy in force, including "always" answers given
// during this session.
func (g *Gate) Policy() policy.Config {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.policy
}

// Call runs one tool call through the gate. It never returns an error: every
// failure is a Result the model can read, and every outcome is audited.
func (g *Gate) Call(ctx context.Context, c Call) Result {
	id := strconv.FormatUint(g.calls.Add(1), 10)
	args := c.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	ev := audit.Event{Session: g.opts.Session, Turn: c.Turn, Call: id, Tool: c.Name, Args: args}
	if !json.Valid(args) {
		// A model can send anything; the log keeps it, as a JSON string.
		ev.Args, _ = json.Marshal(string(args))
	}

	t, ok := g.opts.Servers.Lookup(c.Name)
	if !ok {
		return g.refuse(ev, policy.Tool{}, audit.StatusInvalid, "toolgate", "no such tool", unknownTool(c.Name, g.opts.Servers.Catalogue()))
	}
	pt := g.opts.Permissions.Tool(t.Server, t.Tool.Name)
	ev.Server, ev.Tool, ev.Group, ev.Risk = t.Server, t.Tool.Name, pt.Group, string(pt.Risk)
	if err := g.check(c.Name, t.Schema, args); err != nil {
		return g.refuse(ev, pt, audit.StatusInvalid, "toolgate", "arguments do not match the input schema",
			fmt.Sprintf("invalid arguments for %s: %v. Fix the arguments and call it again.", c.Name, err))
	}

	d, by, cancel, reason := g.decide(ctx, c, t, pt, args)
	ev.Rule = d.Rule
	if d.Verdict != policy.Allow {
		status, text := audit.StatusDenied, denial(c.Name, pt, d, by, reason)
		switch {
		case cancel:
			status, text = audit.StatusCanceled, fmt.Sprintf("The user cancelled the request at the permission prompt for %s; stop here.", c.Name)
		case by == "policy" && policy.Blocked(g.Policy(), pt):
			status = audit.StatusBlocked
		}
		res := g.refuse(ev, pt, status, by, d.Rule, text)
		res.Cancel = cancel
		return res
	}
	dev := ev
	dev.Event, dev.Decision, dev.DecidedBy, dev.Args = audit.KindDecision, string(policy.Allow), by, nil
	if _, err := g.opts.Log.Append(dev); err != nil {
		return Result{Status: audit.StatusDenied, IsError: true, Tool: pt, Decision: d,
			Text: fmt.Sprintf("%s was not run: the audit log cannot be written (%v)", c.Name, err)}
	}
	res := g.run(ctx, c, t, ev, args)
	res.Decision, res.Tool = d, pt
	return res
}

// check validates args against the tool's input schema, compiling it once
// per schema version.
func (g *Gate) check(name string, raw json.RawMessage, args json.RawMessage) error {
	if !isObject(args) {
		return errors.New("arguments must be a JSON object")
	}
	g.mu.Lock()
	e, ok := g.schemas[name]
	g.mu.Unlock()
	if !ok || e.raw != string(raw) {
		e = schemaEntry{raw: string(raw)}
		e.schema, e.err = argcheck.Compile(name, raw)
		g.mu.Lock()
		g.schemas[name] = e
		g.mu.Unlock()
	}
	if e.err != nil {
		return nil // the server's schema does not compile: let the server judge
	}
	return e.schema.Check(args)
}

// isObject reports whether args is valid JSON whose value is an object.
func isObject(args json.RawMessage) bool {
	if !json.Valid(args) {
		return false
	}
	for _, c := range args {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// decide applies policy and, when it asks, the prompter. It returns the
// decision, who made it, whether the user cancelled the turn, and the
// user's reason for a denial.
func (g *Gate) decide(ctx context.Context, c Call, t mcpclient.Tool, pt policy.Tool, args json.RawMessage) (policy.Decision, string, bool, string) {
	g.mu.Lock()
	d := policy.Decide(g.policy, pt, &g.grants, c.Intent, false)
	epoch := g.grants.Epoch
	g.mu.Unlock()
	if d.Verdict != policy.Ask {
		return d, "policy", false, ""
	}
	if g.opts.Prompter == nil {
		return policy.Decision{Verdict: policy.Deny, Rule: d.Rule}, "no_terminal", false, ""
	}
	g.promptMu.Lock()
	// A prompt answered while this one waited may have settled it.
	g.mu.Lock()
	d = policy.Decide(g.policy, pt, &g.grants, c.Intent, false)
	g.mu.Unlock()
	if d.Verdict != policy.Ask {
		g.promptMu.Unlock()
		return d, "policy", false, ""
	}
	answer, reason, err := g.opts.Prompter.Ask(ctx, Prompt{
		Name: c.Name, Server: t.Server, Tool: t.Tool.Name, Group: pt.Group, Risk: pt.Risk, Args: args, Rule: d.Rule,
	})
	g.promptMu.Unlock()
	if err != nil {
		if errors.Is(err, ErrNoTerminal) {
			return policy.Decision{Verdict: policy.Deny, Rule: d.Rule}, "no_terminal", false, ""
		}
		if ctx.Err() != nil {
			return policy.Decision{Verdict: policy.Deny, Rule: d.Rule + "; the turn was cancelled at the prompt"}, "user", true, ""
		}
		return policy.Decision{Verdict: policy.Deny, Rule: d.Rule + "; the prompt failed: " + err.Error()}, "user", false, ""
	}
	g.mu.Lock()
	grants := &g.grants
	if grants.Epoch != epoch {
		grants = nil // the session was reset while the prompt was open
	}
	persist, verdict := policy.Apply(answer, pt, grants)
	if persist != nil {
		g.policy.Groups = withGroup(g.policy.Groups, pt.Group, *persist)
	}
	g.mu.Unlock()
	rule := d.Rule + "; the user answered " + answerName(answer)
	if persist != nil && g.opts.Persist != nil {
		if err := g.opts.Persist(pt.Group, *persist); err != nil {
			rule += " (not saved: " + err.Error() + ")"
		}
	}
	return policy.Decision{Verdict: verdict, Rule: rule}, "user", answer == policy.AnswerCancel, reason
}

// withGroup returns a copy of groups with group set to p, so a policy
// handed out earlier is not changed under its reader.
func withGroup(groups map[string]policy.GroupPolicy, group string, p policy.GroupPolicy) map[string]policy.GroupPolicy {
	out := make(map[string]policy.GroupPolicy, len(groups)+1)
	for k, v := range groups {
		out[k] = v
	}
	out[group] = p
	return out
}

func answerName(a policy.Answer) string {
	switch a {
	case policy.AnswerOnce:
		return "once"
	case policy.AnswerSession:
		return "session"
	case policy.AnswerAlways:
		return "always"
	case policy.AnswerDeny:
		return "deny"
	case policy.AnswerCancel:
		return "cancel"
	}
	return "nothing usable"
}

// refuse records a call that does not run and returns its result.
func (g *Gate) refuse(ev audit.Event, pt policy.Tool, status, by, rule, text string) Result {
	ev.Event, ev.Decision, ev.DecidedBy, ev.Status = audit.KindDecision, string(policy.Deny), by, status
	ev.Rule, ev.Reason = rule, text
	res := Result{Status: status, Text: text, IsError: true, Tool: pt, Decision: policy.Decision{Verdict: policy.Deny, Rule: rule}}
	if _, err := g.opts.Log.Append(ev); err != nil {
		res.AuditErr = err
	}
	return res
}

// Offered lists the tools the model may be offered: the catalogue without
// the tools policy blocks outright (an off group or tool, memory tools with
// memory disabled), which no answer could allow.
func (g *Gate) Offered() []mcpclient.Tool {
	pol := g.Policy()
	var out []mcpclient.Tool
	for _, t := range g.opts.Servers.Catalogue() {
		pt := g.opts.Permissions.Tool(t.Server, t.Tool.Name)
		if policy.Blocked(pol, pt) {
			continue
		}
		out = append(out, t)
	}
	return out
}
