package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
)

// errNoFirstByte is the cause a stream is cancelled with when its first
// chunk is late.
var errNoFirstByte = errors.New("no first chunk in time")

// stream makes one streamed request, feeding sink as chunks arrive.
func (c *Client) stream(ctx context.Context, model string, body []byte, req Request, sink *Sink) (Response, error) {
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	late := time.AfterFunc(c.firstByte, func() { cancel(errNoFirstByte) })
	defer late.Stop()

	var cp capture
	st := c.chat.NewStreaming(sctx, openai.ChatCompletionNewParams{}, withBody(body), cp.option())
	defer st.Close()

	var (
		acc     openai.ChatCompletionAccumulator
		idx     toolIndexer
		b       = newReplyBuilder(req, sink)
		usage   *openai.CompletionUsage
		first   time.Duration
		finish  string
		chunked bool
	)
	for st.Next() {
		if !chunked {
			late.Stop()
			chunked = true
		}
		chunk := st.Current()
		if acc.ID != "" {
			// Some servers number every chunk anew; the accumulator would
			// refuse all but the first.
			chunk.ID = acc.ID
		}
		idx.fix(&chunk)
		acc.AddChunk(chunk)
		if chunk.JSON.Usage.Valid() && chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
			u := chunk.Usage
			usage = &u
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			r := extraString(ch.Delta.JSON.ExtraFields)
			if first == 0 && (r != "" || ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0) {
				first = time.Since(start)
			}
			b.reasoning(r)
			b.content(ch.Delta.Content)
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := st.Err(); err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(sctx), errNoFirstByte) {
			return Response{}, fmt.Errorf("no reply from %s within %s: the model may still be loading; try again, or raise llm.timeout: %w", c.baseURL, c.firstByte, context.DeadlineExceeded)
		}
		return Response{}, c.explain(ctx, err, &cp, model)
	}

	var native []ToolCall
	if len(acc.Choices) > 0 {
		for _, tc := range acc.Choices[0].Message.ToolCalls {
			native = append(native, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
	}
	resp := Response{Message: b.finish(native), FinishReason: finish, FirstToken: first}
	c.numberCalls(resp.Message.ToolCalls)
	if usage != nil {
		resp.Usage = Usage{PromptTokens: int(usage.PromptTokens), CompletionTokens: int(usage.CompletionTokens)}
	} else {
		resp.Usage = estimateUsage(req, resp.Message)
	}
	return resp, nil
}

// toolIndexer repairs tool-call indexes before accumulation: servers that
// omit the index, or send two calls under one index, would otherwise have
// their calls glued together.
type toolIndexer struct {
	ids map[int64]string
	n   int64 // calls seen
}

func (x *toolIndexer) fix(chunk *openai.ChatCompletionChunk) {
	for i := range chunk.Choices {
		if chunk.Choices[i].Index != 0 {
			continue
		}
		for j := range chunk.Choices[i].Delta.ToolCalls {
			tc := &chunk.Choices[i].Delta.ToolCalls[j]
			switch {
			case !tc.JSON.Index.Valid():
				switch {
				case tc.ID != "" && (x.n == 0 || x.ids[x.n-1] != tc.ID), tc.ID == "" && tc.Function.Name != "":
					tc.Index = x.n
				default:
					tc.Index = max(x.n-1, 0)
				}
			case tc.ID != "" && x.ids[tc.Index] != "" && x.ids[tc.Index] != tc.ID:
				tc.Index = x.n
			}
			if tc.ID != "" {
				if x.ids == nil {
					x.ids = map[int64]string{}
				}
				x.ids[tc.Index] = tc.ID
			}
			x.n = max(x.n, tc.Index+1)
		}
	}
}

// extraString reads the reasoning a server sends beside the content:
// reasoning_content (llama.cpp, vLLM, LM Studio) or reasoning (Ollama). Only
// the first is taken when a server sends both.
func extraString(fields map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := fields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// replyBuilder assembles an answer from its pieces, streamed or whole:
// reasoning goes apart, a leading <think> block is reasoning too, and text
// tool calls are cut out of the content when the request has tools.
type replyBuilder struct {
	sink    *Sink
	think   thinkSplitter
	calls   *callScanner // nil without tools
	reason  strings.Builder
	visible strings.Builder
}

func newReplyBuilder(req Request, sink *Sink) *replyBuilder {
	b := &replyBuilder{sink: sink}
	if len(req.Tools) > 0 {
		names := make(map[string]bool, len(req.Tools))
		for _, t := range req.Tools {
			names[t.Name] = true
		}
		b.calls = newCallScanner(func(n string) bool { return names[n] }, b.emit)
	}
	return b
}

func (b *replyBuilder) reasoning(s string) {
	if s == "" {
		return
	}
	b.reason.WriteString(s)
	if b.sink != nil && b.sink.Reasoning != nil {
		b.sink.Reasoning(s)
	}
}

func (b *replyBuilder) content(s string) {
	if s != "" {
		b.think.feed(s, b.reasoning, b.text)
	}
}

// text takes visible content, past any <think> block.
func (b *replyBuilder) text(s string) {
	b.visible.WriteString(s)
	if b.calls != nil {
		b.calls.feed(s)
		return
	}
	b.emit(s)
}

func (b *replyBuilder) emit(s string) {
	if s != "" && b.sink != nil && b.sink.Content != nil {
		b.sink.Content(s)
	}
}

// finish flushes what was held back and returns the message. Native tool
// calls win: with them, the content is kept as the model wrote it.
func (b *replyBuilder) finish(native []ToolCall) Message {
	b.think.finish(b.reasoning, b.text)
	m := Message{Role: RoleAssistant, Reasoning: b.reason.String()}
	if b.calls != nil {
		b.calls.finish()
	}
	switch {
	case len(native) > 0:
		m.Content, m.ToolCalls = b.visible.String(), native
	case b.calls != nil:
		m.Content, m.ToolCalls = b.calls.result()
	default:
		m.Content = b.visible.String()
	}
	return m
}
