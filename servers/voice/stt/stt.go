// Package stt owns speech to text for the domo-voice server: the backends
// (an OpenAI-compatible server, a Deepgram-style streaming WebSocket,
// offline pocketsphinx with its wake phrase spotter) and the failover
// between them. It takes samples that were already captured; it must not
// open audio devices.
package stt

import (
	"context"
	"errors"
	"strings"
)

// Result is one transcript.
type Result struct {
	Text       string
	Backend    string  // Name() of the backend that produced it
	Confidence float64 // 0 when the backend does not say
}

// Transcriber turns one finished utterance (mono 16-bit samples at rate Hz)
// into text.
type Transcriber interface {
	Name() string
	Transcribe(ctx context.Context, pcm []int16, rate int) (Result, error)
	// Check says whether the backend can work now (server reachable,
	// program installed), for voice_status. It returns within ctx.
	Check(ctx context.Context) error
}

// Streamer transcribes while the user speaks.
type Streamer interface {
	Transcriber
	// Start opens a stream of audio at rate Hz. interim, when not nil, is
	// called with the transcript so far as it changes; final is true when
	// the text ends with a segment the backend will not revise.
	Start(ctx context.Context, rate int, interim func(text string, final bool)) (Stream, error)
}

// Stream is one utterance being transcribed as it is captured.
type Stream interface {
	// Write queues audio as captured (20 ms frames). It does not wait for
	// a slow server; it fails rather than drop audio.
	Write(pcm []int16) error
	// Finish ends the speech: it flushes, asks for the final transcript,
	// waits for it within ctx, and closes the stream.
	Finish(ctx context.Context) (Result, error)
	// Close abandons the stream. It is idempotent and safe after Finish.
	Close() error
}

// Chain tries backends in order (failover), returning the first success.
type Chain []Transcriber

// Transcribe asks each backend in turn. When all fail, the error is a
// *ChainError naming each backend and why. A cancelled ctx stops the
// chain at once.
func (c Chain) Transcribe(ctx context.Context, pcm []int16, rate int) (Result, error) {
	if len(c) == 0 {
		return Result{}, errors.New("no speech-to-text backend is configured")
	}
	var all ChainError
	for _, t := range c {
		res, err := t.Transcribe(ctx, pcm, rate)
		if err == nil {
			if res.Backend == "" {
				res.Backend = t.Name()
			}
			return res, nil
		}
		all.Backends = append(all.Backends, t.Name())
		all.Errs = append(all.Errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return Result{}, &all
}

// ChainError is the failure of every backend a Chain tried, in order.
type ChainError struct {
	Backends []string
	Errs     []error
}

func (e *ChainError) Error() string {
	var b strings.Builder
	b.WriteString("speech to text failed")
	for i, name := range e.Backends {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(e.Errs[i].Error())
	}
	return b.String()
}

// Unwrap gives errors.Is and errors.As each backend's error.
func (e *ChainError) Unwrap() []error { return e.Errs }
