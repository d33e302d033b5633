// Package wav reads and writes 16-bit PCM WAV, the one format that passes
// between Domo's microphone, its speech engines and its speakers. It reads
// a stream whose header gives no length (espeak-ng --stdout, a server
// answering in chunks) as it arrives, and it resamples mono audio. It does
// no I/O of its own beyond the reader and writer it is given.
package wav

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrFormat reports data that is not a WAV file Domo can read.
var ErrFormat = errors.New("not a 16-bit PCM or float WAV file")

// Encode writes mono 16-bit samples at rate as a complete WAV file.
func Encode(w io.Writer, pcm []int16, rate int) error {
	if _, err := w.Write(Header(len(pcm), rate)); err != nil {
		return err
	}
	return binary.Write(w, binary.LittleEndian, pcm)
}

// Bytes is Encode into memory.
func Bytes(pcm []int16, rate int) []byte {
	b := make([]byte, 44, 44+2*len(pcm))
	copy(b, Header(len(pcm), rate))
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

// Header is the 44-byte header of a mono 16-bit WAV file of n samples.
func Header(n, rate int) []byte {
	data := uint32(2 * n)
	b := make([]byte, 0, 44)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, 36+data)
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1) // PCM
	b = binary.LittleEndian.AppendUint16(b, 1) // mono
	b = binary.LittleEndian.AppendUint32(b, uint32(rate))
	b = binary.LittleEndian.AppendUint32(b, uint32(2*rate))
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = append(b, "data"...)
	return binary.LittleEndian.AppendUint32(b, data)
}

// Reader reads the samples of a WAV stream as they arrive, mixed down to
// mono. A data chunk whose size is unknown (0 or 0xFFFFFFFF, or larger
// than what follows) is read to the end of the stream.
type Reader struct {
	r        *bufio.Reader
	rate     int
	channels int
	float    bool
	left     int64 // bytes of the data chunk still to read; <0 reads to EOF
	frame    []byte
}

// NewReader reads the header of a WAV stream up to its data chunk.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 8192)
	var riff [12]byte
	if _, err := io.ReadFull(br, riff[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%w: no RIFF/WAVE header", ErrFormat)
	}
	wr := &Reader{r: br}
	haveFmt := false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(br, ch[:]); err != nil {
			return nil, fmt.Errorf("%w: no data chunk: %w", ErrFormat, err)
		}
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			if size < 16 || size > 1024 {
				return nil, fmt.Errorf("%w: fmt chunk of %d bytes", ErrFormat, size)
			}
			f := make([]byte, size+size%2)
			if _, err := io.ReadFull(br, f); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrFormat, err)
			}
			tag := binary.LittleEndian.Uint16(f[0:2])
			wr.channels = int(binary.LittleEndian.Uint16(f[2:4]))
			wr.rate = int(binary.LittleEndian.Uint32(f[4:8]))
			bits := binary.LittleEndian.Uint16(f[14:16])
			if tag == 0xFFFE && size >= 40 { // WAVE_FORMAT_EXTENSIBLE: the sub-format's tag
				tag = binary.LittleEndian.Uint16(f[24:26])
			}
			switch {
			case tag == 1 && bits == 16:
			case tag == 3 && bits == 32:
				wr.float = true
			default:
				return nil, fmt.Errorf("%w: format %d with %d bits per sample", ErrFormat, tag, bits)
			}
			if wr.channels < 1 || wr.channels > 8 || wr.rate < 1000 || wr.rate > 384000 {
				return nil, fmt.Errorf("%w: %d channels at %d Hz", ErrFormat, wr.channels, wr.rate)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, fmt.Errorf("%w: data before fmt", ErrFormat)
			}
			wr.left = int64(size)
			if size == 0 || size >= 0x7FFF0000 {
				wr.left = -1
			}
			width := 2
			if wr.float {
				width = 4
			}
			wr.frame = make([]byte, width*wr.channels)
			return wr, nil
		default:
			if _, err := br.Discard(int(int64(size) + int64(size%2))); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrFormat, err)
			}
		}
	}
}

// Rate is the stream's sample rate in Hz.
func (r *Reader) Rate() int { return r.rate }

