//go:build unix

package voice

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
	"github.com/domo-agent/domo/servers/voice/audio"
	"github.com/domo-agent/domo/servers/voice/stt"
	"github.com/domo-agent/domo/servers/voice/tts"
	"github.com/domo-agent/domo/servers/voice/voicetest"
	"github.com/domo-agent/domo/servers/voice/wav"
)

// requireAudio skips (fails under CI) without PortAudio in the build or
// the audio packages on the machine, and starts a private PulseAudio.
func requireAudio(t *testing.T) *voicetest.Pulse {
	t.Helper()
	if !audio.Available {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and this test binary was built without PortAudio (cgo and portaudio19-dev)")
		}
		t.Skip("SKIPPING AUDIO TEST: built without PortAudio (install portaudio19-dev, enable cgo)")
	}
	return voicetest.New(t)
}

// client serves a Voice with o in-process.
func newClient(t *testing.T, o Options) *client.Client {
	t.Helper()
	srv, err := NewServer(New(o)).MCP()
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.Client(t, srv)
}

// speech is espeak-ng's rendering of text.
func speech(t *testing.T, text string) ([]int16, int) {
	t.Helper()
	pcm, rate, err := voicetest.Speech(text)
	if err != nil {
		t.Fatal(err)
	}
	return pcm, rate
}

// sayWhenListening waits until the server's capture stream is connected to
// the sound server, gives it time to really start (PulseAudio through ALSA
// drops what comes before), then plays pcm into the sink.
func sayWhenListening(t *testing.T, p *voicetest.Pulse, pcm []int16, rate int) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for !p.Recording() {
			if time.Now().After(deadline) {
				done <- fmt.Errorf("the server never opened the microphone")
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(2 * time.Second)
		done <- p.Play(context.Background(), pcm, rate)
	}()
	return done
}

// newWhisper starts a fake OpenAI-compatible speech-to-text server for
// one test.
func newWhisper(t *testing.T, answer string, status int) *voicetest.Whisper {
	ts := voicetest.NewWhisper(answer, status)
	t.Cleanup(ts.Close)
	return ts
}

// checkUtterance says whether the audio a backend got is the sentence:
// about as long as espeak-ng made it, with as much voiced audio.
func checkUtterance(t *testing.T, got []int16, rate int, sent []int16, sentRate int) {
	t.Helper()
	if rate != 16000 {
		t.Errorf("the backend got %d Hz audio, want 16000", rate)
	}
	gotLen := time.Duration(len(got)) * time.Second / time.Duration(rate)
	sentLen := time.Duration(len(sent)) * time.Second / time.Duration(sentRate)
	voiced, want := voicetest.Voiced(got, rate), voicetest.Voiced(sent, sentRate)
	t.Logf("utterance: %v of audio (the sentence is %v), %v voiced (the sentence %v), %.1f dBFS", gotLen, sentLen, voiced, want, wav.DBFS(got))
	if gotLen < sentLen-300*time.Millisecond || gotLen > sentLen+1500*time.Millisecond {
		t.Errorf("the utterance is %v long; the sentence played was %v", gotLen, sentLen)
	}
	if voiced < want*7/10 {
		t.Errorf("the utterance has %v of speech energy; the sentence has %v", voiced, want)
	}
}

const grammar = `#JSGF V1.0;
grammar home;
public <command> = (turn | switch) (on | off) the (kitchen | bedroom | hall) (lights | heating);
`

