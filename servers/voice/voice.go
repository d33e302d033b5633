// Package voice is domo-voice: an MCP server that listens through the
// microphone (voice activity end-pointing, speech to text with failover
// from a streaming backend to batch ones), speaks through the speakers
// (text to speech sentence by sentence, starting before the whole text is
// synthesised), and spots a wake phrase. Everything runs locally by
// default: espeak-ng speaks and pocketsphinx listens; OpenAI-compatible
// and streaming speech servers are used when configured.
package voice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/domo-agent/domo/internal/sentences"
	"github.com/domo-agent/domo/servers/voice/audio"
	"github.com/domo-agent/domo/servers/voice/stt"
	"github.com/domo-agent/domo/servers/voice/tts"
	"github.com/domo-agent/domo/servers/voice/vad"
	"github.com/domo-agent/domo/servers/voice/wav"
)

// Options configure a Voice.
type Options struct {
	// Input and Output name the devices; empty is the default device.
	Input, Output string
	// STT is the failover list of speech-to-text backends, tried in order.
	// A streaming backend first gets the audio while the user speaks.
	STT []stt.Transcriber
	// TTS is the failover list of text-to-speech engines.
	TTS []tts.Synth
	// Sphinx spots wake phrases; nil when pocketsphinx is not available.
	Sphinx *stt.Sphinx
	// Voice and Speed are the defaults for speaking.
	Voice string
	Speed float64
	// FinalWait bounds the wait for a streaming backend's final transcript
	// after the end of speech.
	FinalWait time.Duration
}

// Voice is the audio pipeline behind the tools.
type Voice struct {
	o Options

	mic sync.Mutex // one listener at a time
	spk sync.Mutex // one speaker at a time

	mu      sync.Mutex
	lastErr string
	lastAt  time.Time
}

// New makes a Voice.
func New(o Options) *Voice {
	if o.FinalWait <= 0 {
		o.FinalWait = 5 * time.Second
	}
	return &Voice{o: o}
}

// ErrSilentInput reports a microphone that gave only zero samples.
var ErrSilentInput = errors.New("the microphone delivered only digital silence (every sample zero)")

// noteErr remembers err for voice_status and returns it.
func (v *Voice) noteErr(err error) error {
	if err != nil && !errors.Is(err, context.Canceled) {
		v.mu.Lock()
		v.lastErr, v.lastAt = err.Error(), time.Now()
		v.mu.Unlock()
	}
	return err
}

// ListenConfig shapes one listening.
type ListenConfig struct {
	VAD vad.Config
	// Interim receives the streaming backend's text while the user speaks.
	Interim func(text string)
}

// Heard is the outcome of one listening.
type Heard struct {
	Transcript string `json:"transcript"`
	// Status is "speech", or "no_speech" when nobody spoke in time.
	Status   string `json:"status"`
	Backend  string `json:"backend,omitempty"`
	SpeechMS int    `json:"speech_ms"`
	// EndedBy says what ended the speech: "silence" (the hang-over) or
	// "max" (max_seconds).
	EndedBy string `json:"ended_by,omitempty"`
	Device  string `json:"device,omitempty"`
	// Failover lists backends that failed before one answered.
	Failover []string `json:"failover,omitempty"`
	// LatencyMS is from the end of speech to the final transcript.
	LatencyMS int `json:"latency_ms"`
}

// Listen captures one utterance and transcribes it. A device lost while
// listening is re-opened (on the new default when the named one is gone)
// and the listening retried once.
func (v *Voice) Listen(ctx context.Context, c ListenConfig) (Heard, error) {
	if len(v.o.STT) == 0 {
		return Heard{}, v.noteErr(errors.New("no speech-to-text backend is configured: start domo-voice with --stt (an OpenAI-compatible URL, a ws:// streaming URL, or pocketsphinx)"))
	}
	v.mic.Lock()
	defer v.mic.Unlock()
	h, err := withInput(ctx, v, func(in *audio.Input) (Heard, error) { return v.listen(ctx, in, c) })
	return h, v.noteErr(err)
}

