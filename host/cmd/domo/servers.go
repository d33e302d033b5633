package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/policy"
)

// startServers starts the configured servers for a command that needs
// them; the caller closes the supervisor.
func startServers(ctx context.Context, e *env) (*mcpclient.Supervisor, config.Config, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, cfg, err
	}
	return mcpclient.Start(ctx, serversToStart(cfg), mcpclient.Options{Version: version}), cfg, nil
}

type serverRow struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	PID       int    `json:"pid,omitempty"`
	Tools     int    `json:"tools"`
	Restarts  int    `json:"restarts"`
	LastError string `json:"last_error,omitempty"`
}

func serverRows(sup *mcpclient.Supervisor) []serverRow {
	var rows []serverRow
	for _, s := range sup.Servers() {
		r := serverRow{Name: s.Name, State: string(s.State), PID: s.PID, Tools: len(s.Tools), Restarts: s.Restarts}
		if s.Err != nil {
			r.LastError = s.Err.Error()
		}
		rows = append(rows, r)
	}
	return rows
}

func runServers(ctx context.Context, e *env, args []string) error {
	_, fs, args := subcommand(e, "servers", "list", "Usage: domo servers [--json]\n", args)
	asJSON := fs.Bool("json", false, "")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	sup, _, err := startServers(ctx, e)
	if err != nil {
		return err
	}
	defer sup.Close()
	if *asJSON {
		return printJSON(e.stdout, serverRows(sup))
	}
	return printServers(e.stdout, sup)
}

type liveToolRow struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	Group       string `json:"group"`
	Risk        string `json:"risk"`
	Decision    string `json:"decision"`
	Rule        string `json:"rule"`
	Description string `json:"description"`
}

// toolRows lists the catalogue with what decide says of each tool.
func toolRows(sup *mcpclient.Supervisor, cfg config.Config, decide func(string, *policy.Turn) (policy.Tool, policy.Decision, bool)) []liveToolRow {
	var rows []liveToolRow
	for _, t := range sup.Catalogue() {
		pt, d, _ := decide(t.Name, nil)
		desc, _, _ := strings.Cut(t.Tool.Description, "\n")
		rows = append(rows, liveToolRow{t.Name, t.Server, pt.Group, string(pt.Risk), string(d.Verdict), d.Rule, desc})
	}
	return rows
}

// staticDecide decides from the config alone, with no session grants.
func staticDecide(sup *mcpclient.Supervisor, cfg config.Config) func(string, *policy.Turn) (policy.Tool, policy.Decision, bool) {
	pc := cfg.Permissions.Policy(cfg.Memory.Enabled)
	return func(name string, turn *policy.Turn) (policy.Tool, policy.Decision, bool) {
		t, ok := sup.Lookup(name)
		if !ok {
			return policy.Tool{}, policy.Decision{}, false
		}
		pt := cfg.Permissions.Tool(t.Server, t.Tool.Name)
		return pt, policy.Decide(pc, pt, nil, turn, false), true
	}
}

func runTools(ctx context.Context, e *env, args []string) error {
	_, fs, args := subcommand(e, "tools", "list", "Usage: domo tools [--json]\n", args)
	asJSON := fs.Bool("json", false, "")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	sup, cfg, err := startServers(ctx, e)
	if err != nil {
		return err
	}
	defer sup.Close()
	decide := staticDecide(sup, cfg)
	if *asJSON {
		err = printJSON(e.stdout, toolRows(sup, cfg, decide))
	} else {
		err = printTools(e.stdout, sup, cfg, decide)
	}
	if err != nil {
		return err
	}
	for _, s := range sup.Servers() {
		if s.State == mcpclient.StateFailed {
			fmt.Fprintf(e.stderr, "server %s failed: %s\n", s.Name, oneLine(s.Err.Error(), 300))
		}
	}
	return nil
}
