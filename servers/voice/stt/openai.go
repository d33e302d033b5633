package stt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/domo-agent/domo/servers/voice/speechapi"
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
			err = fmt.Errorf("transcribing at %s: %w", o.cfg.BaseURL, speechapi.UnwrapURL(err))
		}
		return res, err
	}
	res.Text = strings.TrimSpace(out.Text)
	return res, nil
}

// Check asks the server for its models.
func (o *OpenAI) Check(ctx context.Context) error {
	if o.badURL != nil {
		return o.badURL
	}
	return speechapi.Check(ctx, o.cfg.HTTPClient, o.cfg.BaseURL, o.cfg.APIKey)
}

// HTTPError is an error status from a speech server, with the reason the
// server gave.
type HTTPError = speechapi.HTTPError

// statusErrors turns an error status into an *HTTPError before openai-go
// does: its own error hides the server's message, and it cannot parse the
// plain-text and {"error": "..."} bodies local servers send.
func statusErrors(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	defer resp.Body.Close()
	return nil, speechapi.StatusError(resp)
}
