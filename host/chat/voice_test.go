package chat

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/llm"
)

// waitLimit only keeps a broken test from hanging; no test measures time.
const waitLimit = 10 * time.Second

// fakeVoice is a voice server in memory: it hears what it is given, keeps
// what it is asked to say, and can hold a Speak until the call is
// cancelled.
type fakeVoice struct {
	mu        sync.Mutex
	heard     []string // what each Listen hears, in turn; "" is silence
	listened  int
	listenErr error
	wakes     []bool // what each WaitWake returns, in turn; after them it waits for ctx
	phrases   []string
	spoken    []string
	cut       []bool // per Speak: it ended because its call was cancelled
	hold      bool   // Speak plays until cancelled
	started   chan string
	waiting   chan struct{} // receives once WaitWake runs out of answers
}

func newFakeVoice(heard ...string) *fakeVoice {
	return &fakeVoice{heard: heard, started: make(chan string, 100), waiting: make(chan struct{}, 1)}
}

func (v *fakeVoice) Listen(ctx context.Context, heard func(string)) (string, error) {
	heard("")
	heard("interim")
	v.mu.Lock()
	defer v.mu.Unlock()
	v.listened++
	if v.listenErr != nil {
		return "", v.listenErr
	}
	if len(v.heard) == 0 {
		return "", nil
	}
	h := v.heard[0]
	v.heard = v.heard[1:]
	return h, nil
}

func (v *fakeVoice) Speak(ctx context.Context, text string) error {
	v.mu.Lock()
	v.spoken = append(v.spoken, text)
	i := len(v.cut)
	v.cut = append(v.cut, false)
	hold := v.hold
	v.mu.Unlock()
	v.started <- text
	if !hold {
		return nil
	}
	<-ctx.Done()
	v.mu.Lock()
	v.cut[i] = true
	v.mu.Unlock()
	return ctx.Err()
}

func (v *fakeVoice) WaitWake(ctx context.Context, phrase string, listening func()) (bool, error) {
	listening()
	v.mu.Lock()
	v.phrases = append(v.phrases, phrase)
	if len(v.wakes) > 0 {
		w := v.wakes[0]
		v.wakes = v.wakes[1:]
		v.mu.Unlock()
		return w, nil
	}
	v.mu.Unlock()
	select {
	case v.waiting <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return false, ctx.Err()
}

func (v *fakeVoice) said() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.spoken...)
}

// fakeKeys stands in for the terminal's key watch.
type fakeKeys struct {
	mu      sync.Mutex
	onKey   func([]byte)
	watches int // started
	active  int // not stopped
}

func (k *fakeKeys) WatchKeys(onKey func([]byte)) func() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.onKey = onKey
	k.watches++
	k.active++
	once := sync.Once{}
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			k.active--
			k.onKey = nil
		})
	}
}

// press presses a key; false when nothing watches.
func (k *fakeKeys) press(key string) bool {
	k.mu.Lock()
	on := k.onKey
	k.mu.Unlock()
	if on == nil {
		return false
	}
	on([]byte(key))
	return true
}

// streamModel answers every request with chunks, streamed one by one;
// before runs ahead of each chunk, on the goroutine that renders them.
type streamModel struct {
	chunks []string
	before func(i int)

	mu   sync.Mutex
	asks []string // the last user message of each request
}

func (m *streamModel) Chat(ctx context.Context, req llm.Request, sink *llm.Sink) (llm.Response, error) {
	m.mu.Lock()
	m.asks = append(m.asks, req.Messages[len(req.Messages)-1].Content)
	m.mu.Unlock()
	var all strings.Builder
	for i, c := range m.chunks {
		if m.before != nil {
			m.before(i)
		}
		sink.Content(c)
		all.WriteString(c)
	}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: all.String()}, FinishReason: "stop"}, nil
}

func (m *streamModel) ContextSize(context.Context) int { return 32768 }

