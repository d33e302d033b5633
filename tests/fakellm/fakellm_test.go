package fakellm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// errorRecorder stands in for the test a Server reports to, so that the
// failures it reports can be checked.
type errorRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// events splits a server-sent event stream into its data fields.
func events(t *testing.T, b []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data field", line)
		}
		out = append(out, data)
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func TestStreamFormat(t *testing.T) {
	srv := New(t, Step{Reply: Reply{
		Reasoning: "Hmm.",
		Content:   "Hello there",
		ToolCalls: []Call{{ID: "call_1", Name: "read_file", Arguments: `{"path":"/a"}`}},
		Usage:     &Usage{PromptTokens: 10, CompletionTokens: 5},
		ChunkSize: 5,
	}})
	res, b := post(t, srv.URL, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	evs := events(t, b)
	if len(evs) == 0 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("events %q do not end with [DONE]", evs)
	}
	var content, reasoning, args, finish strings.Builder
	var ids []string
	var usage int
	for _, e := range evs[:len(evs)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		if c.Object != "chat.completion.chunk" || c.Model != "m" || !strings.HasPrefix(c.ID, "chatcmpl-") {
			t.Errorf("chunk header = %+v", c)
		}
		ids = append(ids, c.ID)
		if c.Usage != nil {
			usage = c.Usage.TotalTokens
			if len(c.Choices) != 0 {
				t.Errorf("usage chunk has choices: %s", e)
			}
		}
		for _, ch := range c.Choices {
			content.WriteString(ch.Delta.Content)
			reasoning.WriteString(ch.Delta.ReasoningContent)
			for _, tc := range ch.Delta.ToolCalls {
				args.WriteString(tc.Function.Arguments)
			}
			if ch.FinishReason != nil {
				finish.WriteString(*ch.FinishReason)
			}
		}
	}
	if content.String() != "Hello there" || reasoning.String() != "Hmm." || args.String() != `{"path":"/a"}` || finish.String() != "tool_calls" || usage != 15 {
		t.Errorf("stream carried content %q, reasoning %q, args %q, finish %q, usage %d", &content, &reasoning, &args, &finish, usage)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Errorf("chunk ids differ: %v", ids)
			break
		}
	}
}

func TestCompletionFormat(t *testing.T) {
	srv := New(t, Step{Reply: Reply{Content: "Hi", Reasoning: "Hmm.", Usage: &Usage{PromptTokens: 3, CompletionTokens: 1}}})
	res, b := post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var c struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role, Content    string
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].Message.Content != "Hi" ||
		c.Choices[0].Message.ReasoningContent != "Hmm." || c.Choices[0].FinishReason != "stop" || c.Usage.TotalTokens != 4 {
		t.Errorf("completion = %s", b)
	}
}

func TestErrorReply(t *testing.T) {
	srv := New(t, Step{Reply: Reply{Status: 503, ErrorMessage: "loading model"}})
	res, b := post(t, srv.URL, `{"model":"m","messages":[]}`)
	var body struct {
		Error struct{ Message, Type string } `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err != nil || res.StatusCode != 503 || body.Error.Message != "loading model" || body.Error.Type != "server_error" {
		t.Errorf("answer %d %s", res.StatusCode, b)
	}
}

func TestScript(t *testing.T) {
	rec := &errorRecorder{TB: t}
	srv := New(rec,
		Step{Match: func(r Request) bool { return len(r.Tools) == 1 }, Reply: Reply{Content: "first"}},
		Step{Respond: func(r Request) Reply { return Reply{Content: "echo " + r.Messages[len(r.Messages)-1].Content} }},
		Step{Match: func(r Request) bool { return r.Model == "other" }, Reply: Reply{Content: "unused"}},
	)
	tests := []struct {
		body, want string
		status     int
	}{
		{body: `{"model":"m","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"t"}}]}`, want: "first", status: 200},
		{body: `{"model":"m","messages":[{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"result"}]}]}`, want: "echo result", status: 200},
		{body: `{"model":"m","messages":[{"role":"user","content":"b"}]}`, status: 500},
		{body: `{"model":"m","messages":[{"role":"user","content":"c"}]}`, status: 500},
	}
	for i, tt := range tests {
		res, b := post(t, srv.URL, tt.body)
		if res.StatusCode != tt.status || (tt.want != "" && !strings.Contains(string(b), `"content":"`+tt.want+`"`)) {
			t.Errorf("request %d: %d %s, want %d %q", i, res.StatusCode, b, tt.status, tt.want)
		}
	}
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[0], "does not match its step") || !strings.Contains(rec.errs[1], `no scripted step left`) || !strings.Contains(rec.errs[1], `"c"`) {
		t.Errorf("reported %q", rec.errs)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[1].Messages[0].ToolCallID != "c1" || reqs[0].Tools[0] != "t" {
		t.Errorf("requests = %+v", reqs)
	}

	srv.SetFallback(Reply{Content: "again"})
	srv.Push(Step{Reply: Reply{Content: "pushed"}})
	for _, want := range []string{"pushed", "again", "again"} {
		if _, b := post(t, srv.URL, `{"model":"m","messages":[]}`); !strings.Contains(string(b), `"content":"`+want+`"`) {
			t.Errorf("got %s, want %q", b, want)
		}
	}
}

func TestModels(t *testing.T) {
	srv := New(t)
	get := func() string {
		res, err := http.Get(srv.URL + "/models")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var list struct {
			Data []struct{ ID string } `json:"data"`
		}
		if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("models: %v, %s", err, res.Header.Get("Content-Type"))
		}
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		return strings.Join(ids, " ")
	}
	if got := get(); got != DefaultModel {
		t.Errorf("models = %q", got)
	}
	srv.SetModels("a", "b")
	if got := get(); got != "a b" {
		t.Errorf("models = %q", got)
	}
}
