package files

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// sniffedMedia maps what http.DetectContentType recognises to the MIME type
// read_media_file sends.
var sniffedMedia = map[string]string{
	"image/png":       "image/png",
	"image/jpeg":      "image/jpeg",
	"image/gif":       "image/gif",
	"image/webp":      "image/webp",
	"image/bmp":       "image/bmp",
	"audio/wave":      "audio/wav",
	"audio/mpeg":      "audio/mpeg",
	"application/ogg": "audio/ogg",
}

// extMedia covers what content sniffing misses or reports only as a
// container: SVG sniffs as text, FLAC, AAC and MP3 without an ID3 tag as
// octet-stream, M4A and WebM as video. The extension decides only when
// the content is one of those vague types.
var extMedia = map[string]struct {
	mime    string
	sniffed []string
}{
	".svg":  {"image/svg+xml", []string{"text/xml", "text/plain"}},
	".mp3":  {"audio/mpeg", []string{"application/octet-stream"}},
	".flac": {"audio/flac", []string{"application/octet-stream"}},
	".aac":  {"audio/aac", []string{"application/octet-stream"}},
	".m4a":  {"audio/mp4", []string{"application/octet-stream", "video/mp4"}},
	".wav":  {"audio/wav", []string{"application/octet-stream"}},
	".ogg":  {"audio/ogg", []string{"application/octet-stream"}},
	".oga":  {"audio/ogg", []string{"application/octet-stream"}},
	".opus": {"audio/ogg", []string{"application/octet-stream"}},
	".webm": {"audio/webm", []string{"application/octet-stream", "video/webm"}},
	".weba": {"audio/webm", []string{"application/octet-stream", "video/webm"}},
}

// mediaType reports the image or audio MIME type of a file from its first
// bytes and, where sniffing is vague, its name. When the file is not media,
// mime is the sniffed type.
func mediaType(head []byte, name string) (mimeType string, ok bool) {
	sniffed, _, _ := strings.Cut(http.DetectContentType(head), ";")
	if mt, ok := sniffedMedia[sniffed]; ok {
		return mt, true
	}
	if fb, ok := extMedia[strings.ToLower(path.Ext(name))]; ok && slices.Contains(fb.sniffed, sniffed) {
		return fb.mime, true
	}
	return sniffed, false
}

type mediaArgs struct {
	Path string `json:"path" jsonschema:"image or audio file, absolute or relative to an allowed directory"`
}

func (s *Server) readMediaFile() mcpkit.Tool {
	return mcpkit.NewTool("read_media_file",
		"Read an image (PNG, JPEG, GIF, WebP, BMP, SVG) or audio file (WAV, MP3, OGG, FLAC, M4A/AAC, WebM) and return it as MCP image or audio content, "+
			"after a line naming its type and size. The type is judged from the content, with the extension as a fallback. "+
			"Files over the server's media limit are refused. For text use read_text_file; for any file's type and size use get_file_info.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in mediaArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			f, fi, err := openRegular(loc)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if fi.Size() > s.opts.MaxMediaBytes {
				return nil, fmt.Errorf("%s is %s, over the %s limit of read_media_file: it cannot be sent; use get_file_info to describe it", loc.Path(), humanSize(fi.Size()), humanSize(s.opts.MaxMediaBytes))
			}
			data, more, err := readLimited(f, fi.Size(), s.opts.MaxMediaBytes)
			if err != nil {
				return nil, describe(loc, err)
			}
			if more {
				return nil, fmt.Errorf("%s grew past the %s limit of read_media_file while it was read", loc.Path(), humanSize(s.opts.MaxMediaBytes))
			}
			mt, ok := mediaType(data[:min(len(data), 512)], loc.Base())
			if !ok {
				return nil, fmt.Errorf("%s is not an image or audio file (its content looks like %s): use read_text_file for text, or get_file_info to see what it is", loc.Path(), mt)
			}
			kind := "Audio"
			if strings.HasPrefix(mt, "image/") {
				kind = "Image"
			}
			desc := mcp.NewTextContent(fmt.Sprintf("%s %s: %s, %s", kind, loc.Path(), mt, humanSize(int64(len(data)))))
			enc := base64.StdEncoding.EncodeToString(data)
			var media mcp.Content = mcp.NewAudioContent(enc, mt)
			if kind == "Image" {
				media = mcp.NewImageContent(enc, mt)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{desc, media}}, nil
		},
		mcpkit.Title("Read image or audio file"),
	)
}

