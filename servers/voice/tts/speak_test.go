package tts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted is a Synth for tests: each sentence comes out as three chunks
// holding the sentence's letters and the chunk's number, so a sink can
// tell what it hears. before runs as a sentence starts and may block.
type scripted struct {
	before func(ctx context.Context, sentence string) error

	mu      sync.Mutex
	started []string
	running int // Synthesize calls not yet returned
}

var _ Synth = (*scripted)(nil)

const scriptedChunks = 3

func (s *scripted) Name() string                { return "scripted" }
func (s *scripted) Check(context.Context) error { return nil }

func (s *scripted) Synthesize(ctx context.Context, text string, o Options, sink Sink) error {
	s.mu.Lock()
	s.started = append(s.started, text)
	s.running++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
	}()
	if s.before != nil {
		if err := s.before(ctx, text); err != nil {
			return err
		}
	}
	for i := range scriptedChunks {
		pcm := append([]int16(nil), []int16(string2samples(text))...)
		pcm = append(pcm, int16(i))
		if err := sink(pcm, 16000); err != nil {
			return err
		}
	}
	return nil
}

func (s *scripted) state() (started []string, running int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.started), s.running
}

func string2samples(s string) []int16 {
	var pcm []int16
	for _, r := range s {
		pcm = append(pcm, int16(r))
	}
	return pcm
}

// heard decodes a scripted chunk: its sentence and its number.
func heard(pcm []int16) (string, int) {
	var b strings.Builder
	for _, s := range pcm[:len(pcm)-1] {
		b.WriteRune(rune(s))
	}
	return b.String(), int(pcm[len(pcm)-1])
}

// guard bounds a test that would hang if Speak were wrong; it is not a
// measure of speed.
func guard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestSpeakInOrder(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "sentences", text: "One. Two! Three?", want: []string{"One.", "Two!", "Three?"}},
		{name: "markdown", text: "# Plan\n\n- **buy** milk\n- call [Bob](https://bob.example)\n\n```\nrm -rf /\n```", want: []string{"Plan", "buy milk", "call Bob", "Code omitted."}},
		{name: "one", text: "Just this", want: []string{"Just this"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			sink := func(pcm []int16, rate int) error {
				if rate != 16000 {
					t.Errorf("rate %d", rate)
				}
				s, i := heard(pcm)
				got = append(got, fmt.Sprintf("%s#%d", s, i))
				return nil
			}
			synth := &scripted{}
			if err := Speak(guard(t), synth, tt.text, Options{}, sink); err != nil {
				t.Fatalf("Speak: %v", err)
			}
			var want []string
			for _, s := range tt.want {
				for i := range scriptedChunks {
					want = append(want, fmt.Sprintf("%s#%d", s, i))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("heard %q\nwant %q", got, want)
			}
			if started, _ := synth.state(); !slices.Equal(started, tt.want) {
				t.Errorf("synthesized %q, want %q", started, tt.want)
			}
		})
	}
}

