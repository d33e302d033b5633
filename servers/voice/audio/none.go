//go:build !cgo || noportaudio

package audio

import "context"

// Available reports whether this build can use sound devices at all.
const Available = false

// Refresh re-reads the device list.
func Refresh() error { return ErrUnavailable }

// Devices lists the sound devices.
func Devices() ([]Device, error) { return nil, ErrUnavailable }

// Input captures 16 kHz mono audio from one device in 20 ms frames.
type Input struct{}

// OpenInput starts capturing from the input device named name.
func OpenInput(name string) (*Input, error) { return nil, ErrUnavailable }

// Device names the device being captured.
func (in *Input) Device() string { return "" }

// Read returns the next frame.
func (in *Input) Read(ctx context.Context) ([]int16, error) { return nil, ErrUnavailable }

// Close stops capturing.
func (in *Input) Close() error { return nil }

// Output plays mono audio at a fixed rate on one device.
type Output struct{}

// OpenOutput opens the output device named name for mono audio at rate Hz.
func OpenOutput(name string, rate int) (*Output, error) { return nil, ErrUnavailable }

// Device names the device played on.
func (o *Output) Device() string { return "" }

// Rate is the rate Write expects.
func (o *Output) Rate() int { return 0 }

// Write plays pcm.
func (o *Output) Write(ctx context.Context, pcm []int16) error { return ErrUnavailable }

// Drain waits until what was written has been played.
func (o *Output) Drain(ctx context.Context) error { return nil }

// Stop drops what has not been played yet.
func (o *Output) Stop() error { return nil }

// Close frees the device.
func (o *Output) Close() error { return nil }
