package tests

// Keeps configs/domo/permissions.json true to the servers: every tool a Domo
// server lists has an explicit group and risk, no entry names a tool that is
// gone, and a risk never claims less than the tool's own annotations.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/configs"
	"github.com/domo-agent/domo/policy"
	"github.com/domo-agent/domo/tests/testenv"
)

// domoServers are the six servers of DESIGN.md; the catalog covers them all,
// built or not.
var domoServers = []string{"files", "memory", "web", "browser", "ax", "voice"}

// catalogServerArgs are the arguments a server needs to start and to list
// every tool it can offer. A server that offers some tool only behind a flag
// (browser_evaluate, say) must get that flag here, or its catalog entry looks
// stale.
var catalogServerArgs = map[string]func(t *testing.T) []string{
	"files":   func(t *testing.T) []string { return []string{t.TempDir()} },
	"browser": func(t *testing.T) []string { return []string{"--enable-evaluate"} },
}

// permissionsFile is the shape of configs/domo/permissions.json.
type permissionsFile struct {
	Mode    policy.Mode                   `json:"mode"`
	Groups  map[string]policy.GroupPolicy `json:"groups"`
	Intents map[string][]string           `json:"intents"`
	Catalog map[string]catalogEntry       `json:"catalog"`
}

type catalogEntry struct {
	Group string      `json:"group"`
	Risk  policy.Risk `json:"risk"`
}

// listedTool is what a running server says about one of its tools.
type listedTool struct {
	Name        string
	ReadOnly    *bool // nil: not stated
	Destructive *bool
}

func newListedTool(t mcp.Tool) listedTool {
	return listedTool{Name: t.Name, ReadOnly: t.Annotations.ReadOnlyHint, Destructive: t.Annotations.DestructiveHint}
}

func parsePermissions(b []byte) (permissionsFile, error) {
	var p permissionsFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("parse permissions: %w", err)
	}
	return p, nil
}

// checkPermissions reports what is wrong with the file on its own: values
// policy would not recognise, groups without a policy, catalog keys that
// name no Domo server, servers without entries. Entries of servers not built
// yet are checked here only.
func checkPermissions(p permissionsFile) []string {
	var out []string
	cfg := policy.Config{Mode: p.Mode, Groups: p.Groups, Intents: p.Intents, IntentMode: true}
	if err := cfg.Validate(); err != nil {
		out = append(out, err.Error())
	}
	if p.Mode == "" {
		out = append(out, "no mode: state the default mode explicitly")
	}
	for name, groups := range p.Intents {
		for _, g := range groups {
			if _, ok := p.Groups[g]; !ok {
				out = append(out, fmt.Sprintf("intent %s: group %s has no policy in groups", name, g))
			}
		}
	}
	covered := map[string]bool{}
	for key := range p.Catalog {
		server, tool, ok := strings.Cut(key, "/")
		if !ok || tool == "" || !slices.Contains(domoServers, server) {
			out = append(out, fmt.Sprintf("catalog key %q is not server/tool with server one of %s", key, strings.Join(domoServers, ", ")))
			continue
		}
		covered[server] = true
		e := p.Catalog[key]
		if _, ok := p.Groups[e.Group]; !ok {
			out = append(out, fmt.Sprintf("%s: group %q has no policy in groups", key, e.Group))
		}
		if !validRisk(e.Risk) {
			out = append(out, fmt.Sprintf("%s: unknown risk %q (want safe, caution, dangerous or destructive)", key, e.Risk))
		}
	}
	for _, s := range domoServers {
		if !covered[s] {
			out = append(out, fmt.Sprintf("catalog has no tool of server %s", s))
		}
	}
	slices.Sort(out)
	return out
}

// checkCatalog compares the catalog's entries for server with the tools the
// server lists. Unstated annotations take the MCP defaults: not read-only,
// and destructive unless read-only.
func checkCatalog(p permissionsFile, server string, tools []listedTool) []string {
	var out []string
	listed := map[string]bool{}
	for _, tool := range tools {
		key := server + "/" + tool.Name
		listed[key] = true
		e, ok := p.Catalog[key]
		if !ok {
			out = append(out, fmt.Sprintf("%s: not in the catalog; add its group and risk", key))
			continue
		}
		if _, ok := p.Groups[e.Group]; !ok {
			out = append(out, fmt.Sprintf("%s: group %q has no policy in groups", key, e.Group))
		}
		if !validRisk(e.Risk) {
			out = append(out, fmt.Sprintf("%s: unknown risk %q (want safe, caution, dangerous or destructive)", key, e.Risk))
		}
		readOnly := tool.ReadOnly != nil && *tool.ReadOnly
		destructive := tool.Destructive == nil && !readOnly || tool.Destructive != nil && *tool.Destructive
		if destructive && e.Risk != policy.RiskDestructive {
			out = append(out, fmt.Sprintf("%s: annotated destructive but mapped %s", key, e.Risk))
		}
		if e.Risk == policy.RiskSafe && !readOnly {
			out = append(out, fmt.Sprintf("%s: mapped safe but not annotated read-only", key))
		}
	}
	for key := range p.Catalog {
		if strings.HasPrefix(key, server+"/") && !listed[key] {
			out = append(out, fmt.Sprintf("%s: in the catalog but domo-%s does not list it", key, server))
		}
	}
	slices.Sort(out)
	return out
}

