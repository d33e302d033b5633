package tts

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/domo-agent/domo/servers/voice/speechapi"
	"github.com/domo-agent/domo/servers/voice/wav"
)

// OpenAIConfig configures a server that speaks OpenAI's /v1/audio/speech:
// OpenAI itself, Kokoro-FastAPI, speaches, LocalAI.
type OpenAIConfig struct {
	BaseURL    string       // up to and with /v1; default https://api.openai.com/v1
	APIKey     string       // "" sends no Authorization header
	Model      string       // default "tts-1"
	Voice      string       // default "alloy"
	HTTPClient *http.Client // default a client with no timeout: ctx bounds each call
}

// OpenAI speaks through an OpenAI-compatible speech server.
type OpenAI struct {
	cfg    OpenAIConfig
	speech openai.AudioSpeechService
}

var _ Synth = (*OpenAI)(nil)

// pcmRate is the rate of OpenAI's "pcm" format: raw 16-bit little-endian
// mono samples at 24 kHz.
const pcmRate = 24000

// NewOpenAI returns an engine for the server c names.
func NewOpenAI(c OpenAIConfig) *OpenAI {
	if c.BaseURL == "" {
		c.BaseURL = "https://api.openai.com/v1"
	}
	if c.Model == "" {
		c.Model = "tts-1"
	}
	if c.Voice == "" {
		c.Voice = "alloy"
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	// The service alone, not openai.NewClient: that would pick up
	// OPENAI_API_KEY and OPENAI_BASE_URL from the environment and could
	// send a cloud key to a local server. No retries: a retry after a
	// failure only delays the error the user hears about.
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithHTTPClient(c.HTTPClient),
		option.WithMaxRetries(0),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	return &OpenAI{cfg: c, speech: openai.NewAudioService(opts...).Speech}
}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Synthesize asks for raw pcm and passes on the audio as the body
// arrives. Servers that answer WAV anyway are read as WAV.
func (o *OpenAI) Synthesize(ctx context.Context, text string, opts Options, sink Sink) error {
	if strings.TrimSpace(text) == "" {
		return ErrNothingToSay
	}
	speed, err := opts.speed()
	if err != nil {
		return err
	}
	voice := opts.Voice
	if voice == "" {
		voice = o.cfg.Voice
	}
	res, err := o.speech.New(ctx, openai.AudioSpeechNewParams{
		Input:          text,
		Model:          o.cfg.Model,
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)},
		Speed:          openai.Float(speed),
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatPCM,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if res != nil && res.StatusCode >= 400 {
			// openai-go put the error body back for us to read.
			defer res.Body.Close()
			return speechapi.StatusError(res)
		}
		return fmt.Errorf("speech server: %w", err)
	}
	defer res.Body.Close()

	body := bufio.NewReader(res.Body)
	media, params, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	var r sampleReader
	rate := pcmRate
	if n, err := strconv.Atoi(params["rate"]); err == nil && n >= 8000 && n <= 192000 {
		rate = n // audio/pcm;rate=22050
	}
	head, _ := body.Peek(4)
	switch {
	case media == "application/json" || strings.HasPrefix(media, "text/"):
		msg, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		return fmt.Errorf("speech server answered %s instead of audio: %s", media, speechapi.Message(msg))
	case isWAV(media) || string(head) == "RIFF":
		wr, err := wav.NewReader(body)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("reading speech: %w", err)
		}
		r, rate = wr, wr.Rate()
	case isCompressed(media):
		return fmt.Errorf("speech server sent %s; Domo needs pcm or wav (does it support response_format pcm?)", media)
	default:
		r = wav.NewPCM(body, rate)
	}
	if err := pump(ctx, r, rate, sink); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reading speech: %w", err)
	}
	return nil
}

func isWAV(media string) bool {
	switch media {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return true
	}
	return false
}

func isCompressed(media string) bool {
	switch media {
	case "audio/mpeg", "audio/mp3", "audio/ogg", "audio/opus", "audio/aac", "audio/flac", "audio/x-flac", "audio/webm":
		return true
	}
	return false
}

// Check reports whether the server answers.
func (o *OpenAI) Check(ctx context.Context) error {
	return speechapi.Check(ctx, o.cfg.HTTPClient, o.cfg.BaseURL, o.cfg.APIKey)
}
