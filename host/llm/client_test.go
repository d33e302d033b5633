package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domo-agent/domo/tests/fakellm"
)

func TestNewValidatesBaseURL(t *testing.T) {
	tests := []struct {
		url, want, err string
	}{
		{url: "http://127.0.0.1:11434/v1", want: "http://127.0.0.1:11434/v1"},
		{url: "https://llm.lan/v1/", want: "https://llm.lan/v1"},
		{url: "", err: "probe"},
		{url: "127.0.0.1:11434", err: "http(s)"},
		{url: "ftp://host/v1", err: "http(s)"},
		{url: "http:///v1", err: "http(s)"},
	}
	for _, tt := range tests {
		c, err := New(Config{BaseURL: tt.url})
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("New(%q) err = %v, want %q", tt.url, err, tt.err)
		case tt.err == "" && (err != nil || c.BaseURL() != tt.want):
			t.Errorf("New(%q) = %v, %v; want %s", tt.url, c, err, tt.want)
		}
	}
}

func TestModel(t *testing.T) {
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "a"}}, fakellm.Step{Reply: fakellm.Reply{Content: "b"}})
	srv.SetModels("qwen3:8b", "llama3.2:3b")
	c := newClient(t, srv.URL, Config{})
	ids, err := c.Models(t.Context())
	if err != nil || strings.Join(ids, " ") != "qwen3:8b llama3.2:3b" {
		t.Fatalf("Models = %v, %v", ids, err)
	}
	if m, err := c.Model(t.Context()); err != nil || m != "qwen3:8b" {
		t.Fatalf("Model = %q, %v; want the first listed", m, err)
	}
	if _, err := c.Chat(t.Context(), Request{Messages: userAsks("x")}, nil); err != nil {
		t.Fatal(err)
	}
	c.SetModel("llama3.2:3b")
	if _, err := c.Chat(t.Context(), Request{Messages: userAsks("x")}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if reqs[0].Model != "qwen3:8b" || reqs[1].Model != "llama3.2:3b" {
		t.Errorf("models used = %s, %s", reqs[0].Model, reqs[1].Model)
	}

	srv.SetModels()
	empty := newClient(t, srv.URL, Config{})
	if _, err := empty.Model(t.Context()); err == nil || !strings.Contains(err.Error(), "lists no models") {
		t.Errorf("Model with none listed: err = %v", err)
	}
}

// deadURL returns a base URL where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := fmt.Sprintf("http://%s/v1", l.Addr())
	l.Close()
	return u
}

func TestConnectionRefused(t *testing.T) {
	u := deadURL(t)
	c := newClient(t, u, Config{Model: "m", MaxRetries: -1})
	for name, call := range map[string]func() error{
		"chat":   func() error { _, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, &Sink{}); return err },
		"models": func() error { _, err := c.Models(t.Context()); return err },
	} {
		err := call()
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("%s: err = %v, want ErrUnreachable", name, err)
		}
		for _, w := range []string{u, "connection refused", "ollama serve", "llama-server -m model.gguf --port 8080", "LM Studio", "DOMO_LLM_BASE_URL"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	c := newClient(t, deadURL(t), Config{Model: "m", MaxRetries: 1})
	start := time.Now()
	_, err := c.Chat(t.Context(), Request{Messages: userAsks("hi")}, nil)
	// One retry waits the SDK's first backoff (about half a second).
	if !errors.Is(err, ErrUnreachable) || time.Since(start) < 200*time.Millisecond {
		t.Errorf("err = %v after %v, want ErrUnreachable after a retry", err, time.Since(start))
	}
}

