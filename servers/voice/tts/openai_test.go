package tts

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// tone is n samples of a 440 Hz tone at rate.
func tone(n, rate int) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
	}
	return pcm
}

// le is samples as raw little-endian bytes.
func le(pcm []int16) []byte {
	b := make([]byte, 0, 2*len(pcm))
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

// streamingWAV is a WAV file whose header gives no length, as servers
// that stream send.
func streamingWAV(pcm []int16, rate int) []byte {
	b := wav.Bytes(pcm, rate)
	binary.LittleEndian.PutUint32(b[4:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(b[40:], 0xFFFFFFFF)
	return b
}

// pieces cuts b at odd offsets, so samples are split between writes.
func pieces(b []byte, n int) [][]byte {
	var out [][]byte
	size := len(b)/n | 1
	for len(b) > size {
		out = append(out, b[:size])
		b = b[size:]
	}
	return append(out, b)
}

func TestOpenAIAudioArrivesBeforeBodyEnds(t *testing.T) {
	want := tone(24000/2, 24000)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/pcm")
		parts := pieces(le(want), 5)
		for i, p := range parts {
			if i == len(parts)-1 {
				select { // hold the last piece until the test has heard audio
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			w.Write(p)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	}))
	defer srv.Close()

	heard := make(chan struct{})
	var once sync.Once
	var rec recorder
	sink := func(pcm []int16, rate int) error {
		once.Do(func() { close(heard) })
		return rec.sink(pcm, rate)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against hanging, not a measure
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"}).Synthesize(ctx, "Hello there.", Options{}, sink)
	}()
	select {
	case <-heard:
	case err := <-done:
		t.Fatalf("Synthesize returned %v before any audio reached the sink", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Synthesize: %v", err)
	}
	if !slices.Equal(rec.rates, []int{24000}) {
		t.Errorf("rates %v, want [24000]", rec.rates)
	}
	if !slices.Equal(rec.pcm, want) {
		t.Errorf("got %d samples, want the %d sent", len(rec.pcm), len(want))
	}
	if rec.calls < 3 {
		t.Errorf("sink called %d times, want a call per piece or so", rec.calls)
	}
}

func TestOpenAIFormats(t *testing.T) {
	pcm24 := tone(2400, 24000)
	pcm22 := tone(2205, 22050)
	tests := []struct {
		name        string
		contentType string
		body        []byte
		wantRate    int
		want        []int16
		wantErr     string
	}{
		{name: "pcm", contentType: "audio/pcm", body: le(pcm24), wantRate: 24000, want: pcm24},
		{name: "no content type", body: le(pcm24), wantRate: 24000, want: pcm24},
		{name: "pcm with its rate", contentType: "audio/pcm; rate=22050", body: le(pcm22), wantRate: 22050, want: pcm22},
		{name: "wav by content type", contentType: "audio/wav", body: streamingWAV(pcm22, 22050), wantRate: 22050, want: pcm22},
		{name: "x-wav with length", contentType: "audio/x-wav", body: wav.Bytes(pcm22, 22050), wantRate: 22050, want: pcm22},
		{name: "wav by its first bytes", contentType: "application/octet-stream", body: streamingWAV(pcm22, 22050), wantRate: 22050, want: pcm22},
		{name: "mp3", contentType: "audio/mpeg", body: []byte("ID3\x04\x00"), wantErr: "audio/mpeg"},
		{name: "json instead of audio", contentType: "application/json", body: []byte(`{"error":{"message":"no GPU"}}`), wantErr: "no GPU"},
		{name: "broken wav", contentType: "audio/wav", body: []byte("RIFF\x00\x00\x00\x00WAVEjunk"), wantErr: "reading speech"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing
				}
				for _, p := range pieces(tt.body, 3) {
					w.Write(p)
					w.(http.Flusher).Flush()
				}
			}))
			defer srv.Close()
			var rec recorder
			err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"}).Synthesize(t.Context(), "Hi.", Options{}, rec.sink)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Synthesize: %v", err)
			}
			if !slices.Equal(rec.rates, []int{tt.wantRate}) {
				t.Errorf("rates %v, want [%d]", rec.rates, tt.wantRate)
			}
			if !slices.Equal(rec.pcm, tt.want) {
				t.Errorf("got %d samples, want the %d sent", len(rec.pcm), len(tt.want))
			}
		})
	}
}