// Read fills p with mono samples. It returns io.EOF at the end of the data;
// a stream cut inside a frame ends there.
func (r *Reader) Read(p []int16) (int, error) {
	n := 0
	for n < len(p) {
		if r.left == 0 {
			break
		}
		if n > 0 && r.r.Buffered() < len(r.frame) {
			// Give back what has arrived rather than wait for more.
			break
		}
		if _, err := io.ReadFull(r.r, r.frame); err != nil {
			if n > 0 {
				return n, nil
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			return 0, err
		}
		if r.left > 0 {
			r.left -= int64(len(r.frame))
			if r.left < 0 {
				r.left = 0
			}
		}
		p[n] = r.sample()
		n++
	}
	if n == 0 && r.left == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// sample mixes the frame just read down to one sample.
func (r *Reader) sample() int16 {
	var sum float64
	for c := range r.channels {
		if r.float {
			v := math.Float32frombits(binary.LittleEndian.Uint32(r.frame[4*c:]))
			sum += float64(v) * 32767
		} else {
			sum += float64(int16(binary.LittleEndian.Uint16(r.frame[2*c:])))
		}
	}
	return clamp(sum / float64(r.channels))
}

// Decode reads a whole WAV stream into mono samples.
func Decode(r io.Reader) (pcm []int16, rate int, err error) {
	wr, err := NewReader(r)
	if err != nil {
		return nil, 0, err
	}
	buf := make([]int16, 4096)
	for {
		n, err := wr.Read(buf)
		pcm = append(pcm, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return pcm, wr.rate, nil
		}
		if err != nil {
			return pcm, wr.rate, err
		}
	}
}

// PCM reads raw little-endian 16-bit mono samples, as OpenAI-compatible
// speech servers send for response_format "pcm", keeping an odd trailing
// byte for the next call.
type PCM struct {
	r    io.Reader
	odd  []byte
	buf  []byte
	Rate int
}

// NewPCM reads raw samples at rate from r.
func NewPCM(r io.Reader, rate int) *PCM { return &PCM{r: r, Rate: rate} }

// Read fills p with the samples that have arrived, at least one unless the
// stream ended.
func (p *PCM) Read(out []int16) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	if cap(p.buf) < 2*len(out) {
		p.buf = make([]byte, 2*len(out))
	}
	for {
		b := p.buf[:2*len(out)]
		k := copy(b, p.odd)
		n, err := p.r.Read(b[k:])
		n += k
		p.odd = p.odd[:0]
		samples := n / 2
		if n%2 == 1 {
			p.odd = append(p.odd, b[n-1])
		}
		for i := range samples {
			out[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		if samples > 0 || err != nil {
			return samples, err
		}
	}
}

// Resample converts mono audio from one rate to another with linear
// interpolation after a moving-average low-pass when going down, good
// enough for speech recognisers and for speakers.
func Resample(pcm []int16, from, to int) []int16 {
	if from == to || len(pcm) == 0 || from <= 0 || to <= 0 {
		return pcm
	}
	src := pcm
	if to < from {
		// A box filter about one output sample wide keeps most of the
		// aliasing out; speech above 8 kHz carries little.
		w := from / to
		if from%to != 0 {
			w++
		}
		if w > 1 {
			src = make([]int16, len(pcm))
			var acc int64
			for i := range pcm {
				acc += int64(pcm[i])
				if i >= w {
					acc -= int64(pcm[i-w])
				}
				d := min(i+1, w)
				src[i] = int16(acc / int64(d))
			}
		}
	}
	n := int(int64(len(src)) * int64(to) / int64(from))
	out := make([]int16, n)
	step := float64(from) / float64(to)
	for i := range out {
		x := float64(i) * step
		j := int(x)
		if j+1 >= len(src) {
			out[i] = src[len(src)-1]
			continue
		}
		f := x - float64(j)
		out[i] = clamp(float64(src[j])*(1-f) + float64(src[j+1])*f)
	}
	return out
}

func clamp(v float64) int16 {
	switch {
	case v > 32767:
		return 32767
	case v < -32768:
		return -32768
	}
	return int16(math.Round(v))
}

// RMS is the root mean square of samples, 0 to 32768.
func RMS(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	var sum float64
	for _, s := range pcm {
		sum += float64(s) * float64(s)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// DBFS is RMS in decibels below full scale; silence is -120.
func DBFS(pcm []int16) float64 {
	r := RMS(pcm)
	if r < 1e-6*32768 {
		return -120
	}
	return 20 * math.Log10(r/32768)
}
