package mcpclient

import (
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Tool is one tool in the catalogue.
type Tool struct {
	// Name is what the model calls it: the tool's own name, or
	// "server__tool" when two servers offer a tool of that name.
	Name   string
	Server string
	Tool   mcp.Tool
}

// Catalogue lists the tools of every ready server, and of every server
// being restarted (a call waits for the restart), sorted by name.
func (sup *Supervisor) Catalogue() []Tool {
	sup.mu.Lock()
	defer sup.mu.Unlock()
	count := map[string]int{}
	for _, s := range sup.servers {
		if s.usable() {
			for _, t := range s.Tools {
				count[t.Name]++
			}
		}
	}
	var out []Tool
	for _, s := range sup.servers {
		if !s.usable() {
			continue
		}
		for _, t := range s.Tools {
			name := t.Name
			if count[name] > 1 {
				name = s.Name + "__" + t.Name
			}
			out = append(out, Tool{Name: name, Server: s.Name, Tool: t})
		}
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup finds a tool by the name the catalogue gives it.
func (sup *Supervisor) Lookup(name string) (Tool, bool) {
	for _, t := range sup.Catalogue() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

func (s *Server) usable() bool { return s.State == StateReady || s.State == StateRestarting }
