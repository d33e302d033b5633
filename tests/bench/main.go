// Command bench measures Domo's servers side by side with the reference
// servers from npm, in one run on one machine, and prints the figures and
// their ratios. It is run by `task bench`; it asserts nothing.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	fs.IntVar(&o.starts, "starts", 20, "cold starts per server")
	fs.IntVar(&o.calls, "calls", 1000, "sequential calls per throughput round")
	fs.IntVar(&o.rounds, "rounds", 3, "throughput rounds per server")
	fs.IntVar(&o.auditLines, "audit-lines", 1_000_000, "lines in the audit log that queries and verify read")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the host part to this file")
	fs.StringVar(&o.memorySizes, "memory-sizes", "10000,100000", "comma-separated numbers of memories the memory part stores")
	fs.IntVar(&o.memoryQueries, "memory-queries", 200, "recall queries per size in the memory part")
	fs.DurationVar(&o.memoryLimit, "memory-limit", 5*time.Minute, "time each memory server may spend storing, and again recalling, at each size")
	fs.IntVar(&o.webRuns, "web-runs", 5, "timed search-and-read runs per server in the web part")
	fs.IntVar(&o.browserStarts, "browser-starts", 5, "cold starts to a first snapshot per server in the browser part")
	fs.IntVar(&o.browserRuns, "browser-runs", 30, "timed navigate-and-snapshot runs per server in the browser part")
	only := fs.String("only", "", "run one part: files, audit, host, memory, web, browser, ax or voice")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "domo-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	parts := []struct {
		name string
		run  func(ctx context.Context, w io.Writer, root, tmp string, o options) error
	}{{"files", benchFiles}, {"audit", benchAudit}, {"host", benchHost}, {"memory", benchMemory}, {"web", benchWeb}, {"browser", benchBrowser}, {"ax", benchAx}, {"voice", benchVoice}}
	ran := false
	for _, p := range parts {
		if *only != "" && *only != p.name {
			continue
		}
		if ran {
			fmt.Fprintln(w)
		}
		ran = true
		if err := p.run(ctx, w, root, tmp, o); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	if !ran {
		return fmt.Errorf("-only %q: want files, audit, host, memory, web, browser, ax or voice", *only)
	}
	return nil
}

type options struct {
	starts, calls, rounds int
	auditLines            int
	cpuProfile            string
	memorySizes           string
	memoryQueries         int
	memoryLimit           time.Duration
	webRuns               int
	browserStarts         int
	browserRuns           int
}

// benchFiles compares domo-files with the reference filesystem server.
func benchFiles(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	starts, calls, rounds := &o.starts, &o.calls, &o.rounds
	bin := filepath.Join(tmp, "domo-files")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./servers/files/cmd/domo-files")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build domo-files: %w", err)
	}
	nodeServer := filepath.Join(root, "tests/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, err := os.Stat(nodeServer); err != nil {
		return fmt.Errorf("the npm peers are not installed (%v): run `go tool task setup`", err)
	}
	sandbox := filepath.Join(tmp, "sandbox")
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return err
	}
	small := filepath.Join(sandbox, "small.txt")
	if err := os.WriteFile(small, []byte(strings.Repeat("a small file for reading\n", 20)), 0o644); err != nil {
		return err
	}
	servers := []server{
		{name: "domo-files", argv: []string{bin, sandbox}},
		{name: "server-filesystem (node)", argv: []string{"node", nodeServer, sandbox}},
	}

	fmt.Fprintf(w, "domo-files vs @modelcontextprotocol/server-filesystem %s, %s, %s, %d CPUs\n\n",
		npmVersion(filepath.Dir(filepath.Dir(nodeServer))), nodeVersion(), runtime.Version(), runtime.NumCPU())

	// Cold start: interleave the servers so both see the same machine load.
	coldTimes := make([][]time.Duration, len(servers))
	coldCPU := make([][]time.Duration, len(servers))
	for range *starts {
		for i, s := range servers {
			d, c, err := coldStart(ctx, s)
			if err != nil {
				return fmt.Errorf("%s cold start: %w", s.name, err)
			}
			coldTimes[i] = append(coldTimes[i], d)
			coldCPU[i] = append(coldCPU[i], c)
		}
	}
	fmt.Fprintf(w, "Cold start, process spawn to tools/list answered (median of %d; min–max; server CPU user+sys, start to exit):\n", *starts)
	for i, s := range servers {
		fmt.Fprintf(w, "  %-26s %8.2f ms   (%.2f–%.2f)   cpu %.2f ms\n", s.name, ms(median(coldTimes[i])), ms(slices.Min(coldTimes[i])), ms(slices.Max(coldTimes[i])), ms(median(coldCPU[i])))
	}
	fmt.Fprintf(w, "  %-26s %8.1f×  (target ≤ 10 ms and ≥ 20×)\n\n", "ratio", float64(median(coldTimes[1]))/float64(median(coldTimes[0])))

	rates := make([][]float64, len(servers))
	callCPU := make([][]time.Duration, len(servers))
	for range *rounds {
		for i, s := range servers {
			r, c, err := throughput(ctx, s, small, *calls)
			if err != nil {
				return fmt.Errorf("%s throughput: %w", s.name, err)
			}
			rates[i] = append(rates[i], r)
			callCPU[i] = append(callCPU[i], c)
		}
	}
	fmt.Fprintf(w, "read_text_file on a %d-byte file, %d sequential calls in one session (median of %d rounds; min–max; server CPU per call):\n", 500, *calls, *rounds)
	med := make([]float64, len(servers))
	for i, s := range servers {
		med[i] = medianF(rates[i])
		fmt.Fprintf(w, "  %-26s %8.0f calls/s   (%.0f–%.0f)   cpu %.1f µs/call\n", s.name, med[i], slices.Min(rates[i]), slices.Max(rates[i]), float64(median(callCPU[i]))/float64(time.Microsecond))
	}
	fmt.Fprintf(w, "  %-26s %8.1f×  (target ≥ 10,000 calls/s and ≥ 3×)\n", "ratio", med[0]/med[1])
	return nil
}

