package stt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/voice/voicetest"
)

// need skips a test when a program it drives is missing, loudly, and
// fails it under CI, where the setup task installs them.
func need(t *testing.T, programs ...string) {
	t.Helper()
	voicetest.RequirePrograms(t, programs...)
	if err := NewSphinx(SphinxConfig{}).Check(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("!!! ", err, " !!!")
	}
}

// speak is espeak-ng's voice saying text, read from its stdout the way
// the voice server reads it (a WAV header of unknown length), at
// espeak-ng's own 22.05 kHz.
func speak(t *testing.T, text string) ([]int16, int) {
	t.Helper()
	pcm, rate, err := voicetest.Speech(text)
	if err != nil {
		t.Fatal(err)
	}
	return pcm, rate
}

const lightsGrammar = `#JSGF V1.0;
grammar lights;
public <command> = (turn on | turn off) the (kitchen | bedroom | hall) light;
`

func TestSphinxTranscribe(t *testing.T) {
	need(t, "pocketsphinx_continuous", "espeak-ng")
	file := filepath.Join(t.TempDir(), "lights.gram")
	if err := os.WriteFile(file, []byte(lightsGrammar), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		grammar string
		say     string
		want    string
	}{
		{name: "inline grammar", grammar: lightsGrammar, say: "turn on the kitchen light", want: "turn on the kitchen light"},
		{name: "grammar file", grammar: file, say: "turn off the bedroom light", want: "turn off the bedroom light"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcm, rate := speak(t, tt.say)
			s := NewSphinx(SphinxConfig{Grammar: tt.grammar})
			start := time.Now()
			res, err := s.Transcribe(context.Background(), pcm, rate)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%.1f s of speech decoded in %v", float64(len(pcm))/float64(rate), time.Since(start))
			if res.Text != tt.want || res.Backend != "pocketsphinx" {
				t.Errorf("got %+v, want %q", res, tt.want)
			}
		})
	}
}

func TestSphinxFailures(t *testing.T) {
	need(t, "pocketsphinx_continuous")
	tests := []struct {
		name string
		cfg  SphinxConfig
		want string
	}{
		{
			name: "grammar word not in the dictionary",
			cfg:  SphinxConfig{Grammar: "#JSGF V1.0; grammar g; public <c> = hey domo;"},
			want: "The word 'domo' is missing in the dictionary",
		},
		{
			name: "no such grammar file",
			cfg:  SphinxConfig{Grammar: "/nonexistent/lights.gram"},
			want: "Failed to open /nonexistent/lights.gram",
		},
		{
			name: "no such model",
			cfg:  SphinxConfig{HMM: "/nonexistent/model"},
			want: "/nonexistent/model",
		},
		{
			name: "not installed",
			cfg:  SphinxConfig{Program: "no-such-pocketsphinx"},
			want: "no-such-pocketsphinx is not installed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSphinx(tt.cfg).Transcribe(context.Background(), make([]int16, 1600), 16000)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			t.Log(err)
		})
	}
}

