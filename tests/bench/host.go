package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
)

// The host part's sizes: calls per gate mode, and how they are interleaved.
const (
	gateCalls = 3000
	gateBatch = 50
)

// benchHost measures the host's own costs: starting every built Domo server,
// the gate around a tool call, and a whole turn against an LLM that answers
// at once.
func benchHost(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	servers, err := buildServers(ctx, root, tmp)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range servers {
			if !yield("domo-" + n) {
				return
			}
		}
	})
	fmt.Fprintf(w, "Host costs with %d Domo server(s) (%s), %s, %d CPUs\n\n", len(servers), strings.Join(names, ", "), runtime.Version(), runtime.NumCPU())
	if err := benchStart(ctx, w, servers, o.starts); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if err := benchGate(ctx, w, tmp, servers); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if err := benchTurns(ctx, w, tmp, servers); err != nil {
		return fmt.Errorf("turns: %w", err)
	}
	if o.cpuProfile != "" {
		fmt.Fprintf(w, "\nCPU profile of this part written to %s (try -focus 'toolgate.*Gate.*Call' or 'agent.*Agent.*Turn').\n", o.cpuProfile)
	}
	return nil
}

// buildServers builds every Domo server and returns their configs, each
// with the arguments config.Default gives it and its home directories in
// tmp, so that no server touches the user's own.
func buildServers(ctx context.Context, root, tmp string) (map[string]config.Server, error) {
	bin := filepath.Join(tmp, "host-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator), "./servers/...")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build the servers: %w", err)
	}
	bins, err := filepath.Glob(filepath.Join(bin, "domo-*"))
	if err != nil {
		return nil, err
	}
	if len(bins) == 0 {
		return nil, errors.New("go build ./servers/... made no domo-* binary")
	}
	home := filepath.Join(tmp, "host-home")
	sandbox := filepath.Join(home, "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return nil, err
	}
	env := map[string]string{
		"HOME":            home,
		"DOMO_FILES_ROOT": sandbox,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
	}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	defaults := config.Default().Servers
	servers := map[string]config.Server{}
	for _, b := range bins {
		name := strings.TrimPrefix(filepath.Base(b), "domo-")
		def := defaults[name]
		args := make([]string, len(def.Args))
		for i, a := range def.Args {
			if args[i], err = config.Expand(a, getenv); err != nil {
				return nil, fmt.Errorf("%s args: %w", name, err)
			}
		}
		servers[name] = config.Server{Name: name, Command: b, Args: args, Env: env, Timeout: def.Timeout}
	}
	return servers, nil
}

// startAll starts servers and fails unless every one is ready.
func startAll(ctx context.Context, servers map[string]config.Server) (*mcpclient.Supervisor, error) {
	sup := mcpclient.Start(ctx, servers, mcpclient.Options{})
	for _, s := range sup.Servers() {
		if s.State != mcpclient.StateReady {
			sup.Close()
			return nil, fmt.Errorf("server %s is %s: %v", s.Name, s.State, s.Err)
		}
	}
	return sup, nil
}

// benchStart times mcpclient.Start over every server at once, against the
// same servers started one after another.
func benchStart(ctx context.Context, w io.Writer, servers map[string]config.Server, runs int) error {
	var par, seq []time.Duration
	one := func(cfg map[string]config.Server) (time.Duration, error) {
		t0 := time.Now()
		sup, err := startAll(ctx, cfg)
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		sup.Close()
		return d, nil
	}
	for i := range runs {
		// Alternate which goes first, so neither always follows a close.
		for _, parallel := range []bool{i%2 == 0, i%2 != 0} {
			if parallel {
				d, err := one(servers)
				if err != nil {
					return err
				}
				par = append(par, d)
				continue
			}
			var sum time.Duration
			for name, cfg := range servers {
				d, err := one(map[string]config.Server{name: cfg})
				if err != nil {
					return err
				}
				sum += d
			}
			seq = append(seq, sum)
		}
	}
	fmt.Fprintf(w, "Start every server until ready (initialize + tools/list), mcpclient.Start, %d runs (ms):\n", runs)
	fmt.Fprintf(w, "  %-34s %8s %8s\n", "", "median", "p95")
	fmt.Fprintf(w, "  %-34s %8.2f %8.2f   (target ≤ 50 ms)\n", fmt.Sprintf("in parallel (%d servers)", len(servers)), ms(median(par)), ms(quantile(par, 0.95)))
	fmt.Fprintf(w, "  %-34s %8.2f %8.2f\n", "one after another (sum)", ms(median(seq)), ms(quantile(seq, 0.95)))
	fmt.Fprintf(w, "  %-34s %8.2f×\n\n", "ratio", float64(median(seq))/float64(median(par)))
	return nil
}

