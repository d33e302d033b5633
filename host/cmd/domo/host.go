package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/chat"
	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/llm"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
)

// llmFlags choose the model, for chat and ask.
type llmFlags struct {
	model, baseURL string
}

// addHostFlags adds the flags chat and ask share.
func addHostFlags(fs *flag.FlagSet, sf *sessionFlags, lf *llmFlags) {
	fs.Var(sf, "allow", "")
	fs.StringVar(&sf.mode, "mode", "", "")
	fs.StringVar(&lf.model, "model", "", "")
	fs.StringVar(&lf.baseURL, "base-url", "", "")
}

const hostFlagsHelp = `  --model NAME      the model (default llm.model, else the server's first)
  --base-url URL    the LLM server's /v1 URL (default llm.base_url, else the
                    first local server that answers: Ollama, LM Studio, llama.cpp)
  --mode MODE       permission mode for this session: manual, smart or auto
  --allow GROUP     allow GROUP for this session without asking (repeatable,
                    or comma-separated); destructive tools still ask
`

// host is a session with its model and agent: what chat and ask run on.
type host struct {
	*session
	model    *llm.Client // nil when no server answers
	modelErr error
	agent    *agent.Agent
}

// startHost starts the servers and finds the model at the same time.
func startHost(ctx context.Context, e *env, sf sessionFlags, lf llmFlags, prompter toolgate.Prompter, what string) (*host, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	h := &host{}
	found := make(chan struct{})
	go func() {
		defer close(found)
		h.model, h.modelErr = openModel(ctx, cfg.LLM, lf)
	}()
	s, err := openSession(ctx, e, cfg, sf, prompter, what)
	<-found
	if err != nil {
		return nil, err
	}
	h.session = s
	opts := agent.Options{Gate: s.gate, Session: s.id}
	if h.model != nil {
		opts.Model = h.model
	}
	h.agent = agent.New(opts)
	return h, nil
}

// openModel returns the LLM client, probing the usual local servers when no
// base URL is configured.
func openModel(ctx context.Context, cfg config.LLM, lf llmFlags) (*llm.Client, error) {
	base := cfg.BaseURL
	if lf.baseURL != "" {
		base = lf.baseURL
	}
	if base == "" {
		found, err := llm.Probe(ctx, llm.LocalServers)
		if err != nil {
			return nil, err
		}
		base = found
	}
	model := cfg.Model
	if lf.model != "" {
		model = lf.model
	}
	key := ""
	if cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
	}
	return llm.New(llm.Config{BaseURL: base, Model: model, APIKey: key, ContextSize: cfg.ContextSize, Timeout: time.Duration(cfg.Timeout)})
}

