package vad

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

const rate = 16000

// signal builds audio from pieces: noise at a level, or a tone (a
// stand-in for voiced speech with a syllable rhythm) at a level.
type piece struct {
	d     time.Duration
	level float64 // dBFS
	tone  bool
}

func build(seed uint64, pieces ...piece) (pcm []int16, speechEnd time.Duration) {
	r := rand.New(rand.NewPCG(seed, 1))
	var at time.Duration
	for _, p := range pieces {
		n := int(p.d * rate / time.Second)
		amp := 32768 * math.Pow(10, p.level/20)
		for i := range n {
			var v float64
			if p.tone {
				t := float64(i) / rate
				// 4 syllables a second, never fully quiet between them.
				env := 0.6 + 0.4*math.Sin(2*math.Pi*4*t)
				v = amp * math.Sqrt2 * env * math.Sin(2*math.Pi*180*t)
			} else if p.level > -120 {
				v = amp * r.NormFloat64()
			}
			pcm = append(pcm, int16(max(-32768, min(32767, v))))
		}
		at += p.d
		if p.tone {
			speechEnd = at
		}
	}
	return pcm, speechEnd
}

// run pushes pcm in 20 ms frames until an End or Timeout.
func run(e *Endpointer, pcm []int16) (Event, time.Duration) {
	var starts int
	for i := 0; i+320 <= len(pcm); i += 320 {
		switch ev := e.Push(pcm[i : i+320]); ev {
		case Start:
			starts++
		case End:
			if e.TooShort() {
				e.Reset()
				continue
			}
			return End, time.Duration(i+320) * time.Second / rate
		case Timeout:
			return Timeout, time.Duration(i+320) * time.Second / rate
		}
	}
	return None, 0
}

func TestEndpointing(t *testing.T) {
	tests := []struct {
		name      string
		c         Config
		pieces    []piece
		want      Event
		reason    string
		minSpeech time.Duration
	}{
		{
			name:   "speech in quiet noise ends after the hang-over",
			c:      Config{Silence: 500 * time.Millisecond},
			pieces: []piece{{1 * time.Second, -55, false}, {1500 * time.Millisecond, -20, true}, {2 * time.Second, -55, false}},
			want:   End, reason: "silence", minSpeech: 1400 * time.Millisecond,
		},
		{
			name:   "speech over a loud fan: the floor adapts",
			c:      Config{Silence: 500 * time.Millisecond},
			pieces: []piece{{2 * time.Second, -35, false}, {1 * time.Second, -12, true}, {2 * time.Second, -35, false}},
			want:   End, reason: "silence", minSpeech: 900 * time.Millisecond,
		},
		{
			name:   "a pause shorter than the hang-over does not end it",
			c:      Config{Silence: 800 * time.Millisecond},
			pieces: []piece{{500 * time.Millisecond, -60, false}, {1 * time.Second, -20, true}, {500 * time.Millisecond, -60, false}, {1 * time.Second, -20, true}, {2 * time.Second, -60, false}},
			want:   End, reason: "silence", minSpeech: 2400 * time.Millisecond,
		},
		{
			name:   "a click is not speech",
			c:      Config{Silence: 300 * time.Millisecond, Wait: 3 * time.Second},
			pieces: []piece{{500 * time.Millisecond, -60, false}, {80 * time.Millisecond, -10, true}, {3 * time.Second, -60, false}},
			want:   Timeout, reason: "no speech",
		},
		{
			name:   "digital silence times out",
			c:      Config{Wait: 2 * time.Second},
			pieces: []piece{{3 * time.Second, -120, false}},
			want:   Timeout, reason: "no speech",
		},
		{
			name:   "endless speech stops at max",
			c:      Config{Max: 2 * time.Second},
			pieces: []piece{{300 * time.Millisecond, -60, false}, {5 * time.Second, -20, true}},
			want:   End, reason: "max", minSpeech: 1900 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcm, speechEnd := build(7, tt.pieces...)
			e := New(tt.c)
			ev, at := run(e, pcm)
			if ev != tt.want || e.Reason() != tt.reason {
				t.Fatalf("got %v (%q) at %v, want %v (%q); floor %.1f dB peak %.1f dB", ev, e.Reason(), at, tt.want, tt.reason, e.Floor(), e.Peak())
			}
			if ev != End {
				return
			}
			if e.Speech() < tt.minSpeech {
				t.Errorf("speech lasted %v, want at least %v", e.Speech(), tt.minSpeech)
			}
			if tt.reason == "silence" {
				// End comes one hang-over after the speech, give or take a frame.
				late := at - speechEnd
				if late < e.Config().Silence-40*time.Millisecond || late > e.Config().Silence+100*time.Millisecond {
					t.Errorf("ended %v after the speech, want about the hang-over %v", late, e.Config().Silence)
				}
			}
		})
	}
}

func TestPreRollKeepsTheOnset(t *testing.T) {
	pcm, _ := build(3, piece{1 * time.Second, -60, false}, piece{1 * time.Second, -20, true}, piece{1 * time.Second, -60, false})
	e := New(Config{Silence: 400 * time.Millisecond, PreRoll: 300 * time.Millisecond})
	if ev, _ := run(e, pcm); ev != End {
		t.Fatalf("no end: %v", ev)
	}
	u := e.Utterance()
	// The utterance holds the pre-roll's quiet before the first loud sample.
	first := -1
	for i, s := range u {
		if s > 3000 || s < -3000 {
			first = i
			break
		}
	}
	if lead := time.Duration(first) * time.Second / rate; lead < 200*time.Millisecond {
		t.Errorf("speech starts %v into the utterance; the pre-roll should keep about 300 ms before it", lead)
	}
	if got := time.Duration(len(u)) * time.Second / rate; got < 1200*time.Millisecond || got > 1700*time.Millisecond {
		t.Errorf("utterance is %v long, want the 1 s of speech plus pre-roll and a short tail", got)
	}
}

func TestSilentInput(t *testing.T) {
	e := New(Config{Wait: time.Second})
	zero := make([]int16, 320)
	for range 60 {
		e.Push(zero)
	}
	if !e.Silent() {
		t.Error("all-zero input not reported as silent")
	}
	e.Push([]int16{0, 1, 0})
	if e.Silent() {
		t.Error("input with a non-zero sample reported as silent")
	}
}
