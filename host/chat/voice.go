package chat

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Voice is what voice mode needs of the voice server. The host implements
// it with the voice tools, each call through the gate, so the microphone
// and speaker permissions and the audit log apply as to any call.
type Voice interface {
	// Listen records until the speaker pauses and returns what was said,
	// "" when nothing was heard. heard runs with "" once the microphone
	// is on (after any permission prompt), then with each interim
	// transcript the server sends.
	Listen(ctx context.Context, heard func(interim string)) (transcript string, err error)
	// Speak says text and returns when it has been said; cancelling ctx
	// stops it at once.
	Speak(ctx context.Context, text string) error
	// WaitWake listens for phrase for a while; false when the time ran
	// out without it. listening is as for Listen.
	WaitWake(ctx context.Context, phrase string, listening func()) (bool, error)
}

const voiceUsage = "usage: /voice [on | off | wake PHRASE | wake off]"

// Hints shown in voice mode.
const (
	talkHint = "voice: press Enter on an empty line to talk, or type"
	stopHint = "any key stops the speech"
)

// voiceCommand runs /voice: on, off, toggle, or the wake phrase.
func (r *REPL) voiceCommand(arg string) {
	if r.Voice == nil {
		why := r.NoVoice
		if why == "" {
			why = "no voice server is running; /servers says why"
		}
		r.printf("%s\n", r.style(errStyle, "Voice is not available: "+Clean(why)))
		return
	}
	sub, rest, _ := strings.Cut(arg, " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(sub) {
	case "":
		r.setVoice(!r.VoiceMode)
	case "on":
		r.setVoice(true)
	case "off":
		r.setVoice(false)
	case "wake":
		switch {
		case rest == "" && r.WakePhrase == "":
			r.printf("no wake phrase; /voice wake PHRASE sets one\n")
		case rest == "":
			r.printf("wake phrase: %s\n", strconv.Quote(r.WakePhrase))
		case strings.EqualFold(rest, "off"):
			r.WakePhrase = ""
			r.printf("wake phrase off: press Enter on an empty line to talk\n")
		default:
			r.WakePhrase = rest
			r.VoiceMode = true
			r.printf("voice on, wake phrase %s: say it to talk, or press any key to type\n", strconv.Quote(rest))
		}
	default:
		r.printf("%s\n", voiceUsage)
	}
}

func (r *REPL) setVoice(on bool) {
	r.VoiceMode = on
	if !on {
		r.printf("voice off\n")
		return
	}
	how := "press Enter on an empty line to talk"
	if r.WakePhrase != "" {
		how = "say " + strconv.Quote(r.WakePhrase) + " to talk"
	}
	r.printf("voice on: %s; answers are spoken (%s)\n", how, stopHint)
}

// voiceOn reports whether the REPL is in voice mode.
func (r *REPL) voiceOn() bool {
	return r.VoiceMode && r.Voice != nil
}

// keyWatch is who watches the keys: the editor, or a test's stand-in.
func (r *REPL) keyWatch() keyWatcher {
	if r.keys != nil {
		return r.keys
	}
	if r.Ed == nil {
		return noKeys{}
	}
	return r.Ed
}

// noKeys watches nothing.
type noKeys struct{}

func (noKeys) WatchKeys(func([]byte)) func() { return func() {} }

// listen records one spoken message and shows it as the user's line; ok
// is false when there is nothing to answer. Ctrl-C stops it.
func (r *REPL) listen(ctx context.Context) (text string, ok bool) {
	ctx, stop := r.interruptible(ctx)
	defer stop()
	spin := r.T.NewSpinner()
	defer spin.Stop()
	text, err := r.Voice.Listen(ctx, func(interim string) {
		if interim == "" {
			spin.Start("listening… (Ctrl-C stops)")
			return
		}
		spin.Progress(0, 0, interim)
	})
	spin.Stop()
	text = strings.TrimSpace(text)
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		r.printf("%s\n", r.style(dimStyle, "(stopped listening)"))
		return "", false
	case err != nil:
		r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
		return "", false
	case text == "":
		r.printf("%s\n", r.style(dimStyle, "(no speech heard)"))
		return "", false
	}
	r.printf("%s%s%s\n", r.style(userStyle, "› "), r.style(dimStyle, "(voice) "), oneLine(text))
	if r.Ed != nil {
		r.Ed.AddHistory(text)
	}
	return text, true
}

