package files

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// tinyPNG encodes a 2×2 image.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	img.Set(1, 1, color.RGBA{B: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tinyWAV is a RIFF/WAVE header for 8 kHz 8-bit mono PCM and n samples.
func tinyWAV(n int) []byte {
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // channels
	le(uint32(8000)) // sample rate
	le(uint32(8000)) // byte rate
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(n))
	for i := range n {
		b.WriteByte(byte(128 + i%16))
	}
	return b.Bytes()
}

func writeBytes(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadMediaFile(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	d := f.dir
	pngData, wavData := tinyPNG(t), tinyWAV(64)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>` + "\n")
	flac := append([]byte("fLaC\x00\x00\x00\x22"), make([]byte, 40)...)
	mp3 := append([]byte{0xFF, 0xFB, 0x90, 0x64}, make([]byte, 100)...)
	files := map[string][]byte{
		"img.png": pngData, "noext": pngData, "sound.wav": wavData, "pic.svg": svg,
		"song.flac": flac, "song.mp3": mp3, "fake.png": []byte("just text\n"), "fake.flac": []byte("text again\n"),
	}
	for name, data := range files {
		writeBytes(t, filepath.Join(d, name), data)
	}
	tests := []struct {
		name     string
		path     string
		wantMIME string
		image    bool
		wantErr  string
	}{
		{name: "png", path: d + "/img.png", wantMIME: "image/png", image: true},
		{name: "png without extension", path: d + "/noext", wantMIME: "image/png", image: true},
		{name: "relative png", path: "img.png", wantMIME: "image/png", image: true},
		{name: "wav", path: d + "/sound.wav", wantMIME: "audio/wav"},
		{name: "svg by extension", path: d + "/pic.svg", wantMIME: "image/svg+xml", image: true},
		{name: "flac by extension", path: d + "/song.flac", wantMIME: "audio/flac"},
		{name: "mp3 without ID3 by extension", path: d + "/song.mp3", wantMIME: "audio/mpeg"},
		{name: "text named png", path: d + "/fake.png", wantErr: "is not an image or audio file (its content looks like text/plain)"},
		{name: "text named flac", path: d + "/fake.flac", wantErr: "use read_text_file"},
		{name: "text", path: d + "/a.txt", wantErr: "use read_text_file"},
		{name: "binary", path: d + "/big.bin", wantErr: "not an image or audio file"},
		{name: "directory", path: d + "/sub", wantErr: "is a directory"},
		{name: "missing", path: d + "/nope.png", wantErr: "does not exist"},
		{name: "outside", path: f.top + "/outside/secret.txt", wantErr: "outside the allowed directories"},
		{name: "through a link out", path: d + "/link-out/secret.txt", wantErr: "outside the allowed directories"},
		{name: "symlink loop", path: d + "/loop-a", wantErr: "too many levels"},
		{name: "empty path", path: "", wantErr: "path is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text := f.call(t, "read_media_file", map[string]any{"path": tt.path})
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(text, tt.wantErr) {
					t.Fatalf("want error %q, got IsError=%v %q", tt.wantErr, res.IsError, text)
				}
				return
			}
			if res.IsError {
				t.Fatal(text)
			}
			if len(res.Content) != 2 {
				t.Fatalf("%d contents, want a text and the media", len(res.Content))
			}
			want := files[filepath.Base(tt.path)]
			kind := "Audio"
			if tt.image {
				kind = "Image"
			}
			if !strings.HasPrefix(text, kind+" ") || !strings.Contains(text, ": "+tt.wantMIME+", ") || !strings.HasSuffix(text, humanSize(int64(len(want)))) {
				t.Errorf("description %q", text)
			}
			var data, mt string
			switch c := res.Content[1].(type) {
			case mcp.ImageContent:
				if !tt.image {
					t.Errorf("got image content for %s", tt.wantMIME)
				}
				data, mt = c.Data, c.MIMEType
			case mcp.AudioContent:
				if tt.image {
					t.Errorf("got audio content for %s", tt.wantMIME)
				}
				data, mt = c.Data, c.MIMEType
			default:
				t.Fatalf("second content is %T", c)
			}
			if mt != tt.wantMIME {
				t.Errorf("MIME type %s, want %s", mt, tt.wantMIME)
			}
			got, err := base64.StdEncoding.DecodeString(data)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("data does not decode to the file (%v)", err)
			}
		})
	}
}

func TestReadMediaFileArguments(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxMediaBytes = 100
	f := newWalkFixture(t, opts)
	writeBytes(t, filepath.Join(f.dir, "big.png"), append(tinyPNG(t), make([]byte, 2000)...))
	runToolCases(t, f, "read_media_file", []toolCase{
		{name: "over the limit", args: map[string]any{"path": f.dir + "/big.png"}, wantErr: true, want: []string{"big.png is 2.", "KiB, over the 100 B limit of read_media_file"}},
		{name: "missing path", args: map[string]any{}, wantErr: true, want: []string{"path"}},
		{name: "wrong type", args: map[string]any{"path": []any{"a.png"}}, wantErr: true, want: []string{"path"}},
		{name: "unknown argument", args: map[string]any{"path": f.dir + "/big.png", "max_bytes": 10}, wantErr: true, want: []string{"max_bytes"}},
	})
}

func TestGetFileInfo(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	d := f.dir
	writeBytes(t, filepath.Join(d, "img.png"), tinyPNG(t))
	writeBytes(t, filepath.Join(d, "pic.svg"), []byte("<svg xmlns=\"http://www.w3.org/2000/svg\">\n</svg>"))
	writeBytes(t, filepath.Join(d, "large.txt"), bytes.Repeat([]byte("a line of text\n"), 80_000))
	writeBytes(t, filepath.Join(d, "empty.txt"), nil)
	writeBytes(t, filepath.Join(d, "tool"), []byte("#!/bin/sh\n"))
	if err := os.Chmod(filepath.Join(d, "tool"), os.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	three, two, zero := 3, 2, 0
	tests := []struct {
		name    string
		path    string
		want    fileInfo // compared on the fields set here
		wantErr string
	}{
		{name: "text file", path: d + "/a.txt", want: fileInfo{Path: d + "/a.txt", Type: "file", Size: 11, Mode: "0644", Permissions: "-rw-r--r--", MIMEType: "text/plain; charset=utf-8", Content: "text", Lines: &two}},
		{name: "relative", path: "sub/b.go", want: fileInfo{Path: d + "/sub/b.go", Type: "file", Content: "text", Lines: &three}},
		{name: "empty file", path: d + "/empty.txt", want: fileInfo{Type: "file", Size: 0, Content: "text", Lines: &zero}},
		{name: "binary file", path: d + "/big.bin", want: fileInfo{Type: "file", Size: 3000, MIMEType: "application/octet-stream", Content: "binary"}},
		{name: "png", path: d + "/img.png", want: fileInfo{Type: "file", MIMEType: "image/png", Content: "binary"}},
		{name: "svg", path: d + "/pic.svg", want: fileInfo{Type: "file", MIMEType: "image/svg+xml", Content: "text", Lines: &two}},
		{name: "text over the read limit", path: d + "/large.txt", want: fileInfo{Type: "file", Size: 1_200_000, Content: "text"}},
		{name: "setuid", path: d + "/tool", want: fileInfo{Type: "file", Mode: "4755", Permissions: "-rwsr-xr-x"}},
		{name: "directory", path: d + "/sub", want: fileInfo{Path: d + "/sub", Type: "directory", Mode: "0755", Permissions: "drwxr-xr-x"}},
		{name: "allowed directory itself", path: d, want: fileInfo{Path: d, Type: "directory"}},
		{name: "symlink to a directory inside", path: d + "/link-in", want: fileInfo{Path: d + "/link-in", Type: "symlink", LinkTarget: "sub", Permissions: "lrwxrwxrwx"}},
		{name: "symlink out, not followed", path: d + "/link-out", want: fileInfo{Path: d + "/link-out", Type: "symlink", LinkTarget: f.top + "/outside"}},
		{name: "relative symlink out", path: "link-out", want: fileInfo{Path: d + "/link-out", Type: "symlink", LinkTarget: f.top + "/outside"}},
		{name: "symlink loop itself", path: d + "/loop-a", want: fileInfo{Type: "symlink", LinkTarget: "loop-b"}},
		{name: "dangling symlink", path: d + "/dangling", want: fileInfo{Type: "symlink", LinkTarget: "missing"}},
		{name: "through a symlinked parent", path: d + "/link-in/b.go", want: fileInfo{Path: d + "/sub/b.go", Type: "file"}},
		{name: "through a symlink out", path: d + "/link-out/secret.txt", wantErr: "outside the allowed directories"},
		{name: "through a symlink loop", path: d + "/loop-a/x", wantErr: "too many levels"},
		{name: "outside", path: f.top + "/outside/secret.txt", wantErr: "outside the allowed directories"},
		{name: "parent of the allowed directory", path: f.top, wantErr: "outside the allowed directories"},
		{name: "root", path: "/", wantErr: "outside the allowed directories"},
		{name: "dot dot", path: "../outside", wantErr: "leaves the allowed directories"},
		{name: "missing", path: d + "/nope", wantErr: "does not exist"},
		{name: "below a file", path: d + "/a.txt/x", wantErr: "not a directory"},
		{name: "empty path", path: "", wantErr: "path is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, text := f.call(t, "get_file_info", map[string]any{"path": tt.path})
			if tt.wantErr != "" {
				if !res.IsError || !strings.Contains(text, tt.wantErr) {
					t.Fatalf("want error %q, got IsError=%v %q", tt.wantErr, res.IsError, text)
				}
				return
			}
			if res.IsError {
				t.Fatal(text)
			}
			if strings.Contains(resultText(res), outsideText) {
				t.Errorf("result carries outside content: %s", text)
			}
			got := decodeStructured[fileInfo](t, res)
			w := tt.want
			check := func(field string, ok bool) {
				if !ok {
					t.Errorf("%s differs: got %+v, want %+v", field, got, w)
				}
			}
			check("path", w.Path == "" || got.Path == w.Path)
			check("type", got.Type == w.Type)
			check("size", w.Size == 0 || got.Size == w.Size)
			check("mode", w.Mode == "" || got.Mode == w.Mode)
			check("permissions", w.Permissions == "" || got.Permissions == w.Permissions)
			check("link target", got.LinkTarget == w.LinkTarget)
			check("mime type", w.MIMEType == "" || got.MIMEType == w.MIMEType)
			check("content", got.Content == w.Content || (w.Content == "" && w.Type == "file"))
			check("lines", (got.Lines == nil) == (w.Lines == nil) && (w.Lines == nil || *got.Lines == *w.Lines) || (w.Content == "" && w.Type == "file"))
			check("owner", got.UID != nil && got.GID != nil)
			for _, ts := range []string{got.Modified, got.Accessed, got.Changed} {
				if ts == "" {
					t.Errorf("a time is missing: %+v", got)
				}
			}
			if !strings.Contains(text, "type: "+w.Type) || !strings.Contains(text, "mode: "+got.Mode+" ("+got.Permissions+")") {
				t.Errorf("text:\n%s", text)
			}
		})
	}
}

func TestGetFileInfoArguments(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	runToolCases(t, f, "get_file_info", []toolCase{
		{name: "line count", args: map[string]any{"path": f.dir + "/a.txt"}, want: []string{"content: text, 2 lines"}},
		{name: "link text", args: map[string]any{"path": f.dir + "/link-in"}, want: []string{"type: symlink", "link target: sub (not followed)"}},
		{name: "missing path", args: map[string]any{}, wantErr: true, want: []string{"path"}},
		{name: "wrong type", args: map[string]any{"path": true}, wantErr: true, want: []string{"path"}},
		{name: "unknown argument", args: map[string]any{"path": f.dir, "follow": true}, wantErr: true, want: []string{"follow"}},
	})
}
