package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/domo-agent/domo/audit"
)

// benchAudit measures the audit log: append throughput under each sync
// policy, then `domo audit` queries and verify over a large log, beside
// grep and jq doing the same filtering by hand.
func benchAudit(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	fmt.Fprintln(w, "Audit log appends (events/s; µs per event; a third of the events are tool_call_end):")
	for _, c := range []struct {
		name string
		sync audit.Sync
		n    int
	}{
		{"no fsync", audit.SyncNever, 50_000},
		{"fsync after tool_call_end", audit.SyncCallEnd, 3_000},
		{"fsync after every event", audit.SyncEvery, 2_000},
	} {
		rate, err := appendRate(filepath.Join(tmp, "append-"+strings.ReplaceAll(c.name, " ", "-")), c.sync, c.n)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-28s %9.0f events/s   %7.1f µs/event\n", c.name, rate, 1e6/rate)
	}

	domo := filepath.Join(tmp, "domo")
	build := exec.CommandContext(ctx, "go", "build", "-o", domo, "./host/cmd/domo")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build domo: %w", err)
	}
	log := filepath.Join(tmp, "big", "audit.jsonl")
	start := time.Now()
	if err := bigLog(log, o.auditLines); err != nil {
		return err
	}
	var size int64
	files, _ := audit.Files(log)
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	fmt.Fprintf(w, "\nA log of %d lines (%d MiB in %d files, written in %.1f s); wall time of each command, median of 3:\n",
		o.auditLines, size>>20, len(files), time.Since(start).Seconds())

	rows := []struct {
		name   string
		argv   []string
		target string
	}{
		{"domo audit --tool write_file --since 6h", []string{domo, "audit", "--log", log, "--tool", "write_file", "--since", "6h"}, "≤ 1 s"},
		{"domo audit --tool 'web_*' --json --limit 0", []string{domo, "audit", "--log", log, "--tool", "web_*", "--json", "--limit", "0"}, "≤ 1 s"},
		{"domo audit --errors --since 1d", []string{domo, "audit", "--log", log, "--errors", "--since", "1d"}, "≤ 1 s"},
		{"domo audit stats", []string{domo, "audit", "stats", "--log", log}, ""},
		{"domo audit verify", []string{domo, "audit", "verify", "--log", log}, "≤ 2 s"},
	}
	// The same filter by hand, for scale: a fixed-string grep, and jq.
	grepArgs := []string{"grep", "-h", "-F", `"tool":"write_file"`}
	rows = append(rows, struct {
		name   string
		argv   []string
		target string
	}{"grep -F '\"tool\":\"write_file\"' (no time filter)", append(grepArgs, files...), "reference"})
	if _, err := exec.LookPath("jq"); err == nil {
		rows = append(rows, struct {
			name   string
			argv   []string
			target string
		}{"jq 'select(.tool==\"write_file\")'", append([]string{"jq", "-c", `select(.tool=="write_file")`}, files...), "reference"})
	}
	for _, r := range rows {
		var times []time.Duration
		for range 3 {
			cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
			cmd.Stdout = io.Discard
			var stderr strings.Builder
			cmd.Stderr = &stderr
			t0 := time.Now()
			err := cmd.Run()
			times = append(times, time.Since(t0))
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", r.name, err, stderr.String())
			}
		}
		slices.Sort(times)
		fmt.Fprintf(w, "  %-52s %7.3f s   %s\n", r.name, times[1].Seconds(), r.target)
	}
	return nil
}

// appendRate appends n typical events to a fresh log and returns events/s.
func appendRate(dir string, sync audit.Sync, n int) (float64, error) {
	wr, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Options{Sync: sync})
	if err != nil {
		return 0, err
	}
	defer wr.Close()
	start := time.Now()
	for i := range n {
		if _, err := wr.Append(typical(i, time.Time{})); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// bigLog writes n events spread over the past week.
func bigLog(path string, n int) error {
	wr, err := audit.Open(path, audit.Options{Sync: audit.SyncNever})
	if err != nil {
		return err
	}
	defer wr.Close()
	step := 7 * 24 * time.Hour / time.Duration(n)
	t := time.Now().Add(-7 * 24 * time.Hour)
	for i := range n {
		t = t.Add(step)
		if _, err := wr.Append(typical(i, t)); err != nil {
			return err
		}
	}
	return nil
}

var benchTools = []struct{ server, tool, group string }{
	{"files", "read_text_file", "files.read"},
	{"files", "write_file", "files.write"},
	{"files", "list_directory", "files.read"},
	{"web", "web_search", "web"},
	{"web", "web_read", "web"},
	{"memory", "memory_recall", "memory.read"},
	{"browser", "browser_click", "browser"},
	{"files", "grep_files", "files.read"},
}

// typical is the i-th event of a realistic stream: decision, start, end.
func typical(i int, ts time.Time) audit.Event {
	call := i / 3
	t := benchTools[call%len(benchTools)]
	e := audit.Event{TS: ts, Session: fmt.Sprintf("s%d", call/200), Turn: call / 5 % 40, Call: fmt.Sprintf("c%d", call),
		Server: t.server, Tool: t.tool, Group: t.group, Risk: "safe"}
	switch i % 3 {
	case 0:
		e.Event, e.Decision, e.DecidedBy, e.Rule = audit.KindDecision, "allow", "policy", "group "+t.group+" is always allowed"
	case 1:
		e.Event = audit.KindCallStart
		e.Args = json.RawMessage(fmt.Sprintf(`{"path":"projects/domo/notes/%d.md","head":40,"pattern":"TODO"}`, call))
	case 2:
		e.Event, e.Status, e.DurationMS = audit.KindCallEnd, audit.StatusOK, int64(call%97)
		e.Result = "# Notes\n\nTODO: write the audit benchmark, measure verify over a million lines, and report the figures."
		if call%53 == 0 {
			e.Status, e.IsError, e.Result = audit.StatusError, true, "path is outside the allowed directories"
		}
	}
	return e
}