// benchGate times a trivial tool called straight on the session and through
// the gate under each audit sync policy, interleaved in batches so that
// every mode sees the same machine.
func benchGate(ctx context.Context, w io.Writer, tmp string, servers map[string]config.Server) error {
	if _, ok := servers["files"]; !ok {
		return errors.New("no domo-files to call")
	}
	sup, err := startAll(ctx, servers)
	if err != nil {
		return err
	}
	defer sup.Close()
	sess, err := sup.Session(ctx, "files")
	if err != nil {
		return err
	}
	const tool = "list_allowed_directories"
	args := json.RawMessage("{}")
	raw := func() error {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		out, err := sess.CallTool(ctx, req)
		if err != nil {
			return err
		}
		if out.IsError {
			return fmt.Errorf("%s failed: %v", tool, out.Content)
		}
		return nil
	}
	type mode struct {
		name  string
		call  func() error
		times []time.Duration
	}
	modes := []*mode{{name: "raw CallTool", call: raw}}
	for _, c := range []struct {
		name string
		sync audit.Sync
	}{
		{"gate, no fsync", audit.SyncNever},
		{"gate, fsync after call_end", audit.SyncCallEnd},
		{"gate, fsync after every event", audit.SyncEvery},
	} {
		log, err := audit.Open(filepath.Join(tmp, "host-gate-"+strings.ReplaceAll(c.name, " ", "-"), "audit.jsonl"), audit.Options{Sync: c.sync})
		if err != nil {
			return err
		}
		defer log.Close()
		gate := newGate(sup, log, servers, "bench")
		modes = append(modes, &mode{name: c.name, call: func() error {
			res := gate.Call(ctx, toolgate.Call{Name: tool, Args: args})
			switch {
			case res.AuditErr != nil:
				return res.AuditErr
			case res.Status != audit.StatusOK || res.IsError:
				return fmt.Errorf("%s through the gate: %s: %s", tool, res.Status, res.Text)
			}
			return nil
		}})
	}
	for _, m := range modes {
		for range gateBatch { // warm up: connections, schema compilation
			if err := m.call(); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
	}
	for r := range gateCalls / gateBatch {
		for k := range modes {
			m := modes[(r+k)%len(modes)]
			for range gateBatch {
				t0 := time.Now()
				err := m.call()
				m.times = append(m.times, time.Since(t0))
				if err != nil {
					return fmt.Errorf("%s: %w", m.name, err)
				}
			}
		}
	}
	fmt.Fprintf(w, "Tool call overhead: %s {} on domo-files, %d calls per mode in batches of %d, interleaved (µs):\n", tool, gateCalls, gateBatch)
	fmt.Fprintf(w, "  %-34s %8s %8s %14s\n", "", "median", "p95", "gate − raw")
	base := median(modes[0].times)
	for i, m := range modes {
		med := median(m.times)
		fmt.Fprintf(w, "  %-34s %8.1f %8.1f", m.name, us(med), us(quantile(m.times, 0.95)))
		if i > 0 {
			fmt.Fprintf(w, " %+14.1f", us(med-base))
			if i == 1 {
				fmt.Fprint(w, "   (target ≤ 200 µs)")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	return nil
}

// newGate returns a gate with the default permissions, as the host makes
// one when the config file is empty.
func newGate(sup *mcpclient.Supervisor, log toolgate.Log, servers map[string]config.Server, session string) *toolgate.Gate {
	return toolgate.New(toolgate.Options{
		Servers:      sup,
		Log:          log,
		Permissions:  config.Default().Permissions,
		Memory:       true,
		ServerConfig: servers,
		Session:      session,
	})
}

// quantile returns the nearest-rank q-quantile of d.
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := max(int(math.Ceil(q*float64(len(s))))-1, 0)
	return s[i]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
