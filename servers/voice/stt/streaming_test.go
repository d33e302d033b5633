package stt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// hangGuard bounds a test that would otherwise hang on a bug; it is not a
// measure of speed.
const hangGuard = 20 * time.Second

// fakeDeepgram serves one scripted WebSocket conversation per connection.
type fakeDeepgram struct {
	url  string
	done chan struct{} // closed when the test ends: blocked scripts return

	mu  sync.Mutex
	req *http.Request
}

func serveDeepgram(t *testing.T, script func(f *fakeDeepgram, c *websocket.Conn)) *fakeDeepgram {
	t.Helper()
	f := &fakeDeepgram{done: make(chan struct{})}
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.req = r
		f.mu.Unlock()
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		script(f, c)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(f.done) }) // runs first: scripts return, then the server closes
	f.url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/listen"
	return f
}

func (f *fakeDeepgram) request() *http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.req
}

// results is a Deepgram Results message.
func results(text string, final, fromFinalize bool) []byte {
	b, _ := json.Marshal(map[string]any{
		"type":          "Results",
		"channel":       map[string]any{"alternatives": []any{map[string]any{"transcript": text, "confidence": 0.9}}},
		"is_final":      final,
		"speech_final":  final,
		"from_finalize": fromFinalize,
		"start":         0.0,
		"duration":      1.0,
	})
	return b
}

// conversation reads the client's messages, calling onAudio with the
// running byte count and onText for control messages, until either says
// stop or the connection ends.
func conversation(c *websocket.Conn, onAudio func(total int) bool, onText func(typ string) bool) {
	total := 0
	for {
		kind, data, err := c.ReadMessage()
		if err != nil {
			return
		}
		if kind == websocket.BinaryMessage {
			total += len(data)
			if onAudio != nil && !onAudio(total) {
				return
			}
			continue
		}
		var m struct{ Type string }
		_ = json.Unmarshal(data, &m)
		if onText != nil && !onText(m.Type) {
			return
		}
	}
}

type interimLog struct {
	mu   sync.Mutex
	got  []string
	seen chan string
}

func newInterimLog() *interimLog { return &interimLog{seen: make(chan string, 100)} }

func (l *interimLog) add(text string, final bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := fmt.Sprintf("%s|%v", text, final)
	l.got = append(l.got, s)
	l.seen <- s
}

