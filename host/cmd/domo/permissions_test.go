package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type permissionsOut struct {
	Mode   string            `json:"mode"`
	Groups map[string]string `json:"groups"`
	Tools  []toolRow         `json:"tools"`
}

func listPermissions(t *testing.T, config string) permissionsOut {
	t.Helper()
	out, errOut, code := domo(t, "--config", config, "permissions", "--json")
	if code != 0 {
		t.Fatalf("permissions: exit %d: %s", code, errOut)
	}
	var p permissionsOut
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p permissionsOut) tool(name string) toolRow {
	for _, r := range p.Tools {
		if r.Tool == name {
			return r
		}
	}
	return toolRow{}
}

func TestPermissionsListsEveryKnownTool(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.json")
	p := listPermissions(t, config)
	if p.Mode != "smart" || len(p.Tools) < 40 {
		t.Fatalf("mode %q with %d tools", p.Mode, len(p.Tools))
	}
	read := p.tool("files/read_text_file")
	if read.Group != "files.read" || read.Risk != "safe" || read.Decision != "allow" || read.Rule == "" {
		t.Errorf("files/read_text_file = %+v", read)
	}
	del := p.tool("files/delete_file")
	if del.Risk != "destructive" || del.Decision != "ask" || !strings.Contains(del.Rule, "destructive") {
		t.Errorf("files/delete_file = %+v", del)
	}
	out, _, _ := domo(t, "--config", config, "permissions")
	for _, want := range []string{"mode smart", "TOOL", "GROUP", "files/read_text_file", "destructive tools always ask"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

func TestPermissionsSetKeepsTheRestOfTheFile(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	orig := `{
  "mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}},
  "llm": {"base_url": "http://localhost:11434/v1", "model": "qwen3"},
  "permissions": {"x-note": "mine", "groups": {"web": "ask"}},
  "zzz-unknown": [1, 2, {"a": null}]
}`
	if err := os.WriteFile(config, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	steps := [][]string{
		{"permissions", "set", "files.write", "always"},
		{"permissions", "set", "browser", "off"},
		{"permissions", "set", "github/create_issue", "ask"},
		{"permissions", "set", "mcp.github", "always"},
		{"permissions", "mode", "auto"},
	}
	for _, s := range steps {
		if out, errOut, code := domo(t, append([]string{"--config", config}, s...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s%s", s, code, out, errOut)
		}
	}
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	json.Unmarshal([]byte(`{
  "mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}},
  "llm": {"base_url": "http://localhost:11434/v1", "model": "qwen3"},
  "permissions": {"x-note": "mine", "groups": {"web": "ask", "files.write": "always", "browser": "off", "mcp.github": "always"},
                  "tools": {"github/create_issue": "ask"}, "mode": "auto"},
  "zzz-unknown": [1, 2, {"a": null}]
}`), &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("config after the changes:\n%s\nwant the same fields as\n%v", b, want)
	}
	// Keys keep their order: the person's file still reads the same way.
	if i, j := strings.Index(string(b), "mcpServers"), strings.Index(string(b), "zzz-unknown"); i < 0 || j < i {
		t.Errorf("keys were reordered:\n%s", b)
	}
	if fi, _ := os.Stat(config); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}

	p := listPermissions(t, config)
	if p.Mode != "auto" {
		t.Errorf("mode = %s", p.Mode)
	}
	if r := p.tool("browser/browser_click"); r.Decision != "deny" || !strings.Contains(r.Rule, "off") {
		t.Errorf("browser tool with the group off = %+v", r)
	}
	if r := p.tool("github/create_issue"); r.Group != "mcp.github" || r.Risk != "dangerous" || r.Decision != "allow" {
		t.Errorf("a third-party tool named in an override = %+v", r)
	}
	if r := p.tool("files/delete_file"); r.Decision != "ask" {
		t.Errorf("destructive tool in auto mode with its group always = %+v", r)
	}

	// "default" removes a tool's own policy.
	if _, errOut, code := domo(t, "--config", config, "permissions", "set", "github/create_issue", "default"); code != 0 {
		t.Fatal(errOut)
	}
	if b, _ := os.ReadFile(config); strings.Contains(string(b), "create_issue") {
		t.Errorf("the override is still there:\n%s", b)
	}
}

func TestPermissionsSetThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "domo.json")
	os.MkdirAll(filepath.Dir(real), 0o700)
	os.WriteFile(real, []byte(`{"llm": {"model": "x"}}`), 0o600)
	link := filepath.Join(dir, "config.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := domo(t, "--config", link, "permissions", "set", "web", "off"); code != 0 {
		t.Fatal(errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), `"web": "off"`) || !strings.Contains(string(b), `"model": "x"`) {
		t.Errorf("the target holds:\n%s", b)
	}
}

func TestPermissionsConcurrentSetsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	// Half the edits go through a symlink: the lock must cover both ways.
	link := filepath.Join(dir, "link.json")
	os.Symlink(config, link)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			path := config
			if i%2 == 1 {
				path = link
			}
			if _, errOut, code := domo(t, "--config", path, "permissions", "set", fmt.Sprintf("s%d/tool", i), "off"); code != 0 {
				t.Error(errOut)
			}
		})
	}
	wg.Wait()
	b, _ := os.ReadFile(config)
	for i := range n {
		if !strings.Contains(string(b), fmt.Sprintf(`"s%d/tool": "off"`, i)) {
			t.Errorf("set %d was lost:\n%s", i, b)
		}
	}
}

