package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/tests/fakellm"
)

func newClient(t *testing.T, baseURL string, cfg Config) *Client {
	t.Helper()
	cfg.BaseURL = baseURL
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder is a Sink that keeps what it receives.
type recorder struct {
	content, reasoning []string
}

func (r *recorder) sink() *Sink {
	return &Sink{
		Content:   func(s string) { r.content = append(r.content, s) },
		Reasoning: func(s string) { r.reasoning = append(r.reasoning, s) },
	}
}

func userAsks(q string) []Message { return []Message{{Role: RoleUser, Content: q}} }

var testTools = []Tool{
	{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "list_directory", Description: "List a directory"},
}

func TestChatStreamsContentInOrder(t *testing.T) {
	const answer = "The quick brown fox jumps over the lazy dog. ünïcödé too."
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: answer, ChunkSize: 3}})
	c := newClient(t, srv.URL, Config{})
	var rec recorder
	resp, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, rec.sink())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.content) < 10 || strings.Join(rec.content, "") != answer {
		t.Errorf("sink got %d pieces %q, want the answer in many pieces", len(rec.content), rec.content)
	}
	if resp.Message.Content != answer || resp.Message.Role != RoleAssistant || resp.FinishReason != "stop" {
		t.Errorf("response = %+v", resp)
	}
	if resp.FirstToken <= 0 {
		t.Errorf("FirstToken = %v, want it measured", resp.FirstToken)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Stream || !reqs[0].IncludeUsage || reqs[0].Model != fakellm.DefaultModel {
		t.Errorf("requests = %+v, want one stream asking for usage, of the listed model", reqs)
	}
}

func TestChatReasoning(t *testing.T) {
	tests := []struct {
		name   string
		reply  fakellm.Reply
		stream bool
	}{
		{name: "reasoning_content streamed", reply: fakellm.Reply{Reasoning: "Think of a greeting.", Content: "Hello!"}, stream: true},
		{name: "reasoning_content whole", reply: fakellm.Reply{Reasoning: "Think of a greeting.", Content: "Hello!"}},
		{name: "think tags streamed", reply: fakellm.Reply{Content: "<think>Think of a greeting.</think>\n\nHello!", ChunkSize: 2}, stream: true},
		{name: "think tags whole", reply: fakellm.Reply{Content: "\n<think>Think of a greeting.</think>\n\nHello!"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(t, fakellm.Step{Reply: tt.reply})
			c := newClient(t, srv.URL, Config{})
			var rec recorder
			var sink *Sink
			if tt.stream {
				sink = rec.sink()
			}
			resp, err := c.Chat(t.Context(), Request{Messages: userAsks("greet me")}, sink)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "Hello!" || resp.Message.Reasoning != "Think of a greeting." {
				t.Errorf("message = %q, reasoning %q", resp.Message.Content, resp.Message.Reasoning)
			}
			if tt.stream {
				if got := strings.Join(rec.content, ""); got != "Hello!" {
					t.Errorf("sink content = %q", got)
				}
				if got := strings.Join(rec.reasoning, ""); got != "Think of a greeting." {
					t.Errorf("sink reasoning = %q", got)
				}
			}
		})
	}
}

