package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

var readOnly = mcpkit.Annotations{ReadOnly: mcpkit.Yes, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}

type readTextArgs struct {
	Path     string `json:"path" jsonschema:"file to read, absolute or relative to an allowed directory"`
	Head     int    `json:"head,omitempty" jsonschema:"return only the first N lines"`
	Tail     int    `json:"tail,omitempty" jsonschema:"return only the last N lines"`
	MaxBytes int64  `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes (default and ceiling: the server's read limit)"`
}

func (a *readTextArgs) Validate() error {
	switch {
	case a.Head < 0 || a.Tail < 0:
		return errors.New("head and tail must be positive line counts")
	case a.Head > 0 && a.Tail > 0:
		return errors.New("give head or tail, not both")
	case a.MaxBytes < 0:
		return errors.New("max_bytes must be positive")
	}
	return nil
}

func lineCountSchema(props ...string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		one := 1.0
		for _, p := range props {
			if ps, ok := s.Properties[p]; ok {
				ps.Minimum = &one
			}
		}
	}
}

func (s *Server) readTextFile() mcpkit.Tool {
	return mcpkit.NewTool("read_text_file",
		"Read a text file. Use head or tail for the first or last N lines of a long file. "+
			"Output is capped at the server's read limit (max_bytes lowers it); a longer file is cut at a line boundary with a note saying how to read on. "+
			"Binary files are refused (use read_media_file for images and audio); text that is not UTF-8 is decoded or has invalid bytes replaced, with a note.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in readTextArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			text, note, err := s.readText(loc, in.Head, in.Tail, in.MaxBytes)
			if err != nil {
				return nil, err
			}
			res := mcpkit.Text(text)
			if note != "" {
				res.Content = append(res.Content, mcp.NewTextContent("[domo-files: "+note+"]"))
			}
			return res, nil
		},
		mcpkit.Title("Read text file"),
		mcpkit.InputSchema(lineCountSchema("head", "tail", "max_bytes")),
	)
}

// readText reads loc as text, honouring head, tail and a byte limit. note
// tells the model about truncation or decoding it should know of.
func (s *Server) readText(loc Location, head, tail int, maxBytes int64) (text, note string, err error) {
	limit := s.opts.MaxReadBytes
	if maxBytes > 0 && maxBytes < limit {
		limit = maxBytes
	}
	f, fi, err := openRegular(loc)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	size := fi.Size()
	var data []byte
	truncated := false
	if tail > 0 && size > limit {
		if _, err := f.Seek(size-limit, io.SeekStart); err != nil {
			return "", "", describe(loc, err)
		}
		data, _, err = readLimited(f, limit, limit)
		if err == nil {
			// Drop the partial first line.
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				data = data[i+1:]
			}
			truncated = true
		}
	} else {
		data, truncated, err = readLimited(f, size, limit)
	}
	if err != nil {
		return "", "", describe(loc, err)
	}
	if kind, bin := sniffBinary(data); bin {
		return "", "", fmt.Errorf("%s is a binary file (%s, %s), not text: use read_media_file for images and audio, or get_file_info", loc.Path(), kind, humanSize(size))
	}
	text, decodeNote := decodeText(data)
	var notes []string
	if decodeNote != "" {
		notes = append(notes, decodeNote)
	}
	switch {
	case head > 0:
		lines := splitLines(text)
		if len(lines) > head {
			text = strings.Join(lines[:head], "")
		} else if truncated {
			notes = append(notes, fmt.Sprintf("the file is %s; only the first %s were read", humanSize(size), humanSize(limit)))
		}
	case tail > 0:
		lines := splitLines(text)
		if len(lines) > tail {
			text = strings.Join(lines[len(lines)-tail:], "")
		} else if truncated {
			notes = append(notes, fmt.Sprintf("the file is %s; only the last %s were read", humanSize(size), humanSize(limit)))
		}
	case truncated:
		if i := strings.LastIndexByte(text, '\n'); i > 0 {
			text = text[:i+1]
		}
		shown := strings.Count(text, "\n")
		notes = append(notes, fmt.Sprintf("truncated: the file is %s and only the first %d lines (%s) are shown; read on with tail, or search it with grep_files",
			humanSize(size), shown, humanSize(int64(len(text)))))
	}
	return text, strings.Join(notes, "; "), nil
}

