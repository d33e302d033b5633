package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
)

// session is what every command that calls tools runs on: the config, the
// started servers, the audit log and the gate between them.
type session struct {
	id   string
	cfg  config.Config
	sup  *mcpclient.Supervisor
	log  *audit.Writer
	gate *toolgate.Gate
}

// sessionFlags are the flags shared by the commands that call tools.
type sessionFlags struct {
	allow []string
	mode  string
}

func (f *sessionFlags) Set(v string) error {
	for g := range strings.SplitSeq(v, ",") {
		if g = strings.TrimSpace(g); g != "" {
			f.allow = append(f.allow, g)
		}
	}
	return nil
}

func (f *sessionFlags) String() string { return strings.Join(f.allow, ",") }

// openSession loads the config, opens the audit log, starts the servers
// and builds the gate. what names the command in the session_start event.
func openSession(ctx context.Context, e *env, cfg config.Config, f sessionFlags, prompter toolgate.Prompter, what string) (*session, error) {
	if f.mode != "" {
		cfg.Permissions.Mode = policy.Mode(f.mode)
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("%w: --mode: %v", errUsage, err)
		}
	}
	known := cfg.Permissions.KnownGroups()
	for _, g := range f.allow {
		if !strings.HasPrefix(g, "mcp.") && !slices.Contains(known, g) {
			return nil, fmt.Errorf("%w: --allow %s: unknown group; groups: %s, or mcp.SERVER", errUsage, g, strings.Join(known, ", "))
		}
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Audit.Path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	log, err := audit.Open(cfg.Audit.Path, cfg.Audit.AuditOptions())
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	s := &session{id: newSessionID(), cfg: cfg, log: log}
	if _, err := log.Append(audit.Event{Session: s.id, Event: audit.KindSession, Reason: what}); err != nil {
		log.Close()
		return nil, fmt.Errorf("audit log: %w", err)
	}
	s.sup = mcpclient.Start(ctx, serversToStart(cfg), mcpclient.Options{Version: version})
	path := e.configPath
	s.gate = toolgate.New(toolgate.Options{
		Servers:      s.sup,
		Log:          log,
		Permissions:  cfg.Permissions,
		Memory:       cfg.Memory.Enabled,
		ServerConfig: cfg.Servers,
		Prompter:     prompter,
		Persist: func(group string, p policy.GroupPolicy) error {
			return config.SetPolicy(path, group, p)
		},
		Session: s.id,
		Allow:   f.allow,
	})
	return s, nil
}

// memoryServer is the server whose tools the memory switch governs: the
// catalogue gives the memory groups to its tools.
const memoryServer = "memory"

// serversToStart is the configured servers, with the memory server
// disabled when memory is off: its tools could not be called anyway, and
// nothing should hold the memory database open.
func serversToStart(cfg config.Config) map[string]config.Server {
	s, ok := cfg.Servers[memoryServer]
	if cfg.Memory.Enabled || !ok || s.Disabled {
		return cfg.Servers
	}
	out := make(map[string]config.Server, len(cfg.Servers))
	for name, srv := range cfg.Servers {
		out[name] = srv
	}
	s.Disabled = true
	out[memoryServer] = s
	return out
}

func (s *session) Close() {
	s.sup.Close()
	s.log.Close()
}

func newSessionID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
