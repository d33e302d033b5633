package llm

import (
	"encoding/json"
	"fmt"
)

// The request body is encoded here rather than by the SDK: its params types
// marshal through reflection over every field of every message and tool,
// which was most of the host's time per turn once a chat had some history.
// The SDK still sends the bytes, retries them and parses the answer.

// chatBody is the body of POST /chat/completions.
type chatBody struct {
	// Stream comes first: the SDK sets it again on streamed requests, and
	// finds it here without scanning the whole body.
	Stream         bool            `json:"stream,omitempty"`
	Model          string          `json:"model"`
	Messages       []wireMessage   `json:"messages"`
	ToolChoice     string          `json:"tool_choice,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	Temperature    *float64        `json:"temperature,omitempty"`
	StreamOptions  *streamOptions  `json:"stream_options,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	// The tools are spliced in by encodeRequest after the rest: they are
	// encoded once, and json.Marshal would check and copy them again.
}

type wireMessage struct {
	Role Role `json:"role"`
	// Content is always a string, even empty: some chat templates fail on
	// a null content next to tool calls.
	Content    string         `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string        `json:"tool_call_id,omitempty"` // set for every tool message
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string      `json:"type"` // "function"
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string                     `json:"name"`
	Description string                     `json:"description,omitempty"`
	Parameters  map[string]json.RawMessage `json:"parameters"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type       string      `json:"type"` // "json_schema" or "json_object"
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// encodeRequest returns the body of req. schema selects response_format
// json_schema over json_object when req has a JSONSchema.
func (c *Client) encodeRequest(model string, req Request, schema, stream bool) ([]byte, error) {
	body := chatBody{Model: model, Stream: stream}
	if stream {
		body.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	msgs := req.Messages
	if len(req.JSONSchema) > 0 {
		var s map[string]json.RawMessage
		if err := json.Unmarshal(req.JSONSchema, &s); err != nil {
			return nil, fmt.Errorf("JSON schema of the request: %w", err)
		}
		if schema {
			body.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchema{Name: "answer", Schema: req.JSONSchema}}
		} else {
			body.ResponseFormat = &responseFormat{Type: "json_object"}
			msgs = withSchemaPrompt(msgs, req.JSONSchema)
		}
	}
	var err error
	if body.Messages, err = toWire(msgs); err != nil {
		return nil, err
	}
	tools := make([]json.RawMessage, len(req.Tools))
	size := 0
	for i, t := range req.Tools {
		if tools[i], err = c.tool(t); err != nil {
			return nil, err
		}
		size += len(tools[i]) + 1
	}
	switch req.ToolChoice {
	case "", "auto", "none", "required":
		body.ToolChoice = req.ToolChoice
	default:
		return nil, fmt.Errorf("tool choice %q: want auto, none or required", req.ToolChoice)
	}
	// max_tokens rather than max_completion_tokens: every local server reads
	// it, not all read the newer name.
	body.MaxTokens = max(req.MaxTokens, 0)
	body.Temperature = req.Temperature
	b, err := json.Marshal(body)
	if err != nil || len(tools) == 0 {
		return b, err
	}
	out := make([]byte, 0, len(b)+len(`,"tools":[]`)+size)
	out = append(out, b[:len(b)-1]...) // the body's closing brace
	out = append(out, `,"tools":[`...)
	for i, t := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, t...)
	}
	return append(out, "]}"...), nil
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

// toWire converts messages; reasoning is never sent back. The result
// points into msgs.
func toWire(msgs []Message) ([]wireMessage, error) {
	out := make([]wireMessage, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		w := &out[i]
		w.Role, w.Content = m.Role, m.Content
		switch m.Role {
		case RoleSystem, RoleUser:
		case RoleTool:
			w.ToolCallID = &m.ToolCallID
		case RoleAssistant:
			if len(m.ToolCalls) > 0 {
				w.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
			}
			for j, tc := range m.ToolCalls {
				args := tc.Arguments
				if args == "" {
					args = "{}"
				}
				w.ToolCalls[j] = wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}}
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// tool returns the tool's encoded definition, encoded once per name,
// description and schema: a conversation sends the same tools with every
// request.
func (c *Client) tool(t Tool) (json.RawMessage, error) {
	key := t.Name + "\x00" + t.Description + "\x00" + string(t.Parameters)
	if b, ok := c.tools.Load(key); ok {
		return b.(json.RawMessage), nil
	}
	b, err := encodeTool(t)
	if err == nil && c.toolCount.Add(1) <= maxCachedTools {
		c.tools.Store(key, b)
	}
	return b, err
}

// maxCachedTools bounds the cache of encoded tools.
const maxCachedTools = 4096

// encodeTool encodes a tool, filling in what some servers need of its
// schema.
func encodeTool(t Tool) (json.RawMessage, error) {
	var params map[string]json.RawMessage
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		if err := json.Unmarshal(t.Parameters, &params); err != nil {
			return nil, fmt.Errorf("tool %s: parameters: %w", t.Name, err)
		}
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	typ, hasType := params["type"]
	if !hasType {
		params["type"] = json.RawMessage(`"object"`)
	}
	if _, ok := params["properties"]; !ok && (!hasType || string(typ) == `"object"`) {
		// Some servers' tool templates iterate properties unguarded.
		params["properties"] = json.RawMessage(`{}`)
	}
	return json.Marshal(wireTool{Type: "function", Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: params}})
}
