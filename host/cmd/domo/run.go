package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/domo-agent/domo/host/config"
)

// version is stamped by the build (-ldflags "-X main.version=…").
var version = "dev"

// errUsage marks a mistake in the command line: exit status 2.
var errUsage = errors.New("usage")

// errQuiet is a failure already explained on stderr: exit status 1
// without another message.
var errQuiet = errors.New("failed")

const usage = `domo — a local, private desktop agent

Usage:
  domo chat                     talk with the local model, which can use the tools
  domo ask MESSAGE              answer one message and exit (--json for scripts)
  domo audit [list] [filters]   review the audit log (also: show, stats, tail, verify, path)
  domo permissions [list]       every tool's group, risk and decision (also: set, mode)
  domo config [show]            the configuration in effect (also: path, edit, import FILE)
  domo servers                  start the configured MCP servers and show how each stands
  domo tools                    every tool the servers offer: group, risk and decision
  domo call TOOL '{json}'       run one tool through the permission gate and audit log
  domo version                  print the version

Global flags (before the command):
  --config FILE   the configuration file (default $DOMO_CONFIG, else
                  $XDG_CONFIG_HOME/domo/config.json)

Run "domo COMMAND --help" for a command's flags.
`

// env is what every command gets: where to write and the configuration's
// path.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	configPath     string
}

func (e *env) config() (config.Config, error) {
	return config.Load(e.configPath)
}

// Run runs one command line and returns the process's exit status: 0 on
// success, 1 on failure, 2 on a usage error.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	err := run(ctx, e, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errQuiet):
		return 1
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "domo: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "domo: %v\n", err)
		return 1
	}
}

func run(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("domo", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, usage) }
	fs.StringVar(&e.configPath, "config", config.DefaultPath(), "")
	showVersion := fs.Bool("version", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *showVersion {
		fmt.Fprintln(e.stdout, "domo", version)
		return nil
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "audit":
		return runAudit(ctx, e, rest)
	case "permissions", "perms":
		return runPermissions(e, rest)
	case "config":
		return runConfig(ctx, e, rest)
	case "servers":
		return runServers(ctx, e, rest)
	case "tools":
		return runTools(ctx, e, rest)
	case "call":
		return runCall(ctx, e, rest)
	case "chat":
		return runChat(ctx, e, rest)
	case "ask":
		return runAsk(ctx, e, rest)
	case "version":
		fmt.Fprintln(e.stdout, "domo", version)
		return nil
	case "help":
		fmt.Fprint(e.stdout, usage)
		return nil
	default:
		return fmt.Errorf("%w: unknown command %q (want %s)", errUsage, cmd, strings.Join([]string{"chat", "ask", "call", "tools", "servers", "audit", "permissions", "config", "version"}, ", "))
	}
}

// subcommand splits off a command's subcommand (def when the arguments
// start with a flag) and makes its flag set, which prints usage on -h.
func subcommand(e *env, command, def, usage string, args []string) (string, *flag.FlagSet, []string) {
	sub := def
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	return sub, newFlagSet(e, command+" "+sub, usage), args
}

// newFlagSet makes a command's flag set, which prints usage on -h.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("domo "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, usage) }
	return fs
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// noArgs parses a subcommand's flags and refuses positional arguments.
func noArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseInterspersed(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
	}
	return err
}

// parseInterspersed parses flags wherever they appear among the
// positional arguments ("domo audit show 12 --json"), and returns the
// positional ones. A lone "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