func TestListen(t *testing.T) {
	p := requireAudio(t)
	voicetest.Require(t, "pocketsphinx_continuous")
	const sentence = "turn on the kitchen lights"
	sent, sentRate := speech(t, sentence)

	t.Run("openai-compatible backend gets the utterance", func(t *testing.T) {
		ts := newWhisper(t, "Turn on the kitchen lights.", 0)
		c := newClient(t, Options{STT: []stt.Transcriber{stt.NewOpenAI(stt.OpenAIConfig{BaseURL: ts.BaseURL()})}})
		played := sayWhenListening(t, p, sent, sentRate)
		h := mcpkittest.Structured[Heard](t, c, "voice_listen", map[string]any{"silence_ms": 600, "wait_seconds": 20})
		if err := <-played; err != nil {
			t.Fatal(err)
		}
		if h.Status != "speech" || h.Transcript != "Turn on the kitchen lights." || h.EndedBy != "silence" {
			t.Fatalf("heard %+v", h)
		}
		got, rate := ts.Audio()
		if len(got) != 1 {
			t.Fatalf("the server got %d requests", len(got))
		}
		checkUtterance(t, got[0], rate, sent, sentRate)
	})

	t.Run("the same capture fails over to pocketsphinx with a grammar", func(t *testing.T) {
		ts := newWhisper(t, "", http.StatusServiceUnavailable)
		c := newClient(t, Options{STT: []stt.Transcriber{
			stt.NewOpenAI(stt.OpenAIConfig{BaseURL: ts.BaseURL()}),
			stt.NewSphinx(stt.SphinxConfig{Grammar: grammar}),
		}})
		played := sayWhenListening(t, p, sent, sentRate)
		h := mcpkittest.Structured[Heard](t, c, "voice_listen", map[string]any{"silence_ms": 600, "wait_seconds": 20})
		if err := <-played; err != nil {
			t.Fatal(err)
		}
		if h.Transcript != sentence || h.Backend != "pocketsphinx" {
			t.Fatalf("heard %+v, want %q from pocketsphinx", h, sentence)
		}
		if len(h.Failover) != 1 || !strings.Contains(h.Failover[0], "503") && !strings.Contains(h.Failover[0], "loading") {
			t.Errorf("failover %q should say why the first backend failed", h.Failover)
		}
		got, rate := ts.Audio()
		if len(got) != 1 {
			t.Fatalf("the first backend got %d requests", len(got))
		}
		checkUtterance(t, got[0], rate, sent, sentRate)
	})

	t.Run("nobody speaks", func(t *testing.T) {
		ts := newWhisper(t, "x", 0)
		c := newClient(t, Options{STT: []stt.Transcriber{stt.NewOpenAI(stt.OpenAIConfig{BaseURL: ts.BaseURL()})}})
		// Quiet noise, not digital silence: a room with nobody talking.
		noise := make([]int16, 16000*5)
		for i := range noise {
			noise[i] = int16((i*7919)%61 - 30)
		}
		played := sayWhenListening(t, p, noise, 16000)
		h := mcpkittest.Structured[Heard](t, c, "voice_listen", map[string]any{"wait_seconds": 4})
		<-played
		if h.Status != "no_speech" {
			t.Fatalf("heard %+v, want no_speech", h)
		}
		if got, _ := ts.Audio(); len(got) != 0 {
			t.Errorf("the backend was sent %d utterances of nothing", len(got))
		}
	})

	t.Run("a muted microphone is not silence", func(t *testing.T) {
		ts := newWhisper(t, "x", 0)
		c := newClient(t, Options{STT: []stt.Transcriber{stt.NewOpenAI(stt.OpenAIConfig{BaseURL: ts.BaseURL()})}})
		text, isErr := mcpkittest.CallText(t, c, "voice_listen", map[string]any{"wait_seconds": 2})
		if !isErr || !strings.Contains(text, "digital silence") || !strings.Contains(text, "muted") {
			t.Fatalf("got %q (error %v), want an error about a muted microphone", text, isErr)
		}
	})
}

// newDeepgram starts a fake streaming speech-to-text server for one test.
func newDeepgram(t *testing.T, final string, dropAfter int) *voicetest.Deepgram {
	d := voicetest.NewDeepgram(final, dropAfter)
	t.Cleanup(d.Close)
	return d
}