// withInput opens the microphone and runs f on it, once more on a fresh
// device list when the device is lost or cannot be opened.
func withInput[T any](ctx context.Context, v *Voice, f func(in *audio.Input) (T, error)) (T, error) {
	var zero T
	name := v.o.Input
	for attempt := 0; ; attempt++ {
		in, err := audio.OpenInput(name)
		if err == nil {
			var out T
			out, err = f(in)
			in.Close()
			if err == nil || !errors.Is(err, audio.ErrDeviceLost) {
				return out, err
			}
		}
		if attempt > 0 || ctx.Err() != nil || errors.Is(err, audio.ErrUnavailable) {
			return zero, err
		}
		if errors.Is(err, audio.ErrNoDevice) && name == "" {
			// No device at all: a fresh look may find one that came.
			if rerr := audio.Refresh(); rerr != nil {
				return zero, err
			}
			continue
		}
		if rerr := audio.Refresh(); rerr != nil {
			return zero, fmt.Errorf("%w (re-opening the sound system failed too: %v)", err, rerr)
		}
		if errors.Is(err, audio.ErrDeviceLost) {
			// The named device may be gone for good: fall back to the new
			// default.
			name = ""
		}
	}
}

// Mic is what listening reads: 16 kHz mono frames of 20 ms as they are
// captured. *audio.Input is one; a benchmark feeds recorded speech at the
// pace of a microphone.
type Mic interface {
	Read(ctx context.Context) ([]int16, error)
	Device() string
	Close() error
}

var _ Mic = (*audio.Input)(nil)

// ListenTo is Listen on a given microphone.
func (v *Voice) ListenTo(ctx context.Context, in Mic, c ListenConfig) (Heard, error) {
	v.mic.Lock()
	defer v.mic.Unlock()
	return v.listen(ctx, in, c)
}

// listen runs the end-pointer over the microphone, streaming to the first
// backend when it can, then gets the final transcript.
func (v *Voice) listen(ctx context.Context, in Mic, c ListenConfig) (Heard, error) {
	ep := vad.New(c.VAD)
	h := Heard{Device: in.Device()}
	streamer, _ := v.o.STT[0].(stt.Streamer)
	var stream stt.Stream
	var streamErr error
	defer func() {
		if stream != nil {
			stream.Close()
		}
	}()
	interim := func(text string, final bool) {
		if c.Interim != nil && text != "" {
			c.Interim(text)
		}
	}
	for {
		frame, err := in.Read(ctx)
		if err != nil {
			return h, err
		}
		switch ep.Push(frame) {
		case vad.Start:
			if streamer != nil {
				stream, streamErr = streamer.Start(ctx, audio.Rate, interim)
				if streamErr == nil {
					streamErr = stream.Write(ep.Utterance())
				}
			}
		case vad.None:
			if stream != nil && streamErr == nil && len(ep.Utterance()) > 0 {
				streamErr = stream.Write(frame)
			}
		case vad.End:
			if ep.TooShort() {
				ep.Reset()
				if stream != nil {
					stream.Close()
					stream, streamErr = nil, nil
				}
				continue
			}
			in.Close()
			end := time.Now()
			h.Status, h.EndedBy = "speech", ep.Reason()
			h.SpeechMS = int(ep.Speech().Milliseconds())
			backends := v.o.STT
			if stream != nil {
				if streamErr == nil {
					fctx, cancel := context.WithTimeout(ctx, v.o.FinalWait)
					var res stt.Result
					res, streamErr = stream.Finish(fctx)
					cancel()
					if streamErr == nil {
						h.Transcript, h.Backend = strings.TrimSpace(res.Text), res.Backend
						h.LatencyMS = int(time.Since(end).Milliseconds())
						return h, nil
					}
				}
				h.Failover = append(h.Failover, fmt.Sprintf("%s: %v", streamer.Name(), streamErr))
				backends = backends[1:]
			}
			for _, b := range backends {
				res, err := b.Transcribe(ctx, ep.Utterance(), audio.Rate)
				if err == nil {
					h.Transcript, h.Backend = strings.TrimSpace(res.Text), cmp.Or(res.Backend, b.Name())
					h.LatencyMS = int(time.Since(end).Milliseconds())
					return h, nil
				}
				if ctx.Err() != nil {
					return h, ctx.Err()
				}
				h.Failover = append(h.Failover, fmt.Sprintf("%s: %v", b.Name(), err))
			}
			return h, fmt.Errorf("speech to text failed: %s", strings.Join(h.Failover, "; "))
		case vad.Timeout:
			if ep.Silent() {
				return h, fmt.Errorf("%w for %s on %q: it is muted, or this program may not use it; check the input device and its volume (voice_list_devices)",
					ErrSilentInput, ep.Heard().Round(time.Second), in.Device())
			}
			h.Status = "no_speech"
			return h, nil
		}
	}
}

