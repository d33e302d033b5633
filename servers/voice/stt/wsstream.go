package stt

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/domo-agent/domo/servers/voice/speechapi"
)

// Errors a stream can fail with, inside a *StreamError.
var (
	ErrDisconnected = errors.New("speech server closed the connection")
	ErrStalled      = errors.New("speech server stopped taking audio")
	ErrServer       = errors.New("speech server reported an error")
)

// StreamError is a stream that failed before its final transcript. The
// caller can fall back to a batch backend, or use Partial.
type StreamError struct {
	Partial string // what the server had transcribed before the failure
	Err     error
}

func (e *StreamError) Error() string {
	if e.Partial == "" {
		return e.Err.Error() + " (nothing transcribed yet)"
	}
	return fmt.Sprintf("%v (transcribed so far: %q)", e.Err, e.Partial)
}

func (e *StreamError) Unwrap() error { return e.Err }

// maxQueued is how much audio a stream holds for a server that is behind
// before it fails instead of growing without end.
const maxQueued = 30 * time.Second

type wsMessage struct {
	kind int // websocket.TextMessage or BinaryMessage
	data []byte
}

// wsStream is one utterance on a Deepgram-style WebSocket. Write only
// queues: a goroutine sends, with a deadline, so a slow server never holds
// up the capture loop; another goroutine reads the results.
type wsStream struct {
	conn         *websocket.Conn
	backend      string
	interim      func(string, bool)
	writeTimeout time.Duration
	maxBytes     int

	wake      chan struct{} // the queue has something
	stop      chan struct{} // closed when the stream is over
	finalized chan struct{} // closed when the answer to Finalize arrives
	readDone  chan struct{} // closed when the server's side has ended

	mu        sync.Mutex
	queue     []wsMessage
	queued    int  // bytes of audio in queue
	finishing bool // Finalize is queued: no more audio, a close is expected
	closed    bool
	err       error // first failure; reported as a *StreamError
	finals    []string
	guess     string // the current interim segment
	confSum   float64
	confN     int
	finalOnce sync.Once
	closeOnce sync.Once
	haltOnce  sync.Once
}

// Write queues pcm for the writing goroutine.
func (st *wsStream) Write(pcm []int16) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.err != nil {
		return st.errorLocked()
	}
	if st.finishing || st.closed {
		return errors.New("write on a finished speech stream")
	}
	if st.queued+2*len(pcm) > st.maxBytes {
		st.failLocked(fmt.Errorf("%w: %s of audio is waiting to be sent", ErrStalled, maxQueued))
		st.halt()
		return st.errorLocked()
	}
	b := make([]byte, 2*len(pcm))
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	st.queue = append(st.queue, wsMessage{kind: websocket.BinaryMessage, data: b})
	st.queued += len(b)
	st.signal()
	return nil
}

func (st *wsStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// Finish asks for the final transcript and returns as soon as the answer
// to Finalize arrives, without waiting for the server to hang up.
func (st *wsStream) Finish(ctx context.Context) (Result, error) {
	res := Result{Backend: st.backend}
	st.mu.Lock()
	if st.finishing || st.closed {
		st.mu.Unlock()
		return res, errors.New("speech stream already finished")
	}
	st.finishing = true
	if st.err != nil {
		err := st.errorLocked()
		st.mu.Unlock()
		st.Close()
		return res, err
	}
	st.queue = append(st.queue,
		wsMessage{kind: websocket.TextMessage, data: []byte(`{"type":"Finalize"}`)},
		wsMessage{kind: websocket.TextMessage, data: []byte(`{"type":"CloseStream"}`)})
	st.signal()
	st.mu.Unlock()

	select {
	case <-st.finalized:
	case <-st.readDone:
	case <-ctx.Done():
	}
	defer st.Close()
	st.mu.Lock()
	defer st.mu.Unlock()
	// The answer to Finalize is the final transcript, whatever happens to
	// the connection after it: a server may drop it straight away.
	final := false
	select {
	case <-st.finalized:
		final = true
	default:
		select {
		case <-st.readDone:
		default:
			st.failLocked(fmt.Errorf("no final transcript: %w", ctx.Err()))
		}
	}
	if st.err != nil && !final {
		return res, st.errorLocked()
	}
	res.Text = st.textLocked()
	if st.confN > 0 {
		res.Confidence = st.confSum / float64(st.confN)
	}
	return res, nil
}

// Close abandons the stream.
func (st *wsStream) Close() error {
	st.closeOnce.Do(func() {
		st.mu.Lock()
		st.closed = true
		polite := st.err == nil
		st.mu.Unlock()
		if polite {
			// Best effort: a server that stopped reading gets no more of
			// our time than this.
			msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
			_ = st.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(250*time.Millisecond))
		}
		st.halt()
	})
	return nil
}

