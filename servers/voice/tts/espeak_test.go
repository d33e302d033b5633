package tts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/voice/voicetest"
	"github.com/domo-agent/domo/servers/voice/wav"
)

// needEspeak skips a test where espeak-ng is not installed; Taskfile's
// setup installs it.
func needEspeak(tb testing.TB) {
	tb.Helper()
	voicetest.RequirePrograms(tb, "espeak-ng")
}

// recorder is a sink that keeps all audio.
type recorder struct {
	pcm   []int16
	rates []int
	calls int
}

func (r *recorder) sink(pcm []int16, rate int) error {
	r.pcm = append(r.pcm, pcm...)
	if !slices.Contains(r.rates, rate) {
		r.rates = append(r.rates, rate)
	}
	r.calls++
	return nil
}

func (r *recorder) seconds() float64 {
	if len(r.rates) != 1 {
		return 0
	}
	return float64(len(r.pcm)) / float64(r.rates[0])
}

// espeakChildren counts the espeak-ng processes this test process
// started and has not reaped; -1 where /proc cannot tell.
func espeakChildren(tb testing.TB) int {
	tb.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	me := strconv.Itoa(os.Getpid())
	n := 0
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …
		s := string(stat)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if s[open+1:end] == "espeak-ng" && len(f) > 1 && f[1] == me {
			n++
		}
	}
	return n
}