func TestChatNativeToolCalls(t *testing.T) {
	one := []fakellm.Call{{ID: "call_a", Name: "read_file", Arguments: `{"path":"/etc/hosts"}`}}
	two := []fakellm.Call{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"/a"}`},
		{ID: "call_b", Name: "list_directory", Arguments: `{"path":"/b"}`},
	}
	tests := []struct {
		name   string
		reply  fakellm.Reply
		stream bool
		want   string // callsString
		ids    []string
	}{
		{name: "one streamed", reply: fakellm.Reply{ToolCalls: one, ChunkSize: 3}, stream: true, want: `read_file{"path":"/etc/hosts"}`, ids: []string{"call_a"}},
		{name: "two streamed", reply: fakellm.Reply{ToolCalls: two}, stream: true, want: `read_file{"path":"/a"} list_directory{"path":"/b"}`, ids: []string{"call_a", "call_b"}},
		{name: "two in one chunk", reply: fakellm.Reply{ToolCalls: two, ToolCallsInOneChunk: true}, stream: true, want: `read_file{"path":"/a"} list_directory{"path":"/b"}`, ids: []string{"call_a", "call_b"}},
		{name: "two whole", reply: fakellm.Reply{ToolCalls: two}, want: `read_file{"path":"/a"} list_directory{"path":"/b"}`, ids: []string{"call_a", "call_b"}},
		{name: "no id, no arguments", reply: fakellm.Reply{ToolCalls: []fakellm.Call{{Name: "list_directory"}}}, stream: true, want: `list_directory{}`, ids: []string{"call_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(t, fakellm.Step{Reply: tt.reply})
			c := newClient(t, srv.URL, Config{})
			var rec recorder
			var sink *Sink
			if tt.stream {
				sink = rec.sink()
			}
			resp, err := c.Chat(t.Context(), Request{Messages: userAsks("look"), Tools: testTools}, sink)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls
			if got := callsString(calls); got != tt.want {
				t.Errorf("calls = %s, want %s", got, tt.want)
			}
			for i, tc := range calls {
				if tc.FromText || i >= len(tt.ids) || tc.ID != tt.ids[i] {
					t.Errorf("call %d = %+v, want ID %v, not from text", i, tc, tt.ids)
				}
			}
			if resp.FinishReason != "tool_calls" || len(rec.content) != 0 {
				t.Errorf("finish %q, sink content %q", resp.FinishReason, rec.content)
			}
			if reqs := srv.Requests(); len(reqs) != 1 || strings.Join(reqs[0].Tools, " ") != "read_file list_directory" {
				t.Errorf("requests = %+v, want the tools sent", reqs)
			}
		})
	}
}

func TestChatTextToolCalls(t *testing.T) {
	tests := []struct {
		name, content string
		wantContent   string // the message's content
		wantCalls     string
		wantStreamed  string // what the sink shows
	}{
		{
			name:      "tagged",
			content:   `<tool_call>{"name": "read_file", "arguments": {"path": "/a"}}</tool_call>`,
			wantCalls: `read_file{"path":"/a"}`,
		},
		{
			name:      "fenced",
			content:   "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/a\"}}\n```",
			wantCalls: `read_file{"path":"/a"}`,
		},
		{
			name:      "bare with parameters",
			content:   `{"name": "read_file", "parameters": {"path": "/a"}}`,
			wantCalls: `read_file{"path":"/a"}`,
		},
		{
			name:      "arguments as a string",
			content:   `{"name": "read_file", "arguments": "{\"path\": \"/a\"}"}`,
			wantCalls: `read_file{"path":"/a"}`,
		},
		{
			name:         "prose before a tagged call is kept and streamed",
			content:      "I will read it now.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"/a\"}}\n</tool_call>",
			wantContent:  "I will read it now.",
			wantCalls:    `read_file{"path":"/a"}`,
			wantStreamed: "I will read it now.\n",
		},
		{
			name:         "unknown tool left as text",
			content:      `<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>`,
			wantContent:  `<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>`,
			wantStreamed: `<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>`,
		},
		{
			name:         "malformed left as text",
			content:      `{"name": "read_file", "arguments": {"path": "/a"`,
			wantContent:  `{"name": "read_file", "arguments": {"path": "/a"`,
			wantStreamed: `{"name": "read_file", "arguments": {"path": "/a"`,
		},
		{
			name:         "held back, then flushed as prose",
			content:      "{\"name\": \"read_file\", \"note\": \"not a call\"}\nAnd more prose.",
			wantContent:  "{\"name\": \"read_file\", \"note\": \"not a call\"}\nAnd more prose.",
			wantStreamed: "{\"name\": \"read_file\", \"note\": \"not a call\"}\nAnd more prose.",
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			name := tt.name
			if !stream {
				name += " (whole)"
			}
			t.Run(name, func(t *testing.T) {
				srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: tt.content, ChunkSize: 3}})
				c := newClient(t, srv.URL, Config{})
				var rec recorder
				var sink *Sink
				if stream {
					sink = rec.sink()
				}
				resp, err := c.Chat(t.Context(), Request{Messages: userAsks("read /a"), Tools: testTools}, sink)
				if err != nil {
					t.Fatal(err)
				}
				m := resp.Message
				if m.Content != tt.wantContent || callsString(m.ToolCalls) != tt.wantCalls {
					t.Errorf("message = %q %s, want %q %s", m.Content, callsString(m.ToolCalls), tt.wantContent, tt.wantCalls)
				}
				for _, tc := range m.ToolCalls {
					if !tc.FromText || !strings.HasPrefix(tc.ID, "call_") {
						t.Errorf("call = %+v, want FromText and a call_ ID", tc)
					}
				}
				if got := strings.Join(rec.content, ""); stream && got != tt.wantStreamed {
					t.Errorf("streamed %q, want %q", got, tt.wantStreamed)
				}
			})
		}
	}
}

