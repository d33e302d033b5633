package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
)

// Host gives the slash commands what they show; each writes its own
// output. A nil field makes its command say it is not available.
type Host struct {
	Tools       func(w io.Writer) error
	Servers     func(w io.Writer) error
	Permissions func(w io.Writer) error
	Audit       func(w io.Writer, n int) error
	// Model names the model in use; Models lists the server's; SetModel
	// switches.
	Model    func() string
	Models   func(ctx context.Context) ([]string, error)
	SetModel func(name string) error
	// Memory runs one memory tool (memory_list, memory_recall,
	// memory_forget, memory_stats) through the gate and writes its text.
	Memory func(ctx context.Context, w io.Writer, tool string, args map[string]any) error
}

// Commands are the slash commands, for completion and /help.
var Commands = []struct{ Name, Help string }{
	{"/help", "this list"},
	{"/new", "start a new conversation (forgets the history and this session's permission grants)"},
	{"/tools", "the tools, with their group, risk and what policy decides"},
	{"/servers", "the MCP servers and how each stands"},
	{"/permissions", "the permission mode and group policies"},
	{"/usage", "tokens used per turn in this conversation"},
	{"/model", "the model in use; /model NAME switches, /model list lists"},
	{"/memory", "what Domo remembers: /memory [search WORDS | forget ID... | stats]"},
	{"/audit", "the last audit events (/audit 20)"},
	{"/think", "show or hide the model's reasoning"},
	{"/voice", "talk and hear the answers: /voice [on | off | wake PHRASE | wake off]"},
	{"/chat", "answer without tools: /chat MESSAGE"},
	{"/quit", "leave (also Ctrl-D)"},
}

// CommandNames lists the slash commands for the editor's completion.
func CommandNames() []string {
	names := make([]string, len(Commands))
	for i, c := range Commands {
		names[i] = c.Name
	}
	return append(names, "/exit", "/search", "/browse")
}

// REPL is the conversation loop of `domo chat`.
type REPL struct {
	T     *Term
	Ed    *Editor
	Agent *agent.Agent
	Host  Host
	// Interrupts delivers Ctrl-C while a turn runs (the terminal is not in
	// raw mode then, so it arrives as SIGINT).
	Interrupts <-chan os.Signal
	// Think shows the model's reasoning.
	Think bool
	// Banner is printed before the first prompt.
	Banner string

	// Voice talks to the voice server; nil when none runs, and NoVoice
	// then says why.
	Voice   Voice
	NoVoice string
	// VoiceMode speaks the answers and takes an empty line as the cue to
	// listen; WakePhrase, when set, listens after the phrase is heard
	// instead (and implies VoiceMode).
	VoiceMode  bool
	WakePhrase string

	quit atomic.Bool
	keys keyWatcher // watches the keys instead of Ed (tests)
}

var (
	dimStyle  = lipgloss.NewStyle().Faint(true)
	errStyle  = lipgloss.NewStyle().Foreground(lipgloss.Red)
	okStyle   = lipgloss.NewStyle().Foreground(lipgloss.Green)
	userStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan)
)

func (r *REPL) style(st lipgloss.Style, s string) string {
	if !r.T.Color {
		return s
	}
	return st.Render(s)
}

func (r *REPL) printf(format string, args ...any) {
	fmt.Fprintf(r.T.Out, format, args...)
}

// Run reads and answers messages until /quit, Ctrl-D, a second Ctrl-C, or
// the end of input; then, when memory is on, it remembers what the
// conversation taught.
func (r *REPL) Run(ctx context.Context) error {
	if r.Banner != "" {
		r.printf("%s\n", r.Banner)
	}
	if r.WakePhrase != "" {
		r.VoiceMode = true
	}
	if r.VoiceMode && r.Voice == nil {
		r.voiceCommand("on") // says why not
	}
	if err := r.read(ctx); err != nil {
		return err
	}
	r.remember(ctx)
	return nil
}

// read is Run's loop.
func (r *REPL) read(ctx context.Context) error {
	var lastInterrupt time.Time
	for !r.quit.Load() {
		// With a wake phrase, a line is typed only when a key stops the
		// wait for it.
		if r.voiceOn() && r.WakePhrase != "" {
			if r.awaitWake(ctx) {
				r.talk(ctx)
				continue
			}
			if r.quit.Load() || ctx.Err() != nil {
				return nil
			}
		}
		if r.voiceOn() {
			r.printf("%s\n", r.style(dimStyle, talkHint))
		}
		line, err := r.Ed.ReadLine(r.style(userStyle, "› "))
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, ErrInterrupt):
			if time.Since(lastInterrupt) < 3*time.Second {
				return nil
			}
			lastInterrupt = time.Now()
			r.printf("%s\n", r.style(dimStyle, "(Ctrl-C again, Ctrl-D or /quit to leave)"))
			continue
		case err != nil:
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if r.voiceOn() {
				r.talk(ctx)
			}
			continue
		}
		if strings.HasPrefix(line, "/") {
			r.command(ctx, line)
			continue
		}
		r.turn(ctx, line, "")
	}
	return nil
}

