package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/tests/testenv"
)

// These tests drive domo-files with a real third-party client, the MCP
// Inspector CLI from npm, over stdio and over Streamable HTTP.

func TestMain(m *testing.M) { testenv.Main(m) }

var filesTools = []string{
	"create_directory", "delete_file", "directory_tree", "edit_file", "get_file_info",
	"grep_files", "list_allowed_directories", "list_directory", "move_file",
	"read_media_file", "read_multiple_files", "read_text_file", "search_files", "write_file",
}

// inspect runs the Inspector CLI against target with args and returns its
// standard output and exit code.
func inspect(t *testing.T, target []string, args ...string) (string, int) {
	t.Helper()
	argv := append(testenv.Inspector(t), target...)
	argv = append(argv, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), 0
	case errors.As(err, &exit):
		return stdout.String() + stderr.String(), exit.ExitCode()
	}
	t.Fatalf("run inspector: %v\n%s", err, stderr.String())
	return "", -1
}

// filesFixture is a directory to serve, with a few files in it.
func filesFixture(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"notes.txt":       "alpha\nbeta\ngamma\n",
		"src/main.go":     "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"src/util/x.go":   "package util\n",
		"docs/readme.md":  "# Readme\n",
		"old/remove.txt":  "bye\n",
		"pixel.png":       string(tinyPNG),
		"logs/ignore.log": "noise\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

type toolCall struct {
	tool string
	args string // JSON, with DIR standing for the served directory
	want string // the output contains this
}

// everyTool calls each tool once, in an order in which every call is valid.
func everyTool() []toolCall {
	return []toolCall{
		{"list_allowed_directories", `{}`, "DIR"},
		{"read_text_file", `{"path":"DIR/notes.txt","head":2}`, `alpha\nbeta\n`},
		{"read_media_file", `{"path":"DIR/pixel.png"}`, `"mimeType":"image/png"`},
		{"read_multiple_files", `{"paths":["DIR/notes.txt","src/main.go"]}`, "println"},
		{"write_file", `{"path":"DIR/new.txt","content":"one\ntwo\n"}`, "new.txt"},
		{"edit_file", `{"path":"DIR/new.txt","edits":[{"old_text":"two","new_text":"three"}]}`, "+three"},
		{"create_directory", `{"path":"DIR/made/deeper"}`, "made"},
		{"list_directory", `{"path":"DIR","sort_by":"size"}`, "notes.txt"},
		{"directory_tree", `{"path":"DIR","max_depth":2,"exclude":["logs"]}`, "main.go"},
		{"move_file", `{"source":"DIR/new.txt","destination":"DIR/made/moved.txt"}`, "moved.txt"},
		{"delete_file", `{"path":"DIR/old","recursive":true}`, "old"},
		{"search_files", `{"path":"DIR","pattern":"*.go"}`, "x.go"},
		{"grep_files", `{"path":"DIR","pattern":"print\\w+","include":["*.go"]}`, "main.go:4:"},
		{"get_file_info", `{"path":"DIR/made/moved.txt"}`, "moved.txt"},
	}
}

func checkToolList(t *testing.T, out string) {
	t.Helper()
	var list struct {
		Result struct {
			Tools []struct {
				Name        string         `json:"name"`
				Annotations map[string]any `json:"annotations"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
		SchemaFindings []any `json:"schemaFindings"`
	}
	if err := json.Unmarshal([]byte(firstJSONLine(out)), &list); err != nil {
		t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
	}
	for _, f := range list.SchemaFindings {
		t.Errorf("the Inspector finds a schema portability problem: %v", f)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
		for _, hint := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := tool.Annotations[hint].(bool); !ok {
				t.Errorf("tool %s does not state %s", tool.Name, hint)
			}
		}
		if tool.InputSchema["type"] != "object" {
			t.Errorf("tool %s input schema type = %v", tool.Name, tool.InputSchema["type"])
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, filesTools) {
		t.Errorf("tools = %v\nwant %v", names, filesTools)
	}
}

func firstJSONLine(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "{") {
			return line
		}
	}
	return out
}

func callEveryTool(t *testing.T, target []string, dir string) {
	t.Helper()
	for _, c := range everyTool() {
		args := strings.ReplaceAll(c.args, "DIR", dir)
		out, code := inspect(t, target, "--method", "tools/call", "--tool-name", c.tool, "--tool-args-json", args)
		if code != 0 {
			t.Errorf("%s %s: exit %d\n%s", c.tool, args, code, out)
			continue
		}
		if want := strings.ReplaceAll(c.want, "DIR", dir); !strings.Contains(out, want) {
			t.Errorf("%s %s: output lacks %q\n%s", c.tool, args, want, out)
		}
	}
	// A refused call is an isError result, which the Inspector reports
	// with exit code 5, not a broken connection.
	out, code := inspect(t, target, "--method", "tools/call", "--tool-name", "read_text_file", "--tool-arg", "path=/etc/passwd")
	if code != 5 || !strings.Contains(out, "outside the allowed directories") {
		t.Errorf("reading /etc/passwd: exit %d, want 5 with a clear message\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "made/moved.txt")); err != nil {
		t.Errorf("the calls did not leave made/moved.txt behind: %v", err)
	}
}

func TestInspectorStdio(t *testing.T) {
	bin := testenv.Binary(t, "domo-files")
	dir := filesFixture(t)
	target := []string{bin, dir}
	out, code := inspect(t, target, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\n%s", code, out)
	}
	checkToolList(t, out)
	callEveryTool(t, target, dir)
}

func TestInspectorHTTP(t *testing.T) {
	bin := testenv.Binary(t, "domo-files")
	dir := filesFixture(t)
	const token = "an-http-test-token-1234567890"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := startHTTPServer(t, bin, "--http", "127.0.0.1:0", "--token-file", tokenFile, dir)
	url := "http://" + addr + "/mcp"
	authed := []string{"--transport", "http", "--server-url", url, "--header", "Authorization: Bearer " + token}

	out, code := inspect(t, authed, "--method", "tools/list")
	if code != 0 {
		t.Fatalf("tools/list over HTTP: exit %d\n%s", code, out)
	}
	checkToolList(t, out)
	callEveryTool(t, authed, dir)

	for name, header := range map[string][]string{
		"no token":    nil,
		"wrong token": {"--header", "Authorization: Bearer wrong"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--transport", "http", "--server-url", url}, header...)
			out, code := inspect(t, args, "--method", "tools/list")
			if code == 0 || strings.Contains(out, "read_text_file") {
				t.Errorf("an unauthenticated client was served: exit %d\n%s", code, out)
			}
		})
	}
}

// startHTTPServer starts the server binary and returns the address it
// listens on, read from its log line.
func startHTTPServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	// Pick a free port; the server binds it right after.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for i, a := range args {
		if a == "127.0.0.1:0" {
			args[i] = addr
		}
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("server did not stop on SIGINT; stderr:\n%s", stderr.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("server did not listen on %s; stderr:\n%s", addr, stderr.String())
	return ""
}

func TestHTTPRefusesToStartWithoutToken(t *testing.T) {
	bin := testenv.Binary(t, "domo-files")
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no token", args: []string{"--http", "127.0.0.1:0", dir}, want: "needs a bearer token"},
		{name: "no-auth on all interfaces", args: []string{"--http", "0.0.0.0:0", "--no-auth", dir}, want: "only allowed on a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(os.Environ(), "DOMO_TOKEN=")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), tt.want) {
				t.Errorf("err = %v, output:\n%s\nwant exit 2 and %q", err, out, tt.want)
			}
		})
	}
}