func TestPermissionsRefusesABrokenConfig(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(config, []byte(`{"permissions": {"mode": "yolo"}}`), 0o600)
	_, errOut, code := domo(t, "--config", config, "permissions")
	if code != 1 || !strings.Contains(errOut, "yolo") || !strings.Contains(errOut, "config.json") {
		t.Errorf("exit %d: %s; want an error naming the file and the value", code, errOut)
	}
	os.WriteFile(config, []byte(`{"permissions": `), 0o600)
	before, _ := os.ReadFile(config)
	_, _, code = domo(t, "--config", config, "permissions", "mode", "auto")
	after, _ := os.ReadFile(config)
	if code == 0 || string(before) != string(after) {
		t.Errorf("a set over invalid JSON: exit %d, file now %q", code, after)
	}
}

func TestConfigImportAndShow(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	os.WriteFile(config, []byte(`{"llm": {"model": "qwen3"}}`), 0o600)
	vscode := filepath.Join(dir, "mcp.json")
	os.WriteFile(vscode, []byte(`{
  // VS Code allows comments and trailing commas
  "servers": {
    "everything": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:token}"}},
  },
  "inputs": [{"id": "token", "type": "promptString", "password": true}]
}`), 0o600)
	out, errOut, code := domo(t, "--config", config, "config", "import", vscode)
	if code != 0 || !strings.Contains(out, "added: everything, github") || !strings.Contains(out, "${input:") {
		t.Fatalf("import (exit %d): %s%s", code, out, errOut)
	}
	out, _, code = domo(t, "--config", config, "config", "import", vscode)
	if code != 0 || !strings.Contains(out, "kept (already configured") {
		t.Errorf("second import (exit %d): %s", code, out)
	}
	var shown struct {
		MCPServers map[string]struct {
			Command string
			URL     string
			Headers map[string]string
		}
		LLM struct{ Model string }
	}
	out, _, _ = domo(t, "--config", config, "config", "show")
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err, out)
	}
	// Domo's own servers were kept, the imported ones added.
	for _, name := range []string{"files", "memory", "everything", "github"} {
		if _, ok := shown.MCPServers[name]; !ok {
			t.Errorf("server %s missing after import: %v", name, shown.MCPServers)
		}
	}
	if shown.LLM.Model != "qwen3" || strings.Contains(out, "Bearer") {
		t.Errorf("show: model %q; headers must be masked:\n%s", shown.LLM.Model, out)
	}
	if _, errOut, code := domo(t, "--config", config, "config", "import", config+".missing"); code != 1 || !strings.Contains(errOut, "read") {
		t.Errorf("import of a missing file: %d %s", code, errOut)
	}
	notMCP := filepath.Join(dir, "other.json")
	os.WriteFile(notMCP, []byte(`{"editor.fontSize": 14}`), 0o600)
	if _, errOut, code := domo(t, "--config", config, "config", "import", notMCP); code != 1 || !strings.Contains(errOut, "no servers found") {
		t.Errorf("import of a non-MCP file: %d %s", code, errOut)
	}
	if out, _, _ := domo(t, "--config", config, "config", "path"); strings.TrimSpace(out) != config {
		t.Errorf("config path = %q", out)
	}
}

func TestConfigSavingEdgeCases(t *testing.T) {
	dir := t.TempDir()
	// A dangling link: the file it names is created, the link kept.
	os.MkdirAll(filepath.Join(dir, "dot"), 0o700)
	link := filepath.Join(dir, "link.json")
	os.Symlink(filepath.Join("dot", "config.json"), link)
	if _, errOut, code := domo(t, "--config", link, "permissions", "mode", "manual"); code != 0 {
		t.Fatal(errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "dot", "config.json")); err != nil || !strings.Contains(string(b), "manual") {
		t.Errorf("the link's target: %s %v", b, err)
	}

	// Other fields keep their characters: no HTML escaping.
	config := filepath.Join(dir, "config.json")
	os.WriteFile(config, []byte(`{"llm": {"base_url": "http://h:1/v1?a=1&b=<2>"}}`), 0o600)
	domo(t, "--config", config, "permissions", "set", "web", "ask")
	if b, _ := os.ReadFile(config); !strings.Contains(string(b), "a=1&b=<2>") {
		t.Errorf("the URL was rewritten:\n%s", b)
	}

	// A duplicate key is refused rather than guessed at.
	os.WriteFile(config, []byte(`{"permissions": {"mode": "auto"}, "permissions": {"mode": "auto"}}`), 0o600)
	if _, errOut, code := domo(t, "--config", config, "permissions", "mode", "manual"); code == 0 || !strings.Contains(errOut, "appears twice") {
		t.Errorf("set over a duplicate key: exit %d, %s", code, errOut)
	}

	// "default" on a tool without a policy of its own changes nothing.
	os.WriteFile(config, []byte(`{}`), 0o600)
	out, _, code := domo(t, "--config", config, "permissions", "set", "files/delete_file", "default")
	if b, _ := os.ReadFile(config); code != 0 || !strings.Contains(out, "no policy of its own") || string(b) != "{}" {
		t.Errorf("default without an override: %s, file %s", out, b)
	}
}
