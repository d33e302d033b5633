package audit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// randomLog writes n events with fields drawn from small sets, some with
// characters that JSON escapes, so that the raw fast path meets both the
// lines it can decide and those it must decode.
func randomLog(t *testing.T, n int, seed uint64) (string, []Event) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	w, err := Open(path, Options{Sync: SyncNever, MaxSize: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var stored []Event
	for i := range n {
		e := Event{
			TS:       base.Add(time.Duration(i) * time.Minute),
			Session:  pick("s1", "s2", `s"3`),
			Event:    []Kind{KindDecision, KindCallStart, KindCallEnd, KindSession}[r.IntN(4)],
			Server:   pick("files", "web", "", `we\b`),
			Tool:     pick("read_text_file", "write_file", "web_search", "", "tool\twith tab"),
			Group:    pick("files.read", "web", ""),
			Decision: pick("allow", "deny", "ask", ""),
			Status:   pick("", StatusOK, StatusError, StatusTimeout, StatusDenied),
			IsError:  r.IntN(5) == 0,
			Args:     json.RawMessage(pick(``, `{"tool":"write_file","server":"web"}`, `{"is_error":true,"x":[1,2]}`)),
			Result:   pick("", `"tool":"write_file"`, `,"is_error":true,"prev":"`),
		}
		if e.Event == KindCallEnd {
			e.DurationMS = int64(r.IntN(100))
		}
		s, err := w.Append(e)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, s)
	}
	return path, stored
}

func TestQueryMatchesDecodedFilter(t *testing.T) {
	path, _ := randomLog(t, 600, 7)
	var all []Event
	b, err := readAllLines(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range b {
		var e Event
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	filters := []Filter{
		{},
		{Tool: "write_file"},
		{Tool: "*_file"},
		{Tool: "web/*"},
		{Tool: "tool*"},
		{Server: `we\b`},
		{Session: `s"3`},
		{Decision: "deny", Kind: KindDecision},
		{Errors: true},
		{Errors: true, Tool: "web_search"},
		{Since: base.Add(100 * time.Minute), Until: base.Add(200 * time.Minute)},
		{Since: base.Add(300 * time.Minute), Group: "web"},
		{Kind: KindCallEnd, Server: "files"},
	}
	for _, f := range filters {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			var want, got []uint64
			for i := range all {
				if f.Match(&all[i]) {
					want = append(want, all[i].Seq)
				}
			}
			err := Query(path, f, func(e Event) error { got = append(got, e.Seq); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("query found %d events, decoding every line finds %d\n got %v\nwant %v", len(got), len(want), got, want)
			}
		})
	}
}

func TestStatsFromRawLinesMatchDecoded(t *testing.T) {
	path, _ := randomLog(t, 400, 9)
	lines, err := readAllLines(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw, decoded Stats
	for _, l := range lines {
		raw.AddLine(l)
		var e Event
		json.Unmarshal(l, &e)
		decoded.Add(e)
	}
	if r, d := fmt.Sprint(raw.Tools()), fmt.Sprint(decoded.Tools()); r != d {
		t.Errorf("stats from raw lines\n%s\ndiffer from decoded\n%s", r, d)
	}
}

func TestPercentile(t *testing.T) {
	d := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100}
	if p := percentile(d, 50); p != 10*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(d, 95); p != 19*time.Millisecond {
		t.Errorf("p95 = %v", p)
	}
	if p := percentile(nil, 95); p != 0 {
		t.Errorf("p95 of nothing = %v", p)
	}
}

func readAllLines(path string) ([][]byte, error) {
	var lines [][]byte
	err := eachLine(path, func(_ string, _ int, line []byte, complete bool) error {
		lines = append(lines, append([]byte(nil), line...))
		return nil
	})
	return lines, err
}

func TestFilesOrder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	for _, n := range []string{"audit.000000000100.jsonl", "audit.000000000002.jsonl", "audit.x.jsonl", "audit.jsonl.torn", "audit.000000000001.jsonl"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := "audit.000000000001.jsonl audit.000000000002.jsonl audit.000000000100.jsonl audit.jsonl"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("files = %s, want %s", got, want)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
