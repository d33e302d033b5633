package config

import (
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"HOME": "/home/ann", "TOKEN": "t0k", "EMPTY": ""})
	tests := []struct {
		in, want, err string
	}{
		{in: "plain", want: "plain"},
		{in: "${HOME}/notes", want: "/home/ann/notes"},
		{in: "Bearer ${TOKEN}", want: "Bearer t0k"},
		{in: "${env:TOKEN}", want: "t0k"},
		{in: "${NOPE:-fallback}", want: "fallback"},
		{in: "${EMPTY:-fallback}", want: "fallback"},
		{in: "${NOPE:-${HOME}/x}", want: "/home/ann/x"},
		{in: "${TOKEN:-${NOPE}}", want: "t0k"},
		{in: "${NOPE:-}", want: ""},
		{in: "cost $$5 ${TOKEN}", want: "cost $5 t0k"},
		{in: "$HOME stays", want: "$HOME stays"},
		{in: "${NOPE}", err: "${NOPE} is not set"},
		{in: "${NOPE:-${ALSO_NOPE}}", err: "${ALSO_NOPE} is not set"},
		{in: "${HOME", err: "${HOME is not closed"},
		{in: "${NOPE:-x", err: "${NOPE:- is not closed"},
		{in: "Bearer s3cret ${input:token}", err: "${input:…}: only ${VAR}"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in, vars)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "s3cret")):
			t.Errorf("Expand(%q) error = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestServers(t *testing.T) {
	vars := env(map[string]string{"HOME": "/home/ann", "GITHUB_TOKEN": "ghp_x"})
	tests := []parseCase{
		{
			name: "built-in servers with no mcpServers",
			json: `{}`,
			check: func(t *testing.T, c Config) {
				if got := strings.Join(c.ServerNames(), " "); got != "ax browser files memory voice web" {
					t.Errorf("servers = %s", got)
				}
				f := c.Servers["files"]
				if !f.Builtin || f.Command != "domo-files" || len(f.Args) != 1 || f.Args[0] != "/home/ann" || f.Err != nil {
					t.Errorf("files = %+v", f)
				}
			},
		},
		{
			name: "a Claude Desktop config",
			json: `{"mcpServers": {
				"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, "timeout": 30},
				"remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY:-none}"}, "timeout": "2m"},
				"off": {"command": "x", "disabled": true},
				"broken": {"command": "y", "env": {"K": "${MISSING}"}}
			}}`,
			check: func(t *testing.T, c Config) {
				g := c.Servers["github"]
				if g.Env["GITHUB_TOKEN"] != "ghp_x" || time.Duration(g.Timeout) != 30*time.Second || g.HTTP() {
					t.Errorf("github = %+v", g)
				}
				r := c.Servers["remote"]
				if !r.HTTP() || r.Headers["Authorization"] != "Bearer none" || time.Duration(r.Timeout) != 2*time.Minute {
					t.Errorf("remote = %+v", r)
				}
				if !c.Servers["off"].Disabled {
					t.Error("disabled lost")
				}
				if b := c.Servers["broken"]; b.Err == nil || !strings.Contains(b.Err.Error(), "mcpServers.broken.env.K: ${MISSING} is not set") {
					t.Errorf("broken = %v; want an error naming the field and the variable", b.Err)
				}
				if _, ok := c.Servers["files"]; ok {
					t.Error("naming servers must replace the built-in set")
				}
			},
		},
		{name: "neither command nor url", json: `{"mcpServers": {"x": {"args": ["a"]}}}`, wantErr: "mcpServers.x: give a command"},
		{name: "both", json: `{"mcpServers": {"x": {"command": "a", "url": "http://h/mcp"}}}`, wantErr: "not both"},
		{name: "bad type", json: `{"mcpServers": {"x": {"type": "ws", "url": "http://h"}}}`, wantErr: "mcpServers.x.type"},
		{name: "bad name", json: `{"mcpServers": {"a b": {"command": "x"}}}`, wantErr: "server name"},
		{name: "bad timeout", json: `{"mcpServers": {"x": {"command": "a", "timeout": "soon"}}}`, wantErr: "want seconds"},
		{name: "bad llm url", json: `{"llm": {"base_url": "localhost:11434"}}`, wantErr: "llm.base_url"},
		{
			name: "a bad url is the server's own error",
			json: `{"mcpServers": {"x": {"url": "ftp://h/mcp"}}}`,
			check: func(t *testing.T, c Config) {
				if c.Servers["x"].Err == nil {
					t.Error("no error for an ftp URL")
				}
			},
		},
	}
	runParseCases(t, tests, vars)
}

func TestEnvironmentOverridesTheFile(t *testing.T) {
	vars := env(map[string]string{"HOME": "/h", "DOMO_MODE": "manual", "DOMO_MEMORY": "false", "DOMO_LLM_MODEL": "qwen3:8b", "DOMO_AUDIT_LOG": "/tmp/a.jsonl"})
	c, err := ParseEnv(strings.NewReader(`{"permissions": {"mode": "auto"}, "memory": {"enabled": true}, "llm": {"model": "llama3"}}`), vars)
	if err != nil {
		t.Fatal(err)
	}
	if c.Permissions.Mode != "manual" || c.Memory.Enabled || c.LLM.Model != "qwen3:8b" || c.Audit.Path != "/tmp/a.jsonl" {
		t.Errorf("config = mode %s memory %v model %s audit %s", c.Permissions.Mode, c.Memory.Enabled, c.LLM.Model, c.Audit.Path)
	}
	if _, err := ParseEnv(strings.NewReader(`{}`), env(map[string]string{"DOMO_MEMORY": "perhaps"})); err == nil || !strings.Contains(err.Error(), "DOMO_MEMORY") {
		t.Errorf("bad DOMO_MEMORY: %v", err)
	}
	if _, err := ParseEnv(strings.NewReader(`{}`), env(map[string]string{"DOMO_MODE": "yolo"})); err == nil {
		t.Error("bad DOMO_MODE accepted")
	}
}
