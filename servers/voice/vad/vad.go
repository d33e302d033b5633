// Package vad finds where speech starts and ends in a stream of audio
// frames (end-pointing): an energy detector over an adaptive noise floor,
// with pre-roll so the first syllable is kept, a silence hang-over so a
// pause does not cut a sentence, and bounds on length. It does no I/O.
package vad

import (
	"math"
	"time"
)

// Config tunes the end-pointer. Zero fields take the defaults.
type Config struct {
	// Rate is the sample rate of the frames (default 16000).
	Rate int
	// Silence is the hang-over: this much quiet after speech ends the
	// utterance (default 800 ms).
	Silence time.Duration
	// MinSpeech is the shortest sound taken for speech; shorter bursts
	// (a click, a cough) are ignored (default 150 ms).
	MinSpeech time.Duration
	// Max ends an utterance that runs this long (default 30 s).
	Max time.Duration
	// PreRoll is the audio kept from before speech was detected (default
	// 300 ms).
	PreRoll time.Duration
	// Wait ends the listening when no speech starts within it (default
	// 10 s; 0 after the defaults are applied never happens).
	Wait time.Duration
}

// Defaults fills the zero fields of c.
func (c Config) Defaults() Config {
	if c.Rate <= 0 {
		c.Rate = 16000
	}
	if c.Silence <= 0 {
		c.Silence = 800 * time.Millisecond
	}
	if c.MinSpeech <= 0 {
		c.MinSpeech = 150 * time.Millisecond
	}
	if c.Max <= 0 {
		c.Max = 30 * time.Second
	}
	if c.PreRoll <= 0 {
		c.PreRoll = 300 * time.Millisecond
	}
	if c.Wait <= 0 {
		c.Wait = 10 * time.Second
	}
	return c
}

// Event is what one frame changed.
type Event int

const (
	// None: nothing changed.
	None Event = iota
	// Start: speech began; Utterance holds the pre-roll and the speech so far.
	Start
	// End: the utterance ended after the hang-over, or at Max.
	End
	// Timeout: no speech began within Wait.
	Timeout
)

// Detector levels, in dB relative to full scale.
const (
	// floorInit is where the noise floor starts before it has measured.
	floorInit = -60.0
	// minOnset is the quietest level taken for speech whatever the floor:
	// a digitally silent line has a floor of -120 dB.
	minOnset = -50.0
	// onsetAbove and holdAbove are how far over the floor a frame must be
	// to start speech and to keep it going (hysteresis).
	onsetAbove = 12.0
	holdAbove  = 6.0
	// floorRise is how fast the floor follows a louder background, per
	// second; it falls at once to a quieter one.
	floorRise = 10.0
	// calibrate is how long the floor is measured before speech may start.
	calibrate = 200 * time.Millisecond
	// onsetFrames of speech in a row are needed to start.
	onsetFrames = 3
)

// Endpointer is the state of one listening. Feed it frames in order.
type Endpointer struct {
	c       Config
	floor   float64
	heard   time.Duration // audio pushed in all
	pre     [][]int16     // pre-roll ring, oldest first
	preLen  int
	run     int // loud frames in a row before the start
	inSpeak bool
	utter   []int16
	speech  time.Duration // from the start to the last loud frame
	quiet   time.Duration // since the last loud frame
	nonZero bool
	peak    float64
	reason  string
}

// New starts an end-pointer.
func New(c Config) *Endpointer {
	return &Endpointer{c: c.Defaults(), floor: floorInit, peak: -120}
}

// Config is the configuration in use, defaults applied.
func (e *Endpointer) Config() Config { return e.c }