func TestSphinxCheck(t *testing.T) {
	need(t, "pocketsphinx_continuous")
	tests := []struct {
		name string
		cfg  SphinxConfig
		want string // "" for no error
	}{
		{name: "installed"},
		{name: "not installed", cfg: SphinxConfig{Program: "no-such-pocketsphinx"}, want: "not installed"},
		{name: "no model", cfg: SphinxConfig{HMM: "/nonexistent"}, want: "acoustic model is missing"},
		{name: "no dictionary", cfg: SphinxConfig{Dict: "/nonexistent.dict"}, want: "dictionary is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := NewSphinx(tt.cfg).Check(context.Background())
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestSpotDictionary(t *testing.T) {
	need(t, "pocketsphinx_continuous")
	tests := []struct {
		name     string
		phrase   string
		wantWord string
		wantErr  string
	}{
		{name: "unknown word", phrase: "hey domo", wantWord: "domo"},
		{name: "case does not matter", phrase: "Hey DOMO", wantWord: "domo"},
		{name: "empty", phrase: "  ", wantErr: "no wake phrase"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, err := NewSphinx(SphinxConfig{}).Spot(context.Background(), tt.phrase, 16000)
			if err == nil {
				sp.Close()
				t.Fatal("no error")
			}
			var uw *UnknownWordError
			switch {
			case tt.wantWord != "":
				if !errors.As(err, &uw) || uw.Word != tt.wantWord {
					t.Fatalf("err = %v, want an UnknownWordError for %q", err, tt.wantWord)
				}
				if !strings.Contains(err.Error(), `wake phrase word "domo" is not in the pocketsphinx dictionary`) ||
					!strings.Contains(err.Error(), `"hey computer"`) {
					t.Errorf("err = %q", err)
				}
			case !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// synthetic is the tuning espeak-ng's voice needs (see PhoneLoop).
var synthetic = SphinxConfig{Keyphrase: "hey computer", Threshold: 1e-10, PhoneLoop: 1e-20}

// feed writes audio at rate in 20 ms frames, as a microphone would
// deliver it, but without waiting.
func feed(t *testing.T, sp Spotter, pcm []int16, rate int) {
	t.Helper()
	n := rate / 50
	for i := 0; i < len(pcm); i += n {
		if err := sp.Write(pcm[i:min(i+n, len(pcm))]); err != nil {
			t.Fatal(err)
		}
	}
}

// drain ends the audio and collects what the spotter heard until the
// program has read everything and exited.
func drain(t *testing.T, sp Spotter) []string {
	t.Helper()
	if err := sp.(*sphinxSpotter).stdin.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	timeout := time.After(hangGuard)
	for {
		select {
		case p, ok := <-sp.Detected():
			if !ok {
				return got
			}
			got = append(got, p)
		case <-timeout:
			t.Fatal("pocketsphinx did not finish")
		}
	}
}

func TestSpot(t *testing.T) {
	need(t, "pocketsphinx_continuous", "espeak-ng")
	const rate = 22050
	wake, _ := speak(t, "hey computer")
	lights, _ := speak(t, "turn on the kitchen light")
	weather, _ := speak(t, "what is the weather like today")
	silence := func(seconds float64) []int16 { return make([]int16, int(seconds*rate)) }
	// Room noise: a quiet hiss, about -60 dBFS.
	noise := func(seconds float64) []int16 {
		pcm := make([]int16, int(seconds*rate))
		x := uint32(1)
		for i := range pcm {
			x = x*1664525 + 1013904223
			pcm[i] = int16(int32(x>>16)%64) - 32
		}
		return pcm
	}
	cat := func(parts ...[]int16) []int16 {
		var all []int16
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	tests := []struct {
		name  string
		audio []int16
		want  int
	}{
		{name: "after silence", audio: cat(silence(2), wake, silence(1)), want: 1},
		{name: "after room noise", audio: cat(noise(2), wake, noise(1)), want: 1},
		{name: "twice, among other speech", audio: cat(silence(1), lights, silence(1), wake, silence(1), weather, silence(1), wake, silence(1)), want: 2},
		{name: "silence only", audio: silence(4), want: 0},
		{name: "other speech only", audio: cat(noise(1), lights, noise(1), weather, noise(1)), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			sp, err := NewSphinx(synthetic).Spot(ctx, "", rate)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			feed(t, sp, tt.audio, rate)
			if tt.want > 0 {
				// The spotter reports while the audio is still flowing.
				start := time.Now()
				select {
				case p := <-sp.Detected():
					if p != "hey computer" {
						t.Errorf("detected %q", p)
					}
					t.Logf("first detection %v after the last frame was written", time.Since(start))
				case <-ctx.Done():
					t.Fatal("nothing detected before the audio ended")
				}
				tt.want--
			}
			if got := drain(t, sp); len(got) != tt.want {
				t.Errorf("%d more detections, want %d", len(got), tt.want)
			}
		})
	}
}

func TestSpotClose(t *testing.T) {
	need(t, "pocketsphinx_continuous")
	tests := []struct {
		name string
		stop func(sp Spotter, cancel context.CancelFunc)
	}{
		{name: "Close", stop: func(sp Spotter, cancel context.CancelFunc) { sp.Close() }},
		{name: "context", stop: func(sp Spotter, cancel context.CancelFunc) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sp, err := NewSphinx(synthetic).Spot(ctx, "", 16000)
			if err != nil {
				t.Fatal(err)
			}
			pid := sp.(*sphinxSpotter).cmd.Process.Pid
			tt.stop(sp, cancel)
			select {
			case _, ok := <-sp.Detected():
				if ok {
					t.Fatal("detected something in no audio")
				}
			case <-time.After(hangGuard):
				t.Fatal("the spotter did not stop")
			}
			if err := sp.Write(frame); err == nil {
				t.Error("Write after the spotter stopped succeeded")
			}
			if err := sp.Close(); err != nil {
				t.Error(err)
			}
			// Reaped, not a zombie: the process is gone from /proc.
			if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
				t.Errorf("process %d still exists", pid)
			}
		})
	}
}