// lockedBuilder is the screen: the REPL writes it while a test looks.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// voiceREPL is a REPL in voice mode on a pipe that reads input.
func voiceREPL(input string, v *fakeVoice, m *streamModel) (*REPL, *lockedBuilder, *fakeKeys) {
	out := &lockedBuilder{}
	keys := &fakeKeys{}
	r := &REPL{
		T:         Plain(out),
		Ed:        &Editor{plain: bufio.NewReader(strings.NewReader(input))},
		Agent:     agent.New(agent.Options{Model: m}),
		Voice:     v,
		VoiceMode: true,
		keys:      keys,
	}
	return r, out, keys
}

// await receives from c, or fails the test.
func await[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("gave up waiting for %s", what)
		panic("unreachable")
	}
}

// spokenText joins what was said as one line.
func spokenText(said []string) string {
	return strings.Join(strings.Fields(strings.Join(said, " ")), " ")
}

func TestVoicePushToTalkSpeaksWhileStreaming(t *testing.T) {
	v := newFakeVoice("what is the capital of France?")
	m := &streamModel{chunks: []string{"Paris is the **capital** [1]. ", "It lies on the Seine. ", "Lovely city."}}
	r, out, keys := voiceREPL("\n", v, m)
	var firstSaid string
	m.before = func(i int) {
		if i != 2 {
			return
		}
		// The first sentence is complete once the second began: it is
		// spoken while the rest of the answer has not arrived yet.
		firstSaid = await(t, v.started, "the first sentence to be spoken")
		if s := out.String(); !strings.Contains(s, "It lies on the Seine.") || strings.Contains(s, "Lovely city.") {
			t.Errorf("the screen while the first sentence is spoken:\n%s", s)
		}
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if firstSaid != "Paris is the capital." {
		t.Errorf("first spoken %q, want the first sentence as plain text without its citation", firstSaid)
	}
	if got, want := spokenText(v.said()), "Paris is the capital. It lies on the Seine. Lovely city."; got != want {
		t.Errorf("spoken %q, want %q (all of %q)", got, want, v.said())
	}
	if len(m.asks) != 1 || m.asks[0] != "what is the capital of France?" {
		t.Errorf("the model was asked %q, want the transcript", m.asks)
	}
	s := out.String()
	for _, want := range []string{talkHint, "› (voice) what is the capital of France?", "Paris is the **capital** [1]. It lies on the Seine. Lovely city."} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "(speech stopped)") {
		t.Errorf("speech was stopped:\n%s", s)
	}
	if keys.watches != 1 || keys.active != 0 {
		t.Errorf("key watches: %d started, %d left running; want 1 and 0", keys.watches, keys.active)
	}
}

func TestVoiceBargeInDropsTheQueue(t *testing.T) {
	v := newFakeVoice("tell me three things")
	v.hold = true
	m := &streamModel{chunks: []string{"First thing. ", "Second thing. ", "Third thing. ", "Fourth thing."}}
	r, out, keys := voiceREPL("\n", v, m)
	m.before = func(i int) {
		if i != 2 {
			return
		}
		await(t, v.started, "the first sentence to be spoken")
		if !keys.press("x") {
			t.Error("no key watch while the answer was spoken")
		}
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := v.said(); len(got) != 1 || got[0] != "First thing." {
		t.Errorf("spoken %q, want only the first sentence", got)
	}
	if !v.cut[0] {
		t.Error("the call speaking when the key was pressed was not cancelled")
	}
	s := out.String()
	if !strings.Contains(s, "Fourth thing.") || !strings.Contains(s, "(speech stopped)") {
		t.Errorf("the screen should keep the whole answer and say the speech stopped:\n%s", s)
	}
	if keys.active != 0 {
		t.Errorf("%d key watches left running", keys.active)
	}
}

func TestVoiceKeyBeforeTheAnswerKeepsItUnspoken(t *testing.T) {
	v := newFakeVoice("hi there")
	m := &streamModel{chunks: []string{"Hello. ", "How are you?"}}
	r, out, keys := voiceREPL("\n", v, m)
	m.before = func(i int) {
		if i == 0 {
			keys.press("\n")
		}
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := v.said(); len(got) != 0 {
		t.Errorf("spoken %q, want nothing", got)
	}
	if s := out.String(); !strings.Contains(s, "How are you?") || !strings.Contains(s, "(speech stopped)") {
		t.Errorf("screen:\n%s", s)
	}
}

func TestVoiceNothingHeard(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantOut string
	}{
		{name: "no speech", wantOut: "(no speech heard)"},
		{name: "device error", err: errors.New("no microphone: PulseAudio has no source\x1b[2J"), wantOut: "no microphone: PulseAudio has no source"},
		{name: "cancelled at the prompt", err: context.Canceled, wantOut: "(stopped listening)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newFakeVoice()
			v.listenErr = tt.err
			m := &streamModel{chunks: []string{"Should not answer."}}
			r, out, _ := voiceREPL("\n", v, m)
			if err := r.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			s := out.String()
			if !strings.Contains(s, tt.wantOut) || strings.ContainsRune(s, '\x1b') {
				t.Errorf("screen lacks %q (or has an escape):\n%s", tt.wantOut, s)
			}
			if len(m.asks) != 0 || v.listened != 1 {
				t.Errorf("model asked %d times, listened %d times; want 0 and 1", len(m.asks), v.listened)
			}
		})
	}
}