// Push takes the next frame and says what it changed.
func (e *Endpointer) Push(frame []int16) Event {
	d := time.Duration(len(frame)) * time.Second / time.Duration(e.c.Rate)
	e.heard += d
	level := dbfs(frame, &e.nonZero)
	e.peak = math.Max(e.peak, level)
	if !e.inSpeak {
		return e.waiting(frame, level, d)
	}
	e.utter = append(e.utter, frame...)
	if level >= max(e.floor+holdAbove, minOnset-6) {
		e.speech += e.quiet + d
		e.quiet = 0
	} else {
		e.quiet += d
	}
	switch {
	case e.quiet >= e.c.Silence:
		// Keep a little of the hang-over: recognisers like a tail of quiet.
		keep := len(e.utter) - e.samples(e.quiet) + e.samples(200*time.Millisecond)
		if keep < len(e.utter) && keep > 0 {
			e.utter = e.utter[:keep]
		}
		e.reason = "silence"
		return End
	case e.speech+e.quiet >= e.c.Max:
		e.reason = "max"
		return End
	}
	return None
}

func (e *Endpointer) waiting(frame []int16, level float64, d time.Duration) Event {
	// Follow the background: fall at once, rise slowly, so that speech
	// itself barely lifts the floor.
	switch {
	case e.heard <= d:
		e.floor = level
	case level < e.floor:
		e.floor = level
	case e.heard <= calibrate:
		e.floor = (e.floor + level) / 2
	case e.run == 0:
		e.floor = math.Min(level, e.floor+floorRise*d.Seconds())
	}
	e.pre = append(e.pre, frame)
	e.preLen += len(frame)
	for len(e.pre) > 1 && e.preLen-len(e.pre[0]) >= e.samples(e.c.PreRoll) {
		e.preLen -= len(e.pre[0])
		e.pre = e.pre[1:]
	}
	if e.heard > calibrate && level >= max(e.floor+onsetAbove, minOnset) {
		e.run++
	} else {
		e.run = 0
	}
	if e.run >= onsetFrames {
		e.inSpeak = true
		for _, f := range e.pre {
			e.utter = append(e.utter, f...)
		}
		e.pre = nil
		e.speech = time.Duration(e.run) * d
		return Start
	}
	if e.heard >= e.c.Wait {
		e.reason = "no speech"
		return Timeout
	}
	return None
}

// Reset forgets a started utterance too short to be speech and goes on
// listening; the caller decides, from Speech, whether it was.
func (e *Endpointer) Reset() {
	e.inSpeak, e.utter, e.speech, e.quiet, e.run, e.reason = false, nil, 0, 0, 0, ""
}

// TooShort says whether the utterance that just ended is shorter than
// MinSpeech.
func (e *Endpointer) TooShort() bool { return e.speech < e.c.MinSpeech }

// Utterance is the audio of the utterance: pre-roll, speech, and a short
// tail of the hang-over.
func (e *Endpointer) Utterance() []int16 { return e.utter }

// Speech is how long the speech lasted, from its start to its last loud
// frame.
func (e *Endpointer) Speech() time.Duration { return e.speech }

// Heard is how much audio was pushed in all.
func (e *Endpointer) Heard() time.Duration { return e.heard }

// Silent says whether every sample pushed was zero: a muted or
// unpermitted microphone, not a quiet room.
func (e *Endpointer) Silent() bool { return !e.nonZero }

// Floor is the noise floor in dBFS; Peak is the loudest frame.
func (e *Endpointer) Floor() float64 { return e.floor }

// Peak is the loudest frame's level in dBFS.
func (e *Endpointer) Peak() float64 { return e.peak }

// Reason says why the last End or Timeout came: "silence", "max" or "no
// speech".
func (e *Endpointer) Reason() string { return e.reason }

func (e *Endpointer) samples(d time.Duration) int {
	return int(d * time.Duration(e.c.Rate) / time.Second)
}

// dbfs is the frame's level, noting whether any sample was not zero.
func dbfs(frame []int16, nonZero *bool) float64 {
	if len(frame) == 0 {
		return -120
	}
	var sum float64
	for _, s := range frame {
		if s != 0 {
			*nonZero = true
		}
		sum += float64(s) * float64(s)
	}
	rms := math.Sqrt(sum / float64(len(frame)))
	if rms < 1e-3 {
		return -120
	}
	return 20 * math.Log10(rms/32768)
}