type fileInfoArgs struct {
	Path string `json:"path" jsonschema:"file, directory or symlink to describe, absolute or relative to an allowed directory; a symlink is described itself, not its target"`
}

type fileInfo struct {
	Path        string  `json:"path" jsonschema:"the path described"`
	Type        string  `json:"type" jsonschema:"file, directory, symlink, fifo, socket, device or other"`
	Size        int64   `json:"size" jsonschema:"size in bytes"`
	Mode        string  `json:"mode" jsonschema:"permission bits in octal, e.g. 0644"`
	Permissions string  `json:"permissions" jsonschema:"type and permission bits as ls shows them, e.g. -rw-r--r--"`
	Modified    string  `json:"modified" jsonschema:"last modification time, RFC 3339"`
	Accessed    string  `json:"accessed,omitempty" jsonschema:"last access time, RFC 3339"`
	Changed     string  `json:"changed,omitempty" jsonschema:"last status change time, RFC 3339"`
	UID         *uint32 `json:"uid,omitempty" jsonschema:"owner's user ID"`
	GID         *uint32 `json:"gid,omitempty" jsonschema:"owner's group ID"`
	LinkTarget  string  `json:"link_target,omitempty" jsonschema:"for a symlink, its target as written in the link"`
	MIMEType    string  `json:"mime_type,omitempty" jsonschema:"for a regular file, the MIME type sniffed from its first 512 bytes, or guessed from its extension when sniffing cannot tell"`
	Content     string  `json:"content,omitempty" jsonschema:"for a regular file, text or binary, judged from its first bytes"`
	Lines       *int    `json:"lines,omitempty" jsonschema:"for a text file within the read limit, its number of lines"`
}

func (s *Server) getFileInfo() mcpkit.Tool {
	return mcpkit.NewTool("get_file_info",
		"Describe one file, directory or symlink without reading it whole: type, size, permissions, times, owner; "+
			"for a symlink its target (the link itself is described, not followed); for a regular file its MIME type, "+
			"whether it is text or binary, and its line count when it is text within the read limit.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in fileInfoArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolveNoFollow(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			info, err := s.describeFile(loc)
			if err != nil {
				return nil, err
			}
			return mcpkit.Structured(info.text(), info), nil
		},
		mcpkit.Title("Get file info"),
		mcpkit.Output[fileInfo](nil),
	)
}

func (s *Server) describeFile(loc Location) (*fileInfo, error) {
	fi, err := loc.Lstat()
	if err != nil {
		return nil, describe(loc, err)
	}
	m := fi.Mode()
	info := &fileInfo{
		Path:        loc.Path(),
		Type:        fileType(m),
		Size:        fi.Size(),
		Mode:        fmt.Sprintf("%04o", unixPerm(m)),
		Permissions: lsMode(m),
		Modified:    fi.ModTime().Format(time.RFC3339),
	}
	uid, gid, atime, ctime := ownerAndTimes(fi)
	info.UID, info.GID = uid, gid
	if !atime.IsZero() {
		info.Accessed = atime.Format(time.RFC3339)
	}
	if !ctime.IsZero() {
		info.Changed = ctime.Format(time.RFC3339)
	}
	switch info.Type {
	case "symlink":
		if info.LinkTarget, err = loc.Root().Readlink(loc.Rel); err != nil {
			return nil, describe(loc, err)
		}
	case "file":
		if err := s.describeContent(loc, info); err != nil {
			return nil, err
		}
	}
	return info, nil
}

