//go:build unix

// Package voicetest gives domo-voice's tests and benchmarks real audio on
// a machine with no sound card: a private PulseAudio server with a null
// sink (16 kHz mono) whose monitor is the default source, so what is
// played into the sink is what a microphone hears. It also speaks text
// with espeak-ng, plays into the sink and records its monitor.
package voicetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// Sink is the null sink's name; its monitor is Sink+".monitor".
const Sink = "test_sink"

// Pulse is a running private PulseAudio server.
type Pulse struct {
	Runtime string // its XDG_RUNTIME_DIR
	Server  string // PULSE_SERVER for clients
	// Env holds the variables that point a process at this server.
	Env []string
	cmd *exec.Cmd
	log bytes.Buffer

	mu   sync.Mutex
	recs int // recordings of its own running
}

// New starts a PulseAudio server for one test, points the test's
// environment at it (XDG_RUNTIME_DIR, PULSE_SERVER) and stops it when the
// test ends.
func New(t testing.TB) *Pulse {
	t.Helper()
	Require(t)
	p, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return p
}

// Start starts a PulseAudio server whose runtime directory is under dir.
func Start(dir string) (*Pulse, error) {
	// The socket path must stay short (108 bytes).
	rt, err := os.MkdirTemp("", "domo-pa-")
	if err != nil {
		return nil, err
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	p := &Pulse{Runtime: rt, Server: "unix:" + filepath.Join(rt, "pulse", "native")}
	p.Env = []string{"XDG_RUNTIME_DIR=" + rt, "PULSE_SERVER=" + p.Server}
	p.cmd = exec.Command("pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
		"--disallow-module-loading=no", "--log-target=stderr",
		"-L", "module-native-protocol-unix auth-anonymous=1",
		"-L", "module-null-sink sink_name="+Sink+" rate=16000 channels=1 format=s16le",
	)
	p.cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+rt, "HOME="+home, "PULSE_SERVER=")
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(rt)
		return nil, fmt.Errorf("start pulseaudio: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := p.pactl("set-default-source", Sink+".monitor")
		if err == nil {
			err = p.pactl("set-default-sink", Sink)
		}
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) || p.cmd.ProcessState != nil {
			p.Close()
			return nil, fmt.Errorf("pulseaudio did not come up: %v\n%s", err, p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *Pulse) pactl(args ...string) error {
	cmd := exec.Command("pactl", args...)
	cmd.Env = append(os.Environ(), p.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pactl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Close stops the server.
func (p *Pulse) Close() {
	if p.cmd != nil && p.cmd.Process != nil {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	os.RemoveAll(p.Runtime)
}

// Play plays mono audio into the sink and returns when it has been played.
func (p *Pulse) Play(ctx context.Context, pcm []int16, rate int) error {
	f, err := os.CreateTemp("", "domo-play-*.wav")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := wav.Encode(f, pcm, rate); err != nil {
		f.Close()
		return err
	}
	f.Close()
	cmd := exec.CommandContext(ctx, "paplay", "--device="+Sink, f.Name())
	cmd.Env = append(os.Environ(), p.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("paplay: %w: %s", err, out)
	}
	return nil
}

// Recording says whether a client other than this package's recordings is
// capturing: the program under test has opened the microphone.
func (p *Pulse) Recording() bool {
	cmd := exec.Command("pactl", "list", "short", "source-outputs")
	cmd.Env = append(os.Environ(), p.Env...)
	out, err := cmd.Output()
	if err != nil {
		return false
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return n > p.recs
}

// Recording is the sink's monitor being recorded.
type Recording struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	buf   bytes.Buffer
	start time.Time
	done  chan struct{}
	p     *Pulse
}

func (r *Recording) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(b)
}

// Record starts recording what is played into the sink, 16 kHz mono.
func (p *Pulse) Record() (*Recording, error) {
	r := &Recording{done: make(chan struct{}), p: p}
	r.cmd = exec.Command("parecord", "--device="+Sink+".monitor", "--raw", "--rate=16000", "--channels=1",
		"--format=s16le", "--latency-msec=20")
	r.cmd.Env = append(os.Environ(), p.Env...)
	r.cmd.Stdout = r
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("parecord: %w", err)
	}
	r.start = time.Now()
	p.mu.Lock()
	p.recs++
	p.mu.Unlock()
	go func() {
		r.cmd.Wait()
		p.mu.Lock()
		p.recs--
		p.mu.Unlock()
		close(r.done)
	}()
	return r, nil
}

// Samples returns what was recorded so far.
func (r *Recording) Samples() []int16 {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buf.Bytes()
	out := make([]int16, len(b)/2)
	for i := range out {
		out[i] = int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8)
	}
	return out
}

// Stop ends the recording and returns all of it.
func (r *Recording) Stop() []int16 {
	r.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-r.done:
	case <-time.After(3 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
	}
	return r.Samples()
}
