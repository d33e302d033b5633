//go:build cgo && !noportaudio

package audio

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gordonklaus/portaudio"
)

// pa guards PortAudio: it is initialised once and re-initialised, to see
// devices that came or went, only while no stream is open.
var pa struct {
	sync.Mutex
	ready bool
	open  int // streams open
}

// Available reports whether this build can use sound devices at all.
const Available = true

func initLocked() error {
	if pa.ready {
		return nil
	}
	var err error
	quiet(func() { err = portaudio.Initialize() })
	if err != nil {
		return fmt.Errorf("start PortAudio: %w", err)
	}
	pa.ready = true
	return nil
}

// Refresh re-reads the device list, as after a device was plugged in or
// lost. It does nothing while a stream is open.
func Refresh() error {
	pa.Lock()
	defer pa.Unlock()
	if pa.open > 0 || !pa.ready {
		return initLocked()
	}
	quiet(func() { portaudio.Terminate() })
	pa.ready = false
	return initLocked()
}

// Devices lists the sound devices.
func Devices() ([]Device, error) {
	pa.Lock()
	defer pa.Unlock()
	if err := initLocked(); err != nil {
		return nil, err
	}
	devs, _, err := devicesLocked()
	return devs, err
}

func devicesLocked() ([]Device, []*portaudio.DeviceInfo, error) {
	infos, err := portaudio.Devices()
	if err != nil {
		return nil, nil, fmt.Errorf("list audio devices: %w", err)
	}
	defIn, _ := portaudio.DefaultInputDevice()
	defOut, _ := portaudio.DefaultOutputDevice()
	devs := make([]Device, len(infos))
	for i, d := range infos {
		devs[i] = Device{
			Name: d.Name, Inputs: d.MaxInputChannels, Outputs: d.MaxOutputChannels, DefaultRate: d.DefaultSampleRate,
			DefaultInput: defIn != nil && d == defIn, DefaultOutput: defOut != nil && d == defOut,
		}
		if d.HostApi != nil {
			devs[i].HostAPI = d.HostApi.Name
		}
	}
	return devs, infos, nil
}

// lookupLocked finds a device for input or output by name.
func lookupLocked(name string, input bool) (*portaudio.DeviceInfo, error) {
	if err := initLocked(); err != nil {
		return nil, err
	}
	devs, infos, err := devicesLocked()
	if err != nil {
		return nil, err
	}
	d, err := pick(devs, name, input)
	if err != nil {
		return nil, err
	}
	for i := range devs {
		if devs[i] == d {
			return infos[i], nil
		}
	}
	return nil, noDevice("input")
}

// Input captures 16 kHz mono audio from one device in 20 ms frames.
type Input struct {
	name   string
	stream *portaudio.Stream
	frames chan []int16
	errc   chan error
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	got    bool
}

