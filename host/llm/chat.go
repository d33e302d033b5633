package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Chat sends req and returns the assistant's answer. With a sink the answer
// is streamed into it as it arrives; a nil sink makes one non-streamed
// request. Tool calls the model printed as text instead of sending natively
// come back as ToolCalls with FromText set. Cancelling ctx stops the request
// or stream at once and returns ctx's error.
func (c *Client) Chat(ctx context.Context, req Request, sink *Sink) (Response, error) {
	if len(req.Messages) == 0 {
		return Response{}, errors.New("chat request with no messages")
	}
	model, err := c.Model(ctx)
	if err != nil {
		return Response{}, err
	}
	schema := len(req.JSONSchema) > 0 && !c.noSchema.Load()
	resp, err := c.chatOnce(ctx, model, req, schema, sink)
	var he *HTTPError
	if schema && errors.As(err, &he) && he.StatusCode == http.StatusBadRequest {
		// Not every server constrains output to a schema (older Ollama and
		// llama.cpp builds); any JSON object, with the schema spelled out in
		// the prompt, is the next best thing.
		resp, err = c.chatOnce(ctx, model, req, false, sink)
		if err == nil {
			c.noSchema.Store(true)
		}
	}
	if err != nil {
		return Response{}, err
	}
	c.answered()
	return resp, nil
}

func (c *Client) chatOnce(ctx context.Context, model string, req Request, schema bool, sink *Sink) (Response, error) {
	body, err := c.encodeRequest(model, req, schema, sink != nil)
	if err != nil {
		return Response{}, err
	}
	if sink == nil {
		return c.complete(ctx, model, body, req)
	}
	return c.stream(ctx, model, body, req, sink)
}

// complete makes one non-streamed request.
func (c *Client) complete(ctx context.Context, model string, body []byte, req Request) (Response, error) {
	start := time.Now()
	var cp capture
	cc, err := c.chat.New(ctx, openai.ChatCompletionNewParams{}, withBody(body), cp.option())
	if err != nil {
		return Response{}, c.explain(ctx, err, &cp, model)
	}
	if len(cc.Choices) == 0 {
		return Response{}, fmt.Errorf("the LLM server at %s answered with no choices", c.baseURL)
	}
	ch := cc.Choices[0]
	b := newReplyBuilder(req, nil)
	b.reasoning(extraString(ch.Message.JSON.ExtraFields))
	b.content(ch.Message.Content)
	var native []ToolCall
	for _, tc := range ch.Message.ToolCalls {
		args := tc.Function.Arguments
		if raw := tc.Function.JSON.Arguments.Raw(); args == "" && len(raw) > 0 && raw[0] == '{' {
			args = raw // a server that sent the arguments as an object
		}
		native = append(native, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	resp := Response{Message: b.finish(native), FinishReason: ch.FinishReason, FirstToken: time.Since(start)}
	c.numberCalls(resp.Message.ToolCalls)
	if cc.JSON.Usage.Valid() && cc.Usage.PromptTokens+cc.Usage.CompletionTokens > 0 {
		resp.Usage = Usage{PromptTokens: int(cc.Usage.PromptTokens), CompletionTokens: int(cc.Usage.CompletionTokens)}
	} else {
		resp.Usage = estimateUsage(req, resp.Message)
	}
	return resp, nil
}

// withBody has the SDK send body, encoded by encodeRequest, instead of
// encoding its (here empty) params. A []byte body is kept as a buffer the
// SDK replays on every retry.
func withBody(body []byte) option.RequestOption {
	return option.WithRequestBody("application/json", body)
}

// numberCalls gives every call without a server ID, and every call printed
// as text, an ID unique for the client's life, so that the tool results of
// different turns are never confused.
func (c *Client) numberCalls(calls []ToolCall) {
	for i := range calls {
		if calls[i].ID == "" || calls[i].FromText {
			calls[i].ID = fmt.Sprintf("call_%d", c.callSeq.Add(1))
		}
		if calls[i].Arguments == "" {
			calls[i].Arguments = "{}"
		}
	}
}
