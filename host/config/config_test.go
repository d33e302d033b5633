package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/policy"
)

func TestDefaults(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Permissions.Mode != policy.ModeSmart || !c.Memory.Enabled || c.Audit.Sync != "call_end" {
		t.Errorf("defaults = %+v", c)
	}
	if !strings.HasSuffix(c.Audit.Path, filepath.Join("domo", "audit.jsonl")) {
		t.Errorf("audit path %s", c.Audit.Path)
	}
	tool := c.Permissions.Tool("files", "read_text_file")
	if !tool.Known || tool.Group != "files.read" || tool.Risk != policy.RiskSafe {
		t.Errorf("files/read_text_file = %+v", tool)
	}
	other := c.Permissions.Tool("github", "create_issue")
	if other.Known || other.Group != "mcp.github" || other.Risk != policy.RiskDangerous {
		t.Errorf("a third-party tool = %+v", other)
	}
	// Each call gets its own maps: changing one config leaves the next.
	c.Permissions.Groups["web"] = policy.PolicyOff
	if Default().Permissions.Groups["web"] == policy.PolicyOff {
		t.Error("Default shares its maps between calls")
	}
}

func TestParse(t *testing.T) {
	home, _ := os.UserHomeDir()
	tests := []parseCase{
		{
			name: "the README's example",
			json: `{
  "permissions": {
    "mode": "smart",
    "groups": {"files.write": "always", "browser": "off", "mcp.github": "ask"},
    "tools": {"files/delete_file": "off"},
    "intent_mode": false
  },
  "memory": {"enabled": true},
  "audit": {"path": "~/.local/state/domo/audit.jsonl", "sync": "call_end", "max_size_mb": 64}
}`,
			check: func(t *testing.T, c Config) {
				if c.Permissions.Groups["files.write"] != policy.PolicyAlways || c.Permissions.Groups["files.read"] != policy.PolicyAlways {
					t.Errorf("groups = %v; the file's must merge over the defaults", c.Permissions.Groups)
				}
				if c.Audit.Path != filepath.Join(home, ".local/state/domo/audit.jsonl") {
					t.Errorf("audit path = %s", c.Audit.Path)
				}
				d := policy.Decide(c.Permissions.Policy(c.Memory.Enabled), c.Permissions.Tool("files", "delete_file"), nil, nil, true)
				if d.Verdict != policy.Deny {
					t.Errorf("delete_file with its tool policy off = %+v", d)
				}
			},
		},
		{
			name: "unknown sections and fields are ignored",
			json: `{"mcpServers": {"x": {"command": "y"}}, "llm": {"model": "m"}, "permissions": {"x-note": 1}}`,
			check: func(t *testing.T, c Config) {
				if c.Permissions.Mode != policy.ModeSmart {
					t.Errorf("mode = %s", c.Permissions.Mode)
				}
			},
		},
		{
			name:  "memory off",
			json:  `{"memory": {"enabled": false}}`,
			check: func(t *testing.T, c Config) { checkMemoryOff(t, c) },
		},
		{
			name:  "audit sync never",
			json:  `{"audit": {"sync": "never"}}`,
			check: func(t *testing.T, c Config) { checkSync(t, c, audit.SyncNever) },
		},
		{name: "bad mode", json: `{"permissions": {"mode": "yolo"}}`, wantErr: `unknown permission mode "yolo"`},
		{name: "bad group policy", json: `{"permissions": {"groups": {"web": "sometimes"}}}`, wantErr: `group web: unknown policy "sometimes"`},
		{name: "bad tool key", json: `{"permissions": {"tools": {"delete_file": "off"}}}`, wantErr: `permissions.tools: key "delete_file": want "server/tool"`},
		{name: "bad sync", json: `{"audit": {"sync": "sometimes"}}`, wantErr: "audit.sync"},
		{name: "negative size", json: `{"audit": {"max_size_mb": -1}}`, wantErr: "audit.max_size_mb"},
		{name: "not JSON", json: `{"permissions": `, wantErr: "not valid JSON"},
		{name: "wrong type", json: `{"permissions": {"mode": 3}}`, wantErr: "not valid JSON"},
	}
	runParseCases(t, tests, os.Getenv)
}

type parseCase struct {
	name    string
	json    string
	check   func(t *testing.T, c Config)
	wantErr string
}

// runParseCases parses each case's JSON and checks the result or the error.
func runParseCases(t *testing.T, tests []parseCase, getenv func(string) string) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseEnv(strings.NewReader(tt.json), getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func checkMemoryOff(t *testing.T, c Config) {
	t.Helper()
	d := policy.Decide(c.Permissions.Policy(c.Memory.Enabled), c.Permissions.Tool("memory", "memory_recall"), nil, nil, true)
	if d.Verdict != policy.Deny {
		t.Errorf("memory_recall with memory off = %+v", d)
	}
}

func checkSync(t *testing.T, c Config, want audit.Sync) {
	t.Helper()
	if got := c.Audit.AuditOptions().Sync; got != want {
		t.Errorf("sync = %v, want %v", got, want)
	}
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "none.json"))
	if err != nil || c.Permissions.Mode != policy.ModeSmart {
		t.Errorf("load of a missing file = %+v, %v", c.Permissions.Mode, err)
	}
}
