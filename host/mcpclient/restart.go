package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"
)

// A server that stayed up this long before dying starts again at once; one
// that keeps dying waits longer each time, up to maxBackoff.
const (
	stableRun  = 30 * time.Second
	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// backoff is the wait before restart attempt n (0-based) of a run of
// failures: none for the first, then doubling from minBackoff.
func backoff(n int) time.Duration {
	if n <= 0 {
		return 0
	}
	d := minBackoff << (n - 1)
	if d > maxBackoff || d <= 0 {
		return maxBackoff
	}
	return d
}

// watch waits for the process behind c to exit and then restarts it. The
// wait uses WNOWAIT, so the process stays for the transport to reap.
func (sup *Supervisor) watch(s *Server, c *client.Client) {
	cmd := s.cmd()
	if cmd == nil || cmd.Process == nil {
		return // an HTTP server: nothing to watch
	}
	pid := cmd.Process.Pid
	started := time.Now()
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		sup.died(s, c, time.Since(started))
	}()
}

// died handles the exit of the process behind c: unless the supervisor is
// closing, the old session is closed, which fails every call in flight at
// once, and a restart begins.
func (sup *Supervisor) died(s *Server, c *client.Client, ran time.Duration) {
	sup.mu.Lock()
	if sup.closed || s.client != c {
		sup.mu.Unlock()
		return
	}
	s.client = nil
	s.State = StateRestarting
	sup.toolsChanged()
	s.Err = s.explain("exited unexpectedly", errors.New("the process died"))
	ready := make(chan struct{})
	s.ready = ready
	sup.mu.Unlock()
	c.Close()
	failures := 0
	if ran < stableRun {
		failures = 1 // it died young: do not restart it in a tight loop
	}
	go sup.restart(s, failures)
}

// restart starts s again, waiting longer after each failed attempt, until
// it is ready or the supervisor closes. Callers waiting in Session are woken
// after every attempt.
func (sup *Supervisor) restart(s *Server, failures int) {
	for {
		select {
		case <-sup.life.Done():
			sup.settle(s, nil, nil, errors.New("the supervisor closed"))
			return
		case <-time.After(backoff(failures)):
		}
		c, tools, err := sup.handshake(sup.life, s, sup.opts)
		if sup.settle(s, c, tools, err) {
			return
		}
		failures++
	}
}

// settle records the outcome of one restart attempt and wakes the waiters.
// It reports whether restarting is over.
func (sup *Supervisor) settle(s *Server, c *client.Client, tools []mcp.Tool, err error) bool {
	sup.mu.Lock()
	defer sup.mu.Unlock()
	close(s.ready)
	s.ready = make(chan struct{})
	if sup.closed {
		if c != nil {
			c.Close()
		}
		s.State = StateFailed
		sup.toolsChanged()
		return true
	}
	s.Restarts++
	if err != nil {
		s.Err = fmt.Errorf("restart %d failed: %w", s.Restarts, err)
		return false
	}
	s.client, s.State = c, StateReady
	s.setTools(tools)
	sup.toolsChanged()
	sup.watch(s, c)
	return true
}

// Session returns the live session of the named server. If the server is
// restarting, it waits for the current attempt (bounded by ctx) and fails
// if that attempt fails.
func (sup *Supervisor) Session(ctx context.Context, name string) (*client.Client, error) {
	sup.mu.Lock()
	s, ok := sup.servers[name]
	if !ok {
		sup.mu.Unlock()
		return nil, fmt.Errorf("no server named %q", name)
	}
	for waited := false; ; waited = true {
		switch {
		case s.State == StateReady:
			c := s.client
			sup.mu.Unlock()
			return c, nil
		case s.State == StateRestarting && !waited:
			ready := s.ready
			sup.mu.Unlock()
			select {
			case <-ready:
			case <-ctx.Done():
				return nil, fmt.Errorf("server %s is restarting: %w", name, ctx.Err())
			}
			sup.mu.Lock()
		default:
			err := fmt.Errorf("server %s is %s", name, s.State)
			if s.Err != nil {
				err = fmt.Errorf("server %s is %s: %w", name, s.State, s.Err)
			}
			sup.mu.Unlock()
			return nil, err
		}
	}
}
