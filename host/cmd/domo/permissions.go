package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/domo-agent/domo/host/config"
	"github.com/domo-agent/domo/policy"
)

const permissionsUsage = `Usage:
  domo permissions [list] [--json]            every known tool: group, risk, decision and why
  domo permissions set GROUP off|ask|always   a group's policy (e.g. files.write, browser)
  domo permissions set SERVER/TOOL POLICY     one tool's policy, over its group's
  domo permissions set SERVER/TOOL default    drop a tool's own policy
  domo permissions mode manual|smart|auto     the global mode

Changes are saved to the config file (see "domo --config").
`

func runPermissions(e *env, args []string) error {
	sub, fs, args := subcommand(e, "permissions", "list", permissionsUsage, args)
	asJSON := fs.Bool("json", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	switch sub {
	case "list", "ls":
		if len(pos) > 0 {
			return fmt.Errorf("%w: unexpected argument %q", errUsage, pos[0])
		}
		return permissionsList(e, cfg, *asJSON)
	case "set":
		if len(pos) != 2 {
			return fmt.Errorf("%w: permissions set takes a group (or server/tool) and off, ask or always", errUsage)
		}
		return permissionsSet(e, cfg, pos[0], pos[1])
	case "mode":
		if len(pos) != 1 {
			return fmt.Errorf("%w: permissions mode takes manual, smart or auto", errUsage)
		}
		return permissionsMode(e, pos[0])
	case "help":
		fmt.Fprint(e.stdout, permissionsUsage)
		return nil
	}
	return fmt.Errorf("%w: unknown permissions command %q (want list, set or mode)", errUsage, sub)
}

// toolRow is one tool's effective permission.
type toolRow struct {
	Tool     string `json:"tool"`
	Group    string `json:"group"`
	Risk     string `json:"risk"`
	Policy   string `json:"policy"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
}

// rows decides every known tool as a fresh session would, with no grants
// and no intent chosen.
func rows(cfg config.Config) []toolRow {
	pc := cfg.Permissions.Policy(cfg.Memory.Enabled)
	keys := slices.Collect(maps.Keys(cfg.Permissions.Catalog))
	// Third-party tools named in overrides are known too.
	for k := range cfg.Permissions.Tools {
		if _, ok := cfg.Permissions.Catalog[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]toolRow, 0, len(keys))
	for _, k := range keys {
		server, name, _ := strings.Cut(k, "/")
		t := cfg.Permissions.Tool(server, name)
		d := policy.Decide(pc, t, nil, nil, false)
		pol, ok := cfg.Permissions.Tools[k]
		if !ok {
			pol = cfg.Permissions.Groups[t.Group]
		}
		out = append(out, toolRow{k, t.Group, string(t.Risk), string(pol), string(d.Verdict), d.Rule})
	}
	return out
}

func permissionsList(e *env, cfg config.Config, asJSON bool) error {
	rs := rows(cfg)
	mode := cfg.Permissions.Mode
	if mode == "" {
		mode = policy.ModeSmart
	}
	if asJSON {
		return printJSON(e.stdout, struct {
			Mode          policy.Mode                   `json:"mode"`
			MemoryEnabled bool                          `json:"memory_enabled"`
			IntentMode    bool                          `json:"intent_mode"`
			Groups        map[string]policy.GroupPolicy `json:"groups"`
			Tools         []toolRow                     `json:"tools"`
		}{mode, cfg.Memory.Enabled, cfg.Permissions.IntentMode, cfg.Permissions.Groups, rs})
	}
	fmt.Fprintf(e.stdout, "mode %s · memory %s · intent mode %s · config %s\n\n",
		mode, onOff(cfg.Memory.Enabled), onOff(cfg.Permissions.IntentMode), e.configPath)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tGROUP\tRISK\tDECISION\tWHY")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Tool, r.Group, r.Risk, r.Decision, r.Rule)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\nOther servers' tools go in group mcp.<server>, count as dangerous, and ask unless that group is set.")
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func permissionsSet(e *env, cfg config.Config, target, value string) error {
	pol := policy.GroupPolicy(value)
	if strings.Contains(target, "/") {
		if value == "default" {
			server, name, _ := strings.Cut(target, "/")
			group := cfg.Permissions.Tool(server, name).Group
			if _, ok := cfg.Permissions.Tools[target]; !ok {
				fmt.Fprintf(e.stdout, "%s has no policy of its own; it follows group %s\n", target, group)
				return nil
			}
			if err := config.SetPolicy(e.configPath, target, ""); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s follows group %s again (saved to %s)\n", target, group, e.configPath)
			return nil
		}
	}
	switch pol {
	case policy.PolicyOff, policy.PolicyAsk, policy.PolicyAlways:
	default:
		return fmt.Errorf("%w: policy %q: want off, ask or always", errUsage, value)
	}
	if server, tool, isTool := strings.Cut(target, "/"); isTool {
		if server == "" || tool == "" {
			return fmt.Errorf("%w: %q: want server/tool, like files/delete_file", errUsage, target)
		}
	} else if !knownGroup(cfg, target) {
		return fmt.Errorf("%w: unknown group %q; groups: %s, or mcp.SERVER for another server's tools",
			errUsage, target, strings.Join(cfg.Permissions.KnownGroups(), ", "))
	}
	if err := config.SetPolicy(e.configPath, target, pol); err != nil {
		return err
	}
	note := ""
	if pol == policy.PolicyAlways {
		note = "; destructive tools still ask every time"
	}
	fmt.Fprintf(e.stdout, "%s: %s (saved to %s)%s\n", target, pol, e.configPath, note)
	return nil
}

func knownGroup(cfg config.Config, g string) bool {
	if rest, ok := strings.CutPrefix(g, "mcp."); ok && rest != "" {
		return true
	}
	return slices.Contains(cfg.Permissions.KnownGroups(), g)
}

func permissionsMode(e *env, value string) error {
	mode := policy.Mode(value)
	switch mode {
	case policy.ModeManual, policy.ModeSmart, policy.ModeAuto:
	default:
		return fmt.Errorf("%w: mode %q: want manual, smart or auto", errUsage, value)
	}
	if err := config.SetMode(e.configPath, mode); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "mode %s (saved to %s)\n", mode, e.configPath)
	return nil
}
