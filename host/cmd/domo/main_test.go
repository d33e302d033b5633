package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/chat"
)

// domo runs one command line in-process.
func domo(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// sampleLog writes a small log of calls at known times and returns its path.
func sampleLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	base := time.Now().Add(-5 * time.Hour)
	at := 0
	w, err := audit.Open(path, audit.Options{Sync: audit.SyncNever, Now: func() time.Time {
		at++
		return base.Add(time.Duration(at) * time.Minute)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	calls := []struct {
		server, tool, group, decision, status string
		ms                                    int64
	}{
		{"files", "read_text_file", "files.read", "allow", audit.StatusOK, 3},
		{"files", "write_file", "files.write", "allow", audit.StatusOK, 12},
		{"files", "write_file", "files.write", "deny", "", 0},
		{"web", "web_search", "web", "allow", audit.StatusError, 900},
		{"files", "read_text_file", "files.read", "allow", audit.StatusOK, 5},
	}
	for i, c := range calls {
		id := fmt.Sprint("c", i)
		ev := audit.Event{Session: "s1", Call: id, Server: c.server, Tool: c.tool, Group: c.group}
		d := ev
		d.Event, d.Decision, d.DecidedBy, d.Rule = audit.KindDecision, c.decision, "policy", "group "+c.group
		if _, err := w.Append(d); err != nil {
			t.Fatal(err)
		}
		if c.decision != "allow" {
			continue
		}
		s := ev
		s.Event, s.Args = audit.KindCallStart, json.RawMessage(`{"path":"notes.md"}`)
		w.Append(s)
		end := ev
		end.Event, end.Status, end.DurationMS, end.Result = audit.KindCallEnd, c.status, c.ms, "done"
		end.IsError = c.status == audit.StatusError
		w.Append(end)
	}
	// A later session, three hours after the first.
	w.Append(audit.Event{TS: time.Now().Add(-time.Hour), Session: "s2", Event: audit.KindDecision, Server: "files", Tool: "delete_file", Group: "files.write", Decision: "ask", DecidedBy: "policy", Rule: "destructive tools always ask"})
	return path
}

func jsonSeqs(t *testing.T, out string) []uint64 {
	t.Helper()
	var seqs []uint64
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e audit.Event
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("not JSON lines: %v\n%s", err, out)
		}
		seqs = append(seqs, e.Seq)
	}
	return seqs
}

func TestAuditListFilters(t *testing.T) {
	path := sampleLog(t)
	tests := []struct {
		name string
		args []string
		want []uint64
	}{
		{"all", nil, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}},
		{"tool glob", []string{"--tool", "write_*"}, []uint64{4, 5, 6, 7}},
		{"server/tool glob", []string{"--tool", "web/*"}, []uint64{8, 9, 10}},
		{"denied", []string{"--decision", "deny"}, []uint64{7}},
		{"errors", []string{"--errors"}, []uint64{10}},
		{"group and event", []string{"--group", "files.read", "--event", "end"}, []uint64{3, 13}},
		{"session", []string{"--session", "s2"}, []uint64{14}},
		{"since", []string{"--since", "2h"}, []uint64{14}},
		{"until", []string{"--until", "2h", "--tool", "read_text_file", "--event", "decision"}, []uint64{1, 11}},
		{"limit keeps the last", []string{"--limit", "2"}, []uint64{13, 14}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"audit", "--log", path, "--json"}, tt.args...)
			out, errOut, code := domo(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := jsonSeqs(t, out); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("seqs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAuditTable(t *testing.T) {
	path := sampleLog(t)
	out, _, code := domo(t, "audit", "list", "--log", path, "--tool", "write_file")
	if code != 0 {
		t.Fatal(code)
	}
	for _, want := range []string{"SEQ", "TOOL", "files/write_file", "deny (policy)", "ok 12ms", `{"path":"notes.md"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestAuditShowStatsVerify(t *testing.T) {
	path := sampleLog(t)
	out, _, code := domo(t, "audit", "show", "6", "--log", path)
	if code != 0 || !strings.Contains(out, "tool_call_end") || !strings.Contains(out, "12ms") || !strings.Contains(out, "files/write_file") || !strings.Contains(out, "hash") {
		t.Errorf("show 6 (exit %d):\n%s", code, out)
	}
	if _, errOut, code := domo(t, "audit", "show", "99", "--log", path); code != 1 || !strings.Contains(errOut, "no event with seq 99") {
		t.Errorf("show 99: exit %d, %s", code, errOut)
	}

	out, _, code = domo(t, "audit", "stats", "--log", path, "--json")
	if code != 0 {
		t.Fatal(code)
	}
	var rows []struct {
		Tool                   string
		Calls, Denials, Errors int
		P50MS                  int64 `json:"p50_ms"`
		P95MS                  int64 `json:"p95_ms"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err, out)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Tool] = fmt.Sprintf("%d/%d/%d p50=%d p95=%d", r.Calls, r.Denials, r.Errors, r.P50MS, r.P95MS)
	}
	want := map[string]string{
		"read_text_file": "2/0/0 p50=3 p95=5",
		"write_file":     "1/1/0 p50=12 p95=12",
		"web_search":     "1/0/1 p50=900 p95=900",
		"delete_file":    "0/0/0 p50=0 p95=0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stats = %v\nwant %v", got, want)
	}

	out, _, code = domo(t, "audit", "verify", "--log", path)
	if code != 0 || !strings.HasPrefix(out, "intact: 14 events") {
		t.Errorf("verify (exit %d): %s", code, out)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(b, []byte(`"decision":"deny"`), []byte(`"decision":"allow"`), 1), 0o600)
	out, _, code = domo(t, "audit", "verify", "--log", path)
	if code != 1 || !strings.Contains(out, "DAMAGED at seq 7: edited") {
		t.Errorf("verify of an edited log (exit %d): %s", code, out)
	}
}

