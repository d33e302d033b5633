package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// contextSize is what the client learnt of the model's context.
type contextSize struct {
	n     int
	asked bool
	// final is set when the figure is the one the server runs with; a
	// model's maximum or the default is asked again after the next answer,
	// when the model is loaded and the server can tell more.
	final, recheck bool
}

// ContextSize returns the model's context in tokens: Config.ContextSize
// when set, else what the server tells (llama.cpp's /props, Ollama's
// /api/ps and /api/show, LM Studio's /api/v0/models, vLLM's max_model_len),
// else DefaultContextSize. The answer is cached.
func (c *Client) ContextSize(ctx context.Context) int {
	if c.fixedCtx > 0 {
		return c.fixedCtx
	}
	c.mu.Lock()
	cs := c.ctxSize
	c.mu.Unlock()
	if cs.asked && (cs.final || !cs.recheck) {
		return cs.n
	}
	n, final := DefaultContextSize, false
	model, err := c.Model(ctx)
	if err == nil {
		n, final = c.askContextSize(ctx, model)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.model == model {
		c.ctxSize = contextSize{n: n, asked: true, final: final}
	}
	return n
}

// answered notes that the server just answered a chat, so that a tentative
// context size is asked again.
func (c *Client) answered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctxSize.asked && !c.ctxSize.final {
		c.ctxSize.recheck = true
	}
}

// askContextSize tries each server's own way of telling; which server this
// is does not matter, the others answer 404 or nothing useful.
func (c *Client) askContextSize(ctx context.Context, model string) (n int, final bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()

	var props struct {
		NCtx     int `json:"n_ctx"`
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.getJSON(ctx, http.MethodGet, c.root+"/props", nil, &props) == nil {
		if n := max(props.Settings.NCtx, props.NCtx); n > 0 {
			return n, true
		}
	}

	// Ollama's loaded models run with a context that depends on the
	// machine (OLLAMA_CONTEXT_LENGTH, VRAM); the model's own maximum is
	// only an upper bound until it is loaded.
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if c.getJSON(ctx, http.MethodGet, c.root+"/api/ps", nil, &ps) == nil {
		for _, m := range ps.Models {
			if (sameModel(m.Name, model) || sameModel(m.Model, model)) && m.ContextLength > 0 {
				return m.ContextLength, true
			}
		}
	}
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if c.getJSON(ctx, http.MethodPost, c.root+"/api/show", map[string]string{"model": model}, &show) == nil {
		for _, line := range strings.Split(show.Parameters, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "num_ctx" {
				if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
					return n, true
				}
			}
		}
		for k, v := range show.ModelInfo {
			if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 {
				return int(n), false
			}
		}
	}

	var lms struct {
		Loaded int `json:"loaded_context_length"`
		Max    int `json:"max_context_length"`
	}
	if c.getJSON(ctx, http.MethodGet, c.root+"/api/v0/models/"+url.PathEscape(model), nil, &lms) == nil {
		switch {
		case lms.Loaded > 0:
			return lms.Loaded, true
		case lms.Max > 0:
			return lms.Max, false
		}
	}

	if page, err := c.models.List(ctx); err == nil {
		for _, m := range page.Data {
			if f, ok := m.JSON.ExtraFields["max_model_len"]; ok && m.ID == model {
				if n, err := strconv.Atoi(f.Raw()); err == nil && n > 0 {
					return n, true
				}
			}
		}
	}
	return DefaultContextSize, false
}

// sameModel compares Ollama names, where "x" means "x:latest".
func sameModel(a, b string) bool {
	return a != "" && (a == b || a == b+":latest" || b == a+":latest")
}

// getJSON asks one of a server's own endpoints.
func (c *Client) getJSON(ctx context.Context, method, u string, body, dst any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", method, u, res.Status)
	}
	return json.NewDecoder(io.LimitReader(res.Body, 4<<20)).Decode(dst)
}
