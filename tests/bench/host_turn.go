package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/llm"
	"github.com/domo-agent/domo/tests/fakellm"
)

// The turn measurements: turns per row, warm-up turns, and how often the
// conversation starts anew.
const (
	benchTurnCount = 300
	warmTurns      = 20
	resetEvery     = 10
)

const (
	fakeAnswer = "The allowed directory is the sandbox under the bench's home."
	toolTurn   = "list the directories you may read"
	chatTurn   = "tell me a joke about benchmarks"
)

// benchTurns times whole turns of the agent against fakellm, which answers
// at once: a chat turn, and a tool turn (a native call to
// list_allowed_directories through the gate, then the answer).
func benchTurns(ctx context.Context, w io.Writer, tmp string, servers map[string]config.Server) (err error) {
	tb := &benchTB{}
	defer func() { err = errors.Join(err, tb.close()) }()
	fake := fakellm.New(tb)
	fake.Forget()
	client, err := llm.New(llm.Config{BaseURL: fake.URL, Model: fakellm.DefaultModel, ContextSize: 32768})
	if err != nil {
		return err
	}
	model := &timedModel{Client: client}
	sup, err := startAll(ctx, servers)
	if err != nil {
		return err
	}
	defer sup.Close()
	log, err := audit.Open(filepath.Join(tmp, "host-turns", "audit.jsonl"), audit.Options{Sync: audit.SyncCallEnd})
	if err != nil {
		return err
	}
	defer log.Close()
	gate := newGate(sup, log, servers, "bench-turns")
	ag := agent.New(agent.Options{Model: model, Gate: gate})

	rows := []struct {
		name  string
		text  string
		route agent.Route
		reset int // start a new conversation every reset turns; 0 never
	}{
		{fmt.Sprintf("chat turn, new chat every %d", resetEvery), chatTurn, agent.RouteChat, resetEvery},
		{fmt.Sprintf("tool turn, new chat every %d", resetEvery), toolTurn, agent.RouteTools, resetEvery},
		{fmt.Sprintf("tool turn, one chat of %d turns", benchTurnCount), toolTurn, agent.RouteTools, 0},
	}
	fmt.Fprintf(w, "Turn with an instant LLM (fakellm over loopback, streamed, %d-byte answer, %d tools offered), audit fsync after call_end, %d turns per row (ms):\n",
		len(fakeAnswer), len(gate.Offered()), benchTurnCount)
	fmt.Fprintf(w, "  %-34s %8s %8s %14s %14s %12s\n", "", "median", "p95", "in Model.Chat", "in the fake", "host (p50)")
	for _, r := range rows {
		ag.Reset()
		var total, inChat, host []time.Duration
		for i := range warmTurns + benchTurnCount {
			if i == warmTurns || r.reset > 0 && i%r.reset == 0 {
				ag.Reset()
			}
			fake.Push(fakellm.Step{Respond: fakeReply}, fakellm.Step{Respond: fakeReply}, fakellm.Step{Respond: fakeReply})
			model.reset()
			served := fake.Served()
			t0 := time.Now()
			res, err := ag.Turn(ctx, r.text, r.route, agent.Events{})
			d := time.Since(t0)
			if err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			if err := checkTurn(r.route, res); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			if i < warmTurns {
				continue
			}
			c := model.elapsed()
			inFake := fake.Served() - served
			total, inChat, host = append(total, d), append(inChat, c), append(host, d-inFake)
		}
		fmt.Fprintf(w, "  %-34s %8.2f %8.2f %14.2f %14.2f %12.2f\n", r.name, ms(median(total)), ms(quantile(total, 0.95)), ms(median(inChat)), ms(median(total)-median(host)), ms(median(host)))
	}
	fmt.Fprintln(w, "  (host = the turn minus the time the fake LLM spent serving it: the agent, the gate, the tool call,")
	fmt.Fprintln(w, "   the client's HTTP and stream parsing; target ≤ 2 ms per turn)")
	return nil
}

// fakeReply answers the agent's requests: a native call to
// list_allowed_directories when tools are offered and the user spoke last,
// the answer otherwise, and a summary when the history is condensed (the one
// request that is not streamed).
func fakeReply(r fakellm.Request) fakellm.Reply {
	usage := &fakellm.Usage{PromptTokens: 600, CompletionTokens: 20}
	if !r.Stream {
		return fakellm.Reply{Content: "The user asked for the allowed directories, repeatedly.", Usage: usage}
	}
	if len(r.Tools) > 0 && len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "user" {
		return fakellm.Reply{
			ToolCalls:           []fakellm.Call{{ID: "call_1", Name: "list_allowed_directories", Arguments: "{}"}},
			ToolCallsInOneChunk: true,
			Usage:               usage,
		}
	}
	return fakellm.Reply{Content: fakeAnswer, Usage: usage}
}

func checkTurn(route agent.Route, res agent.Result) error {
	if res.Route != route || res.Answer != fakeAnswer || res.Stopped != "" {
		return fmt.Errorf("turn ended unexpectedly: route %s, stopped %q, answer %q", res.Route, res.Stopped, res.Answer)
	}
	if route == agent.RouteTools && (len(res.Calls) != 1 || res.Calls[0].Status != audit.StatusOK) {
		return fmt.Errorf("want one successful call, got %+v", res.Calls)
	}
	return nil
}

// timedModel is the LLM client, timing the chat requests of a turn.
type timedModel struct {
	*llm.Client
	spent time.Duration
}

var _ agent.Model = (*timedModel)(nil)

func (m *timedModel) Chat(ctx context.Context, req llm.Request, sink *llm.Sink) (llm.Response, error) {
	t0 := time.Now()
	defer func() { m.spent += time.Since(t0) }()
	return m.Client.Chat(ctx, req, sink)
}

func (m *timedModel) reset()                 { m.spent = 0 }
func (m *timedModel) elapsed() time.Duration { return m.spent }

// benchTB is the part of testing.TB that fakellm uses (Helper, Errorf,
// Cleanup), for a program that runs no test. The embedded TB is nil: any
// other method panics, which would mean fakellm began to need more.
type benchTB struct {
	testing.TB

	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (t *benchTB) Helper() {}

func (t *benchTB) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}

func (t *benchTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// close runs the cleanups, last first, and returns the failures reported.
func (t *benchTB) close() error {
	t.mu.Lock()
	cleanups := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	t.mu.Lock()
	errs := t.errs
	t.mu.Unlock()
	if len(errs) > 0 {
		return fmt.Errorf("fakellm: %s", strings.Join(errs, "; "))
	}
	return nil
}
