package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

const (
	memoryBatch   = 1000 // memories per ingest call
	memoryWarmups = 5    // untimed recall queries before the timed ones
	recallLimit   = 10   // results domo-memory is asked for
)

// memoryServer is one side of the memory comparison: how it starts, and
// how it is asked to store a batch and to recall.
type memoryServer struct {
	name   string
	srv    server
	files  []string // where it keeps its data, for the size on disk
	ingest func(first int, batch []fact) (tool string, args map[string]any)
	// stored counts the memories an ingest answer says were created.
	stored func(structured json.RawMessage) (int, error)
	recall func(query string) (tool string, args map[string]any)
	// hits returns the texts of the memories a recall answer holds.
	hits func(structured json.RawMessage) ([]string, error)
	// fill writes batch straight into the server's store while it is
	// stopped, when ingest over MCP ran out of time; nil if it cannot.
	fill func(first int, batch []fact) error
}

// refEntity is an entity of the reference server's graph.
type refEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

// memoryFigures is what one server did at one size.
type memoryFigures struct {
	ingested, created int
	ingest, lastBatch time.Duration
	filled            int // memories written straight to the store after the time limit
	afterIngest       procMem
	recall            []time.Duration
	hits, bytes       int
	matching          int // hits whose text holds the query
	afterRecall       procMem
	disk              int64
}

