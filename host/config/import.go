package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Imported says what Import did.
type Imported struct {
	Added    []string // servers written to the config
	Replaced []string // servers that were there and were overwritten
	Skipped  []string // servers already there, kept (without replace)
	Notes    []string // things the person should look at
}

// Import adds the servers of another MCP client's config to the file at
// path: Claude Desktop's and Cursor's "mcpServers", VS Code's mcp.json
// ("servers") or settings.json ("mcp": {"servers"}), comments and
// trailing commas allowed. A server already in the file is kept unless
// replace is set. When the file names no servers yet, Domo's own are
// written first, so importing does not drop them.
func Import(path string, src []byte, replace bool) (Imported, error) {
	var res Imported
	std, err := hujson.Standardize(src)
	if err != nil {
		return res, fmt.Errorf("not a JSON (or JSON with comments) file: %w", err)
	}
	var shape struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
		MCP        *struct {
			Servers map[string]json.RawMessage `json:"servers"`
		} `json:"mcp"`
	}
	if err := json.Unmarshal(std, &shape); err != nil {
		return res, fmt.Errorf("not an MCP client config: %w", err)
	}
	servers := shape.MCPServers
	if servers == nil {
		servers = shape.Servers
	}
	if servers == nil && shape.MCP != nil {
		servers = shape.MCP.Servers
	}
	if len(servers) == 0 {
		return res, errors.New(`no servers found: want "mcpServers" (Claude Desktop, Cursor), "servers" (VS Code mcp.json) or "mcp": {"servers"} (VS Code settings)`)
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	err = update(path, func(top *object) error {
		existing, err := top.child("mcpServers")
		if err != nil {
			return err
		}
		if _, ok := top.get("mcpServers"); !ok {
			for _, name := range slices.Sorted(maps.Keys(builtinServers())) {
				s := builtinServers()[name]
				if err := existing.set(name, struct {
					Command string   `json:"command"`
					Args    []string `json:"args,omitempty"`
				}{s.Command, s.Args}); err != nil {
					return err
				}
			}
		}
		for _, name := range names {
			raw := servers[name]
			var s Server
			if err := json.Unmarshal(raw, &s); err != nil {
				return fmt.Errorf("server %q: %w", name, err)
			}
			if _, err := validateServer(name, s, func(string) string { return "set" }); err != nil {
				return fmt.Errorf("server %q cannot be imported: %w", name, err)
			}
			if strings.Contains(string(raw), "${input:") {
				res.Notes = append(res.Notes, fmt.Sprintf("%s uses VS Code's ${input:…} prompts: replace them with ${VARIABLE} and export the variable", name))
			}
			if _, there := existing.get(name); there {
				if !replace {
					res.Skipped = append(res.Skipped, name)
					continue
				}
				res.Replaced = append(res.Replaced, name)
			} else {
				res.Added = append(res.Added, name)
			}
			if err := existing.set(name, json.RawMessage(raw)); err != nil {
				return err
			}
		}
		return top.set("mcpServers", existing)
	})
	return res, err
}