func TestListenStreaming(t *testing.T) {
	p := requireAudio(t)
	const sentence = "turn on the kitchen lights"
	sent, sentRate := speech(t, sentence)

	t.Run("interim and final results", func(t *testing.T) {
		dg := newDeepgram(t, "turn on the kitchen lights", 0)
		c := newClient(t, Options{STT: []stt.Transcriber{stt.NewStreaming(stt.StreamingConfig{URL: dg.ListenURL()})}})
		played := sayWhenListening(t, p, sent, sentRate)
		h := mcpkittest.Structured[Heard](t, c, "voice_listen", map[string]any{"silence_ms": 500, "wait_seconds": 20})
		if err := <-played; err != nil {
			t.Fatal(err)
		}
		if h.Transcript != sentence || !strings.HasPrefix(h.Backend, "streaming") && !strings.Contains(h.Backend, "127.0.0.1") {
			t.Fatalf("heard %+v", h)
		}
		streamed := time.Duration(dg.Samples()) * time.Second / 16000
		sentLen := time.Duration(len(sent)) * time.Second / time.Duration(sentRate)
		if streamed < sentLen-300*time.Millisecond {
			t.Errorf("the server got %v of audio; the sentence is %v", streamed, sentLen)
		}
		t.Logf("end of speech to final transcript: %d ms", h.LatencyMS)
	})

	t.Run("server drops mid-stream: the batch backend answers", func(t *testing.T) {
		dg := newDeepgram(t, "never", 10)
		ts := newWhisper(t, "turn on the kitchen lights", 0)
		c := newClient(t, Options{STT: []stt.Transcriber{
			stt.NewStreaming(stt.StreamingConfig{URL: dg.ListenURL()}),
			stt.NewOpenAI(stt.OpenAIConfig{BaseURL: ts.BaseURL()}),
		}})
		played := sayWhenListening(t, p, sent, sentRate)
		h := mcpkittest.Structured[Heard](t, c, "voice_listen", map[string]any{"silence_ms": 500, "wait_seconds": 20})
		if err := <-played; err != nil {
			t.Fatal(err)
		}
		if h.Transcript != sentence || len(h.Failover) != 1 {
			t.Fatalf("heard %+v, want the batch backend's transcript after one failover", h)
		}
		got, rate := ts.Audio()
		if len(got) != 1 {
			t.Fatalf("the batch backend got %d requests", len(got))
		}
		checkUtterance(t, got[0], rate, sent, sentRate)
	})
}

func TestSpeak(t *testing.T) {
	p := requireAudio(t)
	const text = "Hello world. This is a test of the speaker."
	offline, offRate := speech(t, text)
	want := voicetest.Voiced(offline, offRate)

	t.Run("espeak-ng is heard on the sink", func(t *testing.T) {
		c := newClient(t, Options{TTS: []tts.Synth{tts.NewEspeak(tts.EspeakConfig{})}})
		rec, err := p.Record()
		if err != nil {
			t.Fatal(err)
		}
		sp := mcpkittest.Structured[Spoken](t, c, "voice_speak", map[string]any{"text": text})
		time.Sleep(300 * time.Millisecond)
		got := rec.Stop()
		voiced := voicetest.Voiced(got, 16000)
		t.Logf("spoke %+v; recorded %v voiced of %v (espeak-ng alone: %v voiced), %.1f dBFS",
			sp, voiced, time.Duration(len(got))*time.Second/16000, want, wav.DBFS(got))
		if sp.Sentences != 2 || sp.Backend != "espeak-ng" {
			t.Errorf("spoken %+v", sp)
		}
		if voiced < want*7/10 || voiced > want*13/10 {
			t.Errorf("the sink heard %v of speech; espeak-ng makes %v", voiced, want)
		}
		if d := time.Duration(sp.AudioMS) * time.Millisecond; d < want {
			t.Errorf("reported %v of audio; espeak-ng makes %v voiced", d, want)
		}
	})

	t.Run("playback starts before the speech server's body ends", func(t *testing.T) {
		rec, err := p.Record()
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Stop()
		pcm24 := wav.Resample(offline, offRate, 24000)
		half := len(pcm24) / 2
		heard := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/audio/speech" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "audio/pcm")
			w.Write(wav.Bytes(pcm24[:half], 24000)[44:])
			w.(http.Flusher).Flush()
			select {
			case <-heard:
			case <-time.After(20 * time.Second):
				return // the test fails below
			case <-r.Context().Done():
				return
			}
			w.Write(wav.Bytes(pcm24[half:], 24000)[44:])
		}))
		defer srv.Close()
		go func() {
			for voicetest.Voiced(rec.Samples(), 16000) < 200*time.Millisecond {
				time.Sleep(20 * time.Millisecond)
			}
			close(heard)
		}()
		c := newClient(t, Options{TTS: []tts.Synth{tts.NewOpenAI(tts.OpenAIConfig{BaseURL: srv.URL + "/v1"})}})
		start := time.Now()
		sp := mcpkittest.Structured[Spoken](t, c, "voice_speak", map[string]any{"text": text})
		select {
		case <-heard:
		default:
			t.Fatalf("nothing was heard while the server held back the second half (%+v after %v)", sp, time.Since(start))
		}
		if sp.AudioMS < int(want.Milliseconds())*8/10 {
			t.Errorf("played %d ms, want the whole of both halves (%v voiced)", sp.AudioMS, want)
		}
	})
}

