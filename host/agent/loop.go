package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/domo-agent/domo/host/llm"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
)

// turn is one user message being answered.
type turn struct {
	agent   *Agent
	ev      Events
	number  int
	started time.Time
	msgs    []llm.Message // this turn's messages, the user's first
	memory  string        // the memories recalled for the system prompt
	result  Result
	intent  policy.Turn
}

func (t *turn) add(u llm.Usage) {
	t.result.Usage.add(u)
}

// sink streams the model's answer to the events.
func (t *turn) sink() *llm.Sink {
	return &llm.Sink{Content: t.ev.Content, Reasoning: t.ev.Reasoning}
}

// chat answers from the model alone.
func (t *turn) chat(ctx context.Context, text string) error {
	t.msgs = []llm.Message{{Role: llm.RoleUser, Content: text}}
	msgs := t.agent.prepare(ctx, t, false, nil)
	resp, err := t.agent.opts.Model.Chat(ctx, llm.Request{Messages: msgs}, t.sink())
	t.add(resp.Usage)
	if err != nil {
		t.commit("")
		return err
	}
	t.result.Rounds = 1
	t.result.Answer = resp.Message.Content
	t.commit(resp.Message.Content)
	return nil
}

// loop runs the tool loop: the model calls tools through the gate until it
// answers, the user stops it, or it reaches its limits.
func (t *turn) loop(ctx context.Context, text string, tools []mcpclient.Tool) error {
	t.msgs = []llm.Message{{Role: llm.RoleUser, Content: text}}
	specs := t.agent.toolSpecs(tools)
	size := taskSize(text)
	budget := limitsFor[size]
	maxRounds, deadline := budget.Rounds, t.started.Add(budget.Time)
	for round := 1; ; round++ {
		if round > maxRounds || time.Now().After(deadline) {
			l := LimitReached{Size: size, Rounds: round - 1, Elapsed: time.Since(t.started), Calls: len(t.result.Calls)}
			l.Reason = "rounds"
			if round <= maxRounds {
				l.Reason = "time"
			}
			choice := LimitSummarize
			if t.ev.Limit != nil {
				choice = t.ev.Limit(ctx, l)
			}
			switch choice {
			case LimitContinue:
				maxRounds, deadline = round-1+budget.Rounds, time.Now().Add(budget.Time)
			case LimitAbort:
				t.result.Stopped = "aborted"
				t.commit("(The user stopped this task before it finished.)")
				return nil
			default:
				t.result.Stopped = "limit"
				return t.summarize(ctx)
			}
		}
		msgs := t.agent.prepare(ctx, t, true, specs)
		resp, err := t.agent.opts.Model.Chat(ctx, llm.Request{Messages: msgs, Tools: specs}, t.sink())
		t.add(resp.Usage)
		if err != nil {
			t.commit("")
			return err
		}
		t.result.Rounds = round
		m := resp.Message
		m.Reasoning = ""
		if len(m.ToolCalls) == 0 {
			t.result.Answer = m.Content
			t.commit(m.Content)
			return nil
		}
		t.msgs = append(t.msgs, m)
		for _, c := range m.ToolCalls {
			res := t.call(ctx, c)
			t.msgs = append(t.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: t.agent.clip(ctx, res.Text)})
			if res.Cancel {
				t.result.Stopped = "cancelled"
				t.finishCalls(m.ToolCalls)
				t.commit("(The user cancelled this task at a permission prompt.)")
				return nil
			}
			if ctx.Err() != nil {
				t.finishCalls(m.ToolCalls)
				t.commit("(The user interrupted this task.)")
				return ctx.Err()
			}
		}
	}
}

// finishCalls answers the calls of the last assistant message that have no
// result yet, so the history stays well formed for the next request.
func (t *turn) finishCalls(calls []llm.ToolCall) {
	answered := map[string]bool{}
	for _, m := range t.msgs {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for _, c := range calls {
		if !answered[c.ID] {
			t.msgs = append(t.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "not run: the turn was cancelled"})
		}
	}
}

// summarize ends a turn at its limit with an answer from what was found.
func (t *turn) summarize(ctx context.Context) error {
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleUser, Content: "Stop calling tools now. Answer with what you found and did so far, and say what is left to do."})
	msgs := t.agent.prepare(ctx, t, false, nil)
	resp, err := t.agent.opts.Model.Chat(ctx, llm.Request{Messages: msgs}, t.sink())
	t.add(resp.Usage)
	if err != nil {
		t.commit("")
		return err
	}
	t.result.Answer = resp.Message.Content
	t.commit(resp.Message.Content)
	return nil
}

// call runs one of the model's calls through the gate.
func (t *turn) call(ctx context.Context, c llm.ToolCall) toolgate.Result {
	tc := ToolCall{Name: c.Name, Args: c.Arguments, FromText: c.FromText}
	if c.Name != policy.IntentTool {
		return t.gateCall(ctx, tc, t.intentState())
	}
	if t.ev.ToolStart != nil {
		t.ev.ToolStart(tc)
	}
	res := t.selectIntent(c.Arguments)
	t.ended(tc, res)
	return res
}