func TestVoiceTypedLinesStillWork(t *testing.T) {
	v := newFakeVoice()
	m := &streamModel{chunks: []string{"Typed answer."}}
	r, out, _ := voiceREPL("hello\n", v, m)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v.listened != 0 || len(m.asks) != 1 || m.asks[0] != "hello" {
		t.Errorf("listened %d times, asked %q", v.listened, m.asks)
	}
	if got := spokenText(v.said()); got != "Typed answer." {
		t.Errorf("spoken %q: in voice mode a typed message's answer is spoken too", got)
	}
	if !strings.Contains(out.String(), talkHint) {
		t.Errorf("no hint:\n%s", out.String())
	}
}

func TestVoiceOffListensToNothing(t *testing.T) {
	v := newFakeVoice("ignored")
	m := &streamModel{chunks: []string{"Answer."}}
	r, out, keys := voiceREPL("\n/voice off\nhi\n", v, m)
	r.VoiceMode = false
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v.listened != 0 || len(v.said()) != 0 || keys.watches != 0 {
		t.Errorf("voice off: listened %d, said %q, %d key watches", v.listened, v.said(), keys.watches)
	}
	if strings.Contains(out.String(), talkHint) {
		t.Errorf("hint shown with voice off:\n%s", out.String())
	}
}

func TestVoiceWakePhrase(t *testing.T) {
	v := newFakeVoice("what time is it")
	v.wakes = []bool{false, false, true}
	m := &streamModel{chunks: []string{"It is noon."}}
	r, out, keys := voiceREPL("typed after a key\n", v, m)
	r.VoiceMode, r.WakePhrase = false, "hey domo"
	go func() {
		// After the answer, the REPL waits for the phrase again; a key
		// stops that wait and one typed line is read; then it waits
		// again, and a key leads to the end of the input.
		for range 2 {
			select {
			case <-v.waiting:
				keys.press("t")
			case <-time.After(waitLimit):
				t.Error("gave up waiting for a wait for the wake phrase")
				return
			}
		}
	}()
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	phrases := v.phrases
	v.mu.Unlock()
	if len(phrases) != 5 || phrases[0] != "hey domo" {
		t.Errorf("waited for %q, want \"hey domo\" five times (two timeouts, the phrase, then a key twice)", phrases)
	}
	if v.listened != 1 || len(m.asks) != 2 || m.asks[0] != "what time is it" || m.asks[1] != "typed after a key" {
		t.Errorf("listened %d times, asked %q", v.listened, m.asks)
	}
	s := out.String()
	if !strings.Contains(s, `say "hey domo" to talk, or press any key to type`) || !strings.Contains(s, "› (voice) what time is it") {
		t.Errorf("screen:\n%s", s)
	}
	if keys.active != 0 {
		t.Errorf("%d key watches left running", keys.active)
	}
}

