// Package tts holds the text-to-speech engines of the voice server and the
// pipeline that speaks a reply sentence by sentence. Audio comes out
// through a sink function, never a device: playing it is the caller's
// business.
package tts

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Options choose how a text is spoken.
type Options struct {
	Voice string  // the engine's voice name; "" is its default
	Speed float64 // 1.0 is normal, 0 means 1.0; valid from 0.25 to 4
}

// speed is the speed to use, checked.
func (o Options) speed() (float64, error) {
	switch {
	case o.Speed == 0:
		return 1, nil
	case o.Speed < 0.25 || o.Speed > 4:
		return 0, fmt.Errorf("speed %g is outside 0.25 to 4", o.Speed)
	}
	return o.Speed, nil
}

// Sink receives audio as it is produced: mono 16-bit samples at rate Hz.
// It may be called many times per text. It must not keep pcm after it
// returns; an error from it stops the synthesis and is returned.
type Sink func(pcm []int16, rate int) error

// Synth is a text-to-speech engine.
type Synth interface {
	// Name names the engine for status and errors.
	Name() string
	// Synthesize speaks text into sink as the audio is produced. It
	// returns when all of it went to sink, or at once when ctx ends.
	Synthesize(ctx context.Context, text string, o Options, sink Sink) error
	// Check reports whether the engine is usable now.
	Check(ctx context.Context) error
}

var (
	// ErrNothingToSay is returned for a text with no words to speak.
	ErrNothingToSay = errors.New("nothing to say")
	// ErrUnknownVoice is wrapped by errors for a voice an engine lacks.
	ErrUnknownVoice = errors.New("unknown voice")
)

// chunkSamples is the most samples passed to a sink at once: about 45 ms
// at 22 kHz, small enough for playback to start early.
const chunkSamples = 1024

// sampleReader is a wav.Reader or a wav.PCM.
type sampleReader interface {
	Read(p []int16) (int, error)
}

// pump passes the samples of r to sink as they arrive, until the end of r
// or of ctx.
func pump(ctx context.Context, r sampleReader, rate int, sink Sink) error {
	buf := make([]int16, chunkSamples)
	for {
		n, err := r.Read(buf)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n > 0 {
			if err := sink(buf[:n], rate); err != nil {
				return err
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}
