package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/domo-agent/domo/host/llm"
)

// history is the conversation so far: a summary of condensed turns and the
// turns kept whole, each a user message and what followed it.
type history struct {
	summary string
	turns   [][]llm.Message
}

func (h *history) add(msgs []llm.Message) {
	if len(msgs) > 0 {
		h.turns = append(h.turns, msgs)
	}
}

func (h *history) messages() []llm.Message {
	var out []llm.Message
	for _, t := range h.turns {
		out = append(out, t...)
	}
	return out
}

// Usage counts one turn's tokens.
type Usage struct {
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	Requests         int  `json:"requests"`
	Estimated        bool `json:"estimated"` // some counts are estimates
}

func (u *Usage) add(v llm.Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.Requests++
	u.Estimated = u.Estimated || v.Estimated
}

// Usage returns each turn's usage in this conversation and their total.
func (a *Agent) Usage() ([]Usage, Usage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var total Usage
	for _, u := range a.usage {
		total.PromptTokens += u.PromptTokens
		total.CompletionTokens += u.CompletionTokens
		total.Requests += u.Requests
		total.Estimated = total.Estimated || u.Estimated
	}
	return append([]Usage(nil), a.usage...), total
}

// The share of the context window the conversation may fill before the
// oldest turns are condensed, and what is left for the answer.
const (
	condenseAt  = 0.75
	keepTurns   = 2 // the newest turns are never condensed
	resultShare = 4 // one tool result may fill at most 1/resultShare of the window
)

func messageTokens(m llm.Message) int {
	n := 4 + llm.EstimateTokens(m.Content)
	for _, c := range m.ToolCalls {
		n += 8 + llm.EstimateTokens(c.Name) + llm.EstimateTokens(c.Arguments)
	}
	return n
}

func toolTokens(tools []llm.Tool) int {
	n := 0
	for _, t := range tools {
		n += 8 + llm.EstimateTokens(t.Name) + llm.EstimateTokens(t.Description) + llm.EstimateTokens(string(t.Parameters))
	}
	return n
}

// prepare returns the messages of the next request: the system prompt, the
// history and the current turn. When they near the context window, the
// oldest turns are condensed into the summary first, never dropped.
func (a *Agent) prepare(ctx context.Context, t *turn, tools bool, specs []llm.Tool) []llm.Message {
	window := a.opts.Model.ContextSize(ctx)
	budget := int(float64(window) * condenseAt)
	a.mu.Lock()
	defer a.mu.Unlock()
	size := func() int {
		n := llm.EstimateTokens(a.systemPrompt(tools, t.memory)) + toolTokens(specs)
		for _, m := range a.history.messages() {
			n += messageTokens(m)
		}
		for _, m := range t.msgs {
			n += messageTokens(m)
		}
		return n
	}
	if size() > budget && len(a.history.turns) > keepTurns {
		a.condense(ctx, t, budget, size)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: a.systemPrompt(tools, t.memory)}}
	msgs = append(msgs, a.history.messages()...)
	return append(msgs, t.msgs...)
}

// condense folds the oldest turns into the summary until the conversation
// fits the budget or only the newest turns are left. The model writes the
// summary; if it cannot, a plain digest of the turns is kept instead, so
// nothing vanishes without a trace. Called with a.mu held.
func (a *Agent) condense(ctx context.Context, t *turn, budget int, size func() int) {
	var old [][]llm.Message
	for size() > budget && len(a.history.turns) > keepTurns {
		old = append(old, a.history.turns[0])
		a.history.turns = a.history.turns[1:]
	}
	if len(old) == 0 {
		return
	}
	var transcript strings.Builder
	for _, turn := range old {
		for _, m := range turn {
			transcript.WriteString(transcriptLine(m, 600))
		}
	}
	summary := ""
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	resp, err := a.opts.Model.Chat(ctx, llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You condense conversations. Write a brief summary of the excerpt below for your own later use: the user's requests, facts and preferences they stated, decisions made, files or things touched, results found, and anything left open. Plain sentences, no preamble."},
			{Role: llm.RoleUser, Content: clipText(a.history.summary+"\n"+transcript.String(), budget*2)},
		},
		MaxTokens: 600,
	}, nil)
	if err == nil {
		t.add(resp.Usage)
		summary = strings.TrimSpace(resp.Message.Content)
	}
	if summary == "" {
		summary = clipText(transcript.String(), 4000)
	}
	if a.history.summary != "" && err != nil {
		summary = a.history.summary + "\n" + summary
	}
	a.history.summary = summary
	if t.ev.Notice != nil {
		t.ev.Notice(fmt.Sprintf("condensed %d earlier turn(s) into a summary to stay within the model's context", len(old)))
	}
}

func transcriptLine(m llm.Message, n int) string {
	switch {
	case m.Role == llm.RoleTool:
		return "tool result: " + clipText(m.Content, n) + "\n"
	case len(m.ToolCalls) > 0:
		var calls []string
		for _, c := range m.ToolCalls {
			calls = append(calls, c.Name+" "+clipText(c.Arguments, 200))
		}
		return "assistant called: " + strings.Join(calls, "; ") + "\n"
	}
	return string(m.Role) + ": " + clipText(m.Content, n) + "\n"
}

// clip bounds one tool result to a share of the context window.
func (a *Agent) clip(ctx context.Context, s string) string {
	return clipText(s, a.opts.Model.ContextSize(ctx)*4/resultShare)
}

// clipText keeps the first n bytes of s (on a rune boundary) and says how
// much was cut.
func clipText(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes cut; ask for a smaller part if you need them]", len(s)-cut)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