// halt stops both goroutines; the stream is over.
func (st *wsStream) halt() {
	st.haltOnce.Do(func() {
		close(st.stop)
		st.conn.Close()
	})
}

func (st *wsStream) textLocked() string {
	parts := st.finals
	if st.guess != "" {
		parts = append(parts[:len(parts):len(parts)], st.guess)
	}
	return strings.Join(parts, " ")
}

// failLocked records the first failure; later ones are consequences.
func (st *wsStream) failLocked(err error) {
	if st.err == nil {
		st.err = err
	}
}

func (st *wsStream) errorLocked() error {
	return &StreamError{Partial: st.textLocked(), Err: st.err}
}

func (st *wsStream) writeLoop() {
	for {
		st.mu.Lock()
		for len(st.queue) == 0 {
			st.mu.Unlock()
			select {
			case <-st.wake:
			case <-st.stop:
				return
			}
			st.mu.Lock()
		}
		msg := st.queue[0]
		st.queue = st.queue[1:]
		if msg.kind == websocket.BinaryMessage {
			// A backlog goes out as fewer, larger messages.
			for len(st.queue) > 0 && st.queue[0].kind == websocket.BinaryMessage && len(msg.data) < 64<<10 {
				msg.data = append(msg.data, st.queue[0].data...)
				st.queue = st.queue[1:]
			}
			st.queued -= len(msg.data)
		}
		st.mu.Unlock()

		_ = st.conn.SetWriteDeadline(time.Now().Add(st.writeTimeout))
		if err := st.conn.WriteMessage(msg.kind, msg.data); err != nil {
			st.mu.Lock()
			var ne net.Error
			switch {
			case st.closed:
			case errors.As(err, &ne) && ne.Timeout():
				st.failLocked(fmt.Errorf("%w: it read nothing for %s", ErrStalled, st.writeTimeout))
			default:
				st.failLocked(fmt.Errorf("%w while sending audio: %v", ErrDisconnected, err))
			}
			st.mu.Unlock()
			st.halt()
			return
		}
	}
}

// serverMsg is what a Deepgram-style server sends.
type serverMsg struct {
	Type    string `json:"type"`
	Channel struct {
		Alternatives []struct {
			Transcript string  `json:"transcript"`
			Confidence float64 `json:"confidence"`
		} `json:"alternatives"`
	} `json:"channel"`
	IsFinal      bool `json:"is_final"`
	FromFinalize bool `json:"from_finalize"`
	// Error messages, in the shapes Deepgram has used.
	Description string `json:"description"`
	Message     string `json:"message"`
	ErrMsg      string `json:"err_msg"`
}

func (st *wsStream) readLoop() {
	defer close(st.readDone)
	for {
		_, data, err := st.conn.ReadMessage()
		if err != nil {
			st.readEnded(err)
			return
		}
		var m serverMsg
		if json.Unmarshal(data, &m) != nil {
			continue // not ours to understand
		}
		switch {
		case m.Type == "Results":
			st.result(m)
		case m.Type == "Error" || m.ErrMsg != "":
			why := m.Description
			for _, s := range []string{m.Message, m.ErrMsg} {
				if why == "" {
					why = s
				}
			}
			st.mu.Lock()
			st.failLocked(fmt.Errorf("%w: %s", ErrServer, speechapi.Trim(why)))
			st.mu.Unlock()
			st.halt()
			return
		}
		// Metadata, SpeechStarted, UtteranceEnd carry nothing we need.
	}
}

func (st *wsStream) result(m serverMsg) {
	text, conf := "", 0.0
	if len(m.Channel.Alternatives) > 0 {
		text = strings.TrimSpace(m.Channel.Alternatives[0].Transcript)
		conf = m.Channel.Alternatives[0].Confidence
	}
	st.mu.Lock()
	if m.IsFinal {
		st.guess = ""
		if text != "" {
			st.finals = append(st.finals, text)
			st.confSum += conf
			st.confN++
		}
	} else {
		st.guess = text
	}
	full := st.textLocked()
	closed := st.closed
	st.mu.Unlock()
	if st.interim != nil && !closed {
		st.interim(full, m.IsFinal)
	}
	if m.FromFinalize {
		st.finalOnce.Do(func() { close(st.finalized) })
	}
}

// readEnded decides whether the server hanging up is the end of a
// finished stream or a failure.
func (st *wsStream) readEnded(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.err != nil {
		return
	}
	defer func() {
		if st.err != nil {
			st.halt()
		}
	}()
	code, reason := websocket.CloseAbnormalClosure, ""
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		code, reason = ce.Code, ce.Text
	}
	if st.finishing {
		switch code {
		case websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived:
			return // the answer to CloseStream
		}
	}
	detail := "close code " + strconv.Itoa(code)
	if reason != "" {
		detail += ": " + speechapi.Trim(reason)
	}
	st.failLocked(fmt.Errorf("%w before the final transcript (%s)", ErrDisconnected, detail))
}