// modelName names the model in use, resolving the server's default.
func (h *host) modelName(ctx context.Context) string {
	if h.model == nil {
		return "none"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	name, err := h.model.Model(ctx)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return name
}

// banner is what chat prints first: the model, the servers and how to get
// help, or exactly what is missing.
func (h *host) banner(ctx context.Context) string {
	var b strings.Builder
	if h.model != nil {
		fmt.Fprintf(&b, "Domo %s · model %s at %s", version, chat.Clean(h.modelName(ctx)), chat.Clean(h.model.BaseURL()))
	} else {
		fmt.Fprintf(&b, "Domo %s · no language model: %s", version, strings.TrimSpace(chat.Clean(h.modelErr.Error())))
		if !strings.Contains(h.modelErr.Error(), "DOMO_LLM_BASE_URL") {
			b.WriteString("\n" + chat.NoModelHint)
		}
	}
	var ready, broken []string
	for _, st := range h.sup.Servers() {
		switch st.State {
		case mcpclient.StateReady:
			ready = append(ready, st.Name)
		case mcpclient.StateFailed:
			broken = append(broken, st.Name+": "+oneLine(firstLine(st.Err), 120))
		}
	}
	fmt.Fprintf(&b, "\nservers: %s · %d tools · mode %s", orNone(strings.Join(ready, ", ")), len(h.gate.Offered()), h.gate.Policy().Mode)
	for _, s := range broken {
		fmt.Fprintf(&b, "\n  failed %s", s)
	}
	b.WriteString("\n/help for commands · Ctrl-C cancels an answer · Ctrl-D quits")
	return b.String()
}

func firstLine(err error) string {
	if err == nil {
		return ""
	}
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// slashHost gives the chat's slash commands what they show.
func (h *host) slashHost(e *env) chat.Host {
	ch := chat.Host{
		Tools:   func(w io.Writer) error { return printTools(w, h.sup, h.cfg, h.gate.Decide) },
		Servers: func(w io.Writer) error { return printServers(w, h.sup) },
		Permissions: func(w io.Writer) error {
			cfg := h.cfg
			cfg.Permissions.Groups = h.gate.Policy().Groups
			return permissionsList(&env{stdout: w, stderr: w, configPath: e.configPath}, cfg, false)
		},
		Audit: func(w io.Writer, n int) error {
			lines, _, err := lastMatching(h.cfg.Audit.Path, audit.Filter{}, n)
			if err != nil {
				return err
			}
			return printLines(w, lines, false)
		},
		Memory: h.callMemory,
	}
	if h.model != nil {
		ch.Model = func() string { return h.modelName(context.Background()) }
		ch.Models = h.model.Models
		ch.SetModel = func(name string) error { h.model.SetModel(name); return nil }
	}
	return ch
}

// printServers writes the servers' table.
func printServers(w io.Writer, sup *mcpclient.Supervisor) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tPID\tTOOLS\tRESTARTS\tLAST ERROR")
	for _, r := range serverRows(sup) {
		pid := "-"
		if r.PID != 0 {
			pid = fmt.Sprint(r.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", r.Name, r.State, pid, r.Tools, r.Restarts, oneLine(r.LastError, 100))
	}
	return tw.Flush()
}

// printTools writes the tools' table, each with what policy decides now.
func printTools(w io.Writer, sup *mcpclient.Supervisor, cfg config.Config, decide func(string, *policy.Turn) (policy.Tool, policy.Decision, bool)) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSERVER\tGROUP\tRISK\tDECISION\tDESCRIPTION")
	for _, r := range toolRows(sup, cfg, decide) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(r.Name, 60), r.Server, r.Group, r.Risk, r.Decision, oneLine(r.Description, 60))
	}
	return tw.Flush()
}

// errMemoryOff answers /memory when memory is off.
var errMemoryOff = errors.New(`memory is off (memory.enabled is false in the config, or DOMO_MEMORY=false): nothing is recalled or remembered and the memory server is not started; set "memory": {"enabled": true} with domo config edit to turn it on`)

// callMemory runs one memory tool for /memory through the gate, as
// `domo call` would, and writes its text.
func (h *host) callMemory(ctx context.Context, w io.Writer, tool string, args map[string]any) error {
	if !h.cfg.Memory.Enabled {
		return errMemoryOff
	}
	name, ok := serverToolName(h.sup, memoryServer, tool)
	if !ok {
		return fmt.Errorf("the memory server is not running, or has no %s: /servers says why", tool)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res := h.gate.Call(ctx, toolgate.Call{Name: name, Args: b})
	text := strings.TrimRight(chat.Clean(res.Text), "\n")
	if res.IsError || res.Status != audit.StatusOK {
		return errors.New(text)
	}
	_, err = fmt.Fprintln(w, text)
	return err
}

// serverToolName is the catalogue name of a server's tool (it carries a
// prefix when another server has a tool of the same name).
func serverToolName(sup *mcpclient.Supervisor, server, tool string) (string, bool) {
	for _, t := range sup.Catalogue() {
		if t.Server == server && t.Tool.Name == tool {
			return t.Name, true
		}
	}
	return "", false
}
