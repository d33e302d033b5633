// Package config loads, validates and saves the host's configuration: one
// JSON file holding the MCP servers (in the Claude Desktop shape), the
// permission policies, memory and audit settings, on top of the defaults
// embedded from configs/. It never prompts, calls tools or decides
// permissions; it only says what the user configured.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/adrg/xdg"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/configs"
	"github.com/domo-agent/domo/policy"
)

// Config is the host's configuration after defaults are applied.
type Config struct {
	// Servers are the MCP servers to start, by name.
	Servers     map[string]Server
	LLM         LLM
	Permissions Permissions
	Memory      Memory
	Audit       Audit
}

// Permissions is the "permissions" section merged over the defaults.
type Permissions struct {
	Mode policy.Mode
	// Groups holds each group's policy, the user's over the defaults.
	Groups map[string]policy.GroupPolicy
	// Tools overrides single tools, keyed "server/tool".
	Tools map[string]policy.GroupPolicy
	// IntentMode and Intents configure the optional intent mode.
	IntentMode bool
	Intents    map[string][]string
	// Catalog maps every Domo tool, keyed "server/tool", to its group and
	// risk. It comes from the defaults only.
	Catalog map[string]CatalogEntry
}

// CatalogEntry is one Domo tool's group and risk.
type CatalogEntry struct {
	Group string      `json:"group"`
	Risk  policy.Risk `json:"risk"`
}

// Memory is the "memory" section.
type Memory struct {
	Enabled bool
}

// Audit is the "audit" section.
type Audit struct {
	Path string
	// Sync is when events are forced to disk: "call_end" (the default),
	// "every" or "never".
	Sync string
	// MaxSizeMB is the size at which the log rotates.
	MaxSizeMB int64
}

// Policy returns the configuration policy.Decide needs.
func (p Permissions) Policy(memoryEnabled bool) policy.Config {
	return policy.Config{
		Mode:          p.Mode,
		Groups:        p.Groups,
		Tools:         p.Tools,
		MemoryEnabled: memoryEnabled,
		IntentMode:    p.IntentMode,
		Intents:       p.Intents,
	}
}

// Tool returns what policy needs to know about server's tool: its catalog
// entry for Domo's own tools, the third-party default otherwise.
func (p Permissions) Tool(server, name string) policy.Tool {
	if e, ok := p.Catalog[server+"/"+name]; ok {
		return policy.Tool{Server: server, Name: name, Group: e.Group, Risk: e.Risk, Known: true}
	}
	return policy.ThirdParty(server, name)
}

// KnownGroups lists every group the catalog uses or the policies name,
// sorted.
func (p Permissions) KnownGroups() []string {
	seen := map[string]bool{}
	for g := range p.Groups {
		seen[g] = true
	}
	for _, e := range p.Catalog {
		seen[e.Group] = true
	}
	groups := make([]string, 0, len(seen))
	for g := range seen {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	return groups
}

// AuditOptions returns the writer options the audit section asks for.
func (a Audit) AuditOptions() audit.Options {
	o := audit.Options{MaxSize: a.MaxSizeMB << 20}
	switch a.Sync {
	case "every":
		o.Sync = audit.SyncEvery
	case "never":
		o.Sync = audit.SyncNever
	}
	return o
}

// fileShape is the part of the file this package reads. Sections and
// fields it does not know are kept on save (see Update).
type fileShape struct {
	MCPServers  map[string]Server `json:"mcpServers"`
	LLM         *LLM              `json:"llm"`
	Permissions *struct {
		Mode       policy.Mode                   `json:"mode"`
		Groups     map[string]policy.GroupPolicy `json:"groups"`
		Tools      map[string]policy.GroupPolicy `json:"tools"`
		IntentMode *bool                         `json:"intent_mode"`
		Intents    map[string][]string           `json:"intents"`
	} `json:"permissions"`
	Memory *struct {
		Enabled *bool `json:"enabled"`
	} `json:"memory"`
	Audit *struct {
		Path      string `json:"path"`
		Sync      string `json:"sync"`
		MaxSizeMB int64  `json:"max_size_mb"`
	} `json:"audit"`
}

// defaultsShape is configs/domo/permissions.json.
type defaultsShape struct {
	Mode    policy.Mode                   `json:"mode"`
	Groups  map[string]policy.GroupPolicy `json:"groups"`
	Intents map[string][]string           `json:"intents"`
	Catalog map[string]CatalogEntry       `json:"catalog"`
}

// Default returns the configuration with no file.
func Default() Config {
	var d defaultsShape
	if err := json.Unmarshal(configs.Permissions, &d); err != nil {
		// The embedded defaults are tested; this cannot happen in a build
		// that passed its tests.
		panic(fmt.Sprintf("configs/domo/permissions.json: %v", err))
	}
	return Config{
		Servers: builtinServers(),
		Permissions: Permissions{
			Mode:    d.Mode,
			Groups:  d.Groups,
			Tools:   map[string]policy.GroupPolicy{},
			Intents: d.Intents,
			Catalog: d.Catalog,
		},
		Memory: Memory{Enabled: true},
		Audit:  Audit{Path: DefaultAuditPath(), Sync: "call_end", MaxSizeMB: 64},
	}
}

// DefaultPath is where the configuration lives unless told otherwise:
// $DOMO_CONFIG, else $XDG_CONFIG_HOME/domo/config.json.
func DefaultPath() string {
	if p := os.Getenv("DOMO_CONFIG"); p != "" {
		return p
	}
	return filepath.Join(xdg.ConfigHome, "domo", "config.json")
}

// DefaultAuditPath is $XDG_STATE_HOME/domo/audit.jsonl.
func DefaultAuditPath() string {
	return filepath.Join(xdg.StateHome, "domo", "audit.jsonl")
}

// Load reads the file at path over the defaults. A missing file is not an
// error: the defaults apply.
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Parse(strings.NewReader("{}"))
	}
	if err != nil {
		return Config{}, fmt.Errorf("read the config: %w", err)
	}
	cfg, err := Parse(bytes.NewReader(b))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Parse reads a configuration over the defaults, applies the DOMO_*
