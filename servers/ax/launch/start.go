package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// startupWindow is how long Start watches a new process: one that fails
// this soon failed to start, and its stderr says why.
const startupWindow = 300 * time.Millisecond

// stderrMax is how much of a process's stderr is kept.
const stderrMax = 4096

// Started is a process Start started. It runs in a session of its own,
// so it outlives the caller and gets none of its signals, and it is
// reaped when it exits, so it never lingers as a zombie.
type Started struct {
	Process *os.Process

	exited chan struct{}
	err    error // the exit, set before exited is closed
	stderr *stderrHead
}

// Exited is closed once the process has exited and been reaped.
func (s *Started) Exited() <-chan struct{} { return s.exited }

// Err is how the process exited, once Exited is closed: nil for status 0,
// else an *exec.ExitError. Before then it is nil.
func (s *Started) Err() error {
	select {
	case <-s.exited:
		return s.err
	default:
		return nil
	}
}

// Stderr is the start of what the process wrote to stderr: up to 4 KiB.
// It is "" where capturing stderr is not supported (other than Linux).
func (s *Started) Stderr() string { return s.stderr.String() }

// Start starts argv detached: in a new session, with stdin and stdout on
// the null device and stderr kept only for its first 4 KiB. argv[0] is
// found on the PATH in env, or on ours if env has none; env nil means our
// environment, and dir "" our working directory. Nothing is interpreted
// by a shell.
//
// Start watches the process for a moment (300 ms): if it exits with a
// failure in that time, Start returns an error that includes what it
// wrote to stderr. A process that exits successfully at once, as one
// that hands its work to a running instance does, is not an error. If ctx
// ends while Start watches, the process is killed.
func Start(ctx context.Context, argv []string, env []string, dir string) (*Started, error) {
	return start(ctx, argv, env, dir, startupWindow)
}

func start(ctx context.Context, argv []string, env []string, dir string, window time.Duration) (*Started, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no program to start")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := resolve(argv[0], env)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = detached()
	head := newStderrHead()
	if head != nil {
		cmd.Stderr = head.f
	}
	if err := cmd.Start(); err != nil {
		head.finish()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	s := &Started{Process: cmd.Process, exited: make(chan struct{}), stderr: head}
	go func() {
		s.err = cmd.Wait()
		head.finish()
		close(s.exited)
	}()

	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-t.C:
		return s, nil
	case <-s.exited:
		if s.err == nil {
			return s, nil
		}
		said := strings.TrimSpace(s.Stderr())
		if said == "" {
			said = "nothing"
		}
		return nil, fmt.Errorf("%s exited as soon as it started; on stderr it said: %s: %w", argv[0], said, s.err)
	case <-ctx.Done():
		_ = s.Process.Kill()
		<-s.exited
		return nil, ctx.Err()
	}
}

// resolve finds the executable argv0 names: as it is if absolute, else on
// the PATH of env (ours if env is nil or has none).
func resolve(argv0 string, env []string) (string, error) {
	if strings.ContainsRune(argv0, '/') && !filepath.IsAbs(argv0) {
		return "", fmt.Errorf("program %q is a relative path; give an absolute one or a name to find on PATH", argv0)
	}
	pathList := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v // the last one wins, as in os/exec
		}
	}
	p, ok := lookPath(argv0, pathList)
	if !ok {
		if filepath.IsAbs(argv0) {
			return "", fmt.Errorf("program %s is not an executable file", argv0)
		}
		return "", fmt.Errorf("program %q is not on PATH (%s)", argv0, pathList)
	}
	return p, nil
}

// stderrHead keeps the start of a process's stderr: a file that cannot
// grow past stderrMax (see newStderrHead), so a process that writes a lot
// costs nothing and one that outlives us loses nothing but its writes.
type stderrHead struct {
	f    *os.File
	mu   sync.Mutex
	done bool
	text string // once done
}

// String reads what the process has written so far.
func (h *stderrHead) String() string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return h.text
	}
	return h.read()
}

// read reads what was written: the process shares the file's offset,
// which so says how much that is.
func (h *stderrHead) read() string {
	n, err := h.f.Seek(0, io.SeekCurrent)
	if err != nil || n <= 0 {
		return ""
	}
	buf := make([]byte, min(n, stderrMax))
	m, _ := h.f.ReadAt(buf, 0)
	return string(buf[:m])
}

// finish keeps what was written and closes the file.
func (h *stderrHead) finish() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done {
		h.text = h.read()
		h.done = true
		h.f.Close()
	}
}