func validRisk(r policy.Risk) bool {
	return slices.Contains([]policy.Risk{policy.RiskSafe, policy.RiskCaution, policy.RiskDangerous, policy.RiskDestructive}, r)
}

func TestPermissionsFile(t *testing.T) {
	p, err := parsePermissions(configs.Permissions)
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range checkPermissions(p) {
		t.Error(problem)
	}
}

// builtServers finds the servers that exist as servers/<name>/cmd/domo-<name>.
func builtServers(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(testenv.ModuleRoot(t), "servers", "*", "cmd", "domo-*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range dirs {
		name := strings.TrimPrefix(filepath.Base(d), "domo-")
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || filepath.Base(filepath.Dir(filepath.Dir(d))) != name {
			continue
		}
		names = append(names, name)
	}
	return names
}

func TestCatalogMatchesServers(t *testing.T) {
	p, err := parsePermissions(configs.Permissions)
	if err != nil {
		t.Fatal(err)
	}
	servers := builtServers(t)
	// files exists from the start: finding none means discovery is broken
	// and the check below would pass vacuously.
	if !slices.Contains(servers, "files") {
		t.Fatalf("found no servers/files/cmd/domo-files among %v", servers)
	}
	for _, server := range servers {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			tools := listServerTools(t, server)
			if len(tools) == 0 {
				t.Fatalf("domo-%s lists no tools", server)
			}
			for _, problem := range checkCatalog(p, server, tools) {
				t.Error(problem)
			}
		})
	}
}

