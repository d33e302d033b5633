// Package fakellm is a scripted OpenAI-compatible chat server for tests: each
// chat request takes the next scripted Step and is answered with its Reply,
// streamed in the exact chat.completion.chunk format when the request asks for
// a stream. It speaks only the wire format; it never interprets tool calls,
// never runs a model and never reaches the network beyond its own loopback
// listener.
package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DefaultModel is the model GET /v1/models lists unless SetModels says
// otherwise.
const DefaultModel = "fake-model"

// Reply is one scripted answer to a chat request.
type Reply struct {
	// Content is streamed in chunks of ChunkSize runes when the request asks
	// for a stream. Text tool calls are just content, e.g.
	// `<tool_call>{"name":"x","arguments":{}}</tool_call>`.
	Content string
	// Reasoning is sent as reasoning_content deltas before the content.
	Reasoning string
	// ToolCalls are native tool calls.
	ToolCalls []Call
	// Status, when non-zero, answers with this HTTP status and an
	// OpenAI-style error body carrying ErrorMessage.
	Status       int
	ErrorMessage string
	// Delay is waited before the first byte; it ends early when the client
	// goes away.
	Delay time.Duration
	// ChunkDelay is waited between streamed chunks.
	ChunkDelay time.Duration
	// ChunkSize is the number of runes per content chunk (default 4).
	ChunkSize int
	// Usage is reported when non-nil: in a last chunk with no choices when a
	// stream asks for it through stream_options.include_usage, in the body of
	// a non-streamed answer.
	Usage *Usage
	// ToolCallsInOneChunk sends every tool call, complete, in one chunk, as
	// Ollama does; otherwise each call's arguments are streamed in pieces.
	ToolCallsInOneChunk bool
	// FinishReason overrides the finish_reason ("stop", or "tool_calls" when
	// there are tool calls).
	FinishReason string
}

// Call is a native tool call in a Reply.
type Call struct {
	ID, Name  string
	Arguments string
}

// Usage is the token usage a Reply reports.
type Usage struct {
	PromptTokens, CompletionTokens int
}

// Step is one scripted exchange: a chat request, checked by Match, answered
// by Reply or by what Respond computes from the request.
type Step struct {
	// Match, when set, must accept the request; a request it rejects fails
	// the test and gets a 500.
	Match   func(r Request) bool
	Reply   Reply
	Respond func(r Request) Reply
}

// Request is a chat request as the server decoded it.
type Request struct {
	Model      string
	Messages   []Message
	Tools      []string // the tools' names
	ToolChoice string   // "" when absent; a JSON object's raw text otherwise
	Stream     bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// ResponseFormat is response_format.type: "", "text", "json_object" or
	// "json_schema".
	ResponseFormat string
	MaxTokens      int
	Temperature    *float64
	// Body is the request body as received.
	Body   json.RawMessage
	Header http.Header
}

// Message is one decoded chat message. Content given as parts is joined.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []Call
	ToolCallID string
}

// Server is a running fake. Its zero value is not usable: call New.
type Server struct {
	// URL is the server's OpenAI-compatible base URL, ending in /v1.
	URL string

	t   testing.TB
	srv *httptest.Server
	mux *http.ServeMux

	mu       sync.Mutex
	steps    []Step
	requests []Request
	models   []string
	fallback *Reply
	count    int
	forget   bool
	served   atomic.Int64 // nanoseconds spent answering chat requests
}

// Forget stops recording requests for Requests, so that a long benchmark
// does not hold every request in memory.
func (s *Server) Forget() {
	s.mu.Lock()
	s.forget = true
	s.requests = nil
	s.mu.Unlock()
}

// Served is the total time the server spent answering chat requests, from
// reading the request to writing the last byte: the LLM's share of a
// client's time.
func (s *Server) Served() time.Duration { return time.Duration(s.served.Load()) }

// New starts a fake serving steps in order, closed when the test ends. A chat
// request with no step left is answered 500 and fails the test, unless
// SetFallback gave a reply for that case.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s := &Server{t: t, steps: steps, models: []string{DefaultModel}, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	s.srv = httptest.NewServer(s.mux)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Push appends steps to the script while the server runs.
func (s *Server) Push(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, steps...)
}