func (l *interimLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// frame is 20 ms of 16 kHz audio.
var frame = make([]int16, 320)

func TestStreamingResults(t *testing.T) {
	var once sync.Once
	f := serveDeepgram(t, func(f *fakeDeepgram, c *websocket.Conn) {
		conversation(c, func(total int) bool {
			if total >= 10*640 {
				once.Do(func() {
					c.WriteMessage(websocket.TextMessage, []byte(`{"type":"Metadata","request_id":"x"}`))
					c.WriteMessage(websocket.TextMessage, []byte(`{"type":"SpeechStarted"}`))
					c.WriteMessage(websocket.TextMessage, results("turn", false, false))
					c.WriteMessage(websocket.TextMessage, results("turn on the", true, false))
					c.WriteMessage(websocket.TextMessage, results("kitchen", false, false))
				})
			}
			return true
		}, func(typ string) bool {
			switch typ {
			case "Finalize":
				c.WriteMessage(websocket.TextMessage, results("kitchen light", true, true))
			case "CloseStream":
				// Hold the connection open: Finish must not wait for
				// the server to hang up once the final has arrived.
				<-f.done
				return false
			}
			return true
		})
	})
	s := NewStreaming(StreamingConfig{URL: f.url + "?punctuate=true", APIKey: "secret", Model: "nova-3", Language: "en"})
	log := newInterimLog()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	st, err := s.Start(ctx, 16000, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for range 50 {
		if err := st.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for the interim results before finishing, as a speaker would.
	for want := "turn on the kitchen|false"; ; {
		select {
		case s := <-log.seen:
			if s != want {
				continue
			}
		case <-ctx.Done():
			t.Fatalf("no interim %q; got %q", want, log.list())
		}
		break
	}
	res, err := st.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "turn on the kitchen light" {
		t.Errorf("text = %q", res.Text)
	}
	if res.Confidence != 0.9 {
		t.Errorf("confidence = %v", res.Confidence)
	}
	want := []string{"turn|false", "turn on the|true", "turn on the kitchen|false", "turn on the kitchen light|true"}
	if got := log.list(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("interim calls = %q, want %q", got, want)
	}
	r := f.request()
	q := r.URL.Query()
	for k, v := range map[string]string{
		"encoding": "linear16", "sample_rate": "16000", "channels": "1", "interim_results": "true",
		"model": "nova-3", "language": "en", "punctuate": "true",
	} {
		if q.Get(k) != v {
			t.Errorf("query %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if a := r.Header.Get("Authorization"); a != "Token secret" {
		t.Errorf("Authorization = %q", a)
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close after Finish: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := st.Write(frame); err == nil {
		t.Error("Write after Finish succeeded")
	}
}

func TestStreamingTranscribe(t *testing.T) {
	// The server says how much audio it got before Finalize, and hangs up
	// after CloseStream without marking anything from_finalize, as some
	// compatible servers do.
	f := serveDeepgram(t, func(f *fakeDeepgram, c *websocket.Conn) {
		total := 0
		conversation(c, func(n int) bool { total = n; return true }, func(typ string) bool {
			switch typ {
			case "Finalize":
				c.WriteMessage(websocket.TextMessage, results(fmt.Sprintf("%d samples", total/2), true, false))
			case "CloseStream":
				c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
				return false
			}
			return true
		})
	})
	s := NewStreaming(StreamingConfig{URL: f.url})
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	res, err := s.Transcribe(ctx, make([]int16, 48000), 48000)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "48000 samples" {
		t.Errorf("text = %q", res.Text)
	}
	if q := f.request().URL.Query(); q.Get("sample_rate") != "48000" {
		t.Errorf("sample_rate = %q", q.Get("sample_rate"))
	}
	if res.Backend != s.Name() || !strings.HasPrefix(res.Backend, "streaming@127.0.0.1:") {
		t.Errorf("backend = %q", res.Backend)
	}
}

func TestStreamingFailures(t *testing.T) {
	tests := []struct {
		name string
		// hangUp ends the conversation after the first final result.
		hangUp      func(f *fakeDeepgram, c *websocket.Conn)
		want        error
		wantMessage []string
	}{
		{
			name: "connection dropped",
			hangUp: func(f *fakeDeepgram, c *websocket.Conn) {
				c.NetConn().Close()
			},
			want:        ErrDisconnected,
			wantMessage: []string{"closed the connection", "1006", `"turn on the"`},
		},
		{
			name: "closed with a reason",
			hangUp: func(f *fakeDeepgram, c *websocket.Conn) {
				c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, "NET-0001 no audio"))
			},
			want:        ErrDisconnected,
			wantMessage: []string{"close code 1011: NET-0001 no audio", `"turn on the"`},
		},
		{
			name: "error message",
			hangUp: func(f *fakeDeepgram, c *websocket.Conn) {
				c.WriteMessage(websocket.TextMessage, []byte(`{"type":"Error","description":"Failed to decode audio","message":"bad encoding","variant":"x"}`))
				<-f.done
			},
			want:        ErrServer,
			wantMessage: []string{"Failed to decode audio", `"turn on the"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := serveDeepgram(t, func(f *fakeDeepgram, c *websocket.Conn) {
				conversation(c, func(total int) bool {
					if total < 5*640 {
						return true
					}
					c.WriteMessage(websocket.TextMessage, results("turn on the", true, false))
					tt.hangUp(f, c)
					return false
				}, nil)
			})
			log := newInterimLog()
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			st, err := NewStreaming(StreamingConfig{URL: f.url}).Start(ctx, 16000, log.add)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			// Keep speaking until the stream notices.
			for err == nil && ctx.Err() == nil {
				err = st.Write(frame)
				time.Sleep(5 * time.Millisecond)
			}
			check := func(what string, err error) {
				var se *StreamError
				if !errors.As(err, &se) || !errors.Is(err, tt.want) {
					t.Fatalf("%s: err = %v, want a *StreamError wrapping %v", what, err, tt.want)
				}
				if se.Partial != "turn on the" {
					t.Errorf("%s: partial = %q", what, se.Partial)
				}
				for _, part := range tt.wantMessage {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("%s: %q does not contain %q", what, err, part)
					}
				}
			}
			check("Write", err)
			_, err = st.Finish(ctx)
			check("Finish", err)
			t.Log(err)
		})
	}
}

func TestStreamingSlowFinal(t *testing.T) {
	f := serveDeepgram(t, func(f *fakeDeepgram, c *websocket.Conn) {
		var once sync.Once
		conversation(c, func(int) bool {
			once.Do(func() { c.WriteMessage(websocket.TextMessage, results("turn on", false, false)) })
			return true
		}, func(typ string) bool {
			if typ == "Finalize" {
				<-f.done // the final never comes in time
				return false
			}
			return true
		})
	})
	log := newInterimLog()
	st, err := NewStreaming(StreamingConfig{URL: f.url}).Start(context.Background(), 16000, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for range 10 {
		if err := st.Write(frame); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-log.seen:
	case <-time.After(hangGuard):
		t.Fatal("no interim result")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = st.Finish(ctx)
	var se *StreamError
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a *StreamError wrapping context.DeadlineExceeded", err)
	}
	if se.Partial != "turn on" || !strings.Contains(err.Error(), "no final transcript") {
		t.Errorf("err = %q", err)
	}
	t.Log(err)
}

func TestStreamingServerStopsReading(t *testing.T) {
	f := serveDeepgram(t, func(f *fakeDeepgram, c *websocket.Conn) {
		<-f.done
	})
	s := NewStreaming(StreamingConfig{URL: f.url, WriteTimeout: 200 * time.Millisecond})
	st, err := s.Start(context.Background(), 16000, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	second := make([]int16, 16000)
	done := make(chan error, 1)
	go func() {
		// 64 MB is far more than the sockets and the queue hold.
		for range 2000 {
			if err := st.Write(second); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStalled) {
			t.Fatalf("err = %v, want ErrStalled", err)
		}
		t.Log(err)
	case <-time.After(hangGuard):
		t.Fatal("Write blocked on a server that stopped reading")
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if _, err := st.Finish(ctx); !errors.Is(err, ErrStalled) {
		t.Errorf("Finish: err = %v, want ErrStalled", err)
	}
}

func TestStreamingConnect(t *testing.T) {
	refused := refusedURL(t)
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials."}`)
	}))
	defer unauthorized.Close()
	f := serveDeepgram(t, func(f *fakeDeepgram, c *websocket.Conn) {
		conversation(c, nil, func(typ string) bool { return typ != "CloseStream" })
	})
	tests := []struct {
		name    string
		url     string
		wantErr []string
	}{
		{name: "reachable", url: f.url},
		{name: "http URL becomes ws", url: "http" + strings.TrimPrefix(f.url, "ws")},
		{name: "refused", url: "ws" + strings.TrimPrefix(refused, "http") + "/listen?token=hidden", wantErr: []string{"not reachable", "connection refused", "/v1/listen"}},
		{name: "unauthorized", url: "ws" + strings.TrimPrefix(unauthorized.URL, "http"), wantErr: []string{"refused the stream", "401 Unauthorized: Invalid credentials."}},
		{name: "not a websocket URL", url: "ftp://example.com/listen", wantErr: []string{"ws://"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			err := NewStreaming(StreamingConfig{URL: tt.url}).Check(ctx)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, part := range tt.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("%q does not contain %q", err, part)
				}
			}
			t.Log(err)
			if strings.Contains(err.Error(), "hidden") {
				t.Errorf("%q shows the URL's query", err)
			}
		})
	}
}
