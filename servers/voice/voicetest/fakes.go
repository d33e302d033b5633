package voicetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// Whisper is a fake OpenAI-compatible speech-to-text server (whisper.cpp
// server, speaches): it answers every transcription with Answer, or with
// Status and a message when Status is set, and keeps the audio it was
// sent.
type Whisper struct {
	*httptest.Server
	answer string
	status int

	mu   sync.Mutex
	got  [][]int16
	rate int
}

// NewWhisper starts a Whisper; Close stops it.
func NewWhisper(answer string, status int) *Whisper {
	ts := &Whisper{answer: answer, status: status}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Write([]byte(`{"object":"list","data":[{"id":"whisper-1","object":"model"}]}`))
			return
		case "/v1/audio/transcriptions":
		default:
			http.NotFound(w, r)
			return
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, "no file: "+err.Error(), http.StatusBadRequest)
			return
		}
		pcm, rate, err := wav.Decode(f)
		if err != nil {
			http.Error(w, "not a WAV file: "+err.Error(), http.StatusBadRequest)
			return
		}
		ts.mu.Lock()
		ts.got = append(ts.got, pcm)
		ts.rate = rate
		ts.mu.Unlock()
		if ts.status != 0 {
			http.Error(w, `{"error":{"message":"model is loading"}}`, ts.status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"text": ts.answer})
	}))
	return ts
}

// BaseURL is the address to configure: up to and with /v1.
func (ts *Whisper) BaseURL() string { return ts.URL + "/v1" }

// Audio returns the utterances received so far and their rate.
func (ts *Whisper) Audio() ([][]int16, int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.got, ts.rate
}

// Deepgram is a fake streaming speech-to-text server speaking the Deepgram
// protocol: an interim result (the final text's first words) for every
// second of audio, the final text in answer to Finalize, and, when
// dropAfter is set, a dropped connection after that many audio messages.
type Deepgram struct {
	*httptest.Server
	final     string
	dropAfter int

	mu      sync.Mutex
	samples int
}

// NewDeepgram starts a Deepgram; Close stops it.
func NewDeepgram(final string, dropAfter int) *Deepgram {
	d := &Deepgram{final: final, dropAfter: dropAfter}
	up := websocket.Upgrader{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		msgs := 0
		result := func(text string, final, fromFinalize bool) error {
			return conn.WriteJSON(map[string]any{
				"type": "Results", "is_final": final, "speech_final": final, "from_finalize": fromFinalize,
				"channel": map[string]any{"alternatives": []map[string]any{{"transcript": text, "confidence": 0.9}}},
			})
		}
		for {
			kind, b, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if kind == websocket.BinaryMessage {
				msgs++
				d.mu.Lock()
				d.samples += len(b) / 2
				n := d.samples
				d.mu.Unlock()
				if d.dropAfter > 0 && msgs >= d.dropAfter {
					return
				}
				if n/16000 != (n-len(b)/2)/16000 {
					words := strings.Fields(d.final)
					result(strings.Join(words[:min(len(words), n/16000+1)], " "), false, false)
				}
				continue
			}
			var m struct{ Type string }
			json.Unmarshal(b, &m)
			switch m.Type {
			case "Finalize":
				result(d.final, true, true)
			case "CloseStream":
				return
			}
		}
	}))
	return d
}

// ListenURL is the address to configure.
func (d *Deepgram) ListenURL() string {
	return "ws" + strings.TrimPrefix(d.URL, "http") + "/v1/listen"
}

// Samples is how many 16 kHz samples of audio arrived in all.
func (d *Deepgram) Samples() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.samples
}
