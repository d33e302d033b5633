package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/domo-agent/domo/policy"
)

// Server is one entry of "mcpServers", in the shape Claude Desktop, Cursor
// and (with "type") VS Code use: a command to start over stdio, or a URL
// for Streamable HTTP.
type Server struct {
	Name     string            `json:"-"`
	Type     string            `json:"type,omitempty"` // stdio or http; inferred when empty
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
	// Timeout bounds a call to the server's tools; the initialize
	// handshake has its own, shorter, limit.
	Timeout Duration `json:"timeout,omitempty"`
	// Builtin marks Domo's own servers from the defaults: when their
	// binary is not installed they are simply absent, not an error.
	Builtin bool `json:"-"`
	// Err is set when the entry cannot be used as written (an unset
	// variable, say); the host reports it and starts the others.
	Err error `json:"-"`
}

// HTTP reports whether the server is reached over Streamable HTTP.
func (s Server) HTTP() bool {
	return s.Type == "http" || s.Type == "streamable-http" || s.Type == "sse" || s.URL != "" && s.Command == ""
}

// Duration is a time.Duration written in JSON as seconds (30) or as a Go
// duration ("30s", "2m").
type Duration time.Duration

// UnmarshalJSON reads seconds or a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var n float64
	if err := json.Unmarshal(b, &n); err == nil {
		if n < 0 {
			return fmt.Errorf("%v: want a positive number of seconds", n)
		}
		*d = Duration(n * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: want seconds (30) or a duration (\"30s\")", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q: want seconds (30) or a duration (\"30s\")", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(d).Seconds(), 'f', -1, 64)), nil
}

// LLM is the "llm" section: which OpenAI-compatible server to talk to.
type LLM struct {
	// BaseURL is the server's /v1 URL; empty means probe the usual local
	// servers (Ollama, LM Studio, llama.cpp).
	BaseURL string `json:"base_url,omitempty"`
	Model   string `json:"model,omitempty"`
	// APIKeyEnv names the environment variable holding the API key, so
	// the key itself never sits in the config file.
	APIKeyEnv   string   `json:"api_key_env,omitempty"`
	ContextSize int      `json:"context_size,omitempty"`
	Timeout     Duration `json:"timeout,omitempty"`
}

// builtinServers are Domo's six servers, started when the config names no
// servers. Each binary is looked for next to domo, then on PATH.
func builtinServers() map[string]Server {
	m := map[string]Server{}
	for _, name := range []string{"files", "memory", "web", "browser", "ax", "voice"} {
		s := Server{Name: name, Command: "domo-" + name, Builtin: true}
		if name == "files" {
			// The sandbox: the home directory, unless told otherwise.
			s.Args = []string{"${DOMO_FILES_ROOT:-${HOME}}"}
		}
		m[name] = s
	}
	return m
}

// ServerNames returns the configured servers' names, sorted.
func (c Config) ServerNames() []string {
	names := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// validateServer checks an entry and expands its variables; problems that
// concern only this server are left in Err.
func validateServer(name string, s Server, getenv func(string) string) (Server, error) {
	s.Name = name
	field := "mcpServers." + name
	if !serverName.MatchString(name) {
		return s, fmt.Errorf("%s: a server name uses letters, digits, '.', '_' and '-' (at most 64)", field)
	}
	switch s.Type {
	case "", "stdio", "http", "streamable-http", "sse":
	default:
		return s, fmt.Errorf("%s.type: %q: want stdio or http", field, s.Type)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return s, fmt.Errorf("%s: give a command (for stdio) or a url (for HTTP)", field)
	case s.Command != "" && s.URL != "":
		return s, fmt.Errorf("%s: give a command or a url, not both", field)
	}
	if s.Type == "sse" {
		s.Err = fmt.Errorf("%s: the old SSE transport is not supported; use the server's Streamable HTTP endpoint", field)
	}
	var errs []string
	expand := func(where, v string) string {
		out, err := Expand(v, getenv)
		if err != nil {
			errs = append(errs, where+": "+err.Error())
		}
		return out
	}
	s.Command = expand(field+".command", s.Command)
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = expand(fmt.Sprintf("%s.args[%d]", field, i), a)
	}
	s.Args = args
	s.Env = expandMap(field+".env", s.Env, expand)
	s.Headers = expandMap(field+".headers", s.Headers, expand)
	s.URL = expand(field+".url", s.URL)
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, field+".url: "+strconv.Quote(s.URL)+": want an http:// or https:// URL")
		}
	}
	if len(errs) > 0 && s.Err == nil {
		s.Err = fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s, nil
}

func expandMap(field string, m map[string]string, expand func(string, string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(field+"."+k, v)
	}
	return out
}

var variable = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-)?`)

// Expand replaces ${VAR} with the variable's value and ${VAR:-default}
// with the default when VAR is unset or empty; defaults may nest
// variables. VS Code's ${env:VAR} is read as ${VAR}. An unset variable
// without a default is an error naming it, so a missing token is caught
// before a server starts without it. "$$" stands for a literal "$".
func Expand(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	s = strings.ReplaceAll(s, "${env:", "${")
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$$") {
			b.WriteByte('$')
			i += 2
			continue
		}
		m := variable.FindStringSubmatchIndex(s[i:])
		if m == nil || m[0] != 0 {
			j := len(s)
			if m != nil {
				j = i + m[0]
			}
			if k := strings.Index(s[i:j], "$$"); k >= 0 {
				j = i + k
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		name := s[i+m[2] : i+m[3]]
		rest := i + m[1]
		if m[4] < 0 { // ${VAR}
			if !strings.HasPrefix(s[rest:], "}") {
				// Errors quote only the variable: the rest of the value
				// may be a secret.
				if strings.HasPrefix(s[rest:], ":") {
					return "", fmt.Errorf("${%s:…}: only ${VAR} and ${VAR:-default} are expanded (VS Code's ${input:…} prompts are not)", name)
				}
				return "", fmt.Errorf("${%s is not closed with }", name)
			}
			v := getenv(name)
			if v == "" {
				return "", fmt.Errorf("${%s} is not set: export it, or write ${%s:-default}", name, name)
			}
			b.WriteString(v)
			i = rest + 1
			continue
		}
		// ${VAR:-default}: the default runs to the matching brace.
		depth, j := 1, rest
		for ; j < len(s) && depth > 0; j++ {
			switch {
			case strings.HasPrefix(s[j:], "${"):
				depth++
				j++
			case s[j] == '}':
				depth--
			}
		}
		if depth != 0 {
			return "", fmt.Errorf("${%s:- is not closed with }", name)
		}
		if v := getenv(name); v != "" {
			b.WriteString(v)
		} else {
			def, err := Expand(s[rest:j-1], getenv)
			if err != nil {
				return "", err
			}
			b.WriteString(def)
		}
		i = j
	}
	return b.String(), nil
}

// envOverrides applies DOMO_* variables over the file.
func envOverrides(c *Config, getenv func(string) string) error {
	if v := getenv("DOMO_AUDIT_LOG"); v != "" {
		c.Audit.Path = expandHome(v)
	}
	if v := getenv("DOMO_MODE"); v != "" {
		c.Permissions.Mode = policy.Mode(v)
	}
	if v := getenv("DOMO_MEMORY"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("DOMO_MEMORY=%q: want true or false", v)
		}
		c.Memory.Enabled = on
	}
	if v := getenv("DOMO_LLM_BASE_URL"); v != "" {
		c.LLM.BaseURL = v
	}
	if v := getenv("DOMO_LLM_MODEL"); v != "" {
		c.LLM.Model = v
	}
	return nil
}