// command runs one slash command.
func (r *REPL) command(ctx context.Context, line string) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	show := func(f func(io.Writer) error) {
		if f == nil {
			r.printf("not available\n")
			return
		}
		if err := f(r.T.Out); err != nil {
			r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
		}
	}
	switch strings.ToLower(name) {
	case "/help", "/?":
		for _, c := range Commands {
			r.printf("  %-13s %s\n", c.Name, c.Help)
		}
		r.printf("Ctrl-C cancels a running answer and its tool calls; twice quits.\n")
	case "/quit", "/exit", "/q":
		r.quit.Store(true)
	case "/new", "/clear", "/reset":
		r.remember(ctx)
		r.Agent.Reset()
		r.printf("%s\n", r.style(dimStyle, "New conversation: history and session permissions cleared."))
	case "/tools":
		show(r.Host.Tools)
	case "/servers":
		show(r.Host.Servers)
	case "/permissions", "/perms":
		show(r.Host.Permissions)
	case "/usage":
		r.usage()
	case "/model":
		r.model(ctx, arg)
	case "/memory":
		r.memory(ctx, arg)
	case "/audit":
		n := 10
		if arg != "" {
			v, err := strconv.Atoi(strings.TrimPrefix(arg, "last "))
			if err != nil || v <= 0 {
				r.printf("usage: /audit [N]\n")
				return
			}
			n = v
		}
		if r.Host.Audit == nil {
			r.printf("not available\n")
			return
		}
		if err := r.Host.Audit(r.T.Out, n); err != nil {
			r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
		}
	case "/think":
		r.Think = !r.Think
		r.printf("reasoning %s\n", map[bool]string{true: "shown", false: "hidden"}[r.Think])
	case "/voice":
		r.voiceCommand(arg)
	case "/chat":
		if arg == "" {
			r.printf("usage: /chat MESSAGE\n")
			return
		}
		r.turn(ctx, arg, agent.RouteChat)
	case "/search", "/browse":
		if arg == "" {
			r.printf("usage: %s QUERY\n", name)
			return
		}
		r.turn(ctx, arg, agent.RouteLookup)
	default:
		r.printf("unknown command %s; /help lists them\n", Clean(name))
	}
}

func (r *REPL) usage() {
	turns, total := r.Agent.Usage()
	if len(turns) == 0 {
		r.printf("no turns yet\n")
		return
	}
	mark := func(u agent.Usage) string {
		if u.Estimated {
			return " (estimated)"
		}
		return ""
	}
	for i, u := range turns {
		r.printf("  turn %-3d %7d prompt + %6d completion tokens, %d request(s)%s\n", i+1, u.PromptTokens, u.CompletionTokens, u.Requests, mark(u))
	}
	r.printf("  total    %7d prompt + %6d completion tokens, %d request(s)%s\n", total.PromptTokens, total.CompletionTokens, total.Requests, mark(total))
}

func (r *REPL) model(ctx context.Context, arg string) {
	switch {
	case arg == "" && r.Host.Model != nil:
		r.printf("model: %s\n", Clean(r.Host.Model()))
	case arg == "list" && r.Host.Models != nil:
		names, err := r.Host.Models(ctx)
		if err != nil {
			r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
			return
		}
		for _, n := range names {
			r.printf("  %s\n", Clean(n))
		}
	case arg != "" && r.Host.SetModel != nil:
		if err := r.Host.SetModel(arg); err != nil {
			r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
			return
		}
		r.printf("model: %s\n", Clean(arg))
	default:
		r.printf("not available\n")
	}
}

// interruptible returns a context that the first Ctrl-C cancels; a
// second one while the work stops quits. stop ends the watch.
func (r *REPL) interruptible(ctx context.Context) (_ context.Context, stop func()) {
	// A Ctrl-C that came while nothing ran (during startup or a slash
	// command, or just after the last turn ended) was not meant for this
	// work.
	for len(r.Interrupts) > 0 {
		<-r.Interrupts
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		interrupted := false
		for {
			select {
			case <-done:
				return
			case <-r.Interrupts:
				if interrupted {
					r.quit.Store(true)
					return
				}
				interrupted = true
				cancel()
			}
		}
	})
	return ctx, func() {
		close(done)
		wg.Wait()
		cancel()
	}
}