func TestWakePhrase(t *testing.T) {
	p := requireAudio(t)
	voicetest.Require(t, "pocketsphinx_continuous")
	// espeak-ng's voice needs a looser phone loop than a person's (see ENV.md).
	c := newClient(t, Options{Sphinx: stt.NewSphinx(stt.SphinxConfig{PhoneLoop: 1e-20, Threshold: 1e-10})})
	other, rate := speech(t, "the weather is nice today")
	wake, _ := speech(t, "hey computer")

	// Said twice, as people do when a device does not answer: the capture
	// resampled by PulseAudio now and then loses the first to espeak-ng's
	// odd voice.
	gap := make([]int16, rate*8/10)
	played := sayWhenListening(t, p, slices.Concat(other, gap, wake, gap, wake), rate)
	w := mcpkittest.Structured[Wake](t, c, "voice_wait_for_wake_word", map[string]any{"phrase": "hey computer", "timeout": 20})
	if err := <-played; err != nil {
		t.Fatal(err)
	}
	if !w.Detected {
		t.Fatalf("the wake phrase was not detected: %+v", w)
	}

	played = sayWhenListening(t, p, other, rate)
	w = mcpkittest.Structured[Wake](t, c, "voice_wait_for_wake_word", map[string]any{"phrase": "hey computer", "timeout": 5})
	<-played
	if w.Detected {
		t.Errorf("other speech taken for the wake phrase: %+v", w)
	}

	text, isErr := mcpkittest.CallText(t, c, "voice_wait_for_wake_word", map[string]any{"phrase": "hey zorblax", "timeout": 5})
	if !isErr || !strings.Contains(text, "zorblax") {
		t.Errorf("a word the recogniser does not know: %q (error %v)", text, isErr)
	}
}

func TestTranscribeFile(t *testing.T) {
	voicetest.Require(t, "pocketsphinx_continuous")
	sent, rate := speech(t, "switch off the bedroom heating")
	dir := t.TempDir()
	path := filepath.Join(dir, "cmd.wav")
	if err := os.WriteFile(path, wav.Bytes(sent, rate), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not audio"), 0o600)
	c := newClient(t, Options{STT: []stt.Transcriber{stt.NewSphinx(stt.SphinxConfig{Grammar: grammar})}})
	tr := mcpkittest.Structured[Transcribed](t, c, "voice_transcribe_file", map[string]any{"path": path})
	if tr.Transcript != "switch off the bedroom heating" {
		t.Errorf("transcribed %+v", tr)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "nope.wav"), "no such file"},
		{"not audio", filepath.Join(dir, "notes.txt"), "not a 16-bit PCM"},
		{"a directory", dir, "not a regular file"},
		{"relative", "cmd.wav", "absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := mcpkittest.CallText(t, c, "voice_transcribe_file", map[string]any{"path": tc.path})
			if !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("got %q (error %v), want an error with %q", text, isErr, tc.want)
			}
		})
	}
}

