package stt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// SphinxConfig runs CMU pocketsphinx offline (Debian: pocketsphinx,
// pocketsphinx-en-us). Free dictation is poor; a grammar or a keyphrase
// makes it exact.
type SphinxConfig struct {
	Program string // default "pocketsphinx_continuous"
	// HMM, Dict and LM default to the program's built-in en-us model.
	HMM, Dict, LM string
	// Grammar is JSGF: the path of a grammar file, or the grammar text
	// itself (anything with a ';' or a line break is text). It replaces LM.
	Grammar string
	// Keyphrase is the wake phrase Spot listens for when given none.
	Keyphrase string
	// Threshold is -kws_threshold: lower hears the phrase more readily,
	// and other speech as the phrase more often. Default 1e-20.
	Threshold float64
	// PhoneLoop is -kws_plp, the weight of "any other sound" against the
	// phrase; 0 keeps the program's 0.1, meant for human voices. Synthetic
	// speech (espeak-ng) is only heard with about 1e-20 and Threshold 1e-10.
	PhoneLoop float64
}

// Sphinx transcribes with pocketsphinx_continuous, one process per
// utterance, and spots wake phrases in a long-running one.
type Sphinx struct {
	cfg SphinxConfig
}

var _ Transcriber = (*Sphinx)(nil)

// NewSphinx makes a backend for cfg.
func NewSphinx(cfg SphinxConfig) *Sphinx {
	if cfg.Program == "" {
		cfg.Program = "pocketsphinx_continuous"
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = 1e-20
	}
	return &Sphinx{cfg: cfg}
}

// Name is "pocketsphinx".
func (s *Sphinx) Name() string { return "pocketsphinx" }

// program finds the executable, with a message saying how to get it.
func (s *Sphinx) program() (string, error) {
	p, err := exec.LookPath(s.cfg.Program)
	if err != nil {
		return "", fmt.Errorf("%s is not installed (Debian: apt-get install pocketsphinx pocketsphinx-en-us): %w", s.cfg.Program, err)
	}
	return p, nil
}

// modelDir is where the program's built-in en-us model lives: beside it,
// as <prefix>/bin and <prefix>/share.
func modelDir(program string) string {
	if p, err := filepath.EvalSymlinks(program); err == nil {
		program = p
	}
	return filepath.Join(filepath.Dir(filepath.Dir(program)), "share", "pocketsphinx", "model", "en-us")
}

func (s *Sphinx) dictPath(program string) string {
	if s.cfg.Dict != "" {
		return s.cfg.Dict
	}
	return filepath.Join(modelDir(program), "cmudict-en-us.dict")
}

// Check says whether the program and its model are installed.
func (s *Sphinx) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	prog, err := s.program()
	if err != nil {
		return err
	}
	hmm := s.cfg.HMM
	if hmm == "" {
		hmm = filepath.Join(modelDir(prog), "en-us")
	}
	if _, err := os.Stat(filepath.Join(hmm, "mdef")); err != nil {
		return fmt.Errorf("pocketsphinx acoustic model is missing (Debian: apt-get install pocketsphinx-en-us): %w", err)
	}
	if _, err := os.Stat(s.dictPath(prog)); err != nil {
		return fmt.Errorf("pocketsphinx dictionary is missing: %w", err)
	}
	return nil
}

// modelArgs are the flags that choose the acoustic model and dictionary.
func (s *Sphinx) modelArgs() []string {
	var args []string
	if s.cfg.HMM != "" {
		args = append(args, "-hmm", s.cfg.HMM)
	}
	if s.cfg.Dict != "" {
		args = append(args, "-dict", s.cfg.Dict)
	}
	return args
}

