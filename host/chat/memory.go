package chat

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/toolgate"
)

const memoryUsage = "usage: /memory [list] | /memory search WORDS | /memory forget ID... | /memory stats"

var reMemoryID = regexp.MustCompile(`^[mM]?(\d+)$`)

// memory runs /memory: the recent memories, a search, forgetting some by
// id, or the counts. Each is one call of a memory tool through the gate.
func (r *REPL) memory(ctx context.Context, arg string) {
	if r.Host.Memory == nil {
		r.printf("not available\n")
		return
	}
	sub, rest, _ := strings.Cut(arg, " ")
	rest = strings.TrimSpace(rest)
	var tool string
	var args map[string]any
	switch strings.ToLower(sub) {
	case "", "list":
		tool, args = "memory_list", map[string]any{"limit": 20}
	case "search", "recall", "find":
		if rest == "" {
			r.printf("%s\n", memoryUsage)
			return
		}
		tool, args = "memory_recall", map[string]any{"query": rest, "limit": 20}
	case "forget", "delete", "rm":
		ids, bad := memoryIDs(rest)
		if len(ids) == 0 || bad != "" {
			r.printf("usage: /memory forget ID... (ids like m12, as /memory lists them)\n")
			return
		}
		tool, args = "memory_forget", map[string]any{"ids": ids}
	case "stats":
		tool, args = "memory_stats", map[string]any{}
	default:
		r.printf("%s\n", memoryUsage)
		return
	}
	if err := r.Host.Memory(ctx, r.T.Out, tool, args); err != nil {
		r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
	}
}

// memoryIDs reads "m12 m13,14" as ["m12", "m13", "m14"]; bad is the first
// word that is not an id.
func memoryIDs(s string) (ids []string, bad string) {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		m := reMemoryID.FindStringSubmatch(w)
		if m == nil {
			return nil, w
		}
		ids = append(ids, "m"+m[1])
	}
	return ids, ""
}

// remember ends the conversation for memory (on /new and on leaving):
// when memory is on and the conversation had a real exchange, the model
// takes notes and the memory_remember call goes through the gate, which
// may ask. Ctrl-C skips it. Nothing is shown when there was nothing to do.
func (r *REPL) remember(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	ctx, stop := r.interruptible(ctx)
	defer stop()
	spin := r.T.NewSpinner()
	defer spin.Stop()
	ev := agent.Events{
		Notice: func(s string) {
			r.printf("%s\n", r.style(dimStyle, Clean(s)+" (Ctrl-C skips)"))
			spin.Start("taking notes")
		},
		ToolStart:   func(agent.ToolCall) { spin.Stop() },
		ToolRunning: func(agent.ToolCall) { spin.Start("remembering") },
		ToolEnd:     func(agent.ToolCall, toolgate.Result) { spin.Stop() },
	}
	got, err := r.Agent.Remember(ctx, ev)
	spin.Stop()
	switch {
	case ctx.Err() != nil:
		r.printf("%s\n", r.style(dimStyle, "(not remembered)"))
	case errors.Is(err, agent.ErrBadNotes):
		r.printf("%s\n", r.style(dimStyle, Clean(err.Error())))
	case err != nil:
		r.printf("%s\n", r.style(errStyle, "Nothing was remembered: "+Clean(err.Error())))
	case got.Skipped != "":
	case got.Result.Status == "":
		r.printf("%s\n", r.style(dimStyle, "Nothing from this conversation needs remembering."))
	case got.Result.IsError:
		first, _, _ := strings.Cut(strings.TrimSpace(got.Result.Text), "\n")
		r.printf("%s\n", r.style(dimStyle, "Not remembered: "+Clean(first)))
	default:
		r.printf("%s\n", r.style(dimStyle, "Remembered:\n"+Clean(strings.TrimRight(got.Result.Text, "\n"))))
	}
}