// benchMemory compares domo-memory with the reference
// @modelcontextprotocol/server-memory at each size: storing the corpus in
// batches, recalling over MCP, and the server's resident memory.
func benchMemory(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	sizes, err := parseSizes(o.memorySizes)
	if err != nil {
		return fmt.Errorf("-memory-sizes: %w", err)
	}
	nodeServer := filepath.Join(root, "tests/peers/node_modules/@modelcontextprotocol/server-memory/dist/index.js")
	if _, err := os.Stat(nodeServer); err != nil {
		return fmt.Errorf("the npm peers are not installed (%v): run `go tool task setup`", err)
	}
	bin := filepath.Join(tmp, "domo-memory")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./servers/memory/cmd/domo-memory")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build domo-memory: %w", err)
	}

	fmt.Fprintf(w, "domo-memory vs @modelcontextprotocol/server-memory %s, %s, %s, %d CPUs\n",
		npmVersion(filepath.Dir(filepath.Dir(nodeServer))), nodeVersion(), runtime.Version(), runtime.NumCPU())
	fmt.Fprintf(w, `
Corpus: synthetic facts about 600 people (places, hobbies, employers, pets, dates; who and
what drawn with Zipf weights), the same for both servers. Each server runs over its own
stdio, both alive at once, calls interleaved.
  store   domo: memory_remember {memories:[{text, entities:[the person]}]}, %[1]d per call.
          reference: create_entities, %[1]d per call, each memory an entity "fact-N" of type
          "fact" whose one observation is the text (it has no other way to store a
          sentence). It reads and rewrites its whole JSONL file on every call.
  recall  %[2]d queries (after %[3]d untimed), each a first name, full name, place, hobby, food,
          employer, language or month drawn uniformly, so common and rare terms mix.
          domo: memory_recall {query, limit: %[4]d}: the best %[4]d by term coverage, BM25,
          recency and importance (no embeddings configured).
          reference: search_nodes {query}, a case-insensitive substring match over every
          entity that returns all matches and their relations, unranked and unbounded.
  limit   each server gets %[5]s per size for storing and %[5]s for recall. Past it, the
          rest of the corpus is written straight to the reference's JSONL file (and the
          server restarted), and recall stops; the figures say when that happened.
  memory  VmRSS and VmHWM (peak) of the server process from /proc/PID/status.
  ratios  how many times better domo-memory is: faster, or smaller; below 1× the
          reference is better.
`, memoryBatch, o.memoryQueries, memoryWarmups, recallLimit, o.memoryLimit)

	for _, n := range sizes {
		dir := filepath.Join(tmp, fmt.Sprintf("memory-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		servers := []memoryServer{domoMemory(bin, dir), referenceMemory(nodeServer, dir)}
		figs, err := memoryRound(ctx, servers, n, o)
		if err != nil {
			return fmt.Errorf("%d memories: %w", n, err)
		}
		printMemoryFigures(w, n, o, servers, figs)
		if err := benchImport(ctx, w, bin, dir, servers[1].files[0]); err != nil {
			return fmt.Errorf("%d memories: import: %w", n, err)
		}
	}
	return nil
}

// domoMemory is domo-memory on a fresh database in dir, with its XDG
// directories there too so that nothing touches the user's own.
func domoMemory(bin, dir string) memoryServer {
	db := filepath.Join(dir, "m.db")
	home := filepath.Join(dir, "home")
	return memoryServer{
		name: "domo-memory",
		srv: server{name: "domo-memory", argv: []string{bin, "--db", db}, env: []string{
			"HOME=" + home,
			"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
			"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
			"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"),
			"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		}},
		files: []string{db, db + "-wal", db + "-shm"},
		ingest: func(_ int, batch []fact) (string, map[string]any) {
			ms := make([]map[string]any, len(batch))
			for i, f := range batch {
				ms[i] = map[string]any{"text": f.text, "entities": []string{f.person}}
			}
			return "memory_remember", map[string]any{"memories": ms}
		},
		stored: func(structured json.RawMessage) (int, error) {
			var r struct {
				Results []struct{ Status string }
			}
			if err := json.Unmarshal(structured, &r); err != nil {
				return 0, err
			}
			n := 0
			for _, x := range r.Results {
				if x.Status == "created" {
					n++
				}
			}
			return n, nil
		},
		recall: func(q string) (string, map[string]any) {
			return "memory_recall", map[string]any{"query": q, "limit": recallLimit}
		},
		hits: func(structured json.RawMessage) ([]string, error) {
			var r struct{ Memories []struct{ Text string } }
			err := json.Unmarshal(structured, &r)
			texts := make([]string, len(r.Memories))
			for i, m := range r.Memories {
				texts[i] = m.Text
			}
			return texts, err
		},
	}
}

// referenceMemory is @modelcontextprotocol/server-memory on a fresh JSONL
// file in dir.
func referenceMemory(script, dir string) memoryServer {
	file := filepath.Join(dir, "memory.jsonl")
	entity := func(i int, f fact) map[string]any {
		return map[string]any{"name": fmt.Sprintf("fact-%d", i), "entityType": "fact", "observations": []string{f.text}}
	}
	return memoryServer{
		name:  "server-memory (node)",
		srv:   server{name: "server-memory", argv: []string{"node", script}, env: []string{"MEMORY_FILE_PATH=" + file}},
		files: []string{file},
		ingest: func(first int, batch []fact) (string, map[string]any) {
			es := make([]map[string]any, len(batch))
			for i, f := range batch {
				es[i] = entity(first+i, f)
			}
			return "create_entities", map[string]any{"entities": es}
		},
		stored: func(structured json.RawMessage) (int, error) {
			var r struct{ Entities []json.RawMessage }
			err := json.Unmarshal(structured, &r)
			return len(r.Entities), err
		},
		recall: func(q string) (string, map[string]any) {
			return "search_nodes", map[string]any{"query": q}
		},
		hits: func(structured json.RawMessage) ([]string, error) {
			var r struct{ Entities []refEntity }
			err := json.Unmarshal(structured, &r)
			texts := make([]string, len(r.Entities))
			for i, e := range r.Entities {
				texts[i] = strings.Join(e.Observations, "\n")
			}
			return texts, err
		},
		// The server's own format: one JSON object per line, no newline
		// after the last.
		fill: func(first int, batch []fact) error {
			f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return err
			}
			bw := bufio.NewWriter(f)
			for i, fa := range batch {
				e := entity(first+i, fa)
				e["type"] = "entity"
				b, err := json.Marshal(e)
				if err != nil {
					f.Close()
					return err
				}
				if fi.Size() > 0 || i > 0 {
					bw.WriteByte('\n')
				}
				bw.Write(b)
			}
			return errors.Join(bw.Flush(), f.Close())
		},
	}
}

// memoryRun is one size's run: the servers, their sessions, and what each
// did so far.
type memoryRun struct {
	servers  []memoryServer
	sessions []*session
	figs     []memoryFigures
	limit    time.Duration
}

// memoryRound stores n memories in every server, then recalls, and returns
// each server's figures.
func memoryRound(ctx context.Context, servers []memoryServer, n int, o options) ([]memoryFigures, error) {
	c := newCorpus(1)
	facts := make([]fact, n)
	for i := range facts {
		facts[i] = c.fact()
	}
	qc := newCorpus(2)
	queries := make([]string, memoryWarmups+o.memoryQueries)
	for i := range queries {
		queries[i] = qc.query()
	}
	r := &memoryRun{servers: servers, sessions: make([]*session, len(servers)), figs: make([]memoryFigures, len(servers)), limit: o.memoryLimit}
	defer r.close()
	for i := range servers {
		if err := r.start(ctx, i); err != nil {
			return nil, err
		}
	}
	if err := r.store(facts); err != nil {
		return nil, err
	}
	if err := r.fill(ctx, facts); err != nil {
		return nil, err
	}
	for i := range servers {
		r.figs[i].afterIngest = readProcMem(r.sessions[i].cmd.Process.Pid)
	}
	if err := r.recall(queries); err != nil {
		return nil, err
	}
	for i, m := range servers {
		f := &r.figs[i]
		f.afterRecall = readProcMem(r.sessions[i].cmd.Process.Pid)
		r.sessions[i].close()
		r.sessions[i] = nil
		for _, p := range m.files {
			if fi, err := os.Stat(p); err == nil {
				f.disk += fi.Size()
			}
		}
		if len(f.recall) == 0 {
			return nil, fmt.Errorf("%s answered no timed query within %s", m.name, o.memoryLimit)
		}
	}
	return r.figs, nil
}

func (r *memoryRun) start(ctx context.Context, i int) error {
	m := r.servers[i]
	s, err := start(ctx, m.srv)
	if err != nil {
		return fmt.Errorf("start %s: %w", m.name, err)
	}
	r.sessions[i] = s
	if err := s.initialize(); err != nil {
		return fmt.Errorf("%s: initialize: %w", m.name, err)
	}
	return nil
}

func (r *memoryRun) close() {
	for _, s := range r.sessions {
		if s != nil {
			s.close()
		}
	}
}

// store sends the corpus in batches, a batch to each server in turn, until
// a server has spent its time limit.
func (r *memoryRun) store(facts []fact) error {
	stopped := make([]bool, len(r.servers))
	for first := 0; first < len(facts); first += memoryBatch {
		batch := facts[first:min(first+memoryBatch, len(facts))]
		for i, m := range r.servers {
			if stopped[i] {
				continue
			}
			tool, args := m.ingest(first, batch)
			t0 := time.Now()
			res, err := callTool(r.sessions[i], tool, args)
			d := time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", m.name, tool, err)
			}
			created, err := m.stored(res)
			if err != nil {
				return fmt.Errorf("%s: %s answer: %w", m.name, tool, err)
			}
			f := &r.figs[i]
			f.ingest += d
			f.lastBatch = d
			f.ingested += len(batch)
			f.created += created
			stopped[i] = f.ingest > r.limit
		}
	}
	return nil
}