// Transcribe writes the utterance to a 16 kHz WAV file and decodes it.
func (s *Sphinx) Transcribe(ctx context.Context, pcm []int16, rate int) (Result, error) {
	res := Result{Backend: s.Name()}
	if rate <= 0 {
		return res, fmt.Errorf("sample rate %d is not positive", rate)
	}
	if len(pcm) == 0 {
		return res, nil
	}
	prog, err := s.program()
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp("", "domo-sphinx-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	// The program checks the header of a file named *.wav, and reads any
	// other name as raw samples.
	audio := filepath.Join(dir, "speech.wav")
	if err := os.WriteFile(audio, wav.Bytes(wav.Resample(pcm, rate, recognizerRate), recognizerRate), 0o600); err != nil {
		return res, err
	}
	args := append(s.modelArgs(), "-infile", audio)
	switch g := s.cfg.Grammar; {
	case g != "" && isGrammarText(g):
		path := filepath.Join(dir, "grammar.gram")
		if err := os.WriteFile(path, []byte(g), 0o600); err != nil {
			return res, err
		}
		args = append(args, "-jsgf", path)
	case g != "":
		args = append(args, "-jsgf", g)
	case s.cfg.LM != "":
		args = append(args, "-lm", s.cfg.LM)
	}

	cmd := exec.CommandContext(ctx, prog, args...)
	var out bytes.Buffer
	var log sphinxLog
	cmd.Stdout = &out
	cmd.Stderr = &log
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("pocketsphinx did not finish: %w", ctx.Err())
		}
		return res, log.failure(err)
	}
	res.Text = strings.Join(strings.Fields(out.String()), " ")
	return res, nil
}

func isGrammarText(g string) bool {
	return strings.ContainsAny(g, ";\n") || strings.HasPrefix(strings.TrimSpace(g), "#JSGF")
}

// sphinxLog keeps the error lines of pocketsphinx's chatty log, for the
// message when it fails.
type sphinxLog struct {
	mu      sync.Mutex
	partial []byte
	errs    []string
}

// logSource is the "file.c", line N: part of a log line.
var logSource = regexp.MustCompile(`^"[^"]*", line \d+: `)

func (l *sphinxLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		for _, level := range []string{"ERROR: ", "FATAL: ", "FATAL_ERROR: "} {
			if rest, ok := strings.CutPrefix(line, level); ok {
				l.errs = append(l.errs, logSource.ReplaceAllString(strings.TrimSpace(rest), ""))
				if len(l.errs) > 4 {
					l.errs = l.errs[1:]
				}
			}
		}
	}
	if len(l.partial) > 4096 {
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

// failure explains how the program ended.
func (l *sphinxLog) failure(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) == 0 {
		return fmt.Errorf("pocketsphinx failed: %w", err)
	}
	return fmt.Errorf("pocketsphinx failed: %s: %w", strings.Join(l.errs, "; "), err)
}

// formatFloat writes a float the way the program's own help does.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// UnknownWordError is a wake phrase with a word pocketsphinx cannot hear:
// the program would start and silently never detect it.
type UnknownWordError struct {
	Word string
	Dict string
}

func (e *UnknownWordError) Error() string {
	return fmt.Sprintf("wake phrase word %q is not in the pocketsphinx dictionary (%s); pick words it knows, e.g. \"hey computer\"", e.Word, e.Dict)
}

// checkWords finds the first of words (lower case) missing from the
// dictionary at path. Lines are "word PHONES" or "word(2) PHONES".
func checkWords(path string, words []string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the pocketsphinx dictionary: %w", err)
	}
	if len(words) == 0 {
		return errors.New("no words to look up")
	}
	missing := map[string]bool{}
	for _, w := range words {
		missing[w] = true
	}
	for line := range bytes.Lines(data) {
		head := line
		if i := bytes.IndexAny(line, " \t"); i >= 0 {
			head = line[:i]
		}
		head, _, _ = bytes.Cut(bytes.TrimSpace(head), []byte("("))
		w := strings.ToLower(string(head))
		if missing[w] {
			delete(missing, w)
			if len(missing) == 0 {
				return nil
			}
		}
	}
	for _, w := range words {
		if missing[w] {
			return &UnknownWordError{Word: w, Dict: path}
		}
	}
	return nil
}
