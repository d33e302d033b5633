package voicetest

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// Speech speaks text with espeak-ng into memory: mono samples at its rate
// (22050 Hz).
func Speech(text string, args ...string) ([]int16, int, error) {
	cmd := exec.Command("espeak-ng", append(append([]string{"--stdout"}, args...), text)...)
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("espeak-ng: %w", err)
	}
	pcm, rate, err := wav.Decode(bytes.NewReader(out))
	if err != nil {
		return nil, 0, err
	}
	if len(pcm) == 0 {
		return nil, 0, errors.New("espeak-ng produced no audio")
	}
	return pcm, rate, nil
}

// Voiced returns how much of pcm, in 20 ms frames, is louder than -40 dBFS:
// speech, not silence or hiss.
func Voiced(pcm []int16, rate int) time.Duration {
	frame := rate / 50
	var n int
	for i := 0; i+frame <= len(pcm); i += frame {
		if wav.DBFS(pcm[i:i+frame]) > -40 {
			n++
		}
	}
	return time.Duration(n) * 20 * time.Millisecond
}