// listServerTools starts domo-<server> over stdio and lists its tools.
func listServerTools(t *testing.T, server string) []listedTool {
	t.Helper()
	bin := testenv.Binary(t, "domo-"+server)
	var args []string
	if f, ok := catalogServerArgs[server]; ok {
		args = f(t)
	}
	// Keep whatever state a server creates out of the user's home.
	state := t.TempDir()
	env := []string{
		"XDG_CONFIG_HOME=" + filepath.Join(state, "config"),
		"XDG_DATA_HOME=" + filepath.Join(state, "data"),
		"XDG_STATE_HOME=" + filepath.Join(state, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(state, "cache"),
	}
	c, err := client.NewStdioMCPClient(bin, env, args...)
	if err != nil {
		t.Fatalf("start domo-%s: %v", server, err)
	}
	t.Cleanup(func() { c.Close() })
	stderr := func() string {
		r, ok := client.GetStderr(c)
		if !ok {
			return ""
		}
		b, _ := io.ReadAll(r)
		return string(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "domo-catalog-test", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize domo-%s %s: %v\nstderr:\n%s", server, strings.Join(args, " "), err, stderr())
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("list the tools of domo-%s: %v\nstderr:\n%s", server, err, stderr())
	}
	tools := make([]listedTool, 0, len(res.Tools))
	for _, tool := range res.Tools {
		tools = append(tools, newListedTool(tool))
	}
	return tools
}

func TestCheckCatalog(t *testing.T) {
	yes, no := new(true), new(false)
	perms := permissionsFile{
		Mode:   policy.ModeSmart,
		Groups: map[string]policy.GroupPolicy{"files.read": policy.PolicyAlways, "files.write": policy.PolicyAsk},
		Catalog: map[string]catalogEntry{
			"files/read":   {"files.read", policy.RiskSafe},
			"files/delete": {"files.write", policy.RiskDestructive},
			"web/fetch":    {"web", policy.RiskCaution}, // another server's: never stale here
		},
	}
	read := listedTool{Name: "read", ReadOnly: yes, Destructive: no}
	del := listedTool{Name: "delete", ReadOnly: no, Destructive: yes}
	with := func(key string, e catalogEntry) permissionsFile {
		p := perms
		p.Catalog = map[string]catalogEntry{key: e}
		for k, v := range perms.Catalog {
			if k != key {
				p.Catalog[k] = v
			}
		}
		return p
	}
	tests := []struct {
		name  string
		perms permissionsFile
		tools []listedTool
		want  []string
	}{
		{name: "matches", perms: perms, tools: []listedTool{read, del}},
		{
			name: "missing tool", perms: perms,
			tools: []listedTool{read, del, {Name: "write", ReadOnly: no, Destructive: no}},
			want:  []string{"files/write: not in the catalog; add its group and risk"},
		},
		{
			name: "stale entry", perms: perms, tools: []listedTool{read},
			want: []string{"files/delete: in the catalog but domo-files does not list it"},
		},
		{
			name: "bad group", perms: with("files/read", catalogEntry{"files.reed", policy.RiskSafe}), tools: []listedTool{read, del},
			want: []string{`files/read: group "files.reed" has no policy in groups`},
		},
		{
			name: "bad risk", perms: with("files/read", catalogEntry{"files.read", "harmless"}), tools: []listedTool{read, del},
			want: []string{`files/read: unknown risk "harmless" (want safe, caution, dangerous or destructive)`},
		},
		{
			name: "destructive tool mapped lower", perms: with("files/delete", catalogEntry{"files.write", policy.RiskDangerous}), tools: []listedTool{read, del},
			want: []string{"files/delete: annotated destructive but mapped dangerous"},
		},
		{
			name: "safe tool that writes", perms: with("files/delete", catalogEntry{"files.write", policy.RiskSafe}),
			tools: []listedTool{read, {Name: "delete", ReadOnly: no, Destructive: no}},
			want:  []string{"files/delete: mapped safe but not annotated read-only"},
		},
		{
			name: "unstated hints are destructive", perms: with("files/read", catalogEntry{"files.read", policy.RiskCaution}),
			tools: []listedTool{{Name: "read"}, del},
			want:  []string{"files/read: annotated destructive but mapped caution"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkCatalog(tt.perms, "files", tt.tools); !slices.Equal(got, tt.want) {
				t.Errorf("checkCatalog =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestCheckPermissions(t *testing.T) {
	catalog := map[string]catalogEntry{}
	for _, s := range domoServers {
		catalog[s+"/t"] = catalogEntry{"g", policy.RiskSafe}
	}
	good := permissionsFile{
		Mode:    policy.ModeSmart,
		Groups:  map[string]policy.GroupPolicy{"g": policy.PolicyAsk},
		Intents: map[string][]string{"i": {"g"}},
		Catalog: catalog,
	}
	tests := []struct {
		name string
		edit func(p *permissionsFile)
		want []string
	}{
		{name: "good", edit: func(p *permissionsFile) {}},
		{name: "bad mode", edit: func(p *permissionsFile) { p.Mode = "yolo" },
			want: []string{`unknown permission mode "yolo" (want manual, smart or auto)`}},
		{name: "no mode", edit: func(p *permissionsFile) { p.Mode = "" },
			want: []string{"no mode: state the default mode explicitly"}},
		{name: "bad group policy", edit: func(p *permissionsFile) { p.Groups = map[string]policy.GroupPolicy{"g": "sometimes"} },
			want: []string{`group g: unknown policy "sometimes" (want off, ask or always)`}},
		{name: "intent group without policy", edit: func(p *permissionsFile) { p.Intents = map[string][]string{"i": {"g", "h"}} },
			want: []string{"intent i: group h has no policy in groups"}},
		{name: "catalog group without policy, risk unknown", edit: func(p *permissionsFile) {
			p.Catalog = maps.Clone(catalog)
			p.Catalog["voice/t"] = catalogEntry{"voice", "loud"}
		}, want: []string{
			`voice/t: group "voice" has no policy in groups`,
			`voice/t: unknown risk "loud" (want safe, caution, dangerous or destructive)`,
		}},
		{name: "no intents", edit: func(p *permissionsFile) { p.Intents = nil },
			want: []string{"intent mode is on but no intents are configured"}},
		{name: "unknown server", edit: func(p *permissionsFile) {
			p.Catalog = map[string]catalogEntry{"shell/run": {"g", policy.RiskDestructive}}
			for _, s := range domoServers {
				p.Catalog[s+"/t"] = catalogEntry{"g", policy.RiskSafe}
			}
		}, want: []string{`catalog key "shell/run" is not server/tool with server one of files, memory, web, browser, ax, voice`}},
		{name: "server without entries", edit: func(p *permissionsFile) {
			p.Catalog = map[string]catalogEntry{"files/t": {"g", policy.RiskSafe}}
		}, want: []string{
			"catalog has no tool of server ax", "catalog has no tool of server browser", "catalog has no tool of server memory",
			"catalog has no tool of server voice", "catalog has no tool of server web",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			tt.edit(&p)
			if got := checkPermissions(p); !slices.Equal(got, tt.want) {
				t.Errorf("checkPermissions =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}
