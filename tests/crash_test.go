package tests

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/tests/testenv"
)

// A server killed in the middle of a call: the call fails promptly as a
// crash, the server is restarted, the next call works, and the audit log
// closes every call it opened.
func TestServerCrashMidCall(t *testing.T) {
	bin := testenv.Binary(t, "slowmcp")
	servers := map[string]config.Server{"slow": {Command: bin}}
	sup := mcpclient.Start(context.Background(), servers, mcpclient.Options{})
	defer sup.Close()
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(logPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	perms := config.Default().Permissions
	gate := toolgate.New(toolgate.Options{
		Servers: sup, Log: log, Permissions: perms, ServerConfig: servers,
		Session: "crash", Allow: []string{"mcp.slow"},
	})
	call := func(name, args string) toolgate.Result {
		return gate.Call(context.Background(), toolgate.Call{Name: name, Args: json.RawMessage(args)})
	}

	res := call("pid", `{}`)
	pid, err := strconv.Atoi(res.Text)
	if res.Status != audit.StatusOK || err != nil {
		t.Fatalf("pid: %s %q", res.Status, res.Text)
	}
	running := make(chan struct{})
	done := make(chan toolgate.Result)
	go func() {
		done <- gate.Call(context.Background(), toolgate.Call{
			Name: "sleep", Args: json.RawMessage(`{"ms":30000}`),
			Running: func() { close(running) },
		})
	}()
	<-running
	time.Sleep(200 * time.Millisecond) // let the request reach the server
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight did not end after its server was killed")
	}
	took := time.Since(killed)
	if res.Status != audit.StatusCrashed || !res.IsError {
		t.Errorf("call in flight: %s %q, want crashed", res.Status, res.Text)
	}
	if took > time.Second {
		t.Errorf("the call in flight ended %s after the kill, want within 1 s", took)
	}
	res = call("echo", `{"text":"back"}`)
	if res.Status != audit.StatusOK || res.Text != "back" {
		t.Errorf("next call: %s %q, want ok", res.Status, res.Text)
	}
	st := sup.Servers()[0]
	if st.Restarts != 1 || st.State != mcpclient.StateReady || st.PID == pid {
		t.Errorf("after the crash: state %s, restarts %d, pid %d (was %d)", st.State, st.Restarts, st.PID, pid)
	}

	starts, ends := map[string]bool{}, map[string]string{}
	err = audit.Query(logPath, audit.Filter{}, func(ev audit.Event) error {
		switch ev.Event {
		case audit.KindCallStart:
			starts[ev.Call] = true
		case audit.KindCallEnd:
			ends[ev.Call] = ev.Status
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != 3 {
		t.Errorf("%d calls started, want 3", len(starts))
	}
	for id := range starts {
		if ends[id] == "" {
			t.Errorf("call %s has a start and no end", id)
		}
	}
	if rep, err := audit.Verify(logPath); err != nil || rep.Problem != nil {
		t.Errorf("verify: %v %+v", err, rep.Problem)
	}
}
