package mcpkit_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

func testApp(t *testing.T) mcpkit.App {
	return mcpkit.App{
		Name:    "domo-test",
		Summary: "a test server",
		Args:    "[ARG]",
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			return testServer(t), nil
		},
	}
}

func TestRunFlags(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("  s3cret-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		usage     bool   // error wraps ErrUsage
		errText   string // error contains, when an error is expected
		outText   string // stdout contains, when no error is expected
		errStream string // stderr contains
	}{
		{name: "version", args: []string{"--version"}, outText: "domo-test " + mcpkit.Version},
		{name: "help", args: []string{"--help"}, errStream: "Usage: domo-test [flags] [ARG]"},
		{name: "list tools", args: []string{"--list-tools"}, outText: "echo"},
		{name: "unknown flag", args: []string{"--bogus"}, usage: true, errText: "bogus"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, usage: true, errText: "unknown --log-level"},
		{name: "http without token", args: []string{"--http", "127.0.0.1:0"}, usage: true, errText: "needs a bearer token"},
		{name: "no-auth off loopback", args: []string{"--http", "0.0.0.0:0", "--no-auth"}, usage: true, errText: "only allowed on a loopback address"},
		{name: "no-auth with token", args: []string{"--http", "127.0.0.1:0", "--no-auth", "--token-file", tokenFile}, usage: true, errText: "conflicts"},
		{name: "token flags without http", args: []string{"--no-auth"}, usage: true, errText: "only apply with --http"},
		{name: "missing token file", args: []string{"--http", "127.0.0.1:0", "--token-file", "/nonexistent/token"}, errText: "read token file"},
		{name: "empty token file", args: []string{"--http", "127.0.0.1:0", "--token-file", empty}, errText: "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DOMO_TOKEN", "")
			var stdout, stderr bytes.Buffer
			err := testApp(t).Run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			if tt.errText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.errText)
				}
				if errors.Is(err, mcpkit.ErrUsage) != tt.usage {
					t.Errorf("errors.Is(err, ErrUsage) = %v, want %v", !tt.usage, tt.usage)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(stdout.String(), tt.outText) {
				t.Errorf("stdout = %q, want %q", stdout.String(), tt.outText)
			}
			if !strings.Contains(stderr.String(), tt.errStream) {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.errStream)
			}
		})
	}
}

func TestRunStdio(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"word":"ab","times":2}}}`,
	}, "\n") + "\n"
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := testApp(t).Run(ctx, nil, strings.NewReader(in), &stdout, &stderr); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(stdout.String(), `"text":"abab"`) {
		t.Errorf("stdout = %s, want the echo result", stdout.String())
	}
	if strings.Contains(stdout.String(), "level=") {
		t.Errorf("logs leaked to stdout: %s", stdout.String())
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestRunHTTPAuth(t *testing.T) {
	const token = "correct-horse-battery-staple"
	t.Setenv("DOMO_TOKEN", token)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- testApp(t).Run(ctx, []string{"--http", addr}, strings.NewReader(""), io.Discard, io.Discard)
	}()
	url := "http://" + addr + "/mcp"
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(5 * time.Second)
	for post("Bearer "+token) == -1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	tests := []struct {
		name string
		auth string
		want int
	}{
		{name: "right token", auth: "Bearer " + token, want: http.StatusOK},
		{name: "no header", auth: "", want: http.StatusUnauthorized},
		{name: "wrong token", auth: "Bearer nope", want: http.StatusUnauthorized},
		{name: "token prefix", auth: "Bearer " + token[:5], want: http.StatusUnauthorized},
		{name: "basic scheme", auth: "Basic " + token, want: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := post(tt.auth); got != tt.want {
				t.Errorf("status = %d, want %d", got, tt.want)
			}
		})
	}
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Run did not return after its context was cancelled")
	}
}
