package voice

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
	"github.com/domo-agent/domo/servers/voice/audio"
)

// Backend is how one speech engine stands.
type Backend struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Status is what voice_status returns.
type Status struct {
	// Audio says whether this build has PortAudio.
	Audio       bool           `json:"audio"`
	Devices     []audio.Device `json:"devices"`
	DeviceError string         `json:"device_error,omitempty"`
	Input       string         `json:"input"`
	Output      string         `json:"output"`
	STT         []Backend      `json:"speech_to_text"`
	TTS         []Backend      `json:"text_to_speech"`
	Wake        Backend        `json:"wake_phrase"`
	LastError   string         `json:"last_error,omitempty"`
	LastErrorAt string         `json:"last_error_at,omitempty"`
}

// checker is what every engine offers for a status check.
type checker interface {
	Name() string
	Check(ctx context.Context) error
}

// Status checks every engine at once, each bounded by a short timeout.
func (v *Voice) Status(ctx context.Context) Status {
	st := Status{Audio: audio.Available, Input: orDefault(v.o.Input), Output: orDefault(v.o.Output)}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	check := func(list []checker) []Backend {
		out := make([]Backend, len(list))
		var wg sync.WaitGroup
		for i, c := range list {
			wg.Go(func() {
				out[i] = Backend{Name: c.Name(), OK: true}
				if err := c.Check(ctx); err != nil {
					out[i].OK, out[i].Error = false, err.Error()
				}
			})
		}
		wg.Wait()
		return out
	}
	var stts, ttss []checker
	for _, t := range v.o.STT {
		stts = append(stts, t)
	}
	for _, t := range v.o.TTS {
		ttss = append(ttss, t)
	}
	var wg sync.WaitGroup
	wg.Go(func() { st.STT = check(stts) })
	wg.Go(func() { st.TTS = check(ttss) })
	wg.Go(func() {
		if v.o.Sphinx == nil {
			st.Wake = Backend{Name: "pocketsphinx", Error: "not installed"}
			return
		}
		st.Wake = check([]checker{v.o.Sphinx})[0]
	})
	if err := audio.Refresh(); err != nil {
		st.DeviceError = err.Error()
	} else if devs, err := audio.Devices(); err != nil {
		st.DeviceError = err.Error()
	} else {
		st.Devices = devs
		if len(devs) == 0 {
			st.DeviceError = "the sound system offers no devices (is PulseAudio or PipeWire running for this user?)"
		}
	}
	if st.Devices == nil {
		st.Devices = []audio.Device{}
	}
	wg.Wait()
	if st.STT == nil {
		st.STT = []Backend{}
	}
	if st.TTS == nil {
		st.TTS = []Backend{}
	}
	if msg, at := v.LastError(); msg != "" {
		st.LastError, st.LastErrorAt = msg, at.UTC().Format(time.RFC3339)
	}
	return st
}

func (s *Server) statusTool() mcpkit.Tool {
	return mcpkit.NewTool("voice_status",
		"Show whether speaking and listening can work now: the sound devices, each speech engine and whether it answers, and the last error.",
		reads,
		func(ctx context.Context, _ mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			st := s.v.Status(ctx)
			return mcpkit.Structured(statusText(st), st), nil
		},
		mcpkit.Title("Voice status"), mcpkit.Output[Status](nil))
}

func statusText(st Status) string {
	var b strings.Builder
	switch {
	case !st.Audio:
		b.WriteString("Sound devices: unavailable: " + audio.ErrUnavailable.Error() + "\n")
	case st.DeviceError != "":
		b.WriteString("Sound devices: " + st.DeviceError + "\n")
	default:
		var ins, outs []string
		for _, d := range st.Devices {
			if d.Inputs > 0 {
				ins = append(ins, fmt.Sprintf("%q", d.Name))
			}
			if d.Outputs > 0 {
				outs = append(outs, fmt.Sprintf("%q", d.Name))
			}
		}
		fmt.Fprintf(&b, "Sound devices: input %q of [%s]; output %q of [%s]\n", st.Input, strings.Join(ins, ", "), st.Output, strings.Join(outs, ", "))
	}
	line := func(kind string, list []Backend) {
		if len(list) > 1 {
			kind += " (in failover order)"
		}
		if len(list) == 0 {
			fmt.Fprintf(&b, "%s: none configured\n", kind)
			return
		}
		var parts []string
		for _, be := range list {
			if be.OK {
				parts = append(parts, be.Name+" ok")
			} else {
				parts = append(parts, be.Name+" failing: "+be.Error)
			}
		}
		fmt.Fprintf(&b, "%s: %s\n", kind, strings.Join(parts, "; "))
	}
	line("Speech to text", st.STT)
	line("Text to speech", st.TTS)
	line("Wake phrase", []Backend{st.Wake})
	if st.LastError != "" {
		fmt.Fprintf(&b, "Last error (%s): %s\n", st.LastErrorAt, st.LastError)
	}
	return b.String()
}