// OpenInput starts capturing from the input device named name ("" for the
// default).
func OpenInput(name string) (*Input, error) {
	pa.Lock()
	defer pa.Unlock()
	dev, err := lookupLocked(name, true)
	if err != nil {
		return nil, err
	}
	buf := make([]int16, FrameSamples)
	p := portaudio.LowLatencyParameters(dev, nil)
	p.Input.Channels = 1
	p.SampleRate = Rate
	p.FramesPerBuffer = FrameSamples
	var s *portaudio.Stream
	quiet(func() { s, err = portaudio.OpenStream(p, buf) })
	if err != nil {
		return nil, fmt.Errorf("%w: open input device %q: %w", ErrDeviceLost, dev.Name, err)
	}
	if err := s.Start(); err != nil {
		s.Close()
		return nil, fmt.Errorf("start input device %q: %w", dev.Name, err)
	}
	pa.open++
	in := &Input{
		name: dev.Name, stream: s,
		frames: make(chan []int16, 100), errc: make(chan error, 1),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	go in.run(buf)
	return in, nil
}

// Device names the device being captured.
func (in *Input) Device() string { return in.name }

func (in *Input) run(buf []int16) {
	defer close(in.done)
	for {
		select {
		case <-in.stop:
			return
		default:
		}
		err := in.stream.Read()
		if err != nil && !errors.Is(err, portaudio.InputOverflowed) {
			in.errc <- fmt.Errorf("%w: read from %q: %w", ErrDeviceLost, in.name, err)
			return
		}
		select {
		case in.frames <- append([]int16(nil), buf...):
		case <-in.stop:
			return
		}
	}
}

// Read returns the next frame. A device that delivers nothing for too
// long counts as lost.
func (in *Input) Read(ctx context.Context) ([]int16, error) {
	wait := stallWait
	if !in.got {
		wait = firstFrameWait
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case f := <-in.frames:
		in.got = true
		return f, nil
	case err := <-in.errc:
		return nil, err
	case <-t.C:
		return nil, fmt.Errorf("%w: %q delivered no audio for %s", ErrDeviceLost, in.name, wait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops capturing.
func (in *Input) Close() error {
	in.once.Do(func() {
		close(in.stop)
		// A running device answers a read within a frame; aborting under a
		// read makes PortAudio complain on standard error, so that is only
		// for a device that hangs.
		select {
		case <-in.done:
			in.stream.Stop()
		case <-time.After(500 * time.Millisecond):
			in.stream.Abort()
			select {
			case <-in.done:
			case <-time.After(2 * time.Second):
				// The read is stuck inside PortAudio: closing the stream or
				// re-initialising under it could crash, so the stream is
				// left open and counted as such.
				return
			}
		}
		in.stream.Close()
		pa.Lock()
		pa.open--
		pa.Unlock()
	})
	return nil
}

// Output plays mono audio at a fixed rate on one device.
type Output struct {
	name    string
	rate    int
	stream  *portaudio.Stream
	buf     []int16
	running bool
	once    sync.Once
	// started is when the first frame was written, written how many.
	started time.Time
	written int
}

// OpenOutput opens the output device named name ("" for the default) for
// mono audio at rate Hz; it starts playing at the first Write.
func OpenOutput(name string, rate int) (*Output, error) {
	pa.Lock()
	defer pa.Unlock()
	dev, err := lookupLocked(name, false)
	if err != nil {
		return nil, err
	}
	o := &Output{name: dev.Name, rate: rate, buf: make([]int16, rate/50)}
	p := portaudio.HighLatencyParameters(nil, dev)
	p.Output.Channels = 1
	p.SampleRate = float64(rate)
	p.FramesPerBuffer = len(o.buf)
	quiet(func() { o.stream, err = portaudio.OpenStream(p, o.buf) })
	if err != nil {
		// A device gone since the list was read is still in it: the
		// caller re-reads the list and tries again.
		return nil, fmt.Errorf("%w: open output device %q: %w", ErrDeviceLost, dev.Name, err)
	}
	pa.open++
	return o, nil
}

// Device names the device played on.
func (o *Output) Device() string { return o.name }

// Rate is the rate Write expects.
func (o *Output) Rate() int { return o.rate }

// Write plays pcm, returning once the device has taken it (about one
// buffer ahead of what is heard). It checks ctx every 20 ms.
func (o *Output) Write(ctx context.Context, pcm []int16) error {
	if !o.running {
		if err := o.stream.Start(); err != nil {
			return fmt.Errorf("%w: start %q: %w", ErrDeviceLost, o.name, err)
		}
		o.running = true
		o.started, o.written = time.Now(), 0
	}
	o.written += len(pcm)
	for len(pcm) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := copy(o.buf, pcm)
		clear(o.buf[n:])
		pcm = pcm[n:]
		if err := o.stream.Write(); err != nil && !errors.Is(err, portaudio.OutputUnderflowed) {
			return fmt.Errorf("%w: play on %q: %w", ErrDeviceLost, o.name, err)
		}
		// Stay at most lead ahead of the clock: a sound server may take
		// seconds of audio at once, which stopping then drops, and which
		// a listener's "stop" would have to wait out.
		if ahead := o.queued() - lead; ahead > 0 {
			select {
			case <-time.After(ahead):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// lead is how far playback may run ahead of the clock.
const lead = 200 * time.Millisecond

// queued is how much written audio has not had time to play yet.
func (o *Output) queued() time.Duration {
	audio := time.Duration(o.written) * time.Second / time.Duration(o.rate)
	return audio - time.Since(o.started)
}

// Drain waits until what was written has had time to play, then stops
// the stream until the next Write. PortAudio's own stop does not wait for
// PulseAudio through ALSA, which has taken seconds of audio into its
// buffer, and drops what it has not played.
func (o *Output) Drain(ctx context.Context) error {
	if !o.running {
		return nil
	}
	wait := o.queued()
	if info := o.stream.Info(); info != nil {
		wait += min(info.OutputLatency, 500*time.Millisecond)
	}
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return o.Stop()
		}
	}
	o.running = false
	return o.stream.Stop()
}

// Stop drops what has not been played yet.
func (o *Output) Stop() error {
	if !o.running {
		return nil
	}
	o.running = false
	return o.stream.Abort()
}

// Close stops playing at once and frees the device.
func (o *Output) Close() error {
	o.once.Do(func() {
		o.Stop()
		o.stream.Close()
		pa.Lock()
		pa.open--
		pa.Unlock()
	})
	return nil
}
