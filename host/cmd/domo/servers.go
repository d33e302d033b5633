package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/policy"
)

// startServers starts the configured servers for a command that needs
// them; the caller closes the supervisor.
func startServers(ctx context.Context, e *env) (*mcpclient.Supervisor, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	return mcpclient.Start(ctx, cfg.Servers, mcpclient.Options{Version: version}), nil
}

func runServers(ctx context.Context, e *env, args []string) error {
	_, fs, args := subcommand(e, "servers", "list", "Usage: domo servers [--json]\n", args)
	asJSON := fs.Bool("json", false, "")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	sup, err := startServers(ctx, e)
	if err != nil {
		return err
	}
	defer sup.Close()
	type row struct {
		Name      string `json:"name"`
		State     string `json:"state"`
		PID       int    `json:"pid,omitempty"`
		Tools     int    `json:"tools"`
		Restarts  int    `json:"restarts"`
		LastError string `json:"last_error,omitempty"`
	}
	var rows []row
	for _, s := range sup.Servers() {
		r := row{Name: s.Name, State: string(s.State), PID: s.PID, Tools: len(s.Tools), Restarts: s.Restarts}
		if s.Err != nil {
			r.LastError = s.Err.Error()
		}
		rows = append(rows, r)
	}
	if *asJSON {
		return printJSON(e.stdout, rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tPID\tTOOLS\tRESTARTS\tLAST ERROR")
	for _, r := range rows {
		pid := "-"
		if r.PID != 0 {
			pid = fmt.Sprint(r.PID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\n", r.Name, r.State, pid, r.Tools, r.Restarts, oneLine(r.LastError, 100))
	}
	return tw.Flush()
}

func runTools(ctx context.Context, e *env, args []string) error {
	_, fs, args := subcommand(e, "tools", "list", "Usage: domo tools [--json]\n", args)
	asJSON := fs.Bool("json", false, "")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	sup := mcpclient.Start(ctx, cfg.Servers, mcpclient.Options{Version: version})
	defer sup.Close()
	pc := cfg.Permissions.Policy(cfg.Memory.Enabled)
	type row struct {
		Name        string `json:"name"`
		Server      string `json:"server"`
		Group       string `json:"group"`
		Risk        string `json:"risk"`
		Decision    string `json:"decision"`
		Rule        string `json:"rule"`
		Description string `json:"description"`
	}
	var rows []row
	for _, t := range sup.Catalogue() {
		pt := cfg.Permissions.Tool(t.Server, t.Tool.Name)
		d := policy.Decide(pc, pt, nil, nil, false)
		desc, _, _ := strings.Cut(t.Tool.Description, "\n")
		rows = append(rows, row{t.Name, t.Server, pt.Group, string(pt.Risk), string(d.Verdict), d.Rule, desc})
	}
	if *asJSON {
		return printJSON(e.stdout, rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSERVER\tGROUP\tRISK\tDECISION\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", oneLine(r.Name, 60), r.Server, r.Group, r.Risk, r.Decision, oneLine(r.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range sup.Servers() {
		if s.State == mcpclient.StateFailed {
			fmt.Fprintf(e.stderr, "server %s failed: %s\n", s.Name, oneLine(s.Err.Error(), 300))
		}
	}
	return nil
}
