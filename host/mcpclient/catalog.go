package mcpclient

import (
	"encoding/json"
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
	// Schema is the tool's input schema as JSON, encoded once per tools/list.
	Schema json.RawMessage
}

// catalogue is the built catalogue and its index by name; it is rebuilt
// when a server's tools change.
type catalogue struct {
	tools  []Tool
	byName map[string]int
}

// Catalogue lists the tools of every ready server, and of every server
// being restarted (a call waits for the restart), sorted by name. The
// slice is shared: callers must not modify it.
func (sup *Supervisor) Catalogue() []Tool {
	sup.mu.Lock()
	defer sup.mu.Unlock()
	return sup.catalogueLocked().tools
}

// Lookup finds a tool by the name the catalogue gives it.
func (sup *Supervisor) Lookup(name string) (Tool, bool) {
	sup.mu.Lock()
	defer sup.mu.Unlock()
	c := sup.catalogueLocked()
	i, ok := c.byName[name]
	if !ok {
		return Tool{}, false
	}
	return c.tools[i], true
}

// toolsChanged drops the built catalogue. Called with sup.mu held.
func (sup *Supervisor) toolsChanged() { sup.catalog = nil }

func (sup *Supervisor) catalogueLocked() *catalogue {
	if sup.catalog != nil {
		return sup.catalog
	}
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
		for i, t := range s.Tools {
			name := t.Name
			if count[name] > 1 {
				name = s.Name + "__" + t.Name
			}
			out = append(out, Tool{Name: name, Server: s.Name, Tool: t, Schema: s.schemas[i]})
		}
	}
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	c := &catalogue{tools: out, byName: make(map[string]int, len(out))}
	for i, t := range out {
		c.byName[t.Name] = i
	}
	sup.catalog = c
	return c
}

// setTools records a server's tools and encodes their input schemas.
func (s *Server) setTools(tools []mcp.Tool) {
	s.Tools = tools
	s.schemas = make([]json.RawMessage, len(tools))
	for i, t := range tools {
		s.schemas[i] = schemaJSON(t)
	}
}

// schemaJSON returns a tool's input schema as JSON; a tool without a usable
// one gets an empty object schema.
func schemaJSON(t mcp.Tool) json.RawMessage {
	if len(t.RawInputSchema) > 0 {
		return t.RawInputSchema
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

func (s *Server) usable() bool { return s.State == StateReady || s.State == StateRestarting }
