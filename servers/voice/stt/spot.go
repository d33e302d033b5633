package stt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/domo-agent/domo/servers/voice/wav"
)

// Spotter listens for a wake phrase in audio as it is captured.
type Spotter interface {
	// Write passes on captured audio, at the rate given to Spot.
	Write(pcm []int16) error
	// Detected yields the phrase each time it is heard. A detection the
	// caller has not taken when the next arrives is merged into it. The
	// channel closes when the spotter stops.
	Detected() <-chan string
	// Close stops listening and ends the program. It is idempotent.
	Close() error
}

// Spot starts pocketsphinx in keyphrase mode on a stream of audio at rate
// Hz; ctx bounds its life. phrase defaults to the configured Keyphrase;
// each of its words must be in the dictionary, or Spot fails with an
// *UnknownWordError before listening.
//
// pocketsphinx_continuous reads the stream from stdin as raw samples and
// says what it heard only when its voice detector ends an utterance. The
// spotter therefore passes it speech and holds back the silence in
// between, ending each stretch of speech with enough zeros for the
// program to end the utterance at once, instead of after the next sound.
func (s *Sphinx) Spot(ctx context.Context, phrase string, rate int) (Spotter, error) {
	if phrase == "" {
		phrase = s.cfg.Keyphrase
	}
	words := strings.Fields(strings.ToLower(phrase))
	if len(words) == 0 {
		return nil, errors.New("no wake phrase given; pick words pocketsphinx knows, e.g. \"hey computer\"")
	}
	if rate <= 0 {
		return nil, fmt.Errorf("sample rate %d is not positive", rate)
	}
	prog, err := s.program()
	if err != nil {
		return nil, err
	}
	if err := checkWords(s.dictPath(prog), words); err != nil {
		return nil, err
	}
	phrase = strings.Join(words, " ")
	args := append(s.modelArgs(),
		"-infile", "/dev/stdin",
		"-keyphrase", phrase,
		"-kws_threshold", formatFloat(s.cfg.Threshold))
	if s.cfg.PhoneLoop != 0 {
		args = append(args, "-kws_plp", formatFloat(s.cfg.PhoneLoop))
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.WaitDelay = time.Second
	sp := &sphinxSpotter{
		phrase:   phrase,
		rate:     rate,
		gate:     newGate(),
		detected: make(chan string, 4),
		done:     make(chan struct{}),
		closing:  make(chan struct{}),
		cmd:      cmd,
	}
	cmd.Stderr = &sp.log
	if sp.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting pocketsphinx: %w", err)
	}
	go sp.listen(ctx, stdout)
	return sp, nil
}

type sphinxSpotter struct {
	phrase   string
	rate     int
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	log      sphinxLog
	detected chan string
	done     chan struct{} // closed when the program has exited
	exitErr  error         // why, when it was not Close; set before done

	writeMu sync.Mutex // one Write at a time: gate and stdin
	gate    *gate
	buf     []byte

	closeOnce sync.Once
	closing   chan struct{}
}

var _ Spotter = (*sphinxSpotter)(nil)

func (sp *sphinxSpotter) Detected() <-chan string { return sp.detected }

// listen reads what the program heard, one utterance per line, until it
// exits, then reaps it.
func (sp *sphinxSpotter) listen(ctx context.Context, stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		select {
		case sp.detected <- sp.phrase:
		default:
		}
	}
	err := sp.cmd.Wait()
	switch {
	case ctx.Err() != nil:
		sp.exitErr = fmt.Errorf("wake phrase spotter stopped: %w", ctx.Err())
	case err == nil:
		sp.exitErr = sp.log.failure(errors.New("it exited"))
	default:
		sp.exitErr = sp.log.failure(err)
	}
	// done first: whoever sees Detected close finds Write failing.
	close(sp.done)
	close(sp.detected)
}

