package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clock returns a deterministic clock that ticks one second per call.
func clock() func() time.Time {
	t := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// sampleEvent is the i-th event of a typical stream: a decision, a start
// and an end per call.
func sampleEvent(i int) Event {
	tools := []string{"read_text_file", "write_file", "web_search", "memory_recall"}
	servers := []string{"files", "files", "web", "memory"}
	call := i / 3
	e := Event{
		Session: "s1",
		Turn:    1 + call/4,
		Call:    fmt.Sprintf("c%d", call),
		Server:  servers[call%len(servers)],
		Tool:    tools[call%len(tools)],
		Group:   "files.read",
		Risk:    "safe",
	}
	switch i % 3 {
	case 0:
		e.Event, e.Decision, e.DecidedBy, e.Rule = KindDecision, "allow", "policy", "group files.read is always allowed"
	case 1:
		e.Event, e.Args = KindCallStart, json.RawMessage(fmt.Sprintf(`{"path":"notes/%d.md","head":10}`, call))
	case 2:
		e.Event, e.Status, e.Result, e.DurationMS = KindCallEnd, StatusOK, "line one\nline two", int64(call%50)
		if call%7 == 0 {
			e.Status, e.IsError = StatusError, true
		}
	}
	return e
}

// writeEvents appends n sample events to a new log and returns its path.
func writeEvents(t *testing.T, n int, opts Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if opts.Now == nil {
		opts.Now = clock()
	}
	opts.Sync = SyncNever
	w, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range n {
		if _, err := w.Append(sampleEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func mustVerify(t *testing.T, path string) Report {
	t.Helper()
	r, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Problem != nil {
		t.Fatalf("verify: %v", r.Problem)
	}
	return r
}

func TestAppendChainsAndVerifies(t *testing.T) {
	path := writeEvents(t, 30, Options{})
	r := mustVerify(t, path)
	if r.First != 1 || r.Last != 30 || r.Events != 30 {
		t.Errorf("report = first %d last %d events %d, want 1, 30, 30", r.First, r.Last, r.Events)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 30 {
		t.Fatalf("%d lines, want 30", len(lines))
	}
	var prev string
	for i, l := range lines {
		var e Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		if e.Seq != uint64(i+1) || e.Prev != prev || len(e.Hash) != 64 {
			t.Errorf("line %d: seq %d prev %.8s hash %q", i+1, e.Seq, e.Prev, e.Hash)
		}
		prev = e.Hash
	}
	// The fields come back as written.
	var start Event
	json.Unmarshal([]byte(lines[1]), &start)
	if start.Event != KindCallStart || start.Tool != "read_text_file" || string(start.Args) != `{"head":10,"path":"notes/0.md"}` {
		t.Errorf("start event = %+v", start)
	}
	if start.ArgsSHA256 != sha256Hex([]byte(`{"path":"notes/0.md","head":10}`)) {
		t.Errorf("args_sha256 = %q, want the hash of the arguments as sent", start.ArgsSHA256)
	}
}

func TestArgsHashIsOfTheBytesSent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path, Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	args := `{"url":"https://user:hunter22@example.com/x","content":"hi"}`
	e, err := w.Append(Event{Event: KindCallStart, Tool: "web_read", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.ArgsSHA256, sha256Hex([]byte(args)); got != want {
		t.Errorf("args_sha256 = %s, want %s", got, want)
	}
	if bytes.Contains(e.Args, []byte("hunter22")) {
		t.Errorf("stored args keep the password: %s", e.Args)
	}
}

func TestFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	// A file someone created world-readable is tightened on open.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(sampleEvent(0)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, p := range []string{path, path + ".head", path + ".lock"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

func TestResultIsTruncatedWithAMarker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path, Options{MaxResult: 100, Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	e, err := w.Append(Event{Event: KindCallEnd, Tool: "read_text_file", Result: strings.Repeat("é", 1000)})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Result) > 160 || !strings.Contains(e.Result, "truncated") {
		t.Errorf("result of %d bytes: %q", len(e.Result), e.Result)
	}
	mustVerify(t, path)
}

func TestRotationKeepsTheChain(t *testing.T) {
	path := writeEvents(t, 300, Options{MaxSize: 8 << 10})
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("%d files after rotation, want several: %v", len(files), files)
	}
	r := mustVerify(t, path)
	if r.Events != 300 || r.Last != 300 {
		t.Errorf("verified %d events up to seq %d, want 300", r.Events, r.Last)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 8<<10 {
			t.Errorf("%s is %d bytes, over the 8 KiB limit", filepath.Base(f), fi.Size())
		}
	}
	// Query reads across the files in order.
	var seqs []uint64
	if err := Query(path, Filter{}, func(e Event) error { seqs = append(seqs, e.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("query returned seq %d at position %d", s, i)
		}
	}
	// A new writer continues the chain from the rotated files even when
	// the active file is empty.
	os.Rename(path, rotatedName(path, mustFirstSeq(t, path)))
	e := appendOnce(t, path, sampleEvent(0))
	if e.Seq != 301 {
		t.Errorf("first event after rotation has seq %d, want 301", e.Seq)
	}
	mustVerify(t, path)
}

// appendOnce appends e with a writer of its own, as a new process would.
func appendOnce(t *testing.T, path string, e Event) Event {
	t.Helper()
	w, err := Open(path, Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stored, err := w.Append(e)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

func mustFirstSeq(t *testing.T, path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := firstSeq(f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTornLineIsSetAside(t *testing.T) {
	path := writeEvents(t, 10, Options{})
	b, _ := os.ReadFile(path)
	// A crash mid-write: half of an eleventh line.
	torn := `{"seq":11,"ts":"2026-11-21T09:00:11.000000Z","event":"tool_call_st`
	if err := os.WriteFile(path, append(b, torn...), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Problem == nil || r.Problem.Damage != DamageTorn || r.Problem.Seq != 11 {
		t.Fatalf("verify of a torn log = %v, want torn at seq 11", r.Problem)
	}

	e := appendOnce(t, path, sampleEvent(0))
	// Seq 11 records the recovery; the caller's event follows it.
	if e.Seq != 12 {
		t.Errorf("event after recovery has seq %d, want 12", e.Seq)
	}
	r = mustVerify(t, path)
	if len(r.Torn) != 1 {
		t.Errorf("report lists torn files %v", r.Torn)
	}
	set, err := os.ReadFile(path + ".torn")
	if err != nil {
		t.Fatal(err)
	}
	if string(set) != torn+"\n" {
		t.Errorf(".torn holds %q, want the torn bytes", set)
	}
	rec, ok, err := Find(path, 11)
	if err != nil || !ok {
		t.Fatalf("find seq 11: %v %v", ok, err)
	}
	if rec.Event != KindRecovered || !strings.Contains(rec.Result, fmt.Sprint(len(torn))) {
		t.Errorf("seq 11 = %+v, want the recovery record", rec)
	}
	log, _ := os.ReadFile(path)
	if bytes.Contains(log, []byte("tool_call_st\n")) || bytes.Contains(log, []byte(`"tool_call_st`+"{")) {
		t.Error("the torn bytes were merged into the log")
	}
}

func TestDamagedLastLineStopsTheWriter(t *testing.T) {
	path := writeEvents(t, 3, Options{})
	b, _ := os.ReadFile(path)
	os.WriteFile(path, append(b, "not an event\n"...), 0o600)
	_, err := Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "verify") {
		t.Fatalf("open over a damaged last line = %v, want an error that says what to do", err)
	}
}

func TestLockTimeout(t *testing.T) {
	path := writeEvents(t, 1, Options{})
	holder, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := holder.lock.Lock(); err != nil {
		t.Fatal(err)
	}
	defer holder.lock.Unlock()
	w, err := Open(path, Options{LockTimeout: 50 * time.Millisecond})
	if err == nil {
		w.Close()
		t.Fatal("open while another writer holds the lock succeeded")
	}
	if !strings.Contains(err.Error(), "lock") {
		t.Errorf("error = %v, want it to name the lock", err)
	}
}

func TestEncodeLineIsValidJSON(t *testing.T) {
	tests := []struct {
		name string
		s    string
	}{
		{"quotes and backslashes", `a "b" \c`},
		{"controls", "tab\tnl\ncr\rbell\x07del\x7f"},
		{"invalid utf-8", "ok\xff\xfeok"},
		{"line separators", "a\u2028b\u2029c"},
		{"unicode", "日本語 😀"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Event{Seq: 1, TS: time.Unix(0, 0), Event: KindCallEnd, Result: tt.s, Tool: tt.s}
			line := encodeLine(nil, &e)
			if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("line has inner newlines: %q", line)
			}
			var back Event
			if err := json.Unmarshal(line, &back); err != nil {
				t.Fatalf("not JSON: %v: %s", err, line)
			}
			// encoding/json replaces each invalid byte, as the writer does.
			var want string
			j, _ := json.Marshal(tt.s)
			json.Unmarshal(j, &want)
			if back.Result != want || back.Tool != want {
				t.Errorf("round trip = %q, want %q", back.Result, want)
			}
			fr, err := parseFrame(line[:len(line)-1])
			if err != nil || !fr.checkHash() || fr.seq != 1 {
				t.Errorf("frame = %+v, %v", fr, err)
			}
		})
	}
}

// TestRemovedOrCutLogStaysDamaged removes the log, or cuts lines off its
// end, under a running writer: the next append must not start a chain
// that verifies, but leave the loss visible for good.
func TestRemovedOrCutLogStaysDamaged(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		detail string
	}{
		{"log removed", func(t *testing.T, path string) { os.Remove(path) }, "seq 1 to 5 are missing"},
		{"last lines cut", func(t *testing.T, path string) {
			rewrite(t, path, func(l [][]byte) []byte { return join(l[:3]) })
		}, "seq 4 to 5 are missing"},
		{"cut mid-line", func(t *testing.T, path string) {
			rewrite(t, path, func(l [][]byte) []byte { b := join(l[:4]); return b[:len(b)-30] })
		}, "seq 4 to 5 are missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeEvents(t, 5, Options{})
			w, err := Open(path, Options{Sync: SyncNever})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tt.damage(t, path)
			for i := range 3 {
				if _, err := w.Append(sampleEvent(i)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				t.Fatal("the log was not recreated")
			}
			r, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Problem == nil || r.Problem.Damage != DamageDropped || !strings.Contains(r.Problem.Detail, tt.detail) {
				t.Errorf("verify after appending = %v, want dropped: %s", r.Problem, tt.detail)
			}
		})
	}
}
