package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/domo-agent/domo/servers/voice"
	"github.com/domo-agent/domo/servers/voice/stt"
	"github.com/domo-agent/domo/servers/voice/vad"
	"github.com/domo-agent/domo/servers/voice/voicetest"
	"github.com/domo-agent/domo/servers/voice/wav"
)

// benchVoice measures the two latencies a spoken conversation feels:
// from the end of the user's speech to the final transcript (end-pointing
// hang-over plus the backend's answer), and from the reply's text to its
// first sound.
func benchVoice(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	if bin := voicetest.Missing("pocketsphinx_continuous"); bin != "" {
		return fmt.Errorf("%s is missing: run `go tool task setup`", bin)
	}
	if err := benchEndOfSpeech(ctx, w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return benchFirstAudio(ctx, w, root, tmp)
}

// pacedMic delivers recorded audio in 20 ms frames at the pace a
// microphone would, and notes when it delivered the last loud frame: the
// end of speech.
type pacedMic struct {
	pcm       []int16
	lastLoud  int // index of the frame holding the end of speech
	next      int
	start     time.Time
	speechEnd time.Time
}

func newPacedMic(pcm []int16) *pacedMic {
	m := &pacedMic{pcm: pcm}
	for i := 0; i+320 <= len(pcm); i += 320 {
		if wav.DBFS(pcm[i:i+320]) > -40 {
			m.lastLoud = i / 320
		}
	}
	return m
}

func (m *pacedMic) Read(ctx context.Context) ([]int16, error) {
	if m.start.IsZero() {
		m.start = time.Now()
	}
	i := m.next
	if (i+1)*320 > len(m.pcm) {
		return nil, fmt.Errorf("the recording ran out before the end-pointer ended the utterance")
	}
	// A microphone hands over a frame once it has been heard in full.
	time.Sleep(time.Until(m.start.Add(time.Duration(i+1) * 20 * time.Millisecond)))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.next++
	if i == m.lastLoud {
		m.speechEnd = time.Now()
	}
	return m.pcm[i*320 : (i+1)*320], nil
}

func (m *pacedMic) Device() string { return "recording" }
func (m *pacedMic) Close() error   { return nil }

const benchGrammar = `#JSGF V1.0;
grammar home;
public <command> = (turn | switch) (on | off) the (kitchen | bedroom | hall) (lights | heating);
`

func benchEndOfSpeech(ctx context.Context, w io.Writer) error {
	const sentence = "turn on the kitchen lights"
	sp, rate, err := voicetest.Speech(sentence)
	if err != nil {
		return err
	}
	speech := wav.Resample(sp, rate, 16000)
	// A quiet room around the sentence: -60 dBFS of hiss.
	hiss := func(d time.Duration) []int16 {
		out := make([]int16, int(d.Seconds()*16000))
		x := uint32(7)
		for i := range out {
			x = x*1664525 + 1013904223
			out[i] = int16(int32(x>>16)%64) - 32
		}
		return out
	}
	rec := append(append(hiss(time.Second), speech...), hiss(4*time.Second)...)

	// Both servers answer at once: what is timed is domo-voice's part.
	dg := voicetest.NewDeepgram(sentence, 0)
	defer dg.Close()
	wh := voicetest.NewWhisper(sentence, 0)
	defer wh.Close()
	backends := []struct {
		name string
		t    stt.Transcriber
	}{
		{"streaming (Deepgram protocol)", stt.NewStreaming(stt.StreamingConfig{URL: dg.ListenURL()})},
		{"OpenAI-compatible batch", stt.NewOpenAI(stt.OpenAIConfig{BaseURL: wh.BaseURL()})},
		{"pocketsphinx + JSGF grammar", stt.NewSphinx(stt.SphinxConfig{Grammar: benchGrammar})},
	}
	const runs = 8
	fmt.Fprintf(w, "voice: end of speech → final transcript, %q (%.2f s) in a quiet room, fed at real time in 20 ms frames, %d runs each\n",
		sentence, float64(len(speech))/16000, runs)
	fmt.Fprintf(w, "  %-32s %-10s %10s %10s %12s\n", "backend", "hang-over", "median", "p90", "minus hang")
	for _, b := range backends {
		for _, hang := range []time.Duration{200 * time.Millisecond, 800 * time.Millisecond} {
			if b.name != backends[0].name && hang != 200*time.Millisecond {
				continue
			}
			v := voice.New(voice.Options{STT: []stt.Transcriber{b.t}})
			var lat []time.Duration
			for range runs {
				mic := newPacedMic(rec)
				h, err := v.ListenTo(ctx, mic, voice.ListenConfig{VAD: vad.Config{Silence: hang, Wait: 5 * time.Second}})
				done := time.Now()
				if err != nil {
					return fmt.Errorf("%s: %w", b.name, err)
				}
				if h.Transcript != sentence {
					return fmt.Errorf("%s heard %q, want %q", b.name, h.Transcript, sentence)
				}
				lat = append(lat, done.Sub(mic.speechEnd))
			}
			m := median(lat)
			target := ""
			if b.name == backends[0].name && hang == 200*time.Millisecond {
				target = fmt.Sprintf("   target ≤ 300 ms: %s", met(m <= 300*time.Millisecond))
			}
			fmt.Fprintf(w, "  %-32s %-10s %10s %10s %12s%s\n", b.name, hang, fmtMS(m), fmtMS(p90(lat)), fmtMS(m-hang), target)
		}
	}
	fmt.Fprintln(w, "  (end of speech: when the frame holding the last sound was delivered; hang-over = silence_ms)")
	return nil
}

// benchFirstAudio times text to first sound for a two-sentence reply:
// domo-voice's voice_speak over stdio (by its own first_audio_ms, and as
// heard on the sink), against espeak-ng playing by itself and against
// synthesising the whole reply before playing it.
func benchFirstAudio(ctx context.Context, w io.Writer, root, tmp string) error {
	bin := filepath.Join(tmp, "domo-voice")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./servers/voice/cmd/domo-voice")
	var buildOut bytes.Buffer
	build.Dir, build.Stdout, build.Stderr = root, &buildOut, &buildOut
	if err := build.Run(); err != nil {
		return fmt.Errorf("build domo-voice: %v\n%s", err, buildOut.String())
	}
	p, err := voicetest.Start(tmp)
	if err != nil {
		return err
	}
	defer p.Close()
	undo := setenv(p.Env)
	defer undo()

	const reply = "The kitchen lights are on now. Tell me if you want them dimmed."
	const runs = 10
	s, err := start(ctx, server{argv: []string{bin}, env: p.Env})
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.initialize(); err != nil {
		return err
	}
	rec, err := p.Record()
	if err != nil {
		return err
	}
	defer rec.Stop()
	// heard waits for new sound on the sink after from, and says when it
	// arrived.
	heard := func(from int) (time.Time, error) {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			got := rec.Samples()
			for i := from; i+160 <= len(got); i += 160 {
				if wav.DBFS(got[i:i+160]) > -40 {
					return time.Now(), nil
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		return time.Time{}, fmt.Errorf("nothing was heard on the sink")
	}
	quiet := func() int {
		time.Sleep(400 * time.Millisecond)
		return len(rec.Samples())
	}
	type result struct {
		name   string
		server []time.Duration // as the server measured it
		sink   []time.Duration // as heard on the sink
	}
	results := []*result{{name: "domo-voice voice_speak (espeak-ng, sentence by sentence)"}, {name: "espeak-ng playing by itself"}, {name: "espeak-ng -w whole reply, then paplay"}}
	// The first playback opens the sound system; it is not what a
	// conversation feels after its first reply.
	if _, err := toolCall(s, "voice_speak", map[string]any{"text": "Ready."}); err != nil {
		return err
	}
	for range runs {
		from := quiet()
		t0 := time.Now()
		var spoken voice.Spoken
		errc := make(chan error, 1)
		go func() {
			raw, err := s.call("tools/call", map[string]any{"name": "voice_speak", "arguments": map[string]any{"text": reply}})
			if err == nil {
				var res struct {
					IsError           bool         `json:"isError"`
					StructuredContent voice.Spoken `json:"structuredContent"`
				}
				json.Unmarshal(raw, &res)
				if res.IsError {
					err = fmt.Errorf("voice_speak failed: %s", resultText(string(raw)))
				}
				spoken = res.StructuredContent
			}
			errc <- err
		}()
		at, err := heard(from)
		if err != nil {
			return err
		}
		if err := <-errc; err != nil {
			return err
		}
		results[0].sink = append(results[0].sink, at.Sub(t0))
		results[0].server = append(results[0].server, time.Duration(spoken.FirstAudio)*time.Millisecond)

		for i, argv := range [][]string{
			{"espeak-ng", reply},
			{"sh", "-c", `f=$(mktemp --suffix .wav) && espeak-ng -w "$f" "$1" && paplay "$f"; rm -f "$f"`, "sh", reply},
		} {
			from := quiet()
			t0 := time.Now()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), p.Env...)
			if err := cmd.Start(); err != nil {
				return err
			}
			at, err := heard(from)
			cmd.Wait()
			if err != nil {
				return fmt.Errorf("%s: %w", results[i+1].name, err)
			}
			results[i+1].sink = append(results[i+1].sink, at.Sub(t0))
		}
	}
	fmt.Fprintf(w, "voice: text → first audio for a two-sentence reply (%d characters), %d runs, PulseAudio null sink\n", len(reply), runs)
	fmt.Fprintf(w, "  %-58s %16s %16s\n", "", "first samples out", "heard on the sink")
	for i, r := range results {
		srv := "—"
		if len(r.server) > 0 {
			srv = fmtMS(median(r.server))
		}
		line := fmt.Sprintf("  %-58s %16s %16s", r.name, srv, fmtMS(median(r.sink)))
		if i == 0 {
			line += fmt.Sprintf("   target ≤ 150 ms (first samples): %s", met(median(r.server) <= 150*time.Millisecond))
		} else {
			line += fmt.Sprintf("   %.2f× domo-voice's time", ratio(median(r.sink), median(results[0].sink)))
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "  (first samples out: voice_speak's first_audio_ms, from the call to the first audio handed to PortAudio; heard: when the sink's monitor first carried sound, polled every 2 ms)")
	return nil
}