func TestChatTextToolCallsNeedTools(t *testing.T) {
	const content = `<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: content}})
	c := newClient(t, srv.URL, Config{})
	var rec recorder
	resp, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, rec.sink())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != content || len(resp.Message.ToolCalls) != 0 || strings.Join(rec.content, "") != content {
		t.Errorf("without tools: %+v, streamed %q; want the content untouched", resp.Message, rec.content)
	}
}

func TestTextCallIDsAreUnique(t *testing.T) {
	reply := fakellm.Reply{Content: `<tool_call>{"name": "list_directory"}</tool_call>`}
	srv := fakellm.New(t, fakellm.Step{Reply: reply}, fakellm.Step{Reply: reply})
	c := newClient(t, srv.URL, Config{})
	seen := map[string]bool{}
	for range 2 {
		resp, err := c.Chat(t.Context(), Request{Messages: userAsks("ls"), Tools: testTools}, nil)
		if err != nil || len(resp.Message.ToolCalls) != 1 {
			t.Fatalf("Chat = %+v, %v", resp, err)
		}
		id := resp.Message.ToolCalls[0].ID
		if seen[id] {
			t.Errorf("ID %s given twice", id)
		}
		seen[id] = true
	}
}

func TestChatUsage(t *testing.T) {
	tests := []struct {
		name   string
		usage  *fakellm.Usage
		stream bool
	}{
		{name: "from the stream", usage: &fakellm.Usage{PromptTokens: 42, CompletionTokens: 7}, stream: true},
		{name: "from the answer", usage: &fakellm.Usage{PromptTokens: 42, CompletionTokens: 7}},
		{name: "estimated for a stream", stream: true},
		{name: "estimated for an answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "Twelve chars", Usage: tt.usage}})
			c := newClient(t, srv.URL, Config{})
			var sink *Sink
			if tt.stream {
				sink = &Sink{}
			}
			resp, err := c.Chat(t.Context(), Request{Messages: userAsks("count")}, sink)
			if err != nil {
				t.Fatal(err)
			}
			u := resp.Usage
			switch {
			case tt.usage != nil && (u != Usage{PromptTokens: 42, CompletionTokens: 7}):
				t.Errorf("usage = %+v, want the server's", u)
			case tt.usage == nil && (!u.Estimated || u.PromptTokens <= 0 || u.CompletionTokens != EstimateTokens("Twelve chars")):
				t.Errorf("usage = %+v, want an estimate", u)
			}
		})
	}
}

func TestChatHTTPErrors(t *testing.T) {
	tests := []struct {
		name     string
		steps    []fakellm.Step
		retries  int
		wantReqs int
		wantErr  []string
		status   int
	}{
		{
			name:     "500 retried, then fails with the message",
			steps:    []fakellm.Step{{Reply: fakellm.Reply{Status: 500, ErrorMessage: "out of memory"}}, {Reply: fakellm.Reply{Status: 500, ErrorMessage: "out of memory"}}},
			retries:  1,
			wantReqs: 2,
			wantErr:  []string{"500", "out of memory"},
			status:   500,
		},
		{
			name:     "400 not retried",
			steps:    []fakellm.Step{{Reply: fakellm.Reply{Status: 400, ErrorMessage: "the prompt is too long"}}},
			retries:  2,
			wantReqs: 1,
			wantErr:  []string{"400", "the prompt is too long"},
			status:   400,
		},
		{
			name:     "409 not retried either",
			steps:    []fakellm.Step{{Reply: fakellm.Reply{Status: 409, ErrorMessage: "busy"}}},
			retries:  2,
			wantReqs: 1,
			wantErr:  []string{"409", "busy"},
			status:   409,
		},
		{
			name:     "404 for the model",
			steps:    []fakellm.Step{{Reply: fakellm.Reply{Status: 404, ErrorMessage: `model "fake-model" not found, try pulling it first`}}},
			wantReqs: 1,
			wantErr:  []string{"404", "not found, try pulling", "/model", "ollama pull fake-model"},
			status:   404,
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.name, stream), func(t *testing.T) {
				srv := fakellm.New(t, tt.steps...)
				c := newClient(t, srv.URL, Config{MaxRetries: tt.retries})
				var sink *Sink
				if stream {
					sink = &Sink{}
				}
				_, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, sink)
				var he *HTTPError
				if !errors.As(err, &he) || he.StatusCode != tt.status {
					t.Fatalf("err = %v, want an HTTPError %d", err, tt.status)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if n := len(srv.Requests()); n != tt.wantReqs {
					t.Errorf("%d requests, want %d", n, tt.wantReqs)
				}
			})
		}
	}
}

func TestChatRetries429(t *testing.T) {
	srv := fakellm.New(t,
		fakellm.Step{Reply: fakellm.Reply{Status: 429, ErrorMessage: "slow down"}},
		fakellm.Step{Reply: fakellm.Reply{Content: "there you go"}},
	)
	c := newClient(t, srv.URL, Config{MaxRetries: 1})
	resp, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, &Sink{})
	if err != nil || resp.Message.Content != "there you go" || len(srv.Requests()) != 2 {
		t.Errorf("Chat = %q, %v after %d requests; want the retry's answer", resp.Message.Content, err, len(srv.Requests()))
	}
}

func TestChatJSONSchemaFallsBackToJSONObject(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"route":{"enum":["chat","lookup","tools"]}},"required":["route"]}`)
	srv := fakellm.New(t,
		fakellm.Step{
			Match: func(r fakellm.Request) bool { return r.ResponseFormat == "json_schema" },
			Reply: fakellm.Reply{Status: 400, ErrorMessage: "response_format json_schema is not supported"},
		},
		fakellm.Step{
			Match: func(r fakellm.Request) bool { return r.ResponseFormat == "json_object" },
			Reply: fakellm.Reply{Content: `{"route":"lookup"}`},
		},
	)
	c := newClient(t, srv.URL, Config{})
	req := Request{Messages: []Message{{Role: RoleSystem, Content: "Route the message."}, {Role: RoleUser, Content: "news?"}}, JSONSchema: schema}
	resp, err := c.Chat(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != `{"route":"lookup"}` {
		t.Errorf("content = %q", resp.Message.Content)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Messages[0].Content, `"required":["route"]`) || len(reqs[1].Messages) != 2 {
		t.Errorf("fallback request = %+v, want the schema in the system prompt", reqs[len(reqs)-1])
	}
	if !bytes.Contains(reqs[0].Body, []byte(`"enum":["chat","lookup","tools"]`)) {
		t.Errorf("first request %s does not carry the schema", reqs[0].Body)
	}

	// The server's refusal is remembered.
	srv.Push(fakellm.Step{
		Match: func(r fakellm.Request) bool { return r.ResponseFormat == "json_object" },
		Reply: fakellm.Reply{Content: `{"route":"chat"}`},
	})
	if _, err := c.Chat(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
}

func TestChatSendsMessagesAndTools(t *testing.T) {
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "It says hello."}})
	c := newClient(t, srv.URL, Config{})
	temp := 0.2
	req := Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "Be brief."},
			{Role: RoleUser, Content: "What is in /a?"},
			{Role: RoleAssistant, Reasoning: "secret musings", ToolCalls: []ToolCall{{ID: "call_7", Name: "read_file", Arguments: `{"path":"/a"}`}}},
			{Role: RoleTool, ToolCallID: "call_7", Content: "hello"},
		},
		Tools:       testTools,
		ToolChoice:  "auto",
		MaxTokens:   100,
		Temperature: &temp,
	}
	if _, err := c.Chat(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	ms := got.Messages
	if len(ms) != 4 || ms[0].Role != "system" || ms[1].Role != "user" || ms[2].Role != "assistant" || ms[3].Role != "tool" {
		t.Fatalf("messages = %+v", ms)
	}
	if len(ms[2].ToolCalls) != 1 || ms[2].ToolCalls[0] != (fakellm.Call{ID: "call_7", Name: "read_file", Arguments: `{"path":"/a"}`}) {
		t.Errorf("assistant tool calls = %+v", ms[2].ToolCalls)
	}
	if ms[3].ToolCallID != "call_7" || ms[3].Content != "hello" {
		t.Errorf("tool message = %+v", ms[3])
	}
	if bytes.Contains(got.Body, []byte("secret musings")) {
		t.Errorf("reasoning was sent back: %s", got.Body)
	}
	if got.ToolChoice != "auto" || got.MaxTokens != 100 || got.Temperature == nil || *got.Temperature != 0.2 {
		t.Errorf("request = %+v", got)
	}
	// A tool without a schema gets an empty object schema.
	var body struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil || len(body.Tools) != 2 {
		t.Fatalf("tools in %s: %v", got.Body, err)
	}
	if p := string(body.Tools[1].Function.Parameters); p != `{"properties":{},"type":"object"}` {
		t.Errorf("list_directory parameters = %s", p)
	}
	if p := string(body.Tools[0].Function.Parameters); !strings.Contains(p, `"required":["path"]`) {
		t.Errorf("read_file parameters = %s", p)
	}
}

