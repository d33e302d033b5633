package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// ErrUnreachable is wrapped by every error that means no server answered at
// the URL (nothing listening, unknown host): the caller may probe for
// another or tell the user to start one.
var ErrUnreachable = errors.New("LLM server unreachable")

// startHint tells the user how to get a server to talk to.
const startHint = "start one (`ollama serve`, LM Studio's local server, or `llama-server -m model.gguf --port 8080`) or set llm.base_url / DOMO_LLM_BASE_URL"

// unreachableError says which URL did not answer, why, and what to do.
type unreachableError struct {
	url string
	err error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("no LLM server answers at %s (%s); %s", e.url, netReason(e.err), startHint)
}

func (e *unreachableError) Unwrap() error        { return e.err }
func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

// HTTPError is an error answer from the server.
type HTTPError struct {
	StatusCode int
	// Message is the server's own explanation, if it gave one.
	Message string
	// URL is the server's base URL; Model the model the request named.
	URL, Model string
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the LLM server at %s answered %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	switch {
	case e.StatusCode == http.StatusNotFound && e.Model != "" &&
		(strings.Contains(strings.ToLower(e.Message), "model") || strings.Contains(e.Message, e.Model)):
		fmt.Fprintf(&b, "; model %q is not there: pick another with /model, or download it with `ollama pull %s`", e.Model, e.Model)
	case e.StatusCode == http.StatusNotFound:
		fmt.Fprintf(&b, "; is %s the server's OpenAI-compatible /v1 URL?", e.URL)
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		b.WriteString("; the server wants an API key: name the variable holding it in llm.api_key_env")
	}
	return b.String()
}

// capture keeps the status and body of a request's last error answer, which
// the SDK does not always parse (plain-text bodies, "error" given as a
// string), and stops retries of 4xx answers other than 429.
type capture struct {
	status int
	body   []byte
}

// option returns the per-request middleware that fills cp. The SDK runs
// attempts one after another on the caller's goroutine.
func (cp *capture) option() option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		cp.status, cp.body = 0, nil
		if err != nil || res == nil || res.StatusCode < 400 {
			return res, err
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		cp.status, cp.body = res.StatusCode, b
		if res.StatusCode < 500 && res.StatusCode != http.StatusTooManyRequests && res.Header.Get("X-Should-Retry") == "" {
			res.Header.Set("X-Should-Retry", "false")
		}
		return res, nil
	})
}

// explain turns an error from the SDK into one that says what happened at
// which server and what to do about it.
func (c *Client) explain(ctx context.Context, err error, cp *capture, model string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if cp != nil && cp.status != 0 {
		return &HTTPError{StatusCode: cp.status, Message: serverMessage(cp.body), URL: c.baseURL, Model: model}
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return &HTTPError{StatusCode: apiErr.StatusCode, Message: apiErr.Message, URL: c.baseURL, Model: model}
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return fmt.Errorf("the LLM server at %s failed mid-answer: %s", c.baseURL, serverMessage(se.Event.Data))
	}
	if unreachable(err) {
		return &unreachableError{url: c.baseURL, err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer from %s within %s (llm.timeout): %w", c.baseURL, c.timeout, err)
	}
	return fmt.Errorf("LLM server at %s: %w", c.baseURL, err)
}

// unreachable reports whether err means nothing answered: the connection
// was refused or never made.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial")
}

// netReason says briefly why a connection failed.
func netReason(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "unknown host " + dns.Name
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.As(err, &op) && op.Err != nil:
		return op.Err.Error()
	}
	return err.Error()
}

// serverMessage finds the explanation in an error body: OpenAI's
// {"error":{"message":…}}, {"error":"…"} (Ollama, LM Studio), vLLM's
// top-level "message", FastAPI's "detail", or plain text.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	var msg string
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(v.Error, &msg) == nil && msg != "":
		case v.Message != "":
			msg = v.Message
		case json.Unmarshal(v.Detail, &msg) == nil && msg != "":
		case len(v.Detail) > 0:
			msg = string(v.Detail)
		}
	} else if t := strings.TrimSpace(string(body)); !strings.HasPrefix(t, "<") {
		msg = t
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) > 500 {
		msg = string([]rune(msg)[:500]) + "…"
	}
	return msg
}
