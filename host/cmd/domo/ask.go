package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/chat"
	"github.com/domo-agent/domo/host/toolgate"
)

const askUsage = `Usage: domo ask [flags] MESSAGE...

Answers one message and exits. Input piped to standard input is added to
the message (or is the message, when none is given). Without a terminal,
a call that needs permission is denied, with a hint on how to allow it.
When memory is on, what the user said in earlier conversations is
recalled for the answer; the exchange itself is remembered only with
--remember, as one asked question is rarely worth keeping.

Flags:
` + hostFlagsHelp + `  --chat            answer without tools
  --json            print the answer, the route, the tool calls, the
                    sources a web lookup cited and the token usage as JSON
  --remember        afterwards, remember what the exchange taught about
                    you (a memory_remember call, which asks by default)
`

func runAsk(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "ask", askUsage)
	var sf sessionFlags
	var lf llmFlags
	addHostFlags(fs, &sf, &lf)
	asJSON := fs.Bool("json", false, "")
	chatOnly := fs.Bool("chat", false, "")
	remember := fs.Bool("remember", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	message := strings.Join(pos, " ")
	if !isTerminal(e.stdin) && e.stdin != nil {
		b, err := io.ReadAll(io.LimitReader(e.stdin, 8<<20))
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
		if piped := strings.TrimSpace(string(b)); piped != "" {
			if message != "" {
				message += "\n\n"
			}
			message += piped
		}
	}
	if strings.TrimSpace(message) == "" {
		fmt.Fprint(e.stderr, askUsage)
		return fmt.Errorf("%w: no message", errUsage)
	}

	var t *chat.Term
	in, inOK := e.stdin.(*os.File)
	out, outOK := e.stdout.(*os.File)
	if inOK && outOK && !*asJSON {
		t = chat.NewTerm(in, out)
	} else {
		t = chat.Plain(e.stdout)
	}
	var prompter toolgate.Prompter
	if t.TTY {
		var done func()
		prompter, done = e.prompter()
		defer done()
	}
	h, err := startHost(ctx, e, sf, lf, prompter, "domo ask")
	if err != nil {
		return err
	}
	defer h.Close()
	if h.model == nil {
		return fmt.Errorf("no language model: %w", h.modelErr)
	}

	route := agent.Route("")
	if *chatOnly {
		route = agent.RouteChat
	}
	var ev agent.Events
	var stream *chat.Stream
	if !*asJSON {
		stream = t.NewStream()
		ev.Content = stream.Write
		ev.ToolEnd = func(c agent.ToolCall, res toolgate.Result) {
			stream.Flush()
			if res.IsError && !c.ByHost {
				fmt.Fprintf(e.stderr, "domo: %s: %s\n", c.Name, oneLine(res.Text, 400))
			}
		}
		ev.Notice = func(s string) { fmt.Fprintln(e.stderr, chat.Clean(s)) }
	}
	res, err := h.agent.Turn(ctx, message, route, ev)
	if stream != nil {
		stream.Flush()
		if list := t.SourceList(res.Sources); list != "" {
			fmt.Fprintf(e.stdout, "\n%s", list)
		}
	}
	var remembered string
	if *remember && err == nil && res.Stopped == "" {
		remembered = rememberAsk(ctx, e, h.agent, ev, *asJSON)
	}
	if *asJSON {
		out := struct {
			Answer     string             `json:"answer"`
			Route      agent.Route        `json:"route"`
			Calls      []agent.CallRecord `json:"tool_calls"`
			Sources    []agent.Source     `json:"sources,omitempty"`
			Memories   []string           `json:"memories,omitempty"`
			Remembered string             `json:"remembered,omitempty"`
			Rounds     int                `json:"rounds"`
			Usage      agent.Usage        `json:"usage"`
			Stopped    string             `json:"stopped,omitempty"`
			Error      string             `json:"error,omitempty"`
		}{Answer: res.Answer, Route: res.Route, Calls: res.Calls, Sources: res.Sources, Memories: res.Memories, Remembered: remembered,
			Rounds: res.Rounds, Usage: res.Usage, Stopped: res.Stopped}
		if out.Calls == nil {
			out.Calls = []agent.CallRecord{}
		}
		if err != nil {
			out.Error = err.Error()
		}
		if perr := printJSON(e.stdout, out); perr != nil {
			return perr
		}
		if err != nil {
			return errQuiet
		}
		return nil
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errQuiet
		}
		return err
	}
	if res.Stopped == "cancelled" || res.Stopped == "aborted" {
		return errQuiet
	}
	return nil
}

// rememberAsk stores what the exchange taught (--remember) and returns
// what became of it, which it also writes to stderr unless the output is
// JSON. A failure here does not fail the command: the answer was given.
func rememberAsk(ctx context.Context, e *env, a *agent.Agent, ev agent.Events, asJSON bool) string {
	got, err := a.Remember(ctx, agent.Events{Notice: ev.Notice})
	var said string
	switch {
	case err != nil:
		said = "nothing was remembered: " + err.Error()
	case got.Skipped != "":
		said = "nothing was remembered: " + got.Skipped
	case got.Result.Status == "":
		said = "nothing from this exchange needs remembering"
	case got.Result.IsError:
		said = "not remembered: " + strings.TrimSpace(got.Result.Text)
	default:
		said = "remembered:\n" + strings.TrimRight(got.Result.Text, "\n")
	}
	if !asJSON {
		fmt.Fprintln(e.stderr, chat.Clean(said))
	}
	return said
}