func TestOpenAIErrorStatus(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        []string
	}{
		{
			name: "openai error", status: 400, contentType: "application/json",
			body: `{"error":{"message":"Voice 'zed' not found","type":"invalid_request_error","param":"voice","code":null}}`,
			want: []string{"400 Bad Request", "Voice 'zed' not found"},
		},
		{
			name: "fastapi validation", status: 422, contentType: "application/json",
			body: `{"detail":[{"loc":["body","speed"],"msg":"Input should be less than or equal to 4","type":"less_than_equal"}]}`,
			want: []string{"422", "Input should be less than or equal to 4"},
		},
		{
			name: "fastapi detail", status: 404, contentType: "application/json", body: `{"detail":"Model kokoro-x not loaded"}`,
			want: []string{"404", "Model kokoro-x not loaded"},
		},
		{name: "plain text", status: 500, contentType: "text/plain", body: "model crashed\n", want: []string{"500 Internal Server Error", "model crashed"}},
		{name: "no body", status: 503, want: []string{"503", "no message"}},
		{name: "unauthorized", status: 401, contentType: "application/json", body: `{"error":{"message":"Incorrect API key provided"}}`, want: []string{"401", "Incorrect API key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			var rec recorder
			err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"}).Synthesize(t.Context(), "Hi.", Options{}, rec.sink)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1: no retries", n)
			}
			if rec.calls != 0 {
				t.Errorf("sink called %d times", rec.calls)
			}
		})
	}
}

func TestOpenAIRequest(t *testing.T) {
	// Keys and servers in the environment must not leak into requests.
	t.Setenv("OPENAI_API_KEY", "sk-from-environment")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	tests := []struct {
		name     string
		cfg      OpenAIConfig
		opts     Options
		want     map[string]any
		wantAuth string
	}{
		{
			name: "defaults",
			want: map[string]any{"model": "tts-1", "voice": "alloy", "speed": 1.0, "response_format": "pcm", "input": "Hello there."},
		},
		{
			name:     "configured",
			cfg:      OpenAIConfig{Model: "kokoro", Voice: "af_bella", APIKey: "sk-test"},
			want:     map[string]any{"model": "kokoro", "voice": "af_bella", "speed": 1.0, "response_format": "pcm", "input": "Hello there."},
			wantAuth: "Bearer sk-test",
		},
		{
			name: "options win",
			cfg:  OpenAIConfig{Voice: "af_bella"},
			opts: Options{Voice: "am_adam", Speed: 1.5},
			want: map[string]any{"model": "tts-1", "voice": "am_adam", "speed": 1.5, "response_format": "pcm", "input": "Hello there."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			var auth, path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path, auth = r.Method+" "+r.URL.Path, r.Header.Get("Authorization")
				if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
					t.Errorf("request body: %v", err)
				}
				w.Write(le(tone(240, 24000)))
			}))
			defer srv.Close()
			tt.cfg.BaseURL = srv.URL + "/v1"
			var rec recorder
			if err := NewOpenAI(tt.cfg).Synthesize(t.Context(), "Hello there.", tt.opts, rec.sink); err != nil {
				t.Fatalf("Synthesize: %v", err)
			}
			if path != "POST /v1/audio/speech" {
				t.Errorf("request %q, want POST /v1/audio/speech", path)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			if auth != tt.wantAuth {
				t.Errorf("Authorization %q, want %q", auth, tt.wantAuth)
			}
		})
	}
}

func TestOpenAICancel(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/pcm")
		w.Write(le(tone(2400, 24000)))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // a long reply, still being made
		close(gone)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	sink := func([]int16, int) error {
		calls++
		cancel()
		return nil
	}
	err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"}).Synthesize(ctx, "Hello.", Options{}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("sink called %d times after cancel", calls-1)
	}
	select {
	case <-gone: // the connection was closed: the server stopped
	case <-time.After(time.Minute):
		t.Fatal("the server still sends: the body was not closed")
	}
}

func TestOpenAICheck(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		wantErr bool
	}{
		{name: "ok", status: 200},
		{name: "no models endpoint is still up", status: 404},
		{name: "broken", status: 500, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/"}).Check(t.Context())
			if (err != nil) != tt.wantErr {
				t.Errorf("Check() = %v, want error %v", err, tt.wantErr)
			}
			if path != "/v1/models" {
				t.Errorf("asked %q, want /v1/models", path)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		if err := NewOpenAI(OpenAIConfig{BaseURL: url + "/v1"}).Check(t.Context()); err == nil {
			t.Error("Check() = nil for a closed server")
		}
	})
}