func TestAuditTailFollow(t *testing.T) {
	path := sampleLog(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"audit", "tail", "-f", "-n", "2", "--log", path, "--tool", "memory_*"}, strings.NewReader(""), &out, &out)
	}()
	w, err := audit.Open(path, audit.Options{Sync: audit.SyncNever, MaxSize: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	time.Sleep(300 * time.Millisecond)
	// Enough events to rotate the log while it is followed.
	for i := range 30 {
		tool := "read_text_file"
		if i%10 == 9 {
			tool = "memory_recall"
		}
		if _, err := w.Append(audit.Event{Event: audit.KindCallEnd, Server: "memory", Tool: tool, Status: audit.StatusOK, Result: strings.Repeat("x", 100)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "memory_recall") < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("tail exited %d", code)
	}
	if n := strings.Count(out.String(), "memory/memory_recall"); n != 3 {
		t.Errorf("followed %d memory_recall events across rotation, want 3:\n%s", n, out.String())
	}
	if strings.Contains(out.String(), "read_text_file") {
		t.Errorf("the filter let other tools through:\n%s", out.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestUsageErrors(t *testing.T) {
	path := sampleLog(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown audit command", []string{"audit", "grep"}, "unknown audit command"},
		{"bad since", []string{"audit", "--log", path, "--since", "last tuesday"}, "want an age"},
		{"bad decision", []string{"audit", "--log", path, "--decision", "maybe"}, "want allow, deny or ask"},
		{"bad glob", []string{"audit", "--log", path, "--tool", "[x"}, "tool pattern"},
		{"until before since", []string{"audit", "--log", path, "--since", "1h", "--until", "2h"}, "is not after"},
		{"show without seq", []string{"audit", "show", "--log", path}, "one sequence number"},
		{"show junk", []string{"audit", "show", "x", "--log", path}, "not a sequence number"},
		{"unknown flag", []string{"audit", "--frob"}, "flag provided but not defined"},
		{"bad policy", []string{"permissions", "set", "web", "sometimes"}, "want off, ask or always"},
		{"unknown group", []string{"permissions", "set", "filez.read", "off"}, "unknown group"},
		{"bad mode", []string{"permissions", "mode", "yolo"}, "want manual, smart or auto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DOMO_CONFIG", filepath.Join(t.TempDir(), "config.json"))
			_, errOut, code := domo(t, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 21, 15, 30, 0, 0, time.Local)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2h", now.Add(-2 * time.Hour)},
		{"90s", now.Add(-90 * time.Second)},
		{"3d", now.Add(-72 * time.Hour)},
		{"1w", now.Add(-7 * 24 * time.Hour)},
		{"1d12h", now.Add(-36 * time.Hour)},
		{"today", time.Date(2026, 11, 21, 0, 0, 0, 0, time.Local)},
		{"yesterday", time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local)},
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local)},
		{"2026-11-20 14:05", time.Date(2026, 11, 20, 14, 5, 0, 0, time.Local)},
		{"2026-11-20T14:05:09Z", time.Date(2026, 11, 20, 14, 5, 9, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := parseWhen(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"2", "h", "-2h", "2x", "3d-1h", "next week"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("parseWhen(%q) succeeded", bad)
		}
	}
}

// TestAuditOutputIsSafeForATerminal stores results that try to retitle the
// window, clear the screen and reorder text, and checks that no listing
// passes a control character through.
func TestAuditOutputIsSafeForATerminal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, audit.Options{Sync: audit.SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	evil := "ok\x1b]0;owned\x07\x1b[2J\x1b[1A\rsafe \u202egnp.exe\x9b31m"
	w.Append(audit.Event{Event: audit.KindCallEnd, Server: "evil\x1b[31m", Tool: "t\x1b[0m", Status: audit.StatusOK, Result: evil, Reason: evil})
	w.Close()
	for _, args := range [][]string{
		{"audit", "--log", path},
		{"audit", "show", "1", "--log", path},
		{"audit", "tail", "--log", path},
		{"audit", "stats", "--log", path},
	} {
		out, _, code := domo(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if i := strings.IndexFunc(out, func(r rune) bool { return chat.Clean(string(r)) != string(r) }); i >= 0 {
			t.Errorf("%v printed %q", args, out[max(0, i-10):min(len(out), i+10)])
		}
		if !strings.Contains(out, `\u001b`) {
			t.Errorf("%v does not show the escape as text:\n%s", args, out)
		}
	}
}

func TestAuditFlagsBeforeTheSubcommand(t *testing.T) {
	path := sampleLog(t)
	for _, args := range [][]string{
		{"audit", "--log", path, "verify"},
		{"audit", "--json", "--log=" + path, "verify"},
		{"audit", "verify", "--log", path},
	} {
		if out, errOut, code := domo(t, args...); code != 0 || !strings.Contains(out, "intact") {
			t.Errorf("%v: exit %d %s%s", args, code, out, errOut)
		}
	}
	if _, errOut, code := domo(t, "audit", "--log", path, "--since", "100000d100000d"); code != 2 || !strings.Contains(errOut, "want an age") {
		t.Errorf("an age past a hundred years: exit %d %s", code, errOut)
	}
}
