package tests

// Enforces the dependency rules of DESIGN.md ("Layout and dependency
// direction") on the real tree, and proves on synthetic input that each rule
// still catches a violation while host/, policy/ and audit/ are empty.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/domo-agent/domo/tests/testenv"
)

func TestDependencyRules(t *testing.T) {
	pkgs := depGoList(t, testenv.ModuleRoot(t))
	// The servers tree exists from the start: if go list finds none of it,
	// the loader is broken and every rule below would pass vacuously.
	if !slices.ContainsFunc(pkgs, func(p depPackage) bool {
		rel, _ := depRel(p.ImportPath)
		return depUnder(rel, "servers")
	}) {
		t.Fatalf("go list found no package under servers/ among %d packages", len(pkgs))
	}
	for _, v := range depCheck(pkgs) {
		t.Error(v)
	}
}

func TestForbiddenCalls(t *testing.T) {
	vs, files, err := depScanTree(testenv.ModuleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("scanned no Go files")
	}
	for _, v := range vs {
		t.Error(v)
	}
}

// depGoList lists the module's packages with their imports.
func depGoList(t *testing.T, root string) []depPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,TestImports,XTestImports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []depPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p depPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		// A package that does not load may hide imports from the rules.
		if p.Error != nil && !strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestDepCheck(t *testing.T) {
	m := func(rel string) string { return depModule + "/" + rel }
	tests := []struct {
		name string
		pkgs []depPackage
		want []depViolation
	}{
		{
			name: "allowed edges",
			pkgs: []depPackage{
				{
					ImportPath:   m("servers/files"),
					Imports:      []string{"fmt", m("servers/internal/mcpkit"), "github.com/mark3labs/mcp-go/mcp"},
					Deps:         []string{"os", m("servers/internal/mcpkit")},
					XTestImports: []string{m("servers/files"), m("servers/internal/mcpkit/mcpkittest")},
				},
				{ImportPath: m("servers/files/cmd/domo-files"), Imports: []string{m("servers/files")}},
				{ImportPath: m("host/toolgate"), Imports: []string{m("policy"), m("audit"), m("host/mcpclient")}},
				{ImportPath: m("host/mcpclient"), Imports: []string{"github.com/mark3labs/mcp-go/client"}, TestImports: []string{m("servers/files")}},
				{ImportPath: m("policy"), Imports: []string{"time", "strings", "net/url", "path/filepath"}, Deps: []string{"os", "syscall"}, TestImports: []string{"os"}},
				{ImportPath: m("policy/intent"), Imports: []string{m("policy")}},
				{ImportPath: m("audit"), Imports: []string{"os", "crypto/sha256"}},
				{ImportPath: m("audit/query"), Imports: []string{m("audit")}, XTestImports: []string{m("audit/query")}},
				{ImportPath: "example.com/elsewhere", Imports: []string{m("host/agent")}},
			},
		},
		{
			name: "server imports the host",
			pkgs: []depPackage{{ImportPath: m("servers/files"), Imports: []string{m("host/config")}}},
			want: []depViolation{{m("servers/files"), m("host/config"), ruleServersHost}},
		},
		{
			name: "server reaches the host transitively",
			pkgs: []depPackage{{ImportPath: m("servers/web/cmd/domo-web"), Deps: []string{"fmt", m("host/llm")}}},
			want: []depViolation{{m("servers/web/cmd/domo-web"), m("host/llm"), ruleServersHost}},
		},
		{
			name: "server test imports the host",
			pkgs: []depPackage{{ImportPath: m("servers/internal/mcpkit"), XTestImports: []string{m("host/toolgate")}}},
			want: []depViolation{{m("servers/internal/mcpkit"), m("host/toolgate"), ruleServersHost}},
		},
		{
			name: "server imports another server",
			pkgs: []depPackage{{ImportPath: m("servers/browser"), Imports: []string{m("servers/web/extract")}}},
			want: []depViolation{{m("servers/browser"), m("servers/web/extract"), ruleServerServer}},
		},
		{
			name: "shared server code imports one server",
			pkgs: []depPackage{{ImportPath: m("servers/internal/mcpkit"), Deps: []string{m("servers/files")}}},
			want: []depViolation{{m("servers/internal/mcpkit"), m("servers/files"), ruleServerServer}},
		},
		{
			name: "host imports a server",
			pkgs: []depPackage{{ImportPath: m("host/agent"), Imports: []string{m("servers/memory")}}},
			want: []depViolation{{m("host/agent"), m("servers/memory"), ruleHostServers}},
		},
		{
			name: "policy and audit import the module",
			pkgs: []depPackage{
				{ImportPath: m("policy"), Imports: []string{m("audit")}},
				{ImportPath: m("audit"), Deps: []string{m("host/config")}},
				{ImportPath: m("audit/query"), TestImports: []string{m("tests/testenv")}},
			},
			want: []depViolation{
				{m("policy"), m("audit"), ruleSelfContained},
				{m("audit"), m("host/config"), ruleSelfContained},
				{m("audit/query"), m("tests/testenv"), ruleSelfContained},
			},
		},
		{
			name: "policy does I/O",
			pkgs: []depPackage{{ImportPath: m("policy/intent"), Imports: []string{"os", "os/exec", "net/http", "syscall", "log/slog", "io/ioutil", "time"}}},
			want: []depViolation{
				{m("policy/intent"), "os", rulePolicyIO},
				{m("policy/intent"), "os/exec", rulePolicyIO},
				{m("policy/intent"), "net/http", rulePolicyIO},
				{m("policy/intent"), "syscall", rulePolicyIO},
				{m("policy/intent"), "log/slog", rulePolicyIO},
				{m("policy/intent"), "io/ioutil", rulePolicyIO},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := depCheck(tt.pkgs)
			if !slices.Equal(got, tt.want) {
				t.Errorf("depCheck:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestDepScanFile(t *testing.T) {
	tests := []struct {
		name string
		rel  string
		src  string
		want []string // "line To"
	}{
		{
			name: "host package calls CallTool",
			rel:  "host/agent/loop.go",
			src:  "package agent\nfunc f(c client) {\n\tc.CallTool(nil, req)\n}\n",
			want: []string{"3 .CallTool"},
		},
		{
			name: "method value counts too",
			rel:  "host/mcpclient/pool.go",
			src:  "package mcpclient\nfunc f(c client) {\n\tcall := c.sess.CallTool\n\t_ = call\n}\n",
			want: []string{"3 .CallTool"},
		},
		{
			name: "server code calls CallTool",
			rel:  "servers/files/files.go",
			src:  "package files\nfunc f(c client) { c.CallTool(nil, nil) }\n",
			want: []string{"2 .CallTool"},
		},
		{
			name: "toolgate calls CallTool",
			rel:  "host/toolgate/gate.go",
			src:  "package toolgate\nfunc f(c client) { c.CallTool(nil, nil) }\n",
		},
		{
			name: "test helpers call CallTool",
			rel:  "servers/internal/mcpkit/mcpkittest/mcpkittest.go",
			src:  "package mcpkittest\nfunc f(c client) { c.CallTool(nil, nil) }\n",
		},
		{
			name: "black-box tests call CallTool",
			rel:  "tests/bench/main.go",
			src:  "package main\nfunc f(c client) { c.CallTool(nil, nil) }\n",
		},
		{
			name: "CallToolRequest is a type, not a call",
			rel:  "servers/files/tools.go",
			src:  "package files\nimport \"github.com/mark3labs/mcp-go/mcp\"\nfunc f(req mcp.CallToolRequest) {}\n",
		},
		{
			name: "policy reads the clock and prints",
			rel:  "policy/decide.go",
			src:  "package policy\nimport (\n\t\"fmt\"\n\tclock \"time\"\n)\nfunc f() {\n\t_ = clock.Now()\n\tfmt.Println(clock.Since(clock.Time{}))\n}\n",
			want: []string{"7 clock.Now", "8 fmt.Println", "8 clock.Since"},
		},
		{
			name: "policy takes time as a value",
			rel:  "policy/decide.go",
			src:  "package policy\nimport (\n\t\"fmt\"\n\t\"time\"\n)\nfunc f(now time.Time, d time.Duration) error {\n\treturn fmt.Errorf(\"at %v after %v\", now.Add(d), time.Second)\n}\n",
		},
		{
			name: "outside policy the clock is fine",
			rel:  "audit/writer.go",
			src:  "package audit\nimport \"time\"\nvar _ = time.Now()\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := depScanFile(tt.rel, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				_, line, _ := strings.Cut(v.From, ":")
				got = append(got, line+" "+v.To)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("depScanFile:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