// describeContent fills in what a regular file's content says about it.
func (s *Server) describeContent(loc Location, info *fileInfo) error {
	f, fi, err := openRegular(loc)
	if err != nil {
		return err
	}
	defer f.Close()
	limit := int64(8000)
	whole := fi.Size() <= s.opts.MaxReadBytes
	if whole {
		limit = s.opts.MaxReadBytes
	}
	data, more, err := readLimited(f, fi.Size(), limit)
	if err != nil {
		return describe(loc, err)
	}
	if mt, ok := mediaType(data[:min(len(data), 512)], loc.Base()); ok {
		info.MIMEType = mt
	} else {
		info.MIMEType = http.DetectContentType(data[:min(len(data), 512)])
		if strings.HasPrefix(info.MIMEType, "application/octet-stream") {
			if ext := mime.TypeByExtension(path.Ext(loc.Base())); ext != "" {
				info.MIMEType = ext
			}
		}
	}
	info.Content = "text"
	if _, bin := sniffBinary(data); bin {
		info.Content = "binary"
	} else if whole && !more {
		n := bytes.Count(data, []byte{'\n'})
		if len(data) > 0 && data[len(data)-1] != '\n' {
			n++
		}
		info.Lines = &n
	}
	return nil
}

// unixPerm is the permission part of a mode as chmod takes it, with the
// setuid, setgid and sticky bits.
func unixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// lsMode renders a mode the way ls -l does.
func lsMode(m fs.FileMode) string {
	t := byte('-')
	switch {
	case m.IsDir():
		t = 'd'
	case m&fs.ModeSymlink != 0:
		t = 'l'
	case m&fs.ModeNamedPipe != 0:
		t = 'p'
	case m&fs.ModeSocket != 0:
		t = 's'
	case m&fs.ModeCharDevice != 0:
		t = 'c'
	case m&fs.ModeDevice != 0:
		t = 'b'
	}
	b := []byte(m.Perm().String()) // "-rwxr-xr-x"
	b[0] = t
	special := func(i int, set bool, x, noX byte) {
		if set {
			if b[i] == 'x' {
				b[i] = x
			} else {
				b[i] = noX
			}
		}
	}
	special(3, m&fs.ModeSetuid != 0, 's', 'S')
	special(6, m&fs.ModeSetgid != 0, 's', 'S')
	special(9, m&fs.ModeSticky != 0, 't', 'T')
	return string(b)
}

func (i *fileInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "path: %s\ntype: %s\n", i.Path, i.Type)
	if i.LinkTarget != "" {
		fmt.Fprintf(&b, "link target: %s (not followed)\n", shownName(i.LinkTarget))
	}
	fmt.Fprintf(&b, "size: %s (%d bytes)\n", humanSize(i.Size), i.Size)
	fmt.Fprintf(&b, "mode: %s (%s)\n", i.Mode, i.Permissions)
	fmt.Fprintf(&b, "modified: %s\n", i.Modified)
	if i.Accessed != "" {
		fmt.Fprintf(&b, "accessed: %s\n", i.Accessed)
	}
	if i.Changed != "" {
		fmt.Fprintf(&b, "changed: %s\n", i.Changed)
	}
	if i.UID != nil && i.GID != nil {
		fmt.Fprintf(&b, "owner: uid %d, gid %d\n", *i.UID, *i.GID)
	}
	if i.MIMEType != "" {
		fmt.Fprintf(&b, "mime type: %s\n", i.MIMEType)
	}
	switch {
	case i.Lines != nil:
		fmt.Fprintf(&b, "content: text, %s\n", plural(*i.Lines, "line", "lines"))
	case i.Content == "text":
		b.WriteString("content: text (too large to count lines; use read_text_file with head or tail, or grep_files)\n")
	case i.Content == "binary":
		b.WriteString("content: binary\n")
	}
	return b.String()
}
