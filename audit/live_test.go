package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// appendLoop appends events to path until stop is closed, rotating often.
func appendLoop(t *testing.T, path string, stop <-chan struct{}) *sync.WaitGroup {
	t.Helper()
	w, err := Open(path, Options{Sync: SyncNever, MaxSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer w.Close()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Append(sampleEvent(i)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	return &wg
}

// TestReadersWhileWriting verifies and queries a log that a writer keeps
// appending to and rotating: a reader must see a consistent prefix of the
// chain, never a gap or a false alarm.
func TestReadersWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	stop := make(chan struct{})
	wg := appendLoop(t, path, stop)
	deadline := time.Now().Add(2 * time.Second)
	rounds := 0
	for time.Now().Before(deadline) {
		rounds++
		r, err := Verify(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.Problem != nil {
			t.Fatalf("round %d: verify of a log being written: %v", rounds, r.Problem)
		}
		var prev uint64
		err = Query(path, Filter{}, func(e Event) error {
			if prev != 0 && e.Seq != prev+1 {
				t.Fatalf("round %d: query jumped from seq %d to %d", rounds, prev, e.Seq)
			}
			prev = e.Seq
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	mustVerify(t, path)
	t.Logf("%d rounds of verify and query while writing", rounds)
}

// TestFollowAcrossFastRotation follows a log that rotates every few dozen
// events: every event must be passed on exactly once.
func TestFollowAcrossFastRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := Open(path, Options{Sync: SyncNever, MaxSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(sampleEvent(0))
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	seen := map[uint64]int{}
	done := make(chan error)
	go func() {
		done <- Follow(ctx, path, Filter{}, 100*time.Millisecond, func(e Event) error {
			mu.Lock()
			seen[e.Seq]++
			mu.Unlock()
			return nil
		})
	}()
	time.Sleep(50 * time.Millisecond)
	var last uint64
	for i := range 10_000 {
		e, err := w.Append(sampleEvent(i))
		if err != nil {
			t.Fatal(err)
		}
		last = e.Seq
		if i%50 == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	w.Close()
	var complete atomic.Bool
	for range 50 {
		mu.Lock()
		complete.Store(len(seen) == int(last-1))
		mu.Unlock()
		if complete.Load() {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for s := uint64(2); s <= last; s++ {
		if n := seen[s]; n != 1 {
			t.Fatalf("seq %d passed on %d times (of 2..%d)", s, n, last)
		}
	}
}

func TestFollowSkipsATornTail(t *testing.T) {
	path := writeEvents(t, 5, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan Event, 10)
	go Follow(ctx, path, Filter{}, 20*time.Millisecond, func(e Event) error { got <- e; return nil })
	time.Sleep(60 * time.Millisecond)
	// A writer dies mid-line; the next sets the fragment aside.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":6,"ts":"2026-11-21T09:00:06.000000Z","event":"tool_call_st`)
	f.Close()
	time.Sleep(60 * time.Millisecond)
	appendOnce(t, path, sampleEvent(0))
	for _, want := range []Kind{KindRecovered, KindDecision} {
		select {
		case e := <-got:
			if e.Event != want || strings.Contains(e.Result, "tool_call_st{") {
				t.Errorf("followed %+v, want a %s", e, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("no %s event followed", want)
		}
	}
}

func TestOversizedLineIsDamageNotAnError(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 65 MiB line")
	}
	path := writeEvents(t, 3, Options{})
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(append([]byte(`{"seq":4,"x":"`), make([]byte, maxLine+10)...))
	f.WriteString("\"}\n")
	f.Close()
	r, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Problem == nil || r.Problem.Seq != 4 || r.Problem.Damage != DamageEdited {
		t.Errorf("verify = %v, want seq 4 edited", r.Problem)
	}
	n := 0
	if err := Query(path, Filter{}, func(Event) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("query = %d events, %v; want the 3 intact ones", n, err)
	}
}

func TestSubMicrosecondBounds(t *testing.T) {
	path := writeEvents(t, 3, Options{}) // at 09:00:01, :02, :03
	at := time.Date(2026, 11, 21, 9, 0, 2, 0, time.UTC)
	for _, f := range []Filter{{Since: at.Add(500 * time.Nanosecond)}, {Until: at.Add(500 * time.Nanosecond)}} {
		var raw, decoded int
		Query(path, f, func(Event) error { raw++; return nil })
		lines, _ := readAllLines(path)
		for _, l := range lines {
			var e Event
			if jsonUnmarshal(l, &e) == nil && f.normalized().Match(&e) {
				decoded++
			}
		}
		if raw != decoded {
			t.Errorf("%+v: query %d, decoded %d", f, raw, decoded)
		}
	}
}