// turn answers one message, streaming the answer and showing the tool
// calls. Ctrl-C cancels it; a second Ctrl-C while it stops quits.
func (r *REPL) turn(ctx context.Context, text string, route agent.Route) {
	ctx, stop := r.interruptible(ctx)
	defer stop()

	stream := r.T.NewStream()
	spin := r.T.NewSpinner()
	defer spin.Stop()
	var said *speech
	if r.voiceOn() {
		said = r.startSpeech(ctx)
	}
	thinking := false
	ev := agent.Events{
		Content: func(s string) {
			spin.Stop()
			if thinking {
				r.printf("\n")
				thinking = false
			}
			stream.Write(s)
			if said != nil {
				said.sp.Add(s)
			}
		},
		Reasoning: func(s string) {
			if !r.Think {
				spin.Start("thinking")
				return
			}
			spin.Stop()
			thinking = true
			r.printf("%s", r.style(dimStyle, Clean(s)))
		},
		ToolStart: func(c agent.ToolCall) {
			stream.Flush()
			spin.Stop()
		},
		ToolRunning: func(c agent.ToolCall) {
			if c.ByHost {
				spin.Start("recalling")
				return
			}
			spin.Start(c.Name)
		},
		ToolProgress: func(c agent.ToolCall, p mcpclient.Progress) {
			spin.Progress(p.Progress, p.Total, p.Message)
		},
		ToolEnd: func(c agent.ToolCall, res toolgate.Result) {
			spin.Stop()
			// The recall of memories at the start of a turn is not one of
			// the model's calls; the answer cites what it used.
			if !c.ByHost {
				r.printf("%s\n", r.callLine(c, res))
			}
			spin.Start("thinking")
		},
		Limit: func(ctx context.Context, l agent.LimitReached) agent.LimitChoice {
			spin.Stop()
			stream.Flush()
			return r.askLimit(l)
		},
		Notice: func(s string) {
			spin.Stop()
			r.printf("%s\n", r.style(dimStyle, Clean(s)))
		},
	}
	spin.Start("thinking")
	res, err := r.Agent.Turn(ctx, text, route, ev)
	spin.Stop()
	stream.Flush()
	switch {
	case errors.Is(err, agent.ErrNoModel):
		r.printf("%s\n", r.style(errStyle, "No language model is available. "+NoModelHint))
	case err != nil:
		r.printf("%s\n", r.style(errStyle, Clean(err.Error())))
	case res.Stopped == "cancelled":
		r.printf("%s\n", r.style(dimStyle, "(cancelled)"))
	case res.Stopped == "aborted":
		r.printf("%s\n", r.style(dimStyle, "(stopped)"))
	}
	if list := r.T.SourceList(res.Sources); list != "" {
		r.printf("\n%s", list)
	}
	if said != nil {
		said.finish(spin)
	}
	// Flush ended the answer's last line; a blank line sets the answer off
	// from the next prompt, whether or not the model ended with a newline.
	if strings.TrimSpace(res.Answer) != "" {
		r.printf("\n")
	}
}

// NoModelHint says how to get a model.
const NoModelHint = "Start one (ollama serve; LM Studio's local server; llama-server -m MODEL.gguf --port 8080) or point Domo at one with DOMO_LLM_BASE_URL or llm.base_url in the config. Slash commands and `domo call` work without one."

// callLine is the one line shown after a tool call.
func (r *REPL) callLine(c agent.ToolCall, res toolgate.Result) string {
	args := Clean(c.Args)
	if len(args) > 80 {
		args = args[:77] + "…"
	}
	head := c.Name + " " + args
	switch {
	case res.Status == "ok":
		took := "<1ms"
		if res.Duration >= time.Millisecond {
			took = res.Duration.Round(time.Millisecond).String()
		}
		return r.style(okStyle, "✓ ") + r.style(dimStyle, head+" ("+took+")")
	default:
		first, _, _ := strings.Cut(strings.TrimSpace(res.Text), "\n")
		if len(first) > 160 {
			first = first[:157] + "…"
		}
		return r.style(errStyle, "✗ ") + r.style(dimStyle, head+" — "+res.Status+": "+Clean(first))
	}
}

// askLimit asks what to do when the turn reached its limit.
func (r *REPL) askLimit(l agent.LimitReached) agent.LimitChoice {
	what := fmt.Sprintf("%d rounds", l.Rounds)
	if l.Reason == "time" {
		what = l.Elapsed.Round(time.Second).String()
	}
	r.printf("This task has run for %s (%d tool calls), the limit for a %s task.\n", what, l.Calls, l.Size)
	for range 3 {
		line, err := r.Ed.ReadLine("[c] continue  [s] stop and summarize  [a] abort  (s): ")
		if err != nil {
			return agent.LimitAbort
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "s", "summarize", "stop":
			return agent.LimitSummarize
		case "c", "continue":
			return agent.LimitContinue
		case "a", "abort":
			return agent.LimitAbort
		}
	}
	return agent.LimitSummarize
}
