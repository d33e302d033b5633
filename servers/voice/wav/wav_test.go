package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		pcm  []int16
		rate int
	}{
		{name: "empty", pcm: nil, rate: 16000},
		{name: "one sample", pcm: []int16{-32768}, rate: 8000},
		{name: "extremes", pcm: []int16{0, 1, -1, 32767, -32768, 1234}, rate: 22050},
		{name: "a second of tone", pcm: tone(48000, 440, 48000, 10000), rate: 48000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, tt.pcm, tt.rate); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), Bytes(tt.pcm, tt.rate)) {
				t.Fatal("Encode and Bytes disagree")
			}
			pcm, rate, err := Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if rate != tt.rate {
				t.Errorf("rate = %d, want %d", rate, tt.rate)
			}
			if !equal(pcm, tt.pcm) {
				t.Errorf("got %d samples, want %d (or values differ)", len(pcm), len(tt.pcm))
			}
		})
	}
}

// trickle hands out at most n bytes per Read, like a pipe from a program
// that writes as it goes.
type trickle struct {
	r io.Reader
	n int
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(p) > t.n {
		p = p[:t.n]
	}
	return t.r.Read(p)
}

func TestUnknownLength(t *testing.T) {
	pcm := tone(2205, 300, 22050, 8000)
	tests := []struct {
		name string
		size uint32 // what the header says about the data chunk
	}{
		// espeak-ng --stdout writes 0x7FFFFFFF-ish sizes; others write 0
		// or all ones.
		{name: "espeak-ng size", size: 0x7FFFF000},
		{name: "zero", size: 0},
		{name: "all ones", size: 0xFFFFFFFF},
		{name: "larger than the stream", size: uint32(4 * len(pcm))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Bytes(pcm, 22050)
			binary.LittleEndian.PutUint32(b[4:8], 0xFFFFFFFF)
			binary.LittleEndian.PutUint32(b[40:44], tt.size)
			r, err := NewReader(&trickle{r: bytes.NewReader(b), n: 7})
			if err != nil {
				t.Fatal(err)
			}
			if r.Rate() != 22050 {
				t.Errorf("rate = %d", r.Rate())
			}
			var got []int16
			buf := make([]int16, 100)
			for {
				n, err := r.Read(buf)
				got = append(got, buf[:n]...)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !equal(got, pcm) {
				t.Errorf("got %d samples, want %d", len(got), len(pcm))
			}
		})
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name     string
		channels int
		float    bool
		frames   [][]float64 // per frame, per channel, -1..1
		want     []int16
	}{
		{
			name:     "float32 mono",
			channels: 1,
			float:    true,
			frames:   [][]float64{{0}, {0.5}, {-1}, {1}},
			want:     []int16{0, 16384, -32767, 32767},
		},
		{
			name:     "pcm stereo is mixed down",
			channels: 2,
			frames:   [][]float64{{0.5, 0}, {-0.5, -0.5}, {0.75, -0.75}},
			want:     []int16{8192, -16384, 0},
		},
		{
			name:     "float32 stereo",
			channels: 2,
			float:    true,
			frames:   [][]float64{{0.5, 0.5}, {0.25, 0.75}},
			want:     []int16{16384, 16384},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := header(tt.channels, 16000, tt.float, len(tt.frames))
			for _, f := range tt.frames {
				for _, v := range f {
					if tt.float {
						b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
					} else {
						b = binary.LittleEndian.AppendUint16(b, uint16(int16(v*32768)))
					}
				}
			}
			pcm, rate, err := Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if rate != 16000 {
				t.Errorf("rate = %d", rate)
			}
			if !near(pcm, tt.want, 1) {
				t.Errorf("got %v, want %v", pcm, tt.want)
			}
		})
	}
}

func TestNotWAV(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{name: "empty", data: nil},
		{name: "text", data: []byte("this is not a sound file at all, not even close")},
		{name: "8-bit", data: func() []byte {
			b := Bytes([]int16{1, 2}, 8000)
			binary.LittleEndian.PutUint16(b[34:36], 8)
			return b
		}()},
		{name: "no data chunk", data: Bytes(nil, 8000)[:36]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode(bytes.NewReader(tt.data))
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("err = %v, want ErrFormat", err)
			}
		})
	}
}

func TestResample(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		from, to int
		want     int
	}{
		{name: "same rate", n: 1000, from: 16000, to: 16000, want: 1000},
		{name: "espeak to recogniser", n: 22050, from: 22050, to: 16000, want: 16000},
		{name: "48k to 16k", n: 960, from: 48000, to: 16000, want: 320},
		{name: "16k to 48k", n: 320, from: 16000, to: 48000, want: 960},
		{name: "44.1k frame", n: 882, from: 44100, to: 16000, want: 320},
		{name: "empty", n: 0, from: 8000, to: 16000, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tone(tt.n, 200, tt.from, 10000)
			out := Resample(in, tt.from, tt.to)
			if len(out) != tt.want {
				t.Fatalf("len = %d, want %d", len(out), tt.want)
			}
			if tt.n == 0 {
				return
			}
			// A 200 Hz tone keeps its loudness through any of these rates.
			if d := math.Abs(DBFS(out) - DBFS(in)); d > 1 {
				t.Errorf("level changed by %.1f dB", d)
			}
		})
	}
}

func TestLevels(t *testing.T) {
	tests := []struct {
		name string
		pcm  []int16
		rms  float64
		dbfs float64
	}{
		{name: "silence", pcm: make([]int16, 100), rms: 0, dbfs: -120},
		{name: "empty", pcm: nil, rms: 0, dbfs: -120},
		{name: "full scale square", pcm: []int16{-32768, -32768}, rms: 32768, dbfs: 0},
		{name: "half scale", pcm: []int16{16384, -16384}, rms: 16384, dbfs: -6.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RMS(tt.pcm); math.Abs(got-tt.rms) > 0.01 {
				t.Errorf("RMS = %v, want %v", got, tt.rms)
			}
			if got := DBFS(tt.pcm); math.Abs(got-tt.dbfs) > 0.01 {
				t.Errorf("DBFS = %v, want %v", got, tt.dbfs)
			}
		})
	}
}

func TestPCM(t *testing.T) {
	want := []int16{1, -2, 300, -32768, 32767}
	var b []byte
	for _, s := range want {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	// Three bytes at a time splits every other sample across reads.
	p := NewPCM(&trickle{r: bytes.NewReader(b), n: 3}, 24000)
	var got []int16
	buf := make([]int16, 8)
	for {
		n, err := p.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// header is a WAV header for n frames of channels at rate, 16-bit PCM or
// 32-bit float.
func header(channels, rate int, float bool, n int) []byte {
	width, tag := 2, uint16(1)
	if float {
		width, tag = 4, 3
	}
	data := uint32(n * channels * width)
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, 36+data)
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, tag)
	b = binary.LittleEndian.AppendUint16(b, uint16(channels))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate))
	b = binary.LittleEndian.AppendUint32(b, uint32(rate*channels*width))
	b = binary.LittleEndian.AppendUint16(b, uint16(channels*width))
	b = binary.LittleEndian.AppendUint16(b, uint16(8*width))
	b = append(b, "data"...)
	return binary.LittleEndian.AppendUint32(b, data)
}

func tone(n int, freq float64, rate int, amp float64) []int16 {
	pcm := make([]int16, n)
	for i := range pcm {
		pcm[i] = int16(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return pcm
}

func equal(a, b []int16) bool {
	return near(a, b, 0)
}

func near(a, b []int16, tol int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := int(a[i]) - int(b[i]); d > tol || d < -tol {
			return false
		}
	}
	return true
}
