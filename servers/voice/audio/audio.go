// Package audio is domo-voice's microphone and speakers: device listing,
// 16 kHz mono capture in 20 ms frames, and playback, through PortAudio.
// It knows nothing of speech; what it hears and plays is plain samples.
//
// Built without cgo or with the noportaudio tag, every call reports
// ErrUnavailable, so the rest of domo-voice still builds and says why.
package audio

import (
	"errors"
	"strings"
	"time"
)

// Rate is the capture rate: what speech recognisers want.
const Rate = 16000

// FrameSamples is one capture frame: 20 ms at Rate.
const FrameSamples = Rate / 50

// Device is one sound device as PortAudio sees it.
type Device struct {
	Name          string  `json:"name"`
	HostAPI       string  `json:"host_api"`
	Inputs        int     `json:"max_input_channels"`
	Outputs       int     `json:"max_output_channels"`
	DefaultRate   float64 `json:"default_sample_rate"`
	DefaultInput  bool    `json:"default_input,omitempty"`
	DefaultOutput bool    `json:"default_output,omitempty"`
}

var (
	// ErrUnavailable: this build has no PortAudio.
	ErrUnavailable = errors.New("domo-voice was built without audio support (PortAudio): install portaudio19-dev and pkg-config, then rebuild")
	// ErrNoDevice: no device of the kind asked for exists.
	ErrNoDevice = errors.New("no audio device")
	// ErrDeviceLost: the device stopped working while in use.
	ErrDeviceLost = errors.New("audio device lost")
)

// pick finds the device named name among devs for input or output: an
// exact name first, then a case-insensitive substring when it is unique.
// An empty name is the default device.
func pick(devs []Device, name string, input bool) (Device, error) {
	usable := func(d Device) bool {
		if input {
			return d.Inputs > 0
		}
		return d.Outputs > 0
	}
	kind := "output"
	if input {
		kind = "input"
	}
	var names []string
	for _, d := range devs {
		if usable(d) {
			names = append(names, d.Name)
		}
	}
	if len(names) == 0 {
		return Device{}, noDevice(kind)
	}
	if name == "" || name == "default" {
		for _, d := range devs {
			if usable(d) && (input && d.DefaultInput || !input && d.DefaultOutput) {
				return d, nil
			}
		}
		// Some hosts name a default device but mark none as default.
		for _, d := range devs {
			if usable(d) && d.Name == "default" {
				return d, nil
			}
		}
		if name == "" {
			for _, d := range devs {
				if usable(d) {
					return d, nil
				}
			}
		}
	}
	for _, d := range devs {
		if usable(d) && d.Name == name {
			return d, nil
		}
	}
	var found []Device
	for _, d := range devs {
		if usable(d) && strings.Contains(strings.ToLower(d.Name), strings.ToLower(name)) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Device{}, &DeviceError{Kind: kind, Name: name, Known: names}
	default:
		var amb []string
		for _, d := range found {
			amb = append(amb, d.Name)
		}
		return Device{}, &DeviceError{Kind: kind, Name: name, Known: amb, Ambiguous: true}
	}
}

func noDevice(kind string) error {
	return &DeviceError{Kind: kind}
}

// DeviceError says which device could not be found, and which exist.
type DeviceError struct {
	Kind      string // input or output
	Name      string
	Known     []string
	Ambiguous bool
}

func (e *DeviceError) Error() string {
	switch {
	case e.Name == "":
		return "no audio " + e.Kind + " device: the sound system offers none (is PulseAudio or PipeWire running for this user, and may it use the " + map[string]string{"input": "microphone", "output": "speakers"}[e.Kind] + "?)"
	case e.Ambiguous:
		return e.Kind + " device name " + quote(e.Name) + " matches several devices: " + strings.Join(quoteAll(e.Known), ", ") + "; give the whole name"
	default:
		return "no " + e.Kind + " device named " + quote(e.Name) + "; " + e.Kind + " devices: " + strings.Join(quoteAll(e.Known), ", ")
	}
}

func (e *DeviceError) Unwrap() error { return ErrNoDevice }

func quote(s string) string { return `"` + s + `"` }

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

// firstFrameWait bounds the wait for a stream's first frame: PulseAudio
// through ALSA takes 1.3–1.8 s to start one.
const firstFrameWait = 5 * time.Second

// stallWait is how long a running capture may deliver nothing before the
// device counts as lost.
const stallWait = 2 * time.Second
