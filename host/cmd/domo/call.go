package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/toolgate"
)

const callUsage = `Usage: domo call [flags] TOOL [JSON|-]

Runs one tool through the same permission gate and audit log as the chat.
The arguments are a JSON object, given inline, or read from standard input
with "-" or when no argument is given and input is not a terminal.

Flags:
  --allow GROUP   allow GROUP for this call without asking (repeatable,
                  or comma-separated); destructive tools still ask
  --mode MODE     manual, smart or auto for this call
  --json          print the whole result as JSON
`

func runCall(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "call", callUsage)
	var sf sessionFlags
	fs.Var(&sf, "allow", "")
	fs.StringVar(&sf.mode, "mode", "", "")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || len(pos) > 2 {
		fmt.Fprint(e.stderr, callUsage)
		return fmt.Errorf("%w: want a tool name and its JSON arguments", errUsage)
	}
	name, raw := pos[0], "{}"
	switch {
	case len(pos) == 2 && pos[1] != "-":
		raw = pos[1]
	case len(pos) == 2 || !isTerminal(e.stdin):
		b, err := io.ReadAll(io.LimitReader(e.stdin, 64<<20))
		if err != nil {
			return fmt.Errorf("read arguments: %w", err)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			raw = s
		}
	}
	if !json.Valid([]byte(raw)) {
		return fmt.Errorf("%w: arguments are not valid JSON: %s", errUsage, oneLine(raw, 80))
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	prompter, done := e.prompter()
	defer done()
	s, err := openSession(ctx, e, cfg, sf, prompter, "domo call "+name)
	if err != nil {
		return err
	}
	defer s.Close()
	res := s.gate.Call(ctx, toolgate.Call{Name: name, Args: json.RawMessage(raw)})
	if *asJSON {
		out := struct {
			Tool       string `json:"tool"`
			Status     string `json:"status"`
			IsError    bool   `json:"is_error"`
			Text       string `json:"text"`
			Content    any    `json:"content,omitempty"`
			Structured any    `json:"structured,omitempty"`
			DurationMS int64  `json:"duration_ms"`
		}{name, res.Status, res.IsError, res.Text, res.Content, res.Structured, res.Duration.Milliseconds()}
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if res.IsError {
		fmt.Fprintln(e.stderr, strings.TrimRight(res.Text, "\n"))
	} else {
		fmt.Fprintln(e.stdout, strings.TrimRight(res.Text, "\n"))
	}
	if res.AuditErr != nil {
		fmt.Fprintf(e.stderr, "domo: the end of the call was not recorded in the audit log: %v\n", res.AuditErr)
	}
	if res.IsError || res.Status != audit.StatusOK {
		return errQuiet
	}
	return nil
}
