package tts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// EspeakConfig configures the espeak-ng engine.
type EspeakConfig struct {
	Program string // the espeak-ng binary; default "espeak-ng" on PATH
}

// Espeak speaks with the espeak-ng program: robotic, but offline and
// immediate.
type Espeak struct {
	program string

	mu     sync.Mutex
	voices []string // from espeak-ng --voices, once read
}

var _ Synth = (*Espeak)(nil)

// NewEspeak returns the espeak-ng engine.
func NewEspeak(c EspeakConfig) *Espeak {
	if c.Program == "" {
		c.Program = "espeak-ng"
	}
	return &Espeak{program: c.Program}
}

// Name is "espeak-ng".
func (e *Espeak) Name() string { return "espeak-ng" }

// espeak-ng's words per minute: its default, and the range it accepts.
const (
	espeakWPM    = 175
	espeakMinWPM = 80
	espeakMaxWPM = 450
)

// Synthesize runs espeak-ng with the text on its standard input, never on
// its command line, and passes on the audio as espeak-ng writes it.
func (e *Espeak) Synthesize(ctx context.Context, text string, o Options, sink Sink) error {
	if strings.TrimSpace(text) == "" {
		return ErrNothingToSay
	}
	speed, err := o.speed()
	if err != nil {
		return err
	}
	wpm := min(max(int(math.Round(espeakWPM*speed)), espeakMinWPM), espeakMaxWPM)
	args := []string{"--stdout", "--stdin", "-s", strconv.Itoa(wpm)}
	if o.Voice != "" {
		if !validVoiceName(o.Voice) {
			return fmt.Errorf("espeak-ng voice %q is not a voice name: %w", o.Voice, ErrUnknownVoice)
		}
		args = append(args, "-v", o.Voice)
	}

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.program, args...)
	cmd.Stdin = strings.NewReader(text)
	stderr := &cappedBuffer{max: 4096}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting espeak-ng: %w", err)
	}
	// A child that inherited the pipe would keep a read blocked after
	// espeak-ng is killed.
	stop := context.AfterFunc(ctx, func() { stdout.Close() })
	defer stop()

	werr := func() error {
		r, err := wav.NewReader(stdout)
		if err != nil {
			return err
		}
		return pump(ctx, r, r.Rate(), sink)
	}()
	if werr != nil {
		cancel() // the sink failed or espeak-ng wrote no audio: stop it
	}
	err = cmd.Wait()
	switch {
	case werr == nil && err == nil:
		return nil
	case parent.Err() != nil:
		return parent.Err()
	case werr != nil && !errors.Is(werr, wav.ErrFormat):
		return werr // the sink's, as it is
	}
	msg := strings.TrimSpace(stderr.String())
	switch {
	case strings.Contains(msg, "voice does not exist"):
		return e.unknownVoice(parent, o.Voice, "has no voice")
	case strings.Contains(msg, "MBROLA voice"):
		return e.unknownVoice(parent, o.Voice, "lacks the MBROLA data for voice")
	}
	if err == nil {
		err = werr
	}
	if msg != "" {
		return fmt.Errorf("espeak-ng: %s: %w", msg, err)
	}
	return fmt.Errorf("espeak-ng: %w", err)
}

// validVoiceName rejects what espeak-ng could take for an option, and
// spaces.
func validVoiceName(v string) bool {
	if strings.HasPrefix(v, "-") {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// unknownVoice is the error for a voice espeak-ng lacks, naming a few it
// has.
func (e *Espeak) unknownVoice(ctx context.Context, voice, lacks string) error {
	voices, err := e.Voices(ctx)
	if err != nil || len(voices) == 0 {
		return fmt.Errorf("espeak-ng %s %q (espeak-ng --voices lists them): %w", lacks, voice, ErrUnknownVoice)
	}
	return fmt.Errorf("espeak-ng %s %q; try %s (espeak-ng --voices lists all %d): %w",
		lacks, voice, strings.Join(suggest(voices, voice, 8), ", "), len(voices), ErrUnknownVoice)
}

// suggest picks up to n voices: those of the language asked for, then
// common ones.
func suggest(voices []string, asked string, n int) []string {
	var out []string
	lang := strings.ToLower(asked)
	if i := strings.IndexAny(lang, "-_+"); i > 0 {
		lang = lang[:i]
	}
	for _, v := range voices {
		if len(out) < n && lang != "" && (v == lang || strings.HasPrefix(v, lang+"-")) {
			out = append(out, v)
		}
	}
	for _, v := range []string{"en", "en-us", "en-gb", "de", "fr", "es", "it", "pt", "zh", "ja"} {
		if len(out) < n && slices.Contains(voices, v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range voices {
		if len(out) < n && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// Voices lists the language codes espeak-ng has voices for, read once
// from espeak-ng --voices.
func (e *Espeak) Voices(ctx context.Context) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.voices != nil {
		return e.voices, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.program, "--voices").Output()
	if err != nil {
		return nil, fmt.Errorf("listing espeak-ng voices: %w", err)
	}
	e.voices = parseVoices(string(out))
	return e.voices, nil
}

// parseVoices reads the language column of espeak-ng --voices:
//
//	Pty Language       Age/Gender VoiceName          File                 Other Languages
//	 5  af              --/M      Afrikaans          gmw/af
func parseVoices(out string) []string {
	voices := []string{}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 5 || f[0] == "Pty" || slices.Contains(voices, f[1]) {
			continue
		}
		voices = append(voices, f[1])
	}
	return voices
}

// Check reports whether espeak-ng is installed and runs.
func (e *Espeak) Check(ctx context.Context) error {
	path, err := exec.LookPath(e.program)
	if err != nil {
		return fmt.Errorf("espeak-ng is not installed (apt-get install espeak-ng): %w", err)
	}
	if out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput(); err != nil {
		return fmt.Errorf("espeak-ng --version: %s: %w", strings.TrimSpace(string(out)), err)
	}
	return nil
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
