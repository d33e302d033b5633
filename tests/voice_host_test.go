//go:build linux

package tests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/servers/voice/voicetest"
	"github.com/domo-agent/domo/servers/voice/wav"
	"github.com/domo-agent/domo/tests/fakellm"
	"github.com/domo-agent/domo/tests/testenv"
)

// TestVoiceChatInTmux talks to `domo chat --voice` as a person would: in a
// terminal tmux emulates, with a private PulseAudio whose null sink is
// both the speakers and (through its monitor) the microphone. Enter on an
// empty line starts listening; espeak-ng asks a question into the sink;
// domo-voice hears it and pocketsphinx, held to a grammar, writes it down;
// the scripted model answers; and the answer is spoken back into the sink,
// where it is recorded and recognised again. Listening and speaking go
// through the gate and into the audit log like any tool call.
func TestVoiceChatInTmux(t *testing.T) {
	testenv.RequireTool(t, "tmux", "Debian package tmux")
	pulse := voicetest.New(t)
	voicetest.Require(t, "pocketsphinx_continuous")
	domo := testenv.Binary(t, "domo")
	voiceBin := testenv.Binary(t, "domo-voice")

	const (
		question = "what is the weather like today"
		answer   = "It is sunny and warm today. Take a hat if you go out."
		story    = "Once upon a time there was a small robot. It lived in a quiet kitchen. Every morning it made tea for everyone in the house. " +
			"One day the kettle broke. The robot walked to the town to find a new one. The end."
	)
	home := t.TempDir()
	grammarFile := filepath.Join(home, "questions.gram")
	if err := os.WriteFile(grammarFile, []byte(`#JSGF V1.0;
grammar questions;
public <q> = what is the (weather | time) like today | turn on the kitchen lights;
`), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := fakellm.New(t,
		fakellm.Step{
			Match: lastMessageIs("user", question, false),
			Reply: fakellm.Reply{Content: answer, ChunkSize: 4, ChunkDelay: 30 * time.Millisecond},
		},
		fakellm.Step{
			Match: lastMessageIs("user", "tell me a long story", false),
			Reply: fakellm.Reply{Content: story, ChunkSize: 8, ChunkDelay: 20 * time.Millisecond},
		},
	)
	cfg, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{
			"voice": map[string]any{"command": voiceBin, "args": []string{"--stt", "pocketsphinx", "--grammar", grammarFile}},
		},
		"llm": map[string]any{"base_url": fake.URL, "model": "fake-model", "context_size": 32768},
	})
	config := filepath.Join(home, "config", "domo", "config.json")
	os.MkdirAll(filepath.Dir(config), 0o700)
	if err := os.WriteFile(config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startTmux(t, home, "env", "-i",
		"PATH="+os.Getenv("PATH"),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_RUNTIME_DIR="+pulse.Runtime,
		"PULSE_SERVER="+pulse.Server,
		"TERM=xterm-256color", "LANG=C.UTF-8",
		domo, "chat", "--voice", "--allow", "microphone")
	p.waitFor("the voice hint", 15*time.Second, func(s string) bool {
		return strings.Contains(strings.ToLower(s), "enter") && strings.Contains(strings.ToLower(s), "talk") && screenAtInput(s)
	})

	// Push to talk: Enter on an empty line; then the question is said once
	// domo-voice's capture has really started.
	asked, rate, err := voicetest.Speech(question)
	if err != nil {
		t.Fatal(err)
	}
	// The recording takes a second or so to really start; begun now, it
	// holds the question and then Domo's answer.
	rec, err := pulse.Record()
	if err != nil {
		t.Fatal(err)
	}
	p.keys("Enter")
	deadline := time.Now().Add(20 * time.Second)
	for !pulse.Recording() {
		if time.Now().After(deadline) {
			t.Fatalf("domo-voice never opened the microphone:\n%s", p.capture())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if err := pulse.Play(context.Background(), asked, rate); err != nil {
		t.Fatal(err)
	}
	p.waitFor("the spoken question as the user's line", 20*time.Second, func(s string) bool {
		return strings.Contains(s, question)
	})
	p.waitFor("the answer, spoken to the end", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Take a hat if you go out.") && screenAtInput(s)
	})
	time.Sleep(500 * time.Millisecond)
	heard := rec.Stop()
	said, sayRate, err := voicetest.Speech(answer)
	if err != nil {
		t.Fatal(err)
	}
	// The recording itself varies (parecord under load): the audit below
	// says what was played in full.
	got := voicetest.Voiced(heard, 16000)
	q, a := voicetest.Voiced(asked, rate), voicetest.Voiced(said, sayRate)
	t.Logf("the sink carried %v of speech; the question takes %v and the answer %v", got, q, a)
	if got < q+a*4/10 {
		t.Errorf("the answer was not spoken: %v of speech on the sink, the question takes %v and the answer %v\n%s", got, q, a, p.capture())
	}
	if len(heard) > 0 {
		t.Logf("recorded %.1f s at %.1f dBFS", float64(len(heard))/16000, wav.DBFS(heard))
	}
	// Barge-in: a typed question is answered aloud too, and any key stops
	// the speech at once; the key does not reach the next prompt.
	rec, err = pulse.Record()
	if err != nil {
		t.Fatal(err)
	}
	p.typeLine("tell me a long story")
	deadline = time.Now().Add(20 * time.Second)
	for voicetest.Voiced(rec.Samples(), 16000) < 500*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("the story was never spoken:\n%s", p.capture())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.keys("x")
	s := p.waitFor("(speech stopped)", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "(speech stopped)") && screenAtInput(s)
	})
	if last := screenLastLine(s); strings.Contains(last, "x") {
		t.Errorf("the key that stopped the speech reached the prompt: %q", last)
	}
	time.Sleep(300 * time.Millisecond)
	storyHeard := voicetest.Voiced(rec.Stop(), 16000)
	told, toldRate, _ := voicetest.Speech(story)
	if whole := voicetest.Voiced(told, toldRate); storyHeard > whole/2 {
		t.Errorf("after the key the sink still carried the story: %v of its %v", storyHeard, whole)
	}
	p.keys("C-d")
	p.waitExit(10 * time.Second)

	// The audit log has the listening and the speaking, allowed.
	log := filepath.Join(home, "state", "domo", "audit.jsonl")
	if rep, err := audit.Verify(log); err != nil || rep.Problem != nil {
		t.Fatalf("audit.Verify(%s) = %+v, %v", log, rep, err)
	}
	ends := map[string]int{}
	var spoken []string
	if err := audit.Query(log, audit.Filter{}, func(e audit.Event) error {
		if e.Event == audit.KindCallEnd {
			t.Logf("audited %s %s %d ms: %s", e.Tool, e.Status, e.DurationMS, e.Result)
			ends[e.Tool+" "+e.Status]++
		}
		if e.Event == audit.KindCallStart && e.Tool == "voice_speak" {
			var args struct{ Text string }
			json.Unmarshal(e.Args, &args)
			spoken = append(spoken, args.Text)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if ends["voice_listen ok"] != 1 || ends["voice_speak ok"] < 2 || ends["voice_speak "+audit.StatusCanceled] != 1 {
		t.Errorf("audited call ends %v: want one voice_listen, the answer's voice_speak calls ok, and one cancelled by the key", ends)
	}
	// Spoken sentence by sentence as the answer streamed in.
	if len(spoken) < 3 || strings.Join(spoken[:2], " ") != answer {
		t.Errorf("voice_speak said %q, want the answer's two sentences in two calls, then the story", spoken)
	}
}
