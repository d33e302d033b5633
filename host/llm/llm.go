// Package llm owns talking to a local OpenAI-compatible LLM server (Ollama,
// LM Studio, llama.cpp server, vLLM): finding one, listing and choosing its
// models, learning its context size, and streaming chat completions with
// their reasoning and tool calls, native or printed as text. It never calls
// tools, never decides permissions and never reads OPENAI_* variables: the
// server and its key come from Config alone.
package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout     = 5 * time.Minute
	DefaultMaxRetries  = 2
	DefaultContextSize = 8192
)

// Config says which server to talk to and how patiently.
type Config struct {
	// BaseURL is the server's /v1 URL; "" means the caller probes first
	// (see Probe): New refuses it.
	BaseURL string
	// Model is the model to chat with; "" means the first one /v1/models
	// lists.
	Model string
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey string
	// ContextSize is the model's context in tokens; 0 asks the server.
	ContextSize int
	// Timeout bounds each request attempt, a whole stream included
	// (default 5 min).
	Timeout time.Duration
	// FirstByteTimeout bounds the wait for a stream's first chunk, which
	// covers loading the model and reading the prompt (default a fifth of
	// Timeout: 60 s, and more as llm.timeout is raised).
	FirstByteTimeout time.Duration
	// MaxRetries is how often a request is retried after a connection error,
	// a 429 or a 5xx (default 2; negative for none). Other 4xx answers are
	// never retried.
	MaxRetries int
}

// Client talks to one OpenAI-compatible server. It is safe for concurrent
// use.
type Client struct {
	baseURL   string
	root      string // baseURL without its /v1, for servers' own endpoints
	apiKey    string
	timeout   time.Duration
	firstByte time.Duration
	fixedCtx  int

	chat   openai.ChatCompletionService
	models openai.ModelService
	http   *http.Client

	mu      sync.Mutex
	model   string
	ctxSize contextSize

	callSeq  atomic.Int64
	noSchema atomic.Bool // the server refused response_format json_schema

	tools     sync.Map // tool key → encoded tool (json.RawMessage)
	toolCount atomic.Int64
}

// New checks cfg and returns a client for it. It does no network I/O.
func New(cfg Config) (*Client, error) {
	base, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.ContextSize < 0 {
		return nil, fmt.Errorf("context size %d: want tokens, or 0 to ask the server", cfg.ContextSize)
	}
	c := &Client{
		baseURL:  base,
		root:     strings.TrimSuffix(base, "/v1"),
		apiKey:   cfg.APIKey,
		timeout:  orDefault(cfg.Timeout, DefaultTimeout),
		fixedCtx: cfg.ContextSize,
		model:    cfg.Model,
		http:     newHTTPClient(),
	}
	c.firstByte = orDefault(cfg.FirstByteTimeout, c.timeout/5)
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	// The services are built from these options alone. openai.NewClient
	// would first apply OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_ORG_ID,
	// OPENAI_PROJECT_ID, OPENAI_ADMIN_KEY and OPENAI_CUSTOM_HEADERS from the
	// environment: a key meant for api.openai.com must never reach a local
	// server, nor a stray base URL divert the chat.
	opts := []option.RequestOption{
		option.WithHTTPClient(c.http),
		option.WithBaseURL(base + "/"),
		option.WithMaxRetries(retries),
		option.WithRequestTimeout(c.timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	c.chat = openai.NewChatCompletionService(opts...)
	c.models = openai.NewModelService(opts...)
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// newHTTPClient returns a client with its own connection pool, so closing
// idle connections of one Client never touches another's.
func newHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return &http.Client{Transport: t.Clone()}
	}
	return &http.Client{Transport: http.DefaultTransport}
}

// checkBaseURL accepts an http(s) URL with a host, and drops a trailing
// slash.
func checkBaseURL(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("no LLM base URL: probe for a local server first, or set llm.base_url / DOMO_LLM_BASE_URL")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("LLM base URL %q: want the server's http(s) /v1 URL, like http://127.0.0.1:11434/v1", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// BaseURL returns the server's /v1 URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.baseURL }

// SetModel switches to another model; "" means the first one the server
// lists.
func (c *Client) SetModel(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name != c.model {
		c.model = name
		c.ctxSize = contextSize{}
	}
}

// Model returns the model chats use, asking the server for its first model
// once when none was configured.
func (c *Client) Model(ctx context.Context) (string, error) {
	c.mu.Lock()
	m := c.model
	c.mu.Unlock()
	if m != "" {
		return m, nil
	}
	ids, err := c.Models(ctx)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("the LLM server at %s lists no models: download one (e.g. `ollama pull qwen3`), load one in LM Studio, or start llama-server with -m model.gguf", c.baseURL)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.model == "" {
		c.model = ids[0]
	}
	return c.model, nil
}

// Models returns the ids of the models GET /v1/models lists, in its order.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var cp capture
	page, err := c.models.List(ctx, cp.option())
	if err != nil {
		return nil, c.explain(ctx, err, &cp, "")
	}
	ids := make([]string, 0, len(page.Data))
	for _, m := range page.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
