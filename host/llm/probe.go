package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// LocalServers are the usual local OpenAI-compatible servers, in the order
// Probe prefers them.
var LocalServers = []string{
	"http://127.0.0.1:11434/v1", // Ollama
	"http://127.0.0.1:1234/v1",  // LM Studio
	"http://127.0.0.1:8080/v1",  // llama.cpp llama-server
}

// probeTimeout bounds each candidate's answer: a local server answers its
// model list in milliseconds.
const probeTimeout = 500 * time.Millisecond

// Probe asks every candidate base URL for its model list at once and
// returns the first candidate, in the given order, that answers with one.
// When none does, the error says why for each and how to start a server; it
// wraps ErrUnreachable.
func Probe(ctx context.Context, candidates []string) (string, error) {
	if len(candidates) == 0 {
		return "", errors.New("no LLM server URLs to probe")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hc := newHTTPClient()
	defer hc.CloseIdleConnections()

	answers := make([]chan error, len(candidates))
	for i, u := range candidates {
		answers[i] = make(chan error, 1)
		go func() { answers[i] <- probeOne(ctx, hc, u) }()
	}
	var tried []string
	for i, u := range candidates {
		err := <-answers[i]
		if err == nil {
			return strings.TrimRight(u, "/"), nil
		}
		tried = append(tried, fmt.Sprintf("%s: %s", u, err))
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "", &probeError{tried: tried}
}

// probeOne checks that base answers GET /models with a model list.
func probeOne(ctx context.Context, hc *http.Client, base string) error {
	base, err := checkBaseURL(base)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %s", probeTimeout)
		}
		return errors.New(netReason(err))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %d %s to GET /models", res.StatusCode, http.StatusText(res.StatusCode))
	}
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	if json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&list) != nil || list.Data == nil {
		return errors.New("answered GET /models, but not with an OpenAI-compatible model list")
	}
	return nil
}

// probeError lists what each candidate answered.
type probeError struct {
	tried []string
}

func (e *probeError) Error() string {
	return "no LLM server found; tried:\n  " + strings.Join(e.tried, "\n  ") + "\n" + startHint
}

func (e *probeError) Is(target error) bool { return target == ErrUnreachable }
