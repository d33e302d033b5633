//go:build linux

package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/voice/voicetest"
	"github.com/domo-agent/domo/servers/voice/wav"
	"github.com/domo-agent/domo/tests/testenv"
)

var voiceTools = []string{
	"voice_converse", "voice_list_devices", "voice_listen", "voice_speak", "voice_status",
	"voice_transcribe_file", "voice_wait_for_wake_word",
}

// TestVoiceInspector checks domo-voice's tools with the MCP Inspector's
// strict schema checks over stdio.
func TestVoiceInspector(t *testing.T) {
	bin := testenv.Binary(t, "domo-voice")
	out, code := inspect(t, []string{bin}, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\n%s", code, out)
	}
	if names := toolNames(t, out); !slices.Equal(names, voiceTools) {
		t.Errorf("tools = %v\nwant %v", names, voiceTools)
	}
}

// TestVoiceNoAudioDevice runs domo-voice where the sound system offers no
// device at all: every tool that needs one says so clearly, none hangs,
// and transcribing a file still works.
func TestVoiceNoAudioDevice(t *testing.T) {
	voicetest.Require(t, "pocketsphinx_continuous")
	bin := testenv.Binary(t, "domo-voice")
	if b, err := os.ReadFile("/proc/asound/cards"); err == nil && !strings.Contains(string(b), "no soundcards") && strings.TrimSpace(string(b)) != "" {
		t.Skipf("this machine has sound cards, so it cannot show domo-voice without any:\n%s", b)
	}
	dir := t.TempDir()
	// No sound card, and no PulseAudio or JACK server answers: as on a
	// server, or a desktop whose sound server is not running.
	env := []string{
		"HOME=" + dir, "XDG_RUNTIME_DIR=" + dir, "PULSE_SERVER=unix:" + filepath.Join(dir, "no-pulse"),
		"PATH=" + os.Getenv("PATH"),
	}
	c, err := client.NewStdioMCPClient(bin, env)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "voice-test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	sent, rate, err := voicetest.Speech("switch on the hall lights")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "speech.wav")
	if err := os.WriteFile(file, wav.Bytes(sent, rate), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		isError bool
		want    string
	}{
		{"voice_speak", map[string]any{"text": "Hello."}, true, "no audio output device"},
		{"voice_listen", map[string]any{"wait_seconds": 2}, true, "no audio input device"},
		{"voice_converse", map[string]any{"message": "Are you there?"}, true, "no audio output device"},
		{"voice_wait_for_wake_word", map[string]any{"phrase": "hey computer", "timeout": 2}, true, "no audio input device"},
		{"voice_list_devices", map[string]any{}, false, "No sound devices"},
		{"voice_status", map[string]any{}, false, "no devices"},
		{"voice_transcribe_file", map[string]any{"path": file}, false, ""},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name = tc.tool
			req.Params.Arguments = tc.args
			callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			res, err := c.CallTool(callCtx, req)
			if err != nil {
				t.Fatalf("%s: %v (a hang shows as a deadline error)", tc.tool, err)
			}
			text := ""
			for _, ct := range res.Content {
				if tc, ok := ct.(mcp.TextContent); ok {
					text += tc.Text
				}
			}
			t.Logf("%s: %s", tc.tool, text)
			if res.IsError != tc.isError || !strings.Contains(text, tc.want) {
				t.Errorf("%s: got %q (error %v), want error=%v with %q", tc.tool, text, res.IsError, tc.isError, tc.want)
			}
		})
	}
}