type server struct {
	name string
	argv []string
	env  []string // added to the bench's own environment
}

// session is a minimal newline-delimited JSON-RPC client over a child's
// stdio: enough to time a server, with nothing of its own in the way.
type session struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func start(ctx context.Context, s server) (*session, error) {
	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	if s.env != nil {
		cmd.Env = append(os.Environ(), s.env...)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &session{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// close ends the session and returns the CPU time the server used.
func (s *session) close() time.Duration {
	s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	if s.cmd.ProcessState == nil {
		return 0
	}
	return s.cmd.ProcessState.UserTime() + s.cmd.ProcessState.SystemTime()
}

func (s *session) notify(method string) error {
	_, err := fmt.Fprintf(s.in, `{"jsonrpc":"2.0","method":%q}`+"\n", method)
	return err
}

// call sends a request and reads lines until its response arrives.
func (s *session) call(method string, params any) (json.RawMessage, error) {
	s.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := s.in.Write(append(req, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("read response to %s: %w", method, err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(line, &resp) != nil || resp.ID == nil || *resp.ID != s.id {
			continue // a notification or log line
		}
		if resp.Error != nil {
			return nil, errors.New(resp.Error.Message)
		}
		return resp.Result, nil
	}
}

func (s *session) initialize() error {
	_, err := s.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "domo-bench", "version": "0"},
	})
	if err != nil {
		return err
	}
	return s.notify("notifications/initialized")
}

// coldStart returns the wall time from spawn to the tools/list answer, and
// the CPU time the server used in all (start to exit).
func coldStart(ctx context.Context, srv server) (wall, cpu time.Duration, err error) {
	t0 := time.Now()
	s, err := start(ctx, srv)
	if err != nil {
		return 0, 0, err
	}
	if err := s.initialize(); err != nil {
		s.close()
		return 0, 0, err
	}
	res, err := s.call("tools/list", map[string]any{})
	wall = time.Since(t0)
	cpu = s.close()
	if err != nil {
		return 0, 0, err
	}
	if !strings.Contains(string(res), "read_text_file") {
		return 0, 0, fmt.Errorf("tools/list has no read_text_file: %.200s", res)
	}
	return wall, cpu, nil
}

// throughput returns calls per second over n sequential calls, and the
// server's CPU time per call over the whole session.
func throughput(ctx context.Context, srv server, file string, n int) (rate float64, cpu time.Duration, err error) {
	s, err := start(ctx, srv)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		c := s.close()
		if err == nil {
			cpu = c / time.Duration(n+1)
		}
	}()
	if err := s.initialize(); err != nil {
		return 0, 0, err
	}
	params := map[string]any{"name": "read_text_file", "arguments": map[string]any{"path": file}}
	// Warm up, and check the answer is the file, not an error.
	res, err := s.call("tools/call", params)
	if err != nil {
		return 0, 0, err
	}
	if strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "a small file") {
		return 0, 0, fmt.Errorf("read_text_file did not return the file: %.300s", res)
	}
	t0 := time.Now()
	for range n {
		if _, err := s.call("tools/call", params); err != nil {
			return 0, 0, err
		}
	}
	return float64(n) / time.Since(t0).Seconds(), 0, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(f []float64) float64 {
	s := slices.Clone(f)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run bench inside the domo module")
	}
	return filepath.Dir(mod), nil
}

func npmVersion(pkgDir string) string {
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "?"
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Version
}

func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "node ?"
	}
	return "node " + strings.TrimSpace(string(out))
}
