// Package mcpclient starts and supervises the MCP servers the host uses and
// keeps the catalogue of their tools. It connects, lists and reports; it
// never calls a tool: every call goes through toolgate, which gets a
// server's session from here.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/host/config"
)

// State is where a server stands.
type State string

// The states.
const (
	StateReady  State = "ready"
	StateFailed State = "failed"
	StateAbsent State = "absent" // a built-in server whose binary is not installed
	StateOff    State = "disabled"
	// StateRestarting: the server died and is being started again.
	StateRestarting State = "restarting"
)

// Options tune Start.
type Options struct {
	// InitTimeout bounds starting a server and its handshake (default 10 s).
	InitTimeout time.Duration
	// Version is the host's version, sent as the client's.
	Version string
}

// Server is one supervised server.
type Server struct {
	Name   string
	Config config.Server
	State  State
	Err    error
	Tools  []mcp.Tool
	// schemas are the tools' input schemas as JSON, in the order of Tools.
	schemas []json.RawMessage
	// Restarts counts how often the server was started again after dying.
	Restarts int

	client *client.Client
	stderr *tailBuffer
	mu     sync.Mutex
	proc   *exec.Cmd
	// ready is closed when a restart ends, in success or failure.
	ready chan struct{}
}

// StderrTail returns the last lines the server wrote to stderr.
func (s *Server) StderrTail() string {
	if s.stderr == nil {
		return ""
	}
	return s.stderr.String()
}

// Supervisor holds the started servers.
type Supervisor struct {
	mu      sync.Mutex
	servers map[string]*Server
	opts    Options
	closed  bool
	// life ends the restart loops when the supervisor closes.
	life     context.Context
	end      context.CancelFunc
	progress progressHub
	catalog  *catalogue
}

// Start starts every enabled server in parallel and waits for each to
// answer its handshake and tools/list, or fail. A server that fails is
// reported in its Server and the others still start.
func Start(ctx context.Context, servers map[string]config.Server, opts Options) *Supervisor {
	if opts.InitTimeout == 0 {
		opts.InitTimeout = 10 * time.Second
	}
	sup := &Supervisor{servers: map[string]*Server{}, opts: opts}
	sup.life, sup.end = context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for name, cfg := range servers {
		s := &Server{Name: name, Config: cfg}
		sup.servers[name] = s
		switch {
		case cfg.Disabled:
			s.State = StateOff
			continue
		case cfg.Err != nil:
			s.State, s.Err = StateFailed, cfg.Err
			continue
		}
		wg.Go(func() { sup.connect(ctx, s, opts) })
	}
	wg.Wait()
	return sup
}

func (sup *Supervisor) connect(ctx context.Context, s *Server, opts Options) {
	c, tools, err := sup.handshake(ctx, s, opts)
	if err != nil {
		s.State, s.Err = StateFailed, err
		if errors.Is(err, errAbsent) {
			s.State = StateAbsent
		}
		return
	}
	s.client, s.State = c, StateReady
	s.setTools(tools)
	sup.watch(s, c)
}

// handshake starts the server, initializes the session and lists its tools.
func (sup *Supervisor) handshake(ctx context.Context, s *Server, opts Options) (*client.Client, []mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.InitTimeout)
	defer cancel()
	c, err := s.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	c.OnNotification(sup.progress.dispatch)
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "domo", Version: opts.Version}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, nil, s.explain("the handshake failed", err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		c.Close()
		return nil, nil, s.explain("tools/list failed", err)
	}
	return c, res.Tools, nil
}

// explain adds the server's stderr tail to an error, where the reason
// usually is.
func (s *Server) explain(what string, err error) error {
	if tail := s.StderrTail(); tail != "" {
		return fmt.Errorf("%s: %w; its stderr ends:\n%s", what, err, tail)
	}
	return fmt.Errorf("%s: %w", what, err)
}

var errAbsent = errors.New("not installed")

// dial starts the server's process (or connects over HTTP) and returns an
// unstarted-handshake client.
func (s *Server) dial(ctx context.Context) (*client.Client, error) {
	cfg := s.Config
	opts := []client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20251125)}
	if cfg.HTTP() {
		var topts []transport.StreamableHTTPCOption
		if len(cfg.Headers) > 0 {
			topts = append(topts, transport.WithHTTPHeaders(cfg.Headers))
		}
		c, err := client.NewStreamableHttpClient(cfg.URL, topts...)
		if err != nil {
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		return c, nil
	}
	path, err := findCommand(cfg.Command)
	if err != nil {
		if cfg.Builtin {
			return nil, fmt.Errorf("%w: %s is not next to domo or on PATH", errAbsent, cfg.Command)
		}
		return nil, err
	}
	env := os.Environ()
	for k, v := range cfg.Env {
		env = append(env, k+"="+v)
	}
	s.stderr = &tailBuffer{max: 4 << 10}
	tr := transport.NewStdioWithOptions(path, env, cfg.Args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			// exec copies stderr itself and finishes the copy before Wait
			// returns, so after Close the tail is complete.
			cmd.Stderr = s.stderr
			// Its own process group, so that the whole tree a server
			// starts (npx → node) is killed with it.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			s.setCmd(cmd)
			return cmd, nil
		}),
	)
	c := client.NewClient(tr, opts...)
	// The process must outlive the start-up context.
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, s.explain("start "+cfg.Command, err)
	}
	return c, nil
}

func (s *Server) setCmd(cmd *exec.Cmd) {
	s.mu.Lock()
	s.proc = cmd
	s.mu.Unlock()
}

func (s *Server) cmd() *exec.Cmd {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// findCommand looks for a bare command name next to the running binary
// first (Domo's own servers are built beside domo), then on PATH.
func findCommand(name string) (string, error) {
	if filepath.Base(name) == name {
		if exe, err := os.Executable(); err == nil {
			p := filepath.Join(filepath.Dir(exe), name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("command %s not found next to domo or on PATH", name)
	}
	return p, nil
}

// Status is a snapshot of one server, safe to read while the supervisor
// goes on.
type Status struct {
	Name     string
	State    State
	Err      error // why it failed, or why it last died
	PID      int
	Tools    []mcp.Tool
	Restarts int
}

// Servers returns a snapshot of every server, sorted by name.
func (sup *Supervisor) Servers() []Status {
	sup.mu.Lock()
	defer sup.mu.Unlock()
	out := make([]Status, 0, len(sup.servers))
	for _, s := range sup.servers {
		st := Status{Name: s.Name, State: s.State, Err: s.Err, Tools: s.Tools, Restarts: s.Restarts}
		if c := s.cmd(); c != nil && c.Process != nil && s.State == StateReady {
			st.PID = c.Process.Pid
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Close ends every server: their sessions, then their process groups.
func (sup *Supervisor) Close() {
	sup.mu.Lock()
	defer sup.mu.Unlock()
	if sup.closed {
		return
	}
	sup.closed = true
	sup.end()
	for _, s := range sup.servers {
		if c := s.cmd(); c != nil && c.Process != nil {
			syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		}
		if s.client != nil {
			s.client.Close()
		}
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
