package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/domo-agent/domo/tests/fakellm"
)

// TestEncodeRequestMatchesSDK proves that the hand-encoded body says what
// the SDK's params said, as sent: both go through the SDK up to the
// transport, where a middleware takes the body.
func TestEncodeRequestMatchesSDK(t *testing.T) {
	temp := 0.2
	history := []Message{
		{Role: RoleSystem, Content: "You are <Domo> & friends."},
		{Role: RoleUser, Content: "list the files, then read one ünïcödé"},
		{Role: RoleAssistant, Reasoning: "I should list first.", ToolCalls: []ToolCall{
			{ID: "call_1", Name: "list_directory", Arguments: `{"path":"/tmp"}`},
			{ID: "call_2", Name: "read_file"},
		}},
		{Role: RoleTool, ToolCallID: "call_1", Content: "a.txt\nb.txt"},
		{Role: RoleTool, Content: "orphan result"},
		{Role: RoleAssistant, Content: "", Reasoning: "done"},
		{Role: RoleUser, Content: `quote " and \ and a tab	here`},
	}
	tools := append([]Tool{
		{Name: "no_desc", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":10}}}`)},
		{Name: "odd", Description: "not an object", Parameters: json.RawMessage(`{"type":"string"}`)},
		{Name: "empty", Description: "no schema", Parameters: json.RawMessage(`null`)},
	}, testTools...)
	schema := json.RawMessage(`{"type":"object","properties":{"route":{"enum":["chat","tools"]},"n":{"type":"number","minimum":0.5}},"required":["route"]}`)
	tests := []struct {
		name   string
		req    Request
		schema bool
		stream bool
	}{
		{name: "one question", req: Request{Messages: userAsks("hi")}},
		{name: "one question streamed", req: Request{Messages: userAsks("hi")}, stream: true},
		{name: "tools and history streamed", stream: true, req: Request{
			Messages: history, Tools: tools, ToolChoice: "auto", MaxTokens: 512, Temperature: &temp,
		}},
		{name: "tools required", req: Request{Messages: history, Tools: tools, ToolChoice: "required"}},
		{name: "zero temperature, negative max", req: Request{Messages: history, Temperature: new(float64), MaxTokens: -1}},
		{name: "json schema", schema: true, req: Request{Messages: history, JSONSchema: schema, ToolChoice: "none"}},
		{name: "json object streamed", stream: true, req: Request{Messages: history, JSONSchema: schema}},
		{name: "json object without system prompt", req: Request{Messages: history[1:], JSONSchema: schema}},
	}
	c := newClient(t, "http://127.0.0.1:1/v1", Config{Model: "m", MaxRetries: -1})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params, err := sdkParams("m", tt.req, tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			if tt.stream {
				params.StreamOptions.IncludeUsage = openai.Bool(true)
			}
			want := sent(t, c, tt.stream, params)
			body, err := c.encodeRequest("m", tt.req, tt.schema, tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			got := sent(t, c, tt.stream, openai.ChatCompletionNewParams{}, withBody(body))
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("body =\n%s\nthe SDK's =\n%s", g, w)
			}
		})
	}
}

var errTaken = errors.New("body taken")

// sent returns the body the SDK sends for params and opts, decoded.
func sent(t *testing.T, c *Client, stream bool, params openai.ChatCompletionNewParams, opts ...option.RequestOption) any {
	t.Helper()
	var b []byte
	opts = append(opts, option.WithMiddleware(func(req *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
		b, _ = io.ReadAll(req.Body)
		return nil, errTaken
	}))
	var err error
	if stream {
		st := c.chat.NewStreaming(t.Context(), params, opts...)
		err = st.Err()
		st.Close()
	} else {
		_, err = c.chat.New(t.Context(), params, opts...)
	}
	if !errors.Is(err, errTaken) {
		t.Fatalf("sending: %v", err)
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return v
}

func TestRetrySendsTheSameBody(t *testing.T) {
	srv := fakellm.New(t,
		fakellm.Step{Reply: fakellm.Reply{Status: 503, ErrorMessage: "loading"}},
		fakellm.Step{Reply: fakellm.Reply{Content: "there you go"}},
		fakellm.Step{Reply: fakellm.Reply{Status: 503, ErrorMessage: "loading"}},
		fakellm.Step{Reply: fakellm.Reply{Content: "there you go"}},
	)
	c := newClient(t, srv.URL, Config{MaxRetries: 1})
	req := Request{Messages: userAsks("hi"), Tools: testTools}
	for _, sink := range []*Sink{nil, {}} {
		if _, err := c.Chat(t.Context(), req, sink); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i := 0; i < 4; i += 2 {
		if len(reqs[i].Body) == 0 || !bytes.Equal(reqs[i].Body, reqs[i+1].Body) {
			t.Errorf("retried body %s, first %s", reqs[i+1].Body, reqs[i].Body)
		}
	}
}

// sdkParams is how requests were built with the SDK's params before the
// body was encoded by hand; TestEncodeRequestMatchesSDK holds the two
// together.
func sdkParams(model string, req Request, schema bool) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: model}
	msgs := req.Messages
	if len(req.JSONSchema) > 0 {
		var s map[string]any
		if err := json.Unmarshal(req.JSONSchema, &s); err != nil {
			return p, err
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
	for _, m := range msgs {
		switch m.Role {
		case RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Content, m.ToolCallID))
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
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
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	for _, t := range req.Tools {
		fn := openai.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		var members map[string]json.RawMessage
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			if err := json.Unmarshal(t.Parameters, &members); err != nil {
				return p, err
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
			params["properties"] = json.RawMessage(`{}`)
		}
		fn.Parameters = params
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if req.ToolChoice != "" {
		p.ToolChoice.OfAuto = openai.String(req.ToolChoice)
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	return p, nil
}