// environment variables and validates it.
func Parse(r io.Reader) (Config, error) { return ParseEnv(r, os.Getenv) }

// ParseEnv is Parse with the environment read through getenv.
func ParseEnv(r io.Reader, getenv func(string) string) (Config, error) {
	cfg := Default()
	var f fileShape
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		return Config{}, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Config{}, errors.New("not valid JSON: more after the closing brace")
	}
	if f.MCPServers != nil {
		// Naming servers replaces the built-in set: list Domo's own
		// servers too to keep them (domo config show prints them).
		cfg.Servers = map[string]Server{}
		for name, s := range f.MCPServers {
			cfg.Servers[name] = s
		}
	}
	for name, s := range cfg.Servers {
		v, err := validateServer(name, s, getenv)
		if err != nil {
			return Config{}, err
		}
		cfg.Servers[name] = v
	}
	if f.LLM != nil {
		cfg.LLM = *f.LLM
	}
	if p := f.Permissions; p != nil {
		if p.Mode != "" {
			cfg.Permissions.Mode = p.Mode
		}
		for g, v := range p.Groups {
			cfg.Permissions.Groups[g] = v
		}
		for t, v := range p.Tools {
			cfg.Permissions.Tools[t] = v
		}
		if p.IntentMode != nil {
			cfg.Permissions.IntentMode = *p.IntentMode
		}
		if p.Intents != nil {
			cfg.Permissions.Intents = p.Intents
		}
	}
	if m := f.Memory; m != nil && m.Enabled != nil {
		cfg.Memory.Enabled = *m.Enabled
	}
	if a := f.Audit; a != nil {
		if a.Path != "" {
			cfg.Audit.Path = expandHome(a.Path)
		}
		if a.Sync != "" {
			cfg.Audit.Sync = a.Sync
		}
		if a.MaxSizeMB != 0 {
			cfg.Audit.MaxSizeMB = a.MaxSizeMB
		}
	}
	if err := envOverrides(&cfg, getenv); err != nil {
		return Config{}, err
	}
	return cfg, cfg.Validate()
}

// Validate reports the first setting Domo cannot use, naming the field and
// the fix.
func (c Config) Validate() error {
	if err := c.Permissions.Policy(c.Memory.Enabled).Validate(); err != nil {
		return fmt.Errorf("permissions: %w", err)
	}
	for key := range c.Permissions.Tools {
		if server, tool, ok := strings.Cut(key, "/"); !ok || server == "" || tool == "" {
			return fmt.Errorf("permissions.tools: key %q: want \"server/tool\"", key)
		}
	}
	if c.LLM.BaseURL != "" {
		if u, err := url.Parse(c.LLM.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("llm.base_url: %q: want the server's http(s) URL, like http://127.0.0.1:11434/v1", c.LLM.BaseURL)
		}
	}
	if c.LLM.ContextSize < 0 {
		return fmt.Errorf("llm.context_size: %d: want the model's context in tokens, or 0 to ask the server", c.LLM.ContextSize)
	}
	switch c.Audit.Sync {
	case "call_end", "every", "never":
	default:
		return fmt.Errorf("audit.sync: %q: want call_end, every or never", c.Audit.Sync)
	}
	if c.Audit.MaxSizeMB < 0 {
		return fmt.Errorf("audit.max_size_mb: %d: want a positive size in MiB", c.Audit.MaxSizeMB)
	}
	return nil
}

// expandHome turns a leading ~/ into the home directory.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