// failingWake fails every wait for the wake phrase.
type failingWake struct{ *fakeVoice }

func (failingWake) WaitWake(context.Context, string, func()) (bool, error) {
	return false, errors.New("wake phrases need pocketsphinx, which is not installed")
}

func TestVoiceWakeFailureTurnsItOff(t *testing.T) {
	v := newFakeVoice()
	m := &streamModel{chunks: []string{"Answer."}}
	r, out, _ := voiceREPL("first\nsecond\n", v, m)
	r.Voice, r.WakePhrase = failingWake{v}, "hey domo"
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Count(s, "pocketsphinx") != 1 || !strings.Contains(s, "wake phrase off") {
		t.Errorf("the failure should be shown once and the phrase dropped:\n%s", s)
	}
	if len(m.asks) != 2 || r.WakePhrase != "" || !r.VoiceMode {
		t.Errorf("asked %q, wake phrase %q, voice mode %v", m.asks, r.WakePhrase, r.VoiceMode)
	}
}

func TestVoiceCommand(t *testing.T) {
	tests := []struct {
		name     string
		voice    bool
		mode     bool
		wake     string
		line     string
		wantMode bool
		wantWake string
		wantOut  string
	}{
		{name: "not available", line: "/voice", wantOut: "Voice is not available: domo-voice is not installed"},
		{name: "not available, on", line: "/voice on", wantOut: "Voice is not available"},
		{name: "toggle on", voice: true, line: "/voice", wantMode: true, wantOut: "voice on: press Enter on an empty line to talk"},
		{name: "toggle off", voice: true, mode: true, line: "/voice", wantOut: "voice off"},
		{name: "on", voice: true, line: "/voice ON", wantMode: true, wantOut: "any key stops the speech"},
		{name: "on with a wake phrase", voice: true, wake: "hey domo", line: "/voice on", wantMode: true, wantWake: "hey domo", wantOut: `say "hey domo" to talk`},
		{name: "off", voice: true, mode: true, line: "/voice off", wantOut: "voice off"},
		{name: "wake sets and turns on", voice: true, line: "/voice wake  hey domo ", wantMode: true, wantWake: "hey domo", wantOut: `wake phrase "hey domo"`},
		{name: "wake off", voice: true, mode: true, wake: "hey domo", line: "/voice wake off", wantMode: true, wantOut: "wake phrase off"},
		{name: "wake shows", voice: true, wake: "hey domo", line: "/voice wake", wantWake: "hey domo", wantOut: `wake phrase: "hey domo"`},
		{name: "wake unset", voice: true, line: "/voice wake", wantOut: "no wake phrase"},
		{name: "unknown", voice: true, line: "/voice loud", wantOut: voiceUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			r := &REPL{T: Plain(&out), VoiceMode: tt.mode, WakePhrase: tt.wake, NoVoice: "domo-voice is not installed"}
			if tt.voice {
				r.Voice = newFakeVoice()
			}
			r.command(context.Background(), tt.line)
			if r.VoiceMode != tt.wantMode || r.WakePhrase != tt.wantWake {
				t.Errorf("voice mode %v, wake %q; want %v, %q", r.VoiceMode, r.WakePhrase, tt.wantMode, tt.wantWake)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}

func TestVoiceAtStartWithoutAServer(t *testing.T) {
	m := &streamModel{chunks: []string{"Answer."}}
	var out strings.Builder
	r := &REPL{
		T: Plain(&out), Ed: &Editor{plain: bufio.NewReader(strings.NewReader("\nhi\n"))},
		Agent: agent.New(agent.Options{Model: m}), VoiceMode: true, NoVoice: "no voice server is configured",
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "Voice is not available: no voice server is configured") || strings.Contains(s, talkHint) {
		t.Errorf("screen:\n%s", s)
	}
	if len(m.asks) != 1 {
		t.Errorf("asked %q: typed lines should still be answered", m.asks)
	}
}