func TestProbe(t *testing.T) {
	first := fakellm.New(t)
	second := fakellm.New(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m"}]}`)
	}))
	t.Cleanup(slow.Close)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>a router page</html>")
	}))
	t.Cleanup(web.Close)
	dead := deadURL(t)

	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{name: "first that answers", candidates: []string{dead, first.URL, second.URL}, want: first.URL},
		{name: "order beats speed", candidates: []string{slow.URL + "/v1", first.URL}, want: slow.URL + "/v1"},
		{name: "not OpenAI-compatible is skipped", candidates: []string{web.URL + "/v1", second.URL + "/"}, want: second.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Probe(t.Context(), tt.candidates)
			if err != nil || got != tt.want {
				t.Errorf("Probe = %q, %v; want %q", got, err, tt.want)
			}
		})
	}

	t.Run("none answers", func(t *testing.T) {
		_, err := Probe(t.Context(), []string{dead, web.URL + "/v1", "localhost:1"})
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
		for _, w := range []string{dead + ": connection refused", web.URL + "/v1: answered GET /models, but not", "localhost:1: LLM base URL", "ollama serve", "llm.base_url"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	})
}

func TestContextSize(t *testing.T) {
	jsonHandler := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}
	}
	tests := []struct {
		name   string
		cfg    Config
		routes map[string]http.HandlerFunc
		want   int
	}{
		{name: "configured", cfg: Config{ContextSize: 4096}, want: 4096},
		{name: "nothing to ask", want: DefaultContextSize},
		{
			name:   "llama.cpp props",
			routes: map[string]http.HandlerFunc{"GET /props": jsonHandler(`{"default_generation_settings":{"n_ctx":16384}}`)},
			want:   16384,
		},
		{
			name: "Ollama loaded model",
			routes: map[string]http.HandlerFunc{
				"GET /api/ps":    jsonHandler(`{"models":[{"name":"fake-model:latest","model":"fake-model:latest","context_length":32768}]}`),
				"POST /api/show": jsonHandler(`{"model_info":{"qwen3.context_length":40960}}`),
			},
			want: 32768,
		},
		{
			name:   "Ollama num_ctx",
			routes: map[string]http.HandlerFunc{"POST /api/show": jsonHandler(`{"parameters":"temperature 0.6\nnum_ctx 12288","model_info":{"llama.context_length":131072}}`)},
			want:   12288,
		},
		{
			name:   "Ollama model maximum",
			routes: map[string]http.HandlerFunc{"POST /api/show": jsonHandler(`{"parameters":"","model_info":{"general.architecture":"llama","llama.context_length":131072}}`)},
			want:   131072,
		},
		{
			name:   "LM Studio",
			routes: map[string]http.HandlerFunc{"GET /api/v0/models/fake-model": jsonHandler(`{"id":"fake-model","max_context_length":131072,"loaded_context_length":4096}`)},
			want:   4096,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(t)
			for p, h := range tt.routes {
				srv.HandleFunc(p, h)
			}
			c := newClient(t, srv.URL, tt.cfg)
			if got := c.ContextSize(t.Context()); got != tt.want {
				t.Errorf("ContextSize = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestContextSizeIsAskedAgainOnceLoaded(t *testing.T) {
	srv := fakellm.New(t, fakellm.Step{Reply: fakellm.Reply{Content: "loaded now"}})
	var loaded atomic.Bool
	srv.HandleFunc("GET /api/ps", func(w http.ResponseWriter, r *http.Request) {
		var ps struct {
			Models []map[string]any `json:"models"`
		}
		ps.Models = []map[string]any{}
		if loaded.Load() {
			ps.Models = append(ps.Models, map[string]any{"name": "fake-model", "context_length": 8000})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ps)
	})
	srv.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model_info":{"llama.context_length":131072}}`)
	})
	c := newClient(t, srv.URL, Config{})
	if got := c.ContextSize(t.Context()); got != 131072 {
		t.Fatalf("before loading: %d, want the model's maximum", got)
	}
	loaded.Store(true)
	if got := c.ContextSize(t.Context()); got != 131072 {
		t.Fatalf("cached: %d", got)
	}
	if _, err := c.Chat(t.Context(), Request{Messages: userAsks("x")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.ContextSize(t.Context()); got != 8000 {
		t.Errorf("after an answer: %d, want the loaded model's context", got)
	}
}
