package stt

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// OpenAIConfig points at a server that speaks OpenAI's
// /audio/transcriptions: whisper.cpp's server, speaches, LocalAI, OpenAI.
type OpenAIConfig struct {
	BaseURL  string // e.g. http://127.0.0.1:8080/v1
	APIKey   string // empty for local servers
	Model    string // default "whisper-1"
	Language string // ISO-639-1, e.g. "en"; empty lets the server guess
	// HTTPClient defaults to one without a timeout: the ctx of each call
	// bounds it.
	HTTPClient *http.Client
}

// recognizerRate is the sample rate speech recognisers are trained on.
const recognizerRate = 16000

// OpenAI transcribes finished utterances on an OpenAI-compatible server.
type OpenAI struct {
	cfg    OpenAIConfig
	base   *url.URL
	badURL error
	svc    openai.AudioTranscriptionService
}

var _ Transcriber = (*OpenAI)(nil)

// NewOpenAI makes a backend for cfg. A malformed BaseURL is reported by
// Check and Transcribe.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.Model == "" {
		cfg.Model = "whisper-1"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	o := &OpenAI{cfg: cfg}
	o.base, o.badURL = parseBase(cfg.BaseURL)
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		// The Chain fails over to the next backend; retries here would
		// only make a dead server slow to give up on.
		option.WithMaxRetries(0),
		option.WithMiddleware(statusErrors),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	// The service is built without openai.NewClient so that OPENAI_API_KEY
	// and OPENAI_BASE_URL in the environment never reach a configured
	// server: the key goes only where the configuration says.
	o.svc = openai.NewAudioTranscriptionService(opts...)
	return o
}

func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("speech server URL %q is not an http(s) URL like http://127.0.0.1:8080/v1", s)
	}
	return u, nil
}

// Name is "openai@" and the server's host.
func (o *OpenAI) Name() string {
	if o.base == nil {
		return "openai"
	}
	return "openai@" + o.base.Host
}

// Transcribe sends the utterance as a 16 kHz WAV file.
func (o *OpenAI) Transcribe(ctx context.Context, pcm []int16, rate int) (Result, error) {
	res := Result{Backend: o.Name()}
	if o.badURL != nil {
		return res, o.badURL
	}
	if rate <= 0 {
		return res, fmt.Errorf("sample rate %d is not positive", rate)
	}
	if len(pcm) == 0 {
		return res, nil
	}
	audio := wav.Bytes(wav.Resample(pcm, rate, recognizerRate), recognizerRate)
	params := openai.AudioTranscriptionNewParams{
		File:           openai.File(bytes.NewReader(audio), "speech.wav", "audio/wav"),
		Model:          openai.AudioModel(o.cfg.Model),
		ResponseFormat: openai.AudioResponseFormatJSON,
	}
	if o.cfg.Language != "" {
		params.Language = openai.String(o.cfg.Language)
	}
	out, err := o.svc.New(ctx, params)
	if err != nil {
		var he *HTTPError
		if !errors.As(err, &he) {
			err = fmt.Errorf("transcribing at %s: %w", o.cfg.BaseURL, unwrapURL(err))
		}
		return res, err
	}
	res.Text = strings.TrimSpace(out.Text)
	return res, nil
}

// Check asks the server for its models. Any answer below 500 means it is
// there, whether or not it lists models or likes the key.
func (o *OpenAI) Check(ctx context.Context) error {
	if o.badURL != nil {
		return o.badURL
	}
	u := o.base.JoinPath("models")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	if o.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("speech server at %s is not reachable: %w", o.cfg.BaseURL, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 500 {
		return statusError(resp)
	}
	return nil
}

// unwrapURL drops the *url.Error wrapper, whose text repeats the URL the
// caller already names.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// HTTPError is an error status from a speech server, with the reason the
// server gave.
type HTTPError struct {
	StatusCode int
	Message    string // trimmed; may be empty
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("speech server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// statusErrors turns an error status into an *HTTPError before openai-go
// does: its own error hides the server's message, and it cannot parse the
// plain-text and {"error": "..."} bodies local servers send.
func statusErrors(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	defer resp.Body.Close()
	return nil, statusError(resp)
}

func statusError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &HTTPError{StatusCode: resp.StatusCode, Message: serverMessage(body)}
}

// serverMessage finds the human part of an error body: OpenAI's
// {"error":{"message"}}, whisper.cpp's {"error": "..."}, FastAPI's
// {"detail": ...}, or the text itself.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		ErrMsg  string          `json:"err_msg"` // Deepgram
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var list []struct {
			Msg string `json:"msg"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
			msg = nested.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(v.Detail, &list) == nil && len(list) > 0:
			var parts []string
			for _, d := range list {
				parts = append(parts, d.Msg)
			}
			msg = strings.Join(parts, "; ")
		case v.Message != "":
			msg = v.Message
		case v.ErrMsg != "":
			msg = v.ErrMsg
		}
	}
	if msg == "" {
		msg = string(body)
	}
	return trimMessage(msg)
}

// trimMessage makes a server's text fit in one line of an error.
func trimMessage(s string) string {
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