func TestEspeakSynthesize(t *testing.T) {
	needEspeak(t)
	dir := t.TempDir()
	tests := []struct {
		name     string
		text     string
		opts     Options
		min, max float64 // seconds of audio
	}{
		{name: "two sentences", text: "Hello world. This is a test.", min: 1.2, max: 4},
		{name: "default voice named", text: "Hello world. This is a test.", opts: Options{Voice: "en-us"}, min: 1.2, max: 4},
		{name: "another language", text: "Guten Tag.", opts: Options{Voice: "de"}, min: 0.4, max: 3},
		{name: "variant", text: "Hello world.", opts: Options{Voice: "en+f3"}, min: 0.4, max: 3},
		{name: "leading dash is spoken", text: "--version", min: 0.3, max: 3},
		{
			name: "options in the text are spoken",
			text: "-v xx --help -s 80 -w " + filepath.Join(dir, "pwned.wav") + " --stdout",
			min:  1, max: 15,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			e := NewEspeak(EspeakConfig{})
			if err := e.Synthesize(t.Context(), tt.text, tt.opts, rec.sink); err != nil {
				t.Fatalf("Synthesize: %v", err)
			}
			if !slices.Equal(rec.rates, []int{22050}) {
				t.Errorf("rates %v, want [22050]", rec.rates)
			}
			if s := rec.seconds(); s < tt.min || s > tt.max {
				t.Errorf("%.2f s of audio, want %.1f to %.1f", s, tt.min, tt.max)
			}
			if rms := wav.RMS(rec.pcm); rms < 300 {
				t.Errorf("RMS %.0f: no speech in the audio", rms)
			}
			if rec.calls < 2 {
				t.Errorf("sink called %d times: audio came in one piece, not as it was made", rec.calls)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned.wav")); err == nil {
		t.Error("text was taken as options: espeak-ng wrote the file named in it")
	}
}

func TestEspeakSpeed(t *testing.T) {
	needEspeak(t)
	e := NewEspeak(EspeakConfig{})
	text := "The quick brown fox jumps over the lazy dog. It was not amused."
	var seconds []float64
	for _, speed := range []float64{1, 2} {
		var rec recorder
		if err := e.Synthesize(t.Context(), text, Options{Speed: speed}, rec.sink); err != nil {
			t.Fatalf("speed %g: %v", speed, err)
		}
		seconds = append(seconds, rec.seconds())
	}
	if seconds[1] > 0.75*seconds[0] {
		t.Errorf("speed 2 gave %.2f s, speed 1 %.2f s: want clearly shorter", seconds[1], seconds[0])
	}
}

func TestEspeakBadVoice(t *testing.T) {
	needEspeak(t)
	tests := []struct {
		name  string
		voice string
		want  []string
	}{
		{name: "unknown", voice: "xx-nowhere", want: []string{`"xx-nowhere"`, "en-us", "espeak-ng --voices"}},
		{name: "unknown of a known language", voice: "de_xx", want: []string{`"de_xx"`, "try de"}},
		{name: "looks like an option", voice: "--help", want: []string{`"--help"`}},
		{name: "has a space", voice: "en -w x.wav", want: []string{`"en -w x.wav"`}},
	}
	e := NewEspeak(EspeakConfig{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			err := e.Synthesize(t.Context(), "Hello.", Options{Voice: tt.voice}, rec.sink)
			if !errors.Is(err, ErrUnknownVoice) {
				t.Fatalf("err = %v, want ErrUnknownVoice", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if rec.calls != 0 {
				t.Errorf("sink called %d times", rec.calls)
			}
		})
	}
}

func TestEspeakErrors(t *testing.T) {
	needEspeak(t)
	errStop := errors.New("stop")
	tests := []struct {
		name string
		cfg  EspeakConfig
		text string
		opts Options
		sink Sink
		want error  // errors.Is
		msg  string // or in the message
	}{
		{name: "empty text", text: " \n", want: ErrNothingToSay},
		{name: "speed too high", text: "Hi.", opts: Options{Speed: 5}, msg: "speed 5"},
		{name: "speed too low", text: "Hi.", opts: Options{Speed: 0.1}, msg: "speed 0.1"},
		{name: "sink error", text: "Hello there. How are you?", sink: func([]int16, int) error { return errStop }, want: errStop},
		{name: "program missing", cfg: EspeakConfig{Program: "/nonexistent/espeak-ng"}, text: "Hi.", msg: "starting espeak-ng"},
		{name: "program fails", cfg: EspeakConfig{Program: "false"}, text: "Hi.", msg: "espeak-ng"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := tt.sink
			if sink == nil {
				sink = (&recorder{}).sink
			}
			err := NewEspeak(tt.cfg).Synthesize(t.Context(), tt.text, tt.opts, sink)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q lacks %q", err, tt.msg)
			}
			if n := espeakChildren(t); n > 0 {
				t.Errorf("%d espeak-ng processes left", n)
			}
		})
	}
}

func TestEspeakCancel(t *testing.T) {
	needEspeak(t)
	// About 85 s of speech: espeak-ng fills the pipe and waits for us.
	text := strings.Repeat("This is one more sentence of a long reply. ", 40)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	alive, calls := -1, 0
	sink := func(pcm []int16, rate int) error {
		calls++
		if calls == 1 {
			alive = espeakChildren(t)
			cancel()
		}
		return nil
	}
	err := NewEspeak(EspeakConfig{}).Synthesize(ctx, text, Options{}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("sink called %d times, want once: audio went on after cancel", calls)
	}
	if alive == -1 {
		t.Skip("no /proc to see processes in")
	}
	if alive != 1 {
		t.Errorf("%d espeak-ng processes while speaking, want 1", alive)
	}
	if n := espeakChildren(t); n != 0 {
		t.Errorf("%d espeak-ng processes left after cancel", n)
	}
}

func TestEspeakCheck(t *testing.T) {
	needEspeak(t)
	tests := []struct {
		name    string
		program string
		wantErr bool
	}{
		{name: "installed", program: ""},
		{name: "missing", program: "no-such-espeak-ng", wantErr: true},
		{name: "fails to run", program: "false", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := NewEspeak(EspeakConfig{Program: tt.program}).Check(t.Context())
			if (err != nil) != tt.wantErr {
				t.Errorf("Check() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestParseVoices(t *testing.T) {
	out := `Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  af              --/M      Afrikaans          gmw/af
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
 5  en-us           --/M      us-mbrola-2        mb/mb-us2            (en 7)
 5  de              --/M      German             gmw/de
`
	tests := []struct {
		name  string
		asked string
		n     int
		want  []string
	}{
		{name: "same language first", asked: "en-xx", n: 3, want: []string{"en-gb", "en-us", "de"}},
		{name: "common next", asked: "zz", n: 3, want: []string{"en-us", "en-gb", "de"}},
		{name: "then any", asked: "", n: 10, want: []string{"en-us", "en-gb", "de", "af"}},
	}
	voices := parseVoices(out)
	if want := []string{"af", "en-gb", "en-us", "de"}; !slices.Equal(voices, want) {
		t.Fatalf("parseVoices = %q, want %q", voices, want)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := suggest(voices, tt.asked, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("suggest(%q) = %q, want %q", tt.asked, got, tt.want)
			}
		})
	}
}

func TestOptionsSpeed(t *testing.T) {
	tests := []struct {
		name    string
		speed   float64
		want    float64
		wantErr bool
	}{
		{name: "zero is normal", speed: 0, want: 1},
		{name: "slowest", speed: 0.25, want: 0.25},
		{name: "fastest", speed: 4, want: 4},
		{name: "too slow", speed: 0.2, wantErr: true},
		{name: "too fast", speed: 4.5, wantErr: true},
		{name: "negative", speed: -1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Options{Speed: tt.speed}.speed()
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("speed() = %g, %v; want %g, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// BenchmarkEspeakFirstAudio measures how long a reply waits for its first
// audio through Speak with espeak-ng, and how long all of it takes with a
// sink that plays nothing.
func BenchmarkEspeakFirstAudio(b *testing.B) {
	needEspeak(b)
	replies := []struct {
		name string
		text string
	}{
		{name: "one sentence", text: "Sure, the meeting is at three o'clock tomorrow."},
		{name: "two sentences", text: "Sure, the meeting is at three o'clock tomorrow. I added it to your calendar."},
	}
	e := NewEspeak(EspeakConfig{})
	for _, r := range replies {
		b.Run(r.name, func(b *testing.B) {
			var first, all time.Duration
			n := 0
			for b.Loop() {
				start := time.Now()
				got := false
				err := Speak(b.Context(), e, r.text, Options{}, func([]int16, int) error {
					if !got {
						first += time.Since(start)
						got = true
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				all += time.Since(start)
				n++
			}
			b.ReportMetric(float64(first.Microseconds())/1000/float64(n), "ms/first-audio")
			b.ReportMetric(float64(all.Microseconds())/1000/float64(n), "ms/all-audio")
		})
	}
}
