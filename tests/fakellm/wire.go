package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

// The wire shapes of OpenAI's chat.completion and chat.completion.chunk.

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"` // chunks only
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type wireChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage,omitempty"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage,omitempty"`
}

var completionSeq atomic.Int64

func completionID() string { return fmt.Sprintf("chatcmpl-fake%d", completionSeq.Add(1)) }

func modelOf(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return DefaultModel
}

func finishReason(r Reply) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func usageOf(u *Usage) *wireUsage {
	if u == nil {
		return nil
	}
	return &wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
}

// completion is the non-streamed answer.
func completion(req Request, r Reply) wireCompletion {
	msg := wireMessage{Role: "assistant", ReasoningContent: r.Reasoning}
	if r.Content != "" || len(r.ToolCalls) == 0 {
		msg.Content = &r.Content
	}
	for _, c := range r.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
	}
	return wireCompletion{
		ID:      completionID(),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   modelOf(req),
		Choices: []wireChoice{{Message: msg, FinishReason: finishReason(r)}},
		Usage:   usageOf(r.Usage),
	}
}

// pieces cuts s into runs of n runes.
func pieces(s string, n int) []string {
	if n <= 0 {
		n = 4
	}
	var out []string
	rs := []rune(s)
	for len(rs) > 0 {
		k := min(n, len(rs))
		out = append(out, string(rs[:k]))
		rs = rs[k:]
	}
	return out
}

// stream answers with server-sent events, one chunk per event, then
// `data: [DONE]`.
func stream(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	base := wireChunk{ID: completionID(), Object: "chat.completion.chunk", Created: time.Now().Unix(), Model: modelOf(req)}
	sent := 0
	send := func(c wireChunk) bool {
		if sent > 0 && !wait(r, reply.ChunkDelay) {
			return false
		}
		sent++
		b, err := json.Marshal(c)
		if err != nil {
			panic(err) // the wire types always marshal
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	delta := func(d wireDelta) bool {
		c := base
		c.Choices = []wireChunkChoice{{Delta: d}}
		return send(c)
	}

	empty := ""
	if !delta(wireDelta{Role: "assistant", Content: &empty}) {
		return
	}
	for _, p := range pieces(reply.Reasoning, reply.ChunkSize) {
		if !delta(wireDelta{ReasoningContent: &p}) {
			return
		}
	}
	for _, p := range pieces(reply.Content, reply.ChunkSize) {
		if !delta(wireDelta{Content: &p}) {
			return
		}
	}
	if reply.ToolCallsInOneChunk && len(reply.ToolCalls) > 0 {
		var calls []wireToolCall
		for i, c := range reply.ToolCalls {
			calls = append(calls, wireToolCall{Index: &i, ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments}})
		}
		if !delta(wireDelta{ToolCalls: calls}) {
			return
		}
	} else {
		for i, c := range reply.ToolCalls {
			first := wireToolCall{Index: &i, ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name}}
			if !delta(wireDelta{ToolCalls: []wireToolCall{first}}) {
				return
			}
			for _, p := range pieces(c.Arguments, reply.ChunkSize) {
				if !delta(wireDelta{ToolCalls: []wireToolCall{{Index: &i, Function: wireFunction{Arguments: p}}}}) {
					return
				}
			}
		}
	}
	fin := finishReason(reply)
	last := base
	last.Choices = []wireChunkChoice{{FinishReason: &fin}}
	if !send(last) {
		return
	}
	if req.IncludeUsage && reply.Usage != nil {
		u := base
		u.Choices = []wireChunkChoice{}
		u.Usage = usageOf(reply.Usage)
		if !send(u) {
			return
		}
	}
	if _, err := fmt.Fprint(w, "data: [DONE]\n\n"); err == nil {
		_ = rc.Flush()
	}
}