// awaitWake waits for the wake phrase, asking again each time the voice
// server's wait runs out. It returns true when the phrase was heard, false
// when a key, Ctrl-C or a failure asks for a typed line instead; a key's
// text, when it is text, is put on that line.
func (r *REPL) awaitWake(ctx context.Context) bool {
	phrase := r.WakePhrase
	r.printf("%s\n", r.style(dimStyle, "voice: say "+strconv.Quote(oneLine(phrase))+" to talk, or press any key to type"))
	ctx, stop := r.interruptible(ctx)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var typed []byte
	stopKeys := r.keyWatch().WatchKeys(func(k []byte) {
		mu.Lock()
		typed = append(typed, k...)
		mu.Unlock()
		cancel()
	})
	spin := r.T.NewSpinner()
	defer spin.Stop()
	heard := false
	var err error
	for ctx.Err() == nil && !heard && err == nil {
		heard, err = r.Voice.WaitWake(ctx, phrase, func() { spin.Start("waiting for " + strconv.Quote(oneLine(phrase))) })
	}
	stopKeys()
	spin.Stop()
	switch {
	case heard:
		return true
	case ctx.Err() == nil && err != nil && !errors.Is(err, context.Canceled):
		// Trying again would fail again on every line: the wake phrase
		// is dropped until the user sets it again.
		r.WakePhrase = ""
		r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
		r.printf("%s\n", r.style(dimStyle, "(wake phrase off; /voice wake PHRASE tries again)"))
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	if r.Ed != nil {
		r.Ed.Prefill(printable(typed))
	}
	return false
}

// printable is the text in keys that reads as typed text; "" when it holds
// a control key or an escape sequence.
func printable(keys []byte) string {
	s := string(keys)
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return ""
		}
	}
	return s
}

// talk listens for one message and answers it as if typed.
func (r *REPL) talk(ctx context.Context) {
	if text, ok := r.listen(ctx); ok {
		r.turn(ctx, text, "")
	}
}

// speech is the speaking of one answer in voice mode.
type speech struct {
	r        *REPL
	sp       *speaker
	stopKeys func()
	byKey    bool // a key stopped it; read after stopKeys
	mu       sync.Mutex
}

// startSpeech starts speaking the answer of a turn that runs under ctx
// (Ctrl-C ends both), and a key watch that stops the speech: a key pressed
// before the answer comes keeps it from being spoken.
func (r *REPL) startSpeech(ctx context.Context) *speech {
	s := &speech{r: r, sp: startSpeaker(ctx, r.Voice)}
	s.stopKeys = r.keyWatch().WatchKeys(func([]byte) {
		if s.sp.Stop() {
			s.mu.Lock()
			s.byKey = true
			s.mu.Unlock()
		}
	})
	return s
}

// finish waits, with a spinner, until the answer has been said or a key
// stopped it, and says how it ended.
func (s *speech) finish(spin *Spinner) {
	s.sp.Close()
	if s.sp.Speaking() {
		spin.Start("speaking · " + stopHint)
	}
	err := s.sp.Wait()
	s.stopKeys()
	spin.Stop()
	r := s.r
	s.mu.Lock()
	byKey := s.byKey
	s.mu.Unlock()
	switch {
	case byKey || errors.Is(err, context.Canceled):
		r.printf("%s\n", r.style(dimStyle, "(speech stopped)"))
	case err != nil:
		r.printf("%s\n", r.style(errStyle, "Not spoken: "+Clean(err.Error())))
	}
}