// TestSpeakFirstSentenceFirst has sentence two wait in synthesis until the
// sink heard sentence one: a Speak that synthesized everything before
// playing would never finish.
func TestSpeakFirstSentenceFirst(t *testing.T) {
	oneHeard := make(chan struct{})
	var once sync.Once
	synth := &scripted{before: func(ctx context.Context, sentence string) error {
		if sentence != "Two." {
			return nil
		}
		select {
		case <-oneHeard:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	sink := func(pcm []int16, rate int) error {
		if s, _ := heard(pcm); s == "One." {
			once.Do(func() { close(oneHeard) })
		}
		return nil
	}
	if err := Speak(guard(t), synth, "One. Two. Three.", Options{}, sink); err != nil {
		t.Fatalf("Speak: %v", err)
	}
}

// TestSpeakPrefetch holds the sink on sentence one's first chunk until
// synthesis has gone on to the sentences after it, and checks that it
// never runs more than ahead sentences past what was heard.
func TestSpeakPrefetch(t *testing.T) {
	var mu sync.Mutex
	done := 0 // sentences heard to their last chunk
	var overrun []string
	synth := &scripted{before: func(ctx context.Context, sentence string) error {
		mu.Lock()
		defer mu.Unlock()
		n := int(sentence[1] - '0') // "S3." is sentence 3
		if n > done+1+ahead {
			overrun = append(overrun, fmt.Sprintf("%s started with %d heard", sentence, done))
		}
		return nil
	}}
	ctx := guard(t)
	sink := func(pcm []int16, rate int) error {
		s, i := heard(pcm)
		if s == "S1." && i == 0 {
			for { // wait for the prefetch
				if started, _ := synth.state(); len(started) >= 1+ahead {
					break
				}
				select {
				case <-ctx.Done():
					return errors.New("synthesis did not run ahead")
				case <-time.After(time.Millisecond):
				}
			}
		}
		if i == scriptedChunks-1 {
			mu.Lock()
			done++
			mu.Unlock()
		}
		return nil
	}
	if err := Speak(ctx, synth, "S1. S2. S3. S4. S5. S6. S7.", Options{}, sink); err != nil {
		t.Fatalf("Speak: %v", err)
	}
	if len(overrun) > 0 {
		t.Errorf("synthesis ran too far ahead: %q", overrun)
	}
}

func TestSpeakCancel(t *testing.T) {
	twoStarted := make(chan struct{})
	synth := &scripted{before: func(ctx context.Context, sentence string) error {
		if sentence == "Two." {
			close(twoStarted)
			<-ctx.Done() // a slow engine: Speak must stop it
			return ctx.Err()
		}
		return nil
	}}
	ctx, cancel := context.WithCancel(guard(t))
	defer cancel()
	canceled := false
	sink := func(pcm []int16, rate int) error {
		if canceled {
			t.Error("sink called after cancel")
		}
		<-twoStarted
		cancel()
		canceled = true
		return nil
	}
	err := Speak(ctx, synth, "One. Two. Three.", Options{}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	started, running := synth.state()
	if running != 0 {
		t.Errorf("%d syntheses still running after Speak returned", running)
	}
	if slices.Contains(started, "Three.") {
		t.Errorf("synthesized %q after cancel", started)
	}
}

func TestSpeakErrors(t *testing.T) {
	errEngine := errors.New("engine broke")
	errSink := errors.New("speaker unplugged")
	tests := []struct {
		name      string
		text      string
		opts      Options
		failOn    string // the sentence the engine fails on
		sinkErr   error
		want      error // errors.Is
		msg       string
		wantHeard []string // sentences heard before the error
	}{
		{name: "empty", text: "  \n", want: ErrNothingToSay},
		{name: "only markup", text: "<!-- nothing -->\n\n---", want: ErrNothingToSay},
		{name: "bad speed", text: "Hi.", opts: Options{Speed: 9}, msg: "speed 9"},
		{name: "engine fails later", text: "One. Two. Three.", failOn: "Two.", want: errEngine, msg: "scripted, sentence 2 of 3", wantHeard: []string{"One."}},
		{name: "engine fails first", text: "One. Two.", failOn: "One.", want: errEngine, msg: "sentence 1 of 2"},
		{name: "sink fails", text: "One. Two.", sinkErr: errSink, want: errSink, wantHeard: []string{"One."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synth := &scripted{before: func(ctx context.Context, sentence string) error {
				if sentence == tt.failOn {
					return errEngine
				}
				return nil
			}}
			var got []string
			sink := func(pcm []int16, rate int) error {
				if s, _ := heard(pcm); !slices.Contains(got, s) {
					got = append(got, s)
				}
				return tt.sinkErr
			}
			err := Speak(guard(t), synth, tt.text, tt.opts, sink)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q lacks %q", err, tt.msg)
			}
			if !slices.Equal(got, tt.wantHeard) {
				t.Errorf("heard %q, want %q", got, tt.wantHeard)
			}
			if _, running := synth.state(); running != 0 {
				t.Errorf("%d syntheses still running after Speak returned", running)
			}
		})
	}
}

// TestSpeakEspeak runs the whole pipeline on the real engine.
func TestSpeakEspeak(t *testing.T) {
	needEspeak(t)
	var rec recorder
	text := "**Done.** I saved the file to `notes.txt`, see https://example.com/a/b for details."
	if err := Speak(t.Context(), NewEspeak(EspeakConfig{}), text, Options{}, rec.sink); err != nil {
		t.Fatalf("Speak: %v", err)
	}
	if s := rec.seconds(); s < 2 || s > 10 {
		t.Errorf("%.2f s of audio, want 2 to 10", s)
	}
}