// Requests returns every chat request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// SetModels sets the ids GET /v1/models lists.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// SetFallback answers every chat request that finds no step left with r, for
// as many requests as come (benchmarks, load).
func (s *Server) SetFallback(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// HandleFunc adds a route, e.g. llama.cpp's GET /props or Ollama's
// POST /api/show, with the patterns of http.ServeMux. The chat and model
// list routes cannot be replaced.
func (s *Server) HandleFunc(pattern string, h http.HandlerFunc) {
	s.mux.HandleFunc(pattern, h)
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	ids := append([]string(nil), s.models...)
	s.mu.Unlock()
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: 1700000000, OwnedBy: "fakellm"})
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.served.Add(int64(time.Since(start))) }()
	req, err := decodeRequest(r)
	if err != nil {
		s.t.Errorf("fakellm: %v", err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	reply, err := s.next(req)
	if err != nil {
		s.t.Errorf("fakellm: %v", err)
		writeError(w, http.StatusInternalServerError, "fakellm: "+err.Error())
		return
	}
	if !wait(r, reply.Delay) {
		return
	}
	if reply.Status != 0 {
		writeError(w, reply.Status, reply.ErrorMessage)
		return
	}
	if req.Stream {
		stream(w, r, req, reply)
		return
	}
	writeJSON(w, http.StatusOK, completion(req, reply))
}

// next records req and takes the step that answers it.
func (s *Server) next(req Request) (Reply, error) {
	s.mu.Lock()
	s.count++
	n := s.count
	if !s.forget {
		s.requests = append(s.requests, req)
	}
	if len(s.steps) == 0 {
		fb := s.fallback
		s.mu.Unlock()
		if fb != nil {
			return *fb, nil
		}
		return Reply{}, fmt.Errorf("request %d (%s) has no scripted step left", n, describe(req))
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	s.mu.Unlock()
	if st.Match != nil && !st.Match(req) {
		return Reply{}, fmt.Errorf("request %d (%s) does not match its step", n, describe(req))
	}
	if st.Respond != nil {
		return st.Respond(req), nil
	}
	return st.Reply, nil
}

// describe names a request in failure messages: its model and last message.
func describe(r Request) string {
	last := "no messages"
	if len(r.Messages) > 0 {
		m := r.Messages[len(r.Messages)-1]
		c := m.Content
		if len(c) > 60 {
			c = c[:60] + "…"
		}
		last = fmt.Sprintf("last message %s %q", m.Role, c)
	}
	return fmt.Sprintf("model %q, %s, stream %v", r.Model, last, r.Stream)
}

// wait sleeps d, or less when the client goes away; it reports whether the
// client is still there.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func decodeRequest(r *http.Request) (Request, error) {
	var body json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return Request{}, fmt.Errorf("decode chat request: %w", err)
	}
	var wire struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		ToolChoice    json.RawMessage `json:"tool_choice"`
		Stream        bool            `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Temperature         *float64 `json:"temperature"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return Request{}, fmt.Errorf("decode chat request: %w", err)
	}
	req := Request{
		Model:          wire.Model,
		Stream:         wire.Stream,
		IncludeUsage:   wire.StreamOptions.IncludeUsage,
		ResponseFormat: wire.ResponseFormat.Type,
		MaxTokens:      max(wire.MaxTokens, wire.MaxCompletionTokens),
		Temperature:    wire.Temperature,
		Body:           body,
		Header:         r.Header.Clone(),
	}
	if len(wire.ToolChoice) > 0 {
		var s string
		if json.Unmarshal(wire.ToolChoice, &s) == nil {
			req.ToolChoice = s
		} else {
			req.ToolChoice = string(wire.ToolChoice)
		}
	}
	for _, t := range wire.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for _, m := range wire.Messages {
		msg := Message{Role: m.Role, Content: contentText(m.Content), ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

// contentText reads a message content given as a string or as text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in OpenAI's error shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "server_error"
	if status < 500 {
		typ = "invalid_request_error"
	}
	type errBody struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	writeJSON(w, status, struct {
		Error errBody `json:"error"`
	}{errBody{Message: msg, Type: typ}})
}
