package stt

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/domo-agent/domo/servers/voice/speechapi"
)

// StreamingConfig points at a WebSocket server that speaks Deepgram's live
// transcription protocol (Deepgram itself, or a compatible local server).
type StreamingConfig struct {
	URL      string // ws:// or wss://, e.g. wss://api.deepgram.com/v1/listen; its query is kept
	APIKey   string // sent as "Authorization: Token <key>" when set
	Model    string
	Language string
	Dialer   *websocket.Dialer // default: proxy from the environment, 10 s handshake
	// WriteTimeout is how long the server may stop reading before the
	// stream fails with ErrStalled. Default 5 s.
	WriteTimeout time.Duration
}

// Streaming transcribes over a Deepgram-style WebSocket while the user
// speaks.
type Streaming struct {
	cfg    StreamingConfig
	u      *url.URL
	badURL error
}

var _ Streamer = (*Streaming)(nil)

// NewStreaming makes a backend for cfg. A malformed URL is reported by
// Check, Start and Transcribe.
func NewStreaming(cfg StreamingConfig) *Streaming {
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 5 * time.Second
	}
	s := &Streaming{cfg: cfg}
	u, err := url.Parse(cfg.URL)
	switch {
	case err != nil:
		s.badURL = fmt.Errorf("streaming speech URL: %w", err)
	case u.Host == "":
		s.badURL = fmt.Errorf("streaming speech URL %q has no host", cfg.URL)
	default:
		switch u.Scheme {
		case "ws", "wss":
		case "http":
			u.Scheme = "ws"
		case "https":
			u.Scheme = "wss"
		default:
			s.badURL = fmt.Errorf("streaming speech URL %q is not a ws:// or wss:// URL", cfg.URL)
		}
	}
	s.u = u
	return s
}

// Name is "streaming@" and the server's host.
func (s *Streaming) Name() string {
	if s.u == nil || s.u.Host == "" {
		return "streaming"
	}
	return "streaming@" + s.u.Host
}

// where names the server in errors without the query, which may hold a
// token.
func (s *Streaming) where() string {
	return s.u.Scheme + "://" + s.u.Host + s.u.Path
}

func (s *Streaming) dial(ctx context.Context, rate int) (*websocket.Conn, error) {
	if s.badURL != nil {
		return nil, s.badURL
	}
	u := *s.u
	q := u.Query()
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(rate))
	q.Set("channels", "1")
	q.Set("interim_results", "true")
	if s.cfg.Model != "" {
		q.Set("model", s.cfg.Model)
	}
	if s.cfg.Language != "" {
		q.Set("language", s.cfg.Language)
	}
	u.RawQuery = q.Encode()
	h := http.Header{}
	if s.cfg.APIKey != "" {
		h.Set("Authorization", "Token "+s.cfg.APIKey)
	}
	d := websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 10 * time.Second}
	if s.cfg.Dialer != nil {
		d = *s.cfg.Dialer
	}
	conn, resp, err := d.DialContext(ctx, u.String(), h)
	if err != nil {
		if resp != nil && resp.StatusCode >= 300 {
			return nil, fmt.Errorf("speech server at %s refused the stream: %w", s.where(), speechapi.StatusError(resp))
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to speech server at %s: %w", s.where(), ctx.Err())
		}
		return nil, fmt.Errorf("speech server at %s is not reachable: %w", s.where(), err)
	}
	return conn, nil
}

// Check connects and hangs up.
func (s *Streaming) Check(ctx context.Context) error {
	conn, err := s.dial(ctx, recognizerRate)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetWriteDeadline(deadline)
	_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"CloseStream"}`))
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadline)
	return nil
}

// Transcribe streams a finished utterance in 20 ms frames, so that a
// Streaming backend can sit in a Chain.
func (s *Streaming) Transcribe(ctx context.Context, pcm []int16, rate int) (Result, error) {
	st, err := s.Start(ctx, rate, nil)
	if err != nil {
		return Result{Backend: s.Name()}, err
	}
	frame := max(rate/50, 1)
	for i := 0; i < len(pcm); i += frame {
		if err := st.Write(pcm[i:min(i+frame, len(pcm))]); err != nil {
			st.Close()
			return Result{Backend: s.Name()}, err
		}
	}
	return st.Finish(ctx)
}

// Start connects; ctx bounds connecting only. The stream lives until
// Finish or Close. interim runs on the stream's reading goroutine and
// must return quickly; it receives the final segments so far followed by
// the server's current guess.
func (s *Streaming) Start(ctx context.Context, rate int, interim func(text string, final bool)) (Stream, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("sample rate %d is not positive", rate)
	}
	conn, err := s.dial(ctx, rate)
	if err != nil {
		return nil, err
	}
	st := &wsStream{
		conn:         conn,
		backend:      s.Name(),
		interim:      interim,
		writeTimeout: s.cfg.WriteTimeout,
		maxBytes:     int(2 * int64(rate) * int64(maxQueued) / int64(time.Second)),
		wake:         make(chan struct{}, 1),
		stop:         make(chan struct{}),
		finalized:    make(chan struct{}),
		readDone:     make(chan struct{}),
	}
	go st.writeLoop()
	go st.readLoop()
	return st, nil
}