// splitLines splits after each newline, keeping the newlines.
func splitLines(s string) []string {
	return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
}

// decodeText returns data as a Go string: UTF-16 with a byte order mark is
// decoded, a UTF-8 byte order mark dropped, and invalid UTF-8 replaced.
func decodeText(data []byte) (string, string) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		le := data[0] == 0xFF
		data = data[2:]
		u := make([]uint16, len(data)/2)
		for i := range u {
			if le {
				u[i] = uint16(data[2*i]) | uint16(data[2*i+1])<<8
			} else {
				u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
			}
		}
		return string(utf16.Decode(u)), "decoded from UTF-16"
	}
	if utf8.Valid(data) {
		return string(data), ""
	}
	bad := 0
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		i += n
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), fmt.Sprintf("the file is not valid UTF-8 (perhaps Latin-1); %d invalid bytes were replaced with U+FFFD, so do not write this text back unchanged", bad)
}

type readMultipleArgs struct {
	Paths []string `json:"paths" jsonschema:"files to read; each is read on its own and a failure is reported for that file only"`
	Head  int      `json:"head,omitempty" jsonschema:"return only the first N lines of each file"`
}

func (a *readMultipleArgs) Validate() error {
	if len(a.Paths) == 0 {
		return errors.New("paths is empty: give at least one file")
	}
	if len(a.Paths) > maxMultipleFiles {
		return fmt.Errorf("%d paths given; read at most %d at a time", len(a.Paths), maxMultipleFiles)
	}
	if a.Head < 0 {
		return errors.New("head must be a positive line count")
	}
	return nil
}

const maxMultipleFiles = 100

func (s *Server) readMultipleFiles() mcpkit.Tool {
	return mcpkit.NewTool("read_multiple_files",
		"Read several text files in one call. Each file's text follows a header line with its path; "+
			"a file that cannot be read gets an error line of its own and the others are still returned. "+
			"The total output is capped at the server's read limit.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, in readMultipleArgs) (*mcp.CallToolResult, error) {
			sb := s.sandbox(ctx)
			var b strings.Builder
			budget := s.opts.MaxReadBytes
			failed := 0
			for i, p := range in.Paths {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				mcpkit.Progress(ctx, req, float64(i), float64(len(in.Paths)), p)
				if i > 0 {
					b.WriteString("\n")
				}
				loc, err := sb.Resolve(p)
				if err == nil {
					var text, note string
					if budget <= 0 {
						err = errors.New("not read: the output limit was reached; read this file on its own")
					} else if text, note, err = s.readText(loc, in.Head, 0, budget); err == nil {
						budget -= int64(len(text))
						fmt.Fprintf(&b, "=== %s ===\n%s", loc.Path(), text)
						if !strings.HasSuffix(text, "\n") {
							b.WriteString("\n")
						}
						if note != "" {
							fmt.Fprintf(&b, "[domo-files: %s]\n", note)
						}
						continue
					}
				}
				failed++
				fmt.Fprintf(&b, "=== %s ===\nerror: %v\n", shownName(p), err)
			}
			if failed == len(in.Paths) {
				return mcpkit.Errorf("%s", b.String()), nil
			}
			return mcpkit.Text(b.String()), nil
		},
		mcpkit.Title("Read multiple files"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			lineCountSchema("head")(sc)
			sc.Properties["paths"].MinItems = jsonschema.Ptr(1)
			sc.Properties["paths"].MaxItems = jsonschema.Ptr(maxMultipleFiles)
		}),
	)
}

type noArgs struct{}

func (s *Server) listAllowedDirectories() mcpkit.Tool {
	type out struct {
		Directories []string `json:"directories" jsonschema:"absolute paths of the directories this session may access"`
	}
	return mcpkit.NewTool("list_allowed_directories",
		"List the directories this server may read and change. Everything below them is accessible; nothing else is.",
		readOnly,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			dirs := s.sandbox(ctx).ShownDirs()
			text := "Allowed directories:\n" + strings.Join(dirs, "\n")
			if len(dirs) == 0 {
				text = "No directories are allowed in this session: the client's roots name none of the server's allowed directories."
			}
			return mcpkit.Structured(text, out{Directories: dirs}), nil
		},
		mcpkit.Title("List allowed directories"),
		mcpkit.Output[out](nil),
	)
}