// fill writes what a server had no time to store straight into its store,
// where it can, and restarts it, so that recall runs over the whole corpus.
func (r *memoryRun) fill(ctx context.Context, facts []fact) error {
	for i, m := range r.servers {
		f := &r.figs[i]
		if f.ingested == len(facts) || m.fill == nil {
			continue
		}
		r.sessions[i].close()
		r.sessions[i] = nil
		if err := m.fill(f.ingested, facts[f.ingested:]); err != nil {
			return fmt.Errorf("%s: write the rest of the corpus: %w", m.name, err)
		}
		f.filled = len(facts) - f.ingested
		if err := r.start(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// recall sends each query to each server in turn; the first memoryWarmups
// are not counted. A server stops when it has spent its time limit.
func (r *memoryRun) recall(queries []string) error {
	stopped := make([]bool, len(r.servers))
	spent := make([]time.Duration, len(r.servers))
	for qi, q := range queries {
		for i, m := range r.servers {
			if stopped[i] {
				continue
			}
			tool, args := m.recall(q)
			t0 := time.Now()
			res, err := r.sessions[i].call("tools/call", map[string]any{"name": tool, "arguments": args})
			d := time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s: %s %q: %w", m.name, tool, q, err)
			}
			structured, err := toolResult(res)
			if err != nil {
				return fmt.Errorf("%s: %s %q: %w", m.name, tool, q, err)
			}
			hits, err := m.hits(structured)
			if err != nil {
				return fmt.Errorf("%s: %s answer: %w", m.name, tool, err)
			}
			spent[i] += d
			stopped[i] = spent[i] > r.limit
			if qi < memoryWarmups {
				continue
			}
			f := &r.figs[i]
			f.recall = append(f.recall, d)
			f.hits += len(hits)
			f.bytes += len(res)
			for _, h := range hits {
				if strings.Contains(strings.ToLower(h), strings.ToLower(q)) {
					f.matching++
				}
			}
		}
	}
	return nil
}

// benchImport times domo-memory importing the reference server's file
// into a fresh database, as someone moving over would.
func benchImport(ctx context.Context, w io.Writer, bin, dir, file string) error {
	m := domoMemory(bin, dir)
	db := filepath.Join(dir, "import.db")
	m.srv.argv = []string{bin, "--db", db}
	s, err := start(ctx, m.srv)
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.initialize(); err != nil {
		return err
	}
	t0 := time.Now()
	res, err := callTool(s, "memory_import", map[string]any{"path": file})
	d := time.Since(t0)
	if err != nil {
		return err
	}
	var r struct {
		Observations    int `json:"observations"`
		MemoriesCreated int `json:"memories_created"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	mem := readProcMem(s.cmd.Process.Pid)
	fmt.Fprintf(w, "  domo-memory memory_import of the reference's memory.jsonl into a new database: %s for %s observations (%s memories), VmHWM %s\n",
		seconds(d), thousands(r.Observations), thousands(r.MemoriesCreated), mib(mem.hwm))
	return nil
}

// callTool calls a tool and returns its structured content, failing on a
// protocol error or an isError result.
func callTool(s *session, tool string, args map[string]any) (json.RawMessage, error) {
	res, err := s.call("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	return toolResult(res)
}

func toolResult(res json.RawMessage) (json.RawMessage, error) {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	if r.IsError {
		var msg []string
		for _, c := range r.Content {
			msg = append(msg, c.Text)
		}
		return nil, fmt.Errorf("tool error: %.500s", strings.Join(msg, " "))
	}
	if len(r.StructuredContent) == 0 {
		return nil, fmt.Errorf("no structured content: %.300s", res)
	}
	return r.StructuredContent, nil
}