// gateCall runs a call through the gate, telling the events as it starts,
// runs and ends, and records it in the turn's result.
func (t *turn) gateCall(ctx context.Context, tc ToolCall, intent *policy.Turn) toolgate.Result {
	if t.ev.ToolStart != nil {
		t.ev.ToolStart(tc)
	}
	res := t.agent.opts.Gate.Call(ctx, toolgate.Call{
		Name:   tc.Name,
		Args:   json.RawMessage(tc.Args),
		Turn:   t.number,
		Intent: intent,
		Progress: func(p mcpclient.Progress) {
			if t.ev.ToolProgress != nil {
				t.ev.ToolProgress(tc, p)
			}
		},
		Running: func() {
			if t.ev.ToolRunning != nil {
				t.ev.ToolRunning(tc)
			}
		},
	})
	t.ended(tc, res)
	return res
}

// ended tells the events a call ended and records it.
func (t *turn) ended(tc ToolCall, res toolgate.Result) {
	if t.ev.ToolEnd != nil {
		t.ev.ToolEnd(tc, res)
	}
	t.result.Calls = append(t.result.Calls, CallRecord{Name: tc.Name, Args: tc.Args, Status: res.Status, IsError: res.IsError, Result: res.Text})
}

// intentState is the turn's intent when intent mode is on.
func (t *turn) intentState() *policy.Turn {
	if !t.agent.opts.Gate.Policy().IntentMode {
		return nil
	}
	return &t.intent
}

// selectIntent handles the model's select_intent call, which chooses what
// the rest of the turn may do; it reaches no server.
func (t *turn) selectIntent(args string) toolgate.Result {
	var in struct {
		Intent string `json:"intent"`
	}
	json.Unmarshal([]byte(args), &in)
	if err := policy.SelectIntent(t.agent.opts.Gate.Policy(), &t.intent, in.Intent); err != nil {
		return toolgate.Result{Status: "invalid", IsError: true, Text: err.Error()}
	}
	groups := t.agent.opts.Gate.Policy().Intents[in.Intent]
	return toolgate.Result{Status: "ok", Text: fmt.Sprintf("intent %q selected: this turn may use %s", in.Intent, strings.Join(groups, ", "))}
}

// commit moves the turn into the history, ending with answer (if any).
func (t *turn) commit(answer string) {
	if answer != "" {
		t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, Content: answer})
	}
	t.agent.mu.Lock()
	t.agent.history.add(t.msgs)
	t.agent.mu.Unlock()
}

// toolSpecs converts the offered tools for the model, adding select_intent
// in intent mode.
func (a *Agent) toolSpecs(tools []mcpclient.Tool) []llm.Tool {
	var specs []llm.Tool
	if pol := a.opts.Gate.Policy(); pol.IntentMode {
		var names []string
		for name := range pol.Intents {
			names = append(names, name)
		}
		enum, _ := json.Marshal(names)
		specs = append(specs, llm.Tool{
			Name:        policy.IntentTool,
			Description: "Choose what this turn will do before calling any other tool. The intent limits which tools may run until the user's next message.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"intent":{"type":"string","enum":` + string(enum) + `}},"required":["intent"]}`),
		})
	}
	for _, t := range tools {
		specs = append(specs, llm.Tool{Name: t.Name, Description: t.Tool.Description, Parameters: t.Schema})
	}
	return specs
}

// Size is how big a task looks, which sets its limits.
type Size string

// The sizes.
const (
	SizeQuick  Size = "quick"
	SizeMedium Size = "medium"
	SizeLong   Size = "long"
)

// Limits bound a tool loop.
type Limits struct {
	Rounds int
	Time   time.Duration
}

var limitsFor = map[Size]Limits{
	SizeQuick:  {Rounds: 8, Time: 3 * time.Minute},
	SizeMedium: {Rounds: 16, Time: 8 * time.Minute},
	SizeLong:   {Rounds: 32, Time: 20 * time.Minute},
}

// taskSize guesses a task's size from the message: many steps or "every
// file" is long; a short single request is quick.
func taskSize(text string) Size {
	l := strings.ToLower(text)
	long := 0
	for _, w := range []string{" all ", " every ", " each ", "and then", " then ", "step by step", "organize", "organise", "refactor", "for each"} {
		if strings.Contains(" "+l+" ", w) {
			long++
		}
	}
	switch {
	case long >= 2 || len(text) > 600:
		return SizeLong
	case long == 1 || len(text) > 160:
		return SizeMedium
	}
	return SizeQuick
}

// LimitReached describes a turn at its limit.
type LimitReached struct {
	Size    Size
	Reason  string // "rounds" or "time"
	Rounds  int
	Calls   int
	Elapsed time.Duration
}

// LimitChoice is the user's answer at a limit.
type LimitChoice int

// The choices at a limit.
const (
	LimitSummarize LimitChoice = iota // stop calling tools and answer
	LimitContinue                     // another budget of the same size
	LimitAbort                        // stop now, without an answer
)
