//go:build unix

package audit

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests below run writers in separate processes: this test binary
// re-executed with DOMO_AUDIT_HELPER set.
func TestMain(m *testing.M) {
	if os.Getenv("DOMO_AUDIT_HELPER") == "append" {
		if err := helperAppend(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperAppend appends DOMO_AUDIT_N events (0: until killed) tagged with
// DOMO_AUDIT_TAG as their session, each with a result of DOMO_AUDIT_RESULT
// bytes.
func helperAppend() error {
	path := os.Getenv("DOMO_AUDIT_PATH")
	n, _ := strconv.Atoi(os.Getenv("DOMO_AUDIT_N"))
	size, _ := strconv.Atoi(os.Getenv("DOMO_AUDIT_RESULT"))
	tag := os.Getenv("DOMO_AUDIT_TAG")
	sync := SyncNever
	if os.Getenv("DOMO_AUDIT_SYNC") == "call_end" {
		sync = SyncCallEnd
	}
	w, err := Open(path, Options{Sync: sync, MaxResult: size + 1})
	if err != nil {
		return err
	}
	defer w.Close()
	result := strings.Repeat("all work and no play makes jack a dull boy\n", size/43+1)[:size]
	for i := 0; n == 0 || i < n; i++ {
		e := sampleEvent(i)
		e.Session, e.Call = tag, strconv.Itoa(i)
		if e.Event == KindCallEnd {
			e.Result = result
		}
		if _, err := w.Append(e); err != nil {
			return fmt.Errorf("%s: event %d: %w", tag, i, err)
		}
		if e.Event == KindCallEnd {
			// Tell a watching test when each large line was written.
			os.Stdout.WriteString("done\n")
		}
	}
	return nil
}

func helperCmd(t *testing.T, path, tag string, n, result int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"DOMO_AUDIT_HELPER=append",
		"DOMO_AUDIT_PATH="+path,
		"DOMO_AUDIT_TAG="+tag,
		"DOMO_AUDIT_N="+strconv.Itoa(n),
		"DOMO_AUDIT_RESULT="+strconv.Itoa(result),
	)
	return cmd
}

func TestTwoProcessesAppendToOneLog(t *testing.T) {
	const perProcess = 10_000
	path := t.TempDir() + "/audit.jsonl"
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, tag := range []string{"p1", "p2"} {
		cmd := helperCmd(t, path, tag, perProcess, 64)
		cmd.Env = append(cmd.Env, "DOMO_AUDIT_SYNC=call_end") // the default policy
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %d: %v\n%s", i+1, err, outs[i])
		}
	}
	r := mustVerify(t, path)
	if r.Events != 2*perProcess {
		t.Errorf("the log holds %d events, want %d", r.Events, 2*perProcess)
	}
	next := map[string]int{}
	interleaved := false
	var lastTag string
	err := Query(path, Filter{}, func(e Event) error {
		want := strconv.Itoa(next[e.Session])
		if e.Call != want {
			return fmt.Errorf("seq %d: %s's event %s, want %s", e.Seq, e.Session, e.Call, want)
		}
		next[e.Session]++
		if lastTag != "" && e.Session != lastTag {
			interleaved = true
		}
		lastTag = e.Session
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if next["p1"] != perProcess || next["p2"] != perProcess {
		t.Errorf("events per writer = %v, want %d each", next, perProcess)
	}
	if !interleaved {
		t.Log("the writers did not overlap in time; the lock was not exercised")
	}
}

// TestKilledWriters kills writers with SIGKILL, many times over one log,
// aiming at the moment a large line is being written so that some lines
// are torn; every next writer must set the torn bytes aside and continue
// the chain.
func TestKilledWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("kills writers for several seconds")
	}
	path := t.TempDir() + "/audit.jsonl"
	const result = 4 << 20
	torn, runs := 0, 0
	deadline := time.Now().Add(90 * time.Second)
	for (torn < 3 || runs < 20) && time.Now().Before(deadline) {
		runs++
		cmd := helperCmd(t, path, fmt.Sprintf("run%d", runs), 0, result)
		var out bytes.Buffer
		cmd.Stderr = &out
		ready, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Time two large appends, then kill just before the next one
		// would be done: in the write, if the aim is good, as a crash
		// would catch it.
		lines := bufio.NewReader(ready)
		var marks []time.Time
		for len(marks) < 2 {
			if _, err := lines.ReadString('\n'); err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("run %d: the writer stopped: %v\n%s", runs, err, out.Bytes())
			}
			marks = append(marks, time.Now())
		}
		period := marks[1].Sub(marks[0])
		early := time.Duration(rand.Int64N(int64(period/8) + 1))
		time.Sleep(time.Until(marks[1].Add(period - early)))
		cmd.Process.Signal(syscall.SIGKILL)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("run %d: the writer ended before it was killed: %v\n%s", runs, err, out.Bytes())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			torn++
		}
	}
	fi, _ := os.Stat(path)
	t.Logf("%d writers killed, %d left a torn line; the log is %d MiB", runs, torn, fi.Size()>>20)
	w, err := Open(path, Options{Sync: SyncNever})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := mustVerify(t, path)
	if torn == 0 {
		t.Fatalf("no kill out of %d tore a line, so recovery was not exercised", runs)
	}
	set, err := os.ReadFile(path + ".torn")
	if err != nil {
		t.Fatalf("torn lines were not set aside: %v", err)
	}
	lines := bytes.Split(bytes.TrimSuffix(set, []byte("\n")), []byte("\n"))
	if len(lines) < torn {
		t.Errorf(".torn holds %d lines, want at least %d", len(lines), torn)
	}
	for _, l := range lines {
		if !bytes.HasPrefix(l, []byte(`{"seq":`)) {
			t.Errorf(".torn holds a fragment that is not the start of a line: %.40q", l)
		}
	}
	recovered := 0
	Query(path, Filter{Kind: KindRecovered}, func(Event) error { recovered++; return nil })
	if recovered == 0 || recovered > torn {
		t.Errorf("%d recovery records for %d torn lines", recovered, torn)
	}
	if len(r.Torn) != 1 {
		t.Errorf("verify does not mention the torn file: %v", r.Torn)
	}
}
