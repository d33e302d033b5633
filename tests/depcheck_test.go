package tests

// The checker behind deps_test.go: DESIGN.md's dependency rules as functions
// of plain data (an import graph, a source file), so that synthetic input can
// prove each rule fires even while the trees it guards are still empty.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

const depModule = "github.com/domo-agent/domo"

// depPackage is the part of `go list -json` the rules read.
type depPackage struct {
	ImportPath   string
	Imports      []string // direct imports of the non-test files
	Deps         []string // everything the non-test build needs, transitively
	TestImports  []string // direct imports of the package's _test.go files
	XTestImports []string // direct imports of its external (_test package) tests
	Error        *struct{ Err string }
}

// depViolation is one broken rule: From imports or calls To.
type depViolation struct {
	From, To, Rule string
}

func (v depViolation) String() string {
	return fmt.Sprintf("%s -> %s: %s", v.From, v.To, v.Rule)
}

const (
	ruleServersHost   = "servers never import the host"
	ruleServerServer  = "one server never imports another (servers/internal is the shared code)"
	ruleHostServers   = "the host reaches servers only through MCP, never by importing them"
	ruleSelfContained = "policy and audit import nothing else from this module"
	rulePolicyIO      = "policy does no I/O"
	ruleCallTool      = "only host/toolgate calls CallTool"
	rulePolicyClock   = "policy reads no clock and prints nothing: time and output are passed in"
)

// depRule is one import rule. forbid receives module-relative paths for the
// module's own packages (local) and plain import paths otherwise.
type depRule struct {
	name       string
	transitive bool // Deps count, not only direct imports
	tests      bool // imports of _test.go files count
	forbid     func(from, to string, local bool) bool
}

var depRules = []depRule{
	{
		name: ruleServersHost, transitive: true, tests: true,
		forbid: func(from, to string, local bool) bool {
			return depUnder(from, "servers") && local && depUnder(to, "host")
		},
	},
	{
		name: ruleServerServer, transitive: true, tests: true,
		forbid: func(from, to string, local bool) bool {
			a, b := depServer(from), depServer(to)
			return a != "" && local && b != "" && b != "internal" && a != b
		},
	},
	{
		// Host tests may start a server in-process; host code may not.
		name: ruleHostServers, transitive: true, tests: false,
		forbid: func(from, to string, local bool) bool {
			return depUnder(from, "host") && local && depUnder(to, "servers")
		},
	},
	{
		name: ruleSelfContained, transitive: true, tests: true,
		forbid: func(from, to string, local bool) bool {
			for _, tree := range []string{"policy", "audit"} {
				if depUnder(from, tree) && local && !depUnder(to, tree) {
					return true
				}
			}
			return false
		},
	},
	{
		// Direct imports only: fmt and strconv import os themselves.
		name: rulePolicyIO, transitive: false, tests: false,
		forbid: func(from, to string, local bool) bool {
			return depUnder(from, "policy") && !local && depIsIO(to)
		},
	},
}

// depIOPackages are the packages (and trees) whose purpose is I/O with the
// outside world: files, processes, network, logs. depPureNet are the
// exceptions in net/ that only parse values.
var (
	depIOPackages = []string{
		"os", "io/ioutil", "io/fs", "syscall", "net", "log",
		"database/sql", "plugin", "golang.org/x/sys",
	}
	depPureNet = []string{"net/url", "net/netip"}
)

func depIsIO(p string) bool {
	if slices.Contains(depPureNet, p) {
		return false
	}
	return slices.ContainsFunc(depIOPackages, func(io string) bool { return depUnder(p, io) })
}

// depRel returns p relative to the module, and whether p is in the module.
func depRel(p string) (string, bool) {
	if p == depModule {
		return "", true
	}
	rel, ok := strings.CutPrefix(p, depModule+"/")
	return rel, ok
}

// depUnder reports whether slash-separated path p is tree or inside it.
func depUnder(p, tree string) bool {
	return p == tree || strings.HasPrefix(p, tree+"/")
}

// depServer names the servers/ subtree a module-relative path is in
// ("files" for servers/files/cmd/domo-files), or "" outside servers/.
func depServer(rel string) string {
	r, ok := strings.CutPrefix(rel, "servers/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(r, "/")
	return name
}

// depCheck applies depRules to the module's packages.
func depCheck(pkgs []depPackage) []depViolation {
	var out []depViolation
	seen := map[depViolation]bool{}
	for _, p := range pkgs {
		from, ok := depRel(p.ImportPath)
		if !ok {
			continue
		}
		for _, r := range depRules {
			edges := slices.Clone(p.Imports)
			if r.transitive {
				edges = append(edges, p.Deps...)
			}
			if r.tests {
				edges = append(edges, p.TestImports...)
				edges = append(edges, p.XTestImports...)
			}
			for _, to := range edges {
				target, local := depRel(to)
				if !local {
					target = to
				}
				v := depViolation{From: p.ImportPath, To: to, Rule: r.name}
				if !seen[v] && r.forbid(from, target, local) {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// depCallToolAllowed lists where CallTool may appear outside test files:
// the permission client itself, and test helpers that drive servers
// in-process or end to end.
var depCallToolAllowed = []string{
	"host/toolgate",
	"servers/internal/mcpkit/mcpkittest",
	"tests",
}

// depPolicyForbiddenCalls are the package functions policy code must not
// call, keyed by import path.
var depPolicyForbiddenCalls = map[string][]string{
	"time": {"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"},
	"fmt":  {"Print", "Printf", "Println"},
}

// depScanFile reports the forbidden calls in one non-test source file; rel is
// its module-relative, slash-separated path. Names are matched syntactically:
// any selector .CallTool, whatever its receiver, so toolgate's own entry point
// must not be called CallTool.
func depScanFile(rel string, src []byte) ([]depViolation, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(rel)
	callToolOK := slices.ContainsFunc(depCallToolAllowed, func(tree string) bool { return depUnder(dir, tree) })
	inPolicy := depUnder(dir, "policy")

	// Local names of the imports whose calls policy must not make.
	forbidden := map[string][]string{}
	if inPolicy {
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			names, ok := depPolicyForbiddenCalls[p]
			if !ok {
				continue
			}
			local := path.Base(p)
			if imp.Name != nil {
				local = imp.Name.Name
			}
			forbidden[local] = names
		}
	}

	var out []depViolation
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		at := fmt.Sprintf("%s:%d", rel, fset.Position(sel.Pos()).Line)
		if sel.Sel.Name == "CallTool" && !callToolOK {
			out = append(out, depViolation{From: at, To: "." + sel.Sel.Name, Rule: ruleCallTool})
		}
		if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(forbidden[x.Name], sel.Sel.Name) {
			out = append(out, depViolation{From: at, To: x.Name + "." + sel.Sel.Name, Rule: rulePolicyClock})
		}
		return true
	})
	return out, nil
}

// depScanTree runs depScanFile over the module's non-test Go files under
// root, skipping what the go command skips (testdata, dot and underscore
// directories, nested modules) and node_modules. It returns how many files
// it read.
func depScanTree(root string) ([]depViolation, int, error) {
	var out []depViolation
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p == root {
				return nil
			}
			if name == "testdata" || name == "node_modules" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		vs, err := depScanFile(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		files++
		out = append(out, vs...)
		return nil
	})
	return out, files, err
}
