// Package speechapi is what domo-voice's clients of OpenAI-compatible
// speech servers (whisper.cpp server, speaches, LocalAI, Kokoro-FastAPI)
// share: the error a server's status becomes, with the reason the server
// gave in whichever shape it gave it, and the check that a server answers.
package speechapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// HTTPError is an error status from a speech server, with the reason the
// server gave.
type HTTPError struct {
	StatusCode int
	Message    string // trimmed; may be empty
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("speech server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message == "" {
		return s + ": the server gave no message"
	}
	return s + ": " + e.Message
}

// StatusError reads an error response into an *HTTPError.
func StatusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &HTTPError{StatusCode: resp.StatusCode, Message: Message(body)}
}

// Message finds the human part of an error body: OpenAI's
// {"error":{"message"}}, whisper.cpp's {"error": "..."}, FastAPI's
// {"detail": ...} (a string or a list of {"msg"}), Deepgram's err_msg, or
// the text itself, on one line.
func Message(body []byte) string {
	body = bytes.TrimSpace(body)
	var v any
	if json.Unmarshal(body, &v) == nil {
		if msg := find(v); msg != "" {
			return Trim(msg)
		}
	}
	return Trim(string(body))
}

func find(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, e := range v {
			if msg := find(e); msg != "" {
				parts = append(parts, msg)
			}
		}
		return strings.Join(parts, "; ")
	case map[string]any:
		for _, k := range []string{"error", "message", "detail", "msg", "err_msg"} {
			if msg := find(v[k]); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// Trim makes a server's text fit in one line of an error.
func Trim(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // keep UTF-8 whole
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Check asks the server at base (up to and with /v1) for its models. Any
// answer below 500 means it is there, whether or not it lists models or
// likes the key.
func Check(ctx context.Context, client *http.Client, base, apiKey string) error {
	u := strings.TrimSuffix(base, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("speech server at %s is not reachable: %w", base, UnwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return StatusError(resp)
	}
	return nil
}

// UnwrapURL drops the *url.Error wrapper, whose text repeats the URL the
// caller already names.
func UnwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