func TestChatRejectsBadRequests(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1/v1", Config{Model: "m", MaxRetries: -1})
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{name: "no messages", req: Request{}, want: "no messages"},
		{name: "bad role", req: Request{Messages: []Message{{Role: "narrator"}}}, want: `unknown role "narrator"`},
		{name: "bad tool choice", req: Request{Messages: userAsks("x"), ToolChoice: "sometimes"}, want: "tool choice"},
		{name: "bad schema", req: Request{Messages: userAsks("x"), JSONSchema: json.RawMessage(`[`)}, want: "JSON schema"},
		{name: "bad parameters", req: Request{Messages: userAsks("x"), Tools: []Tool{{Name: "t", Parameters: json.RawMessage(`"x"`)}}}, want: "tool t: parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Chat(t.Context(), tt.req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCancelDuringSlowFirstToken(t *testing.T) {
	for _, stream := range []bool{true, false} {
		srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "late", Delay: time.Minute}})
		c := newClient(t, srv.URL, Config{})
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		var sink *Sink
		if stream {
			sink = &Sink{}
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Chat(ctx, Request{Messages: userAsks("hi")}, sink)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("stream %v: err = %v, want context.Canceled", stream, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stream %v: Chat did not return after its context was cancelled", stream)
		}
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: strings.Repeat("word ", 1000), ChunkDelay: 50 * time.Millisecond}})
	c := newClient(t, srv.URL, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	var got int
	sink := &Sink{Content: func(string) {
		if got++; got == 3 {
			cancel()
		}
	}}
	_, err := c.Chat(ctx, Request{Messages: userAsks("talk")}, sink)
	if !errors.Is(err, context.Canceled) || got > 10 {
		t.Errorf("err = %v after %d pieces, want a prompt context.Canceled", err, got)
	}
}

func TestFirstByteTimeout(t *testing.T) {
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "late", Delay: time.Minute}})
	c := newClient(t, srv.URL, Config{FirstByteTimeout: 100 * time.Millisecond})
	_, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, &Sink{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no reply from "+srv.URL) {
		t.Errorf("err = %v, want a first-byte timeout naming the server", err)
	}
}

func TestEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/bogus/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env-Header: leaked")
	tests := []struct {
		name, key, wantAuth string
	}{
		{name: "no key"},
		{name: "configured key", key: "local-key", wantAuth: "Bearer local-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "ok"}})
			c := newClient(t, srv.URL, Config{APIKey: tt.key, MaxRetries: -1})
			resp, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, nil)
			if err != nil || resp.Message.Content != "ok" {
				t.Fatalf("Chat = %+v, %v; want the configured server's answer", resp, err)
			}
			h := srv.Requests()[0].Header
			if got := h.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			for _, k := range []string{"OpenAI-Organization", "OpenAI-Project", "X-Env-Header"} {
				if v := h.Get(k); v != "" {
					t.Errorf("%s = %q leaked from the environment", k, v)
				}
			}
		})
	}
}