func (sp *sphinxSpotter) Write(pcm []int16) error {
	sp.writeMu.Lock()
	defer sp.writeMu.Unlock()
	select {
	case <-sp.done:
		if sp.stopped() {
			return errors.New("wake phrase spotter is closed")
		}
		return sp.exitErr
	default:
	}
	out := sp.gate.feed(wav.Resample(pcm, sp.rate, recognizerRate))
	if len(out) == 0 {
		return nil
	}
	sp.buf = sp.buf[:0]
	for _, v := range out {
		sp.buf = binary.LittleEndian.AppendUint16(sp.buf, uint16(v))
	}
	if _, err := sp.stdin.Write(sp.buf); err != nil {
		// Most likely the program died: wait a moment for its reason.
		select {
		case <-sp.done:
			if !sp.stopped() {
				return sp.exitErr
			}
		case <-time.After(time.Second):
		}
		return fmt.Errorf("feeding pocketsphinx: %w", err)
	}
	return nil
}

// stopped says whether Close was called.
func (sp *sphinxSpotter) stopped() bool {
	select {
	case <-sp.closing:
		return true
	default:
		return false
	}
}

// Close kills the program and waits until it is reaped.
func (sp *sphinxSpotter) Close() error {
	sp.closeOnce.Do(func() {
		close(sp.closing)
		_ = sp.cmd.Process.Kill()
		_ = sp.stdin.Close()
	})
	<-sp.done
	return nil
}

// The gate's timing, in 20 ms frames of 16 kHz audio.
const (
	gateFrame   = recognizerRate / 50
	gatePreRoll = 15 // speech starts a little before it is loud
	gateOnset   = 2  // loud frames in a row that start speech
	gateHang    = 20 // quiet frames in a row that end it
	// gateTail ends an utterance: more silence than the program's
	// -vad_postspeech (50 frames of 10 ms).
	gateTail = recognizerRate * 6 / 10
	// readBlock is how many samples pocketsphinx_continuous asks stdio for
	// at a time; it sees nothing of a partial block.
	readBlock = 2048
)

// gate tracks the noise floor and passes on only speech, each stretch
// followed by silence padded to the program's read size.
type gate struct {
	floor   float64 // dBFS
	active  bool
	run     int       // loud frames (inactive) or quiet frames (active) in a row
	pre     [][]int16 // recent frames, while inactive
	rest    []int16   // the start of the next frame
	written int64
}

func newGate() *gate { return &gate{floor: -70} }

// feed takes 16 kHz audio and returns what to pass on.
func (g *gate) feed(pcm []int16) []int16 {
	var out []int16
	g.rest = append(g.rest, pcm...)
	for len(g.rest) >= gateFrame {
		frame := g.rest[:gateFrame:gateFrame]
		g.rest = g.rest[gateFrame:]
		out = g.frame(frame, out)
	}
	g.rest = append([]int16(nil), g.rest...) // let the consumed part go
	g.written += int64(len(out))
	return out
}

func (g *gate) frame(frame []int16, out []int16) []int16 {
	db := wav.DBFS(frame)
	if db > -90 { // digital silence says nothing about the room
		if db < g.floor {
			g.floor += 0.2 * (db - g.floor)
		} else {
			g.floor += 0.01 // half a dB a second
		}
	}
	loud := db > max(g.floor+10, -55)
	if !g.active {
		g.pre = append(g.pre, frame)
		if len(g.pre) > gatePreRoll {
			g.pre = g.pre[1:]
		}
		if !loud {
			g.run = 0
			return out
		}
		if g.run++; g.run < gateOnset {
			return out
		}
		g.active, g.run = true, 0
		for _, f := range g.pre {
			out = append(out, f...)
		}
		g.pre = g.pre[:0]
		return out
	}
	out = append(out, frame...)
	if loud {
		g.run = 0
		return out
	}
	if g.run++; g.run < gateHang {
		return out
	}
	g.active, g.run = false, 0
	n := int64(gateTail)
	if r := (g.written + int64(len(out)) + n) % readBlock; r != 0 {
		n += readBlock - r
	}
	return append(out, make([]int16, n)...)
}