// Spoken is the outcome of speaking.
type Spoken struct {
	Backend     string   `json:"backend"`
	Sentences   int      `json:"sentences"`
	AudioMS     int      `json:"audio_ms"`
	FirstAudio  int      `json:"first_audio_ms"`
	Interrupted bool     `json:"interrupted"`
	Device      string   `json:"device,omitempty"`
	Failover    []string `json:"failover,omitempty"`
}

// SpeakConfig shapes one speaking.
type SpeakConfig struct {
	Voice string
	Speed float64
}

// Speak says text, sentence by sentence, with the first engine that works.
// Cancelling ctx stops the sound at once.
func (v *Voice) Speak(ctx context.Context, text string, c SpeakConfig) (Spoken, error) {
	if len(v.o.TTS) == 0 {
		return Spoken{}, v.noteErr(errors.New("no text-to-speech engine is available: install espeak-ng or start domo-voice with --tts URL"))
	}
	if c.Voice == "" {
		c.Voice = v.o.Voice
	}
	if c.Speed == 0 {
		c.Speed = v.o.Speed
	}
	v.spk.Lock()
	defer v.spk.Unlock()
	sp := Spoken{Sentences: len(sentences.Split(sentences.ForSpeech(text)))}
	var failed []string
	retried := false
	for _, synth := range v.o.TTS {
	engine:
		for {
			err := v.speakWith(ctx, synth, text, c, &sp)
			switch {
			case err == nil:
				sp.Failover = failed
				return sp, nil
			case ctx.Err() != nil:
				sp.Interrupted = true
				return sp, ctx.Err()
			case errors.Is(err, audio.ErrDeviceLost) || errors.Is(err, audio.ErrNoDevice) || errors.Is(err, audio.ErrUnavailable):
				// The sound system failed, not the engine: re-read the
				// devices and try once more.
				if retried || errors.Is(err, audio.ErrUnavailable) || audio.Refresh() != nil {
					return sp, v.noteErr(err)
				}
				retried = true
				sp.AudioMS, sp.FirstAudio = 0, 0
			case sp.AudioMS > 0:
				// Part of it was heard: saying it again from the start with
				// another voice would confuse more than it helps.
				return sp, v.noteErr(fmt.Errorf("%s stopped after %d ms of audio: %w", synth.Name(), sp.AudioMS, err))
			default:
				failed = append(failed, fmt.Sprintf("%s: %v", synth.Name(), err))
				break engine
			}
		}
	}
	return sp, v.noteErr(fmt.Errorf("text to speech failed: %s", strings.Join(failed, "; ")))
}

// speakWith plays what synth makes of text on the output device, opened at
// the rate of the first audio.
func (v *Voice) speakWith(ctx context.Context, synth tts.Synth, text string, c SpeakConfig, sp *Spoken) (err error) {
	start := time.Now()
	var out *audio.Output
	defer func() {
		if out != nil {
			if err != nil || ctx.Err() != nil {
				out.Stop()
			} else {
				out.Drain(ctx)
			}
			out.Close()
		}
	}()
	var played int
	sink := func(pcm []int16, rate int) error {
		if out == nil {
			var err error
			if out, err = audio.OpenOutput(v.o.Output, rate); err != nil {
				return err
			}
			sp.Device = out.Device()
		}
		if rate != out.Rate() {
			pcm = wav.Resample(pcm, rate, out.Rate())
		}
		if played == 0 {
			sp.FirstAudio = int(time.Since(start).Milliseconds())
		}
		if err := out.Write(ctx, pcm); err != nil {
			return err
		}
		played += len(pcm)
		sp.AudioMS = int(int64(played) * 1000 / int64(out.Rate()))
		return nil
	}
	sp.Backend = synth.Name()
	return tts.Speak(ctx, synth, text, tts.Options{Voice: c.Voice, Speed: c.Speed}, sink)
}