// TestLostDevice takes the sound server away under domo-voice. While
// voice_listen records, the server dies and another takes its place: the
// capture counts as lost, is re-opened on the new one and the listening
// retried, and the sentence said there is transcribed. Speaking, too, works
// on the new server without a restart of domo-voice.
func TestLostDevice(t *testing.T) {
	p := requireAudio(t)
	ts := newWhisper(t, "Turn on the kitchen lights.", 0)
	c := newClient(t, Options{
		STT: []stt.Transcriber{stt.NewOpenAI(stt.OpenAIConfig{BaseURL: ts.BaseURL()})},
		TTS: []tts.Synth{tts.NewEspeak(tts.EspeakConfig{})},
	})
	mcpkittest.Structured[Spoken](t, c, "voice_speak", map[string]any{"text": "One."})

	next, err := voicetest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Close)
	type answer struct {
		text  string
		isErr bool
	}
	heard := make(chan answer, 1)
	go func() {
		text, isErr := mcpkittest.CallText(t, c, "voice_listen", map[string]any{"silence_ms": 600, "wait_seconds": 20})
		heard <- answer{text, isErr}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !p.Recording() {
		if time.Now().After(deadline) {
			t.Fatal("domo-voice never opened the microphone")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, kv := range next.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	p.Close()
	sent, rate := speech(t, "turn on the kitchen lights")
	if err := <-sayWhenListening(t, next, sent, rate); err != nil {
		t.Fatal(err)
	}
	got := <-heard
	if got.isErr || got.text != "Turn on the kitchen lights." {
		t.Fatalf("voice_listen across the lost device: %q (error %v)", got.text, got.isErr)
	}
	if sent, _ := ts.Audio(); len(sent) != 1 {
		t.Errorf("the backend got %d utterances, want the one said after the retry", len(sent))
	}

	rec, err := next.Record()
	if err != nil {
		t.Fatal(err)
	}
	sp := mcpkittest.Structured[Spoken](t, c, "voice_speak", map[string]any{"text": "Two, after the sound server came back."})
	time.Sleep(300 * time.Millisecond)
	if v := voicetest.Voiced(rec.Stop(), 16000); v < 500*time.Millisecond {
		t.Errorf("after the restart the sink heard %v of speech (%+v)", v, sp)
	}
}

func TestBadArguments(t *testing.T) {
	c := newClient(t, Options{})
	long := strings.Repeat("word ", 2001)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"speak nothing", "voice_speak", map[string]any{"text": "  "}, "text is empty"},
		{"speak too much", "voice_speak", map[string]any{"text": long}, "longer than"},
		{"speak too fast", "voice_speak", map[string]any{"text": "hi", "speed": 9}, "speed"},
		{"speak unknown arg", "voice_speak", map[string]any{"text": "hi", "volume": 3}, "volume"},
		{"listen forever", "voice_listen", map[string]any{"max_seconds": 100000}, "max_seconds"},
		{"listen no hang-over", "voice_listen", map[string]any{"silence_ms": 5}, "silence_ms"},
		{"listen wrong type", "voice_listen", map[string]any{"silence_ms": "long"}, "silence_ms"},
		{"converse nothing", "voice_converse", map[string]any{"message": ""}, "message is empty"},
		{"transcribe no path", "voice_transcribe_file", map[string]any{"path": ""}, "path is empty"},
		{"wake empty", "voice_wait_for_wake_word", map[string]any{"phrase": " "}, "phrase is empty"},
		{"wake too long", "voice_wait_for_wake_word", map[string]any{"phrase": "a b c d e f g"}, "six words"},
		{"wake negative timeout", "voice_wait_for_wake_word", map[string]any{"phrase": "hey", "timeout": -1}, "timeout"},
		{"listen without a backend", "voice_listen", map[string]any{}, "no speech-to-text backend"},
		{"speak without an engine", "voice_speak", map[string]any{"text": "hi"}, "no text-to-speech engine"},
		{"wake without pocketsphinx", "voice_wait_for_wake_word", map[string]any{"phrase": "hey computer"}, "pocketsphinx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := mcpkittest.CallText(t, c, tc.tool, tc.args)
			if !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("got %q (error %v), want an error with %q", text, isErr, tc.want)
			}
		})
	}
}

func TestToolSchemas(t *testing.T) {
	srv, err := NewServer(New(Options{})).MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckAnnotations(t, srv)
	mcpkittest.Snapshot(t, srv)
}
