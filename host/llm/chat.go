package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
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
	params, err := c.buildParams(model, req, schema)
	if err != nil {
		return Response{}, err
	}
	if sink == nil {
		return c.complete(ctx, model, params, req)
	}
	return c.stream(ctx, model, params, req, sink)
}

// complete makes one non-streamed request.
func (c *Client) complete(ctx context.Context, model string, params openai.ChatCompletionNewParams, req Request) (Response, error) {
	start := time.Now()
	var cp capture
	cc, err := c.chat.New(ctx, params, cp.option())
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

// buildParams turns req into the SDK's request. schema selects
// response_format json_schema over json_object when req has a JSONSchema.
func (c *Client) buildParams(model string, req Request, schema bool) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: model}
	msgs := req.Messages
	if len(req.JSONSchema) > 0 {
		var s map[string]any
		if err := json.Unmarshal(req.JSONSchema, &s); err != nil {
			return p, fmt.Errorf("JSON schema of the request: %w", err)
		}
		if schema {
			p.ResponseFormat.OfJSONSchema = &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: s},
			}
		} else {
			p.ResponseFormat.OfJSONObject = &openai.ResponseFormatJSONObjectParam{}
			msgs = withSchemaPrompt(msgs, req.JSONSchema)
		}
	}
	var err error
	if p.Messages, err = toParams(msgs); err != nil {
		return p, err
	}
	for _, t := range req.Tools {
		fn, err := c.function(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	switch req.ToolChoice {
	case "":
	case "auto", "none", "required":
		p.ToolChoice.OfAuto = openai.String(req.ToolChoice)
	default:
		return p, fmt.Errorf("tool choice %q: want auto, none or required", req.ToolChoice)
	}
	if req.MaxTokens > 0 {
		// max_tokens rather than max_completion_tokens: every local server
		// reads it, not all read the newer name.
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	return p, nil
}

// withSchemaPrompt tells the model the schema json_object mode cannot
// enforce, in the system prompt.
func withSchemaPrompt(msgs []Message, schema json.RawMessage) []Message {
	note := "Answer with one JSON object matching this JSON Schema, and nothing else:\n" + string(schema)
	out := append([]Message(nil), msgs...)
	if len(out) > 0 && out[0].Role == RoleSystem {
		out[0].Content += "\n\n" + note
		return out
	}
	return append([]Message{{Role: RoleSystem, Content: note}}, out...)
}

// toParams converts messages; reasoning is never sent back.
func toParams(msgs []Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem:
			out = append(out, openai.SystemMessage(m.Content))
		case RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case RoleTool:
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			// Always a string, even empty: some chat templates fail on a
			// null content next to tool calls.
			a.Content.OfString = openai.String(m.Content)
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// function returns the tool's definition for a request, converted once
// per name, description and schema: a conversation sends the same tools
// with every request.
func (c *Client) function(t Tool) (openai.FunctionDefinitionParam, error) {
	key := t.Name + "\x00" + t.Description + "\x00" + string(t.Parameters)
	if fn, ok := c.functions.Load(key); ok {
		return fn.(openai.FunctionDefinitionParam), nil
	}
	fn, err := toFunction(t)
	if err == nil && c.functionCount.Add(1) <= maxCachedFunctions {
		c.functions.Store(key, fn)
	}
	return fn, err
}

// maxCachedFunctions bounds the cache of converted tools.
const maxCachedFunctions = 4096

// toFunction converts a tool. The schema's top-level members stay JSON
// text, so each request copies them instead of encoding a tree of maps.
func toFunction(t Tool) (openai.FunctionDefinitionParam, error) {
	fn := openai.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	var members map[string]json.RawMessage
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		if err := json.Unmarshal(t.Parameters, &members); err != nil {
			return fn, fmt.Errorf("tool %s: parameters: %w", t.Name, err)
		}
	}
	params := openai.FunctionParameters{}
	for k, v := range members {
		params[k] = v
	}
	typ, hasType := members["type"]
	if !hasType {
		params["type"] = json.RawMessage(`"object"`)
	}
	if _, ok := members["properties"]; !ok && (!hasType || string(typ) == `"object"`) {
		// Some servers' tool templates iterate properties unguarded.
		params["properties"] = json.RawMessage(`{}`)
	}
	fn.Parameters = params
	return fn, nil
}
