package stt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// whisperServer is an OpenAI-compatible transcription server that
// answers with what it received.
type whisperServer struct {
	mu       sync.Mutex
	auth     string
	fields   map[string]string
	filename string
	samples  int
	rate     int
}

func (ws *whisperServer) handler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/transcriptions", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(10 << 20); err != nil {
			http.Error(w, `{"error":"not multipart"}`, http.StatusBadRequest)
			return
		}
		f, fh, err := r.FormFile("file")
		if err != nil {
			http.Error(w, `{"error":"no file"}`, http.StatusBadRequest)
			return
		}
		defer f.Close()
		pcm, rate, err := wav.Decode(f)
		if err != nil {
			t.Errorf("the file is not a WAV: %v", err)
		}
		ws.mu.Lock()
		ws.auth = r.Header.Get("Authorization")
		ws.filename = fh.Filename
		ws.samples, ws.rate = len(pcm), rate
		ws.fields = map[string]string{}
		for k, v := range r.MultipartForm.Value {
			ws.fields[k] = v[0]
		}
		ws.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"text":"  turn on the light  "}`)
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[{"id":"whisper-1","object":"model"}]}`)
	})
	return mux
}

func TestOpenAITranscribe(t *testing.T) {
	tests := []struct {
		name        string
		cfg         OpenAIConfig
		env         string // OPENAI_API_KEY in the environment
		rate        int
		n           int
		wantSamples int
		wantFields  map[string]string
		wantAuth    string
	}{
		{
			name:        "16 kHz as it is, defaults",
			rate:        16000,
			n:           16000,
			wantSamples: 16000,
			wantFields:  map[string]string{"model": "whisper-1", "response_format": "json"},
		},
		{
			name:        "48 kHz is resampled",
			rate:        48000,
			n:           96000,
			wantSamples: 32000,
			wantFields:  map[string]string{"model": "whisper-1"},
		},
		{
			name:        "model, language and key",
			cfg:         OpenAIConfig{Model: "large-v3", Language: "en", APIKey: "sk-test"},
			rate:        22050,
			n:           22050,
			wantSamples: 16000,
			wantFields:  map[string]string{"model": "large-v3", "language": "en"},
			wantAuth:    "Bearer sk-test",
		},
		{
			name:        "the environment's key does not leak to a local server",
			env:         "sk-from-environment",
			rate:        16000,
			n:           800,
			wantSamples: 800,
			wantAuth:    "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", tt.env)
			ws := &whisperServer{}
			srv := httptest.NewServer(ws.handler(t))
			defer srv.Close()
			cfg := tt.cfg
			cfg.BaseURL = srv.URL + "/v1"
			o := NewOpenAI(cfg)
			res, err := o.Transcribe(context.Background(), make([]int16, tt.n), tt.rate)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "turn on the light" {
				t.Errorf("text = %q", res.Text)
			}
			if want := "openai@" + strings.TrimPrefix(srv.URL, "http://"); res.Backend != want {
				t.Errorf("backend = %q, want %q", res.Backend, want)
			}
			ws.mu.Lock()
			defer ws.mu.Unlock()
			if ws.samples != tt.wantSamples || ws.rate != 16000 {
				t.Errorf("server got %d samples at %d Hz, want %d at 16000", ws.samples, ws.rate, tt.wantSamples)
			}
			if ws.filename != "speech.wav" {
				t.Errorf("file name = %q", ws.filename)
			}
			for k, v := range tt.wantFields {
				if ws.fields[k] != v {
					t.Errorf("field %s = %q, want %q", k, ws.fields[k], v)
				}
			}
			if ws.auth != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", ws.auth, tt.wantAuth)
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		want   []string
	}{
		{
			name:   "openai shape",
			status: 500,
			ctype:  "application/json",
			body:   `{"error":{"message":"model whisper-1 is not loaded","type":"server_error"}}`,
			want:   []string{"500", "model whisper-1 is not loaded"},
		},
		{
			name:   "whisper.cpp shape",
			status: 400,
			ctype:  "application/json",
			body:   `{"error":"failed to read WAV file"}`,
			want:   []string{"400 Bad Request", "failed to read WAV file"},
		},
		{
			name:   "fastapi detail",
			status: 422,
			ctype:  "application/json",
			body:   `{"detail":[{"loc":["body","file"],"msg":"field required"}]}`,
			want:   []string{"422", "field required"},
		},
		{
			name:   "plain text, trimmed",
			status: 401,
			ctype:  "text/plain",
			body:   "  invalid\n\n   api key  " + strings.Repeat("x", 1000),
			want:   []string{"401 Unauthorized", "invalid api key", "…"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			o := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"})
			_, err := o.Transcribe(context.Background(), make([]int16, 160), 16000)
			if err == nil {
				t.Fatal("no error")
			}
			for _, part := range tt.want {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
			t.Log(err)
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != tt.status {
				t.Errorf("errors.As(*HTTPError) failed for %v", err)
			}
			if calls != 1 {
				t.Errorf("the server was asked %d times; a failing server must not be retried", calls)
			}
		})
	}
}

// refusedURL is an address where nothing listens.
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestOpenAIRefused(t *testing.T) {
	base := refusedURL(t)
	o := NewOpenAI(OpenAIConfig{BaseURL: base})
	// The deadline only keeps a broken test from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := o.Transcribe(ctx, make([]int16, 160), 16000)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), base) {
		t.Errorf("Transcribe: err = %v, want connection refused at %s", err, base)
	}
	if ctx.Err() != nil {
		t.Error("a refused connection was retried until the deadline")
	}
	t.Log(err)
	err = o.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "not reachable") || !strings.Contains(err.Error(), base) {
		t.Errorf("Check: err = %v, want not reachable at %s", err, base)
	}
}

func TestOpenAICheck(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		wantErr string
	}{
		{name: "models listed", status: 200},
		{name: "no models endpoint still answers", status: 404},
		{name: "wrong key still answers", status: 401},
		{name: "server error", status: 503, wantErr: "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				json.NewEncoder(w).Encode(map[string]any{"error": "busy"})
			}))
			defer srv.Close()
			err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1"}).Check(context.Background())
			if path != "/v1/models" {
				t.Errorf("asked for %q", path)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestOpenAIBadURL(t *testing.T) {
	o := NewOpenAI(OpenAIConfig{BaseURL: "127.0.0.1:8080"})
	if err := o.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "http") {
		t.Errorf("Check: err = %v", err)
	}
	if _, err := o.Transcribe(context.Background(), []int16{1}, 16000); err == nil {
		t.Error("Transcribe: no error")
	}
}
