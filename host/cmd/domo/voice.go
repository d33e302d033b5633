package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/chat"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
)

// voiceServer is the server whose tools voice mode uses.
const voiceServer = "voice"

// What voice mode asks of the voice server.
const (
	listenSeconds = 30  // the longest one spoken message may be
	listenSilence = 800 // ms of silence that end it
	wakeSeconds   = 30  // one wait for the wake phrase; the chat asks again
)

// gateVoice is chat.Voice over the voice server's tools. Every call goes
// through the gate, as the model's would: the microphone group asks
// before the first listen, and each call is audited.
type gateVoice struct {
	sup  *mcpclient.Supervisor
	gate *toolgate.Gate
}

var _ chat.Voice = gateVoice{}

// voice returns the chat's voice, or nil and why there is none.
func (h *host) voice() (chat.Voice, string) {
	for _, st := range h.sup.Servers() {
		if st.Name != voiceServer {
			continue
		}
		switch st.State {
		case mcpclient.StateReady, mcpclient.StateRestarting:
		case mcpclient.StateAbsent:
			return nil, "domo-voice is not installed (go tool task build puts it in ./bin, next to domo)"
		case mcpclient.StateOff:
			return nil, `the voice server is disabled in the config ("disabled": true under mcpServers.voice)`
		default:
			return nil, "the voice server did not start: " + oneLine(firstLine(st.Err), 200)
		}
		v := gateVoice{sup: h.sup, gate: h.gate}
		for _, tool := range []string{"voice_listen", "voice_speak"} {
			if _, ok := v.toolName(tool); !ok {
				return nil, "the voice server has no " + tool
			}
		}
		return v, ""
	}
	return nil, `no voice server is configured: add "voice": {"command": "domo-voice"} to mcpServers (domo config edit)`
}

// toolName is the catalogue name of a voice tool.
func (v gateVoice) toolName(tool string) (string, bool) {
	return serverToolName(v.sup, voiceServer, tool)
}

// call runs one voice tool through the gate and decodes its structured
// content into out. A tool error, a denial or a failure is an error with
// the gate's text; a cancelled call is ctx's error.
func (v gateVoice) call(ctx context.Context, tool string, args map[string]any, running func(), progress func(mcpclient.Progress), out any) error {
	name, ok := v.toolName(tool)
	if !ok {
		return fmt.Errorf("the voice server is not running, or has no %s: /servers says why", tool)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res := v.gate.Call(ctx, toolgate.Call{Name: name, Args: b, Running: running, Progress: progress})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case res.Cancel:
		return context.Canceled
	case res.IsError || res.Status != audit.StatusOK:
		return errors.New(strings.TrimSpace(res.Text))
	case out == nil:
		return nil
	}
	raw, err := json.Marshal(res.Structured)
	if err != nil || res.Structured == nil {
		return fmt.Errorf("%s answered without structured content: %s", tool, oneLine(res.Text, 200))
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s answered in an unexpected shape: %w", tool, err)
	}
	return nil
}

// Listen runs voice_listen.
func (v gateVoice) Listen(ctx context.Context, heard func(string)) (string, error) {
	var got struct {
		Transcript string `json:"transcript"`
		Status     string `json:"status"`
		SpeechMS   int    `json:"speech_ms"`
		Backend    string `json:"backend"`
	}
	running, progress := func() {}, func(mcpclient.Progress) {}
	if heard != nil {
		running = func() { heard("") }
		progress = func(p mcpclient.Progress) {
			if p.Message != "" {
				heard(p.Message)
			}
		}
	}
	args := map[string]any{"max_seconds": listenSeconds, "silence_ms": listenSilence}
	if err := v.call(ctx, "voice_listen", args, running, progress, &got); err != nil {
		return "", err
	}
	text := strings.TrimSpace(got.Transcript)
	switch {
	case got.Status == "no_speech":
		return "", nil
	case text == "":
		return "", fmt.Errorf("heard %.1f s of sound, but %s made no words of it; try again, closer to the microphone", float64(got.SpeechMS)/1000, orNone(got.Backend))
	}
	return text, nil
}

// Speak runs voice_speak; cancelling ctx cancels the call, which stops
// the playback.
func (v gateVoice) Speak(ctx context.Context, text string) error {
	return v.call(ctx, "voice_speak", map[string]any{"text": text}, nil, nil, nil)
}

// WaitWake runs voice_wait_for_wake_word for up to wakeSeconds.
func (v gateVoice) WaitWake(ctx context.Context, phrase string, listening func()) (bool, error) {
	var got struct {
		Detected bool `json:"detected"`
	}
	args := map[string]any{"phrase": phrase, "timeout": wakeSeconds}
	if err := v.call(ctx, "voice_wait_for_wake_word", args, listening, nil, &got); err != nil {
		return false, err
	}
	return got.Detected, nil
}