// TranscribeFile transcribes a WAV file with the failover list.
func (v *Voice) TranscribeFile(ctx context.Context, path string) (stt.Result, time.Duration, error) {
	if len(v.o.STT) == 0 {
		return stt.Result{}, 0, errors.New("no speech-to-text backend is configured: start domo-voice with --stt")
	}
	f, err := os.Open(path)
	if err != nil {
		return stt.Result{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return stt.Result{}, 0, err
	}
	if !st.Mode().IsRegular() {
		return stt.Result{}, 0, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxFileBytes {
		return stt.Result{}, 0, fmt.Errorf("%s is %d MB; the limit is %d MB", path, st.Size()>>20, maxFileBytes>>20)
	}
	pcm, rate, err := wav.Decode(f)
	if err != nil {
		return stt.Result{}, 0, fmt.Errorf("%s: %w; convert it first, e.g. sox in.mp3 -r 16000 -c 1 out.wav", path, err)
	}
	d := time.Duration(len(pcm)) * time.Second / time.Duration(rate)
	if len(pcm) == 0 {
		return stt.Result{}, 0, fmt.Errorf("%s holds no audio", path)
	}
	if rate != audio.Rate {
		pcm, rate = wav.Resample(pcm, rate, audio.Rate), audio.Rate
	}
	res, err := stt.Chain(v.o.STT).Transcribe(ctx, pcm, rate)
	return res, d, v.noteErr(err)
}

// maxFileBytes bounds voice_transcribe_file: an hour of 16-bit 44.1 kHz
// stereo is 635 MB; a speech file is far smaller.
const maxFileBytes = 200 << 20

// Wake is the outcome of waiting for a wake phrase.
type Wake struct {
	Detected bool   `json:"detected"`
	Phrase   string `json:"phrase"`
	WaitedMS int    `json:"waited_ms"`
}

// WaitWake listens until phrase is heard or timeout passes.
func (v *Voice) WaitWake(ctx context.Context, phrase string, timeout time.Duration) (Wake, error) {
	w := Wake{Phrase: phrase}
	if v.o.Sphinx == nil {
		return w, v.noteErr(errors.New("wake phrases need pocketsphinx, which is not installed (Debian: apt install pocketsphinx pocketsphinx-en-us)"))
	}
	v.mic.Lock()
	defer v.mic.Unlock()
	start := time.Now()
	w, err := withInput(ctx, v, func(in *audio.Input) (Wake, error) {
		spot, err := v.o.Sphinx.Spot(ctx, phrase, audio.Rate)
		if err != nil {
			return w, err
		}
		defer spot.Close()
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		frames := make(chan []int16)
		errc := make(chan error, 1)
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			for {
				f, err := in.Read(rctx)
				if err != nil {
					errc <- err
					return
				}
				select {
				case frames <- f:
				case <-rctx.Done():
					return
				}
			}
		}()
		nonZero := false
		for {
			select {
			case f := <-frames:
				if !nonZero {
					for _, s := range f {
						if s != 0 {
							nonZero = true
							break
						}
					}
				}
				if err := spot.Write(f); err != nil {
					return w, err
				}
			case got, ok := <-spot.Detected():
				if !ok {
					if ctx.Err() != nil {
						return w, ctx.Err()
					}
					return w, errors.New("the wake phrase spotter stopped")
				}
				w.Detected, w.Phrase = true, got
				return w, nil
			case err := <-errc:
				return w, err
			case <-deadline.C:
				if !nonZero {
					return w, fmt.Errorf("%w for %s on %q: it is muted, or this program may not use it", ErrSilentInput, timeout, in.Device())
				}
				return w, nil
			case <-ctx.Done():
				return w, ctx.Err()
			}
		}
	})
	w.WaitedMS = int(time.Since(start).Milliseconds())
	if w.Phrase == "" {
		w.Phrase = phrase
	}
	return w, v.noteErr(err)
}

// LastError is the last error and when it happened.
func (v *Voice) LastError() (string, time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lastErr, v.lastAt
}
