package chat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ergochat/readline"
	"golang.org/x/term"
)

// ErrInterrupt is returned by ReadLine when the user presses Ctrl-C.
var ErrInterrupt = errors.New("interrupted")

// historyLimit is how many lines the history file keeps.
const historyLimit = 1000

// Editor reads the user's lines: with editing, history and completion of
// slash commands on a terminal, or plain lines from a pipe so that scripts
// can drive `domo chat`.
type Editor struct {
	out   io.Writer
	rl    *readline.Instance // nil when the Term is not a TTY
	plain *bufio.Reader      // reads t.In when the Term is not a TTY
	in    *os.File           // the terminal, for the key watch

	// keys is the key watch, paused while a line is read (see keys.go).
	keys keys
}

// NewEditor returns an editor for t. historyPath, when not empty, is the
// history file (created 0600, its directory 0700); completions are the slash
// commands that Tab completes at the start of a line.
func NewEditor(t *Term, historyPath string, completions []string) (*Editor, error) {
	if !t.TTY {
		var in io.Reader = t.In
		if t.In == nil {
			in = strings.NewReader("") // nothing to read: io.EOF
		}
		return &Editor{plain: bufio.NewReader(in)}, nil
	}
	if historyPath != "" {
		if err := prepareHistory(historyPath); err != nil {
			return nil, err
		}
	}
	items := make([]*readline.PrefixCompleter, len(completions))
	for i, c := range completions {
		items[i] = readline.PcItem(c)
	}
	fd := int(t.In.Fd())
	var raw rawMode
	cfg := &readline.Config{
		HistoryFile:  historyPath,
		HistoryLimit: historyLimit,
		AutoComplete: readline.NewPrefixCompleter(items...),
		Stdin:        t.In,
		Stdout:       t.Out,
		Stderr:       t.Out,
		// The Term decides, so that In need not be os.Stdin.
		FuncIsTerminal: func() bool { return true },
		FuncMakeRaw:    func() error { return raw.enter(fd) },
		FuncExitRaw:    func() error { return raw.exit(fd) },
		FuncGetSize:    t.size,
	}
	rl, err := readline.NewFromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("line editor: %w", err)
	}
	if historyPath != "" {
		// The library rewrites an overlong history through a new file,
		// which does not keep the mode prepareHistory set.
		os.Chmod(historyPath, 0o600)
	}
	return &Editor{out: t.Out, rl: rl, in: t.In}, nil
}

// prepareHistory creates the history file, private to the user, so that
// the library (which would create it 0666 less umask) only appends to it.
func prepareHistory(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// ReadLine shows prompt and returns the line the user entered, without its
// newline. It returns io.EOF on Ctrl-D at an empty line (or at the end of
// piped input) and ErrInterrupt on Ctrl-C. On a pipe the prompt is not
// printed.
func (e *Editor) ReadLine(prompt string) (string, error) {
	if e.rl == nil {
		return e.readPlain()
	}
	// A key watch would take the keys meant for this line.
	e.keys.pause()
	defer e.keys.resume()
	e.rl.SetPrompt(prompt)
	line, err := e.rl.ReadLine()
	// The line ended in raw mode, where a newline does not return the
	// carriage: without this, what follows starts mid-line.
	io.WriteString(e.out, "\r")
	if errors.Is(err, readline.ErrInterrupt) {
		return "", ErrInterrupt
	}
	return line, err
}

func (e *Editor) readPlain() (string, error) {
	line, err := e.plain.ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil // the last line had no newline; EOF comes next call
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), err
}

// Prefill puts text on the next line read, for the user to edit, as if
// typed; control characters are dropped. It does nothing on a pipe.
func (e *Editor) Prefill(text string) {
	text = strings.Map(func(r rune) rune {
		if unsafeRune(r) || r == '\n' || r == '\t' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(text, ""))
	if e.rl == nil || text == "" {
		return
	}
	e.rl.SetDefault(text)
}

// AddHistory records line in the history, as if typed, so that a line
// that came another way (a spoken one) can be recalled and edited.
func (e *Editor) AddHistory(line string) {
	if e.rl == nil || strings.TrimSpace(line) == "" {
		return
	}
	e.rl.SaveToHistory(line)
}

// Close restores the terminal and closes the history file. It is safe to
// call more than once.
func (e *Editor) Close() error {
	e.keys.end()
	if e.rl == nil {
		return nil
	}
	return e.rl.Close()
}

// rawMode puts a terminal in raw mode while a line is read and restores it
// after.
type rawMode struct {
	mu    sync.Mutex
	saved *term.State
}

func (r *rawMode) enter(fd int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := term.MakeRaw(fd)
	if err != nil {
		return err
	}
	if r.saved == nil {
		r.saved = s
	}
	return nil
}

func (r *rawMode) exit(fd int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.saved == nil {
		return nil
	}
	err := term.Restore(fd, r.saved)
	if err == nil {
		r.saved = nil
	}
	return err
}
