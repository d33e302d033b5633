package audit

import (
	"path/filepath"
	"testing"
)

// BenchmarkAppend measures one event appended under each sync policy; a
// third of sampleEvent's events are tool_call_end.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name string
		sync Sync
	}{{"no-fsync", SyncNever}, {"fsync-call-end", SyncCallEnd}, {"fsync-every", SyncEvery}} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), Options{Sync: bc.sync})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			i := 0
			for b.Loop() {
				if _, err := w.Append(sampleEvent(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkVerify measures verifying a 100,000-line log; the bench task
// runs the same over a million lines through the domo binary.
func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	w, err := Open(path, Options{Sync: SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		if _, err := w.Append(sampleEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
	for b.Loop() {
		r, err := Verify(path)
		if err != nil || r.Problem != nil {
			b.Fatal(err, r.Problem)
		}
	}
}
