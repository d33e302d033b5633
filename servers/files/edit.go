package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/internal/textdist"
	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

type editOp struct {
	OldText    string `json:"old_text" jsonschema:"the text to replace, copied exactly from the file with its indentation; include enough neighbouring lines to make it occur only once"`
	NewText    string `json:"new_text" jsonschema:"the text to put in its place; empty deletes old_text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_text instead of requiring exactly one"`
}

type editArgs struct {
	Path   string   `json:"path" jsonschema:"text file to change, absolute or relative to an allowed directory"`
	Edits  []editOp `json:"edits" jsonschema:"replacements, applied in order, each to the result of the ones before; if any fails, nothing is written"`
	DryRun bool     `json:"dry_run,omitempty" jsonschema:"return the diff without changing the file"`
}

func (a *editArgs) Validate() error {
	if len(a.Edits) == 0 {
		return errors.New("edits is empty: give at least one {old_text, new_text} pair")
	}
	for i, e := range a.Edits {
		switch {
		case e.OldText == "":
			return fmt.Errorf("edits[%d].old_text is empty: copy the text to replace from the file; to insert text, put a neighbouring line in old_text and that line plus the new text in new_text", i)
		case e.OldText == e.NewText:
			return fmt.Errorf("edits[%d] changes nothing: its old_text and new_text are the same", i)
		}
	}
	return nil
}

func (s *Server) editFile() mcpkit.Tool {
	return mcpkit.NewTool("edit_file",
		"Change parts of a text file by replacing text, and get a unified diff of the change. "+
			"Each edit replaces old_text with new_text; old_text must occur exactly once unless replace_all is set, so copy it exactly from the file "+
			"(read it first with read_text_file) with enough surrounding lines to be unique. "+
			"If old_text is not found as is, lines are matched ignoring leading and trailing whitespace, and new_text is re-indented to the file's indentation. "+
			"Edits apply in order; if any fails, nothing is written. Use dry_run to preview the diff. "+
			"CRLF line endings and the presence or absence of a final newline are kept.",
		editHints,
		func(ctx context.Context, req mcp.CallToolRequest, in editArgs) (*mcp.CallToolResult, error) {
			loc, err := s.resolve(ctx, in.Path)
			if err != nil {
				return nil, err
			}
			src, err := s.readForEdit(loc)
			if err != nil {
				return nil, err
			}
			edited, notes, err := applyEdits(ctx, src.text, in.Edits, src.normalizeEdits(), s.opts.MaxWriteBytes)
			if err != nil {
				return nil, err
			}
			edited = keepFinalNewline(src.text, edited)
			if edited == src.text {
				return mcpkit.Text(fmt.Sprintf("the edits leave %s unchanged; nothing was written", loc.Path())), nil
			}
			data := src.encode(edited)
			if n := int64(len(data)); n > s.opts.MaxWriteBytes {
				return nil, fmt.Errorf("the edited file would be %s, over this server's write limit of %s; nothing was written", humanSize(n), humanSize(s.opts.MaxWriteBytes))
			}
			name := strings.TrimPrefix(loc.Path(), "/")
			diff, added, removed := unifiedDiff("a/"+name, "b/"+name, src.text, edited)
			var b strings.Builder
			if in.DryRun {
				fmt.Fprintf(&b, "dry run: %s was not changed; the edits would add %d and remove %d lines:\n", loc.Path(), added, removed)
			} else {
				if err := src.unchanged(loc); err != nil {
					return nil, err
				}
				if err := atomicWrite(loc, data); err != nil {
					return nil, err
				}
				fmt.Fprintf(&b, "edited %s: added %d and removed %d lines:\n", loc.Path(), added, removed)
			}
			for _, n := range append(src.notes(), notes...) {
				fmt.Fprintf(&b, "note: %s\n", n)
			}
			b.WriteString("\n")
			b.WriteString(diff)
			return mcpkit.Text(b.String()), nil
		},
		mcpkit.Title("Edit file"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			edits := sc.Properties["edits"]
			edits.MinItems = jsonschema.Ptr(1)
			if edits.Items != nil {
				edits.Items.Properties["old_text"].MinLength = jsonschema.Ptr(1)
			}
		}),
	)
}

// editSource is a file as edit_file works on it: its text without a byte
// order mark and, in a file whose lines all end in CRLF, with LF endings;
// encode puts both back.
type editSource struct {
	text  string
	info  fs.FileInfo
	bom   bool
	crlf  bool
	valid bool // the text is valid UTF-8
	mixed bool // some lines end in CRLF, some in LF: left as they are
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readForEdit reads loc for edit_file, refusing what edit_file cannot
// change without damage.
func (s *Server) readForEdit(loc Location) (editSource, error) {
	f, fi, err := openRegular(loc)
	if err != nil {
		return editSource{}, err
	}
	defer f.Close()
	limit := min(s.opts.MaxReadBytes, s.opts.MaxWriteBytes)
	tooBig := func(size int64) error {
		return fmt.Errorf("%s is %s, over the %s edit_file can change on this server", loc.Path(), humanSize(size), humanSize(limit))
	}
	if fi.Size() > limit {
		return editSource{}, tooBig(fi.Size())
	}
	data, more, err := readLimited(f, fi.Size(), limit)
	if err != nil {
		return editSource{}, describe(loc, err)
	}
	if more {
		return editSource{}, tooBig(limit + 1)
	}
	if kind, bin := sniffBinary(data); bin {
		return editSource{}, fmt.Errorf("%s is a binary file (%s); edit_file changes text files only", loc.Path(), kind)
	}
	if bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return editSource{}, fmt.Errorf("%s is UTF-16 text, which edit_file cannot change without re-encoding it: read it with read_text_file and replace it with write_file if UTF-8 is acceptable", loc.Path())
	}
	src := editSource{info: fi}
	if bytes.HasPrefix(data, utf8BOM) {
		src.bom = true
		data = data[len(utf8BOM):]
	}
	// The text is edited as bytes, never decoded, so bytes that are not
	// UTF-8 outside the edited spans are written back exactly.
	src.text = string(data)
	src.valid = strings.ToValidUTF8(src.text, "") == src.text
	if crlf := strings.Count(src.text, "\r\n"); crlf > 0 {
		if crlf == strings.Count(src.text, "\n") {
			src.crlf = true
			src.text = strings.ReplaceAll(src.text, "\r\n", "\n")
		} else {
			src.mixed = true
		}
	}
	return src, nil
}

// normalizeEdits reports whether CRLF in edit texts should become LF: in
// a CRLF file, whose text is held with LF, and in an LF file.
func (src editSource) normalizeEdits() bool { return !src.mixed }

func (src editSource) encode(text string) []byte {
	if src.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if src.bom {
		return append(append([]byte(nil), utf8BOM...), text...)
	}
	return []byte(text)
}

func (src editSource) notes() []string {
	var notes []string
	if src.crlf {
		notes = append(notes, "the file's lines end in CRLF, and still do; the diff shows them without the CR")
	}
	if src.mixed {
		notes = append(notes, "the file mixes CRLF and LF line endings; they were left as they were, and replaced lines end in LF")
	}
	if !src.valid {
		notes = append(notes, "the file is not valid UTF-8; bytes outside the edited text were kept exactly, but the diff shows them as U+FFFD")
	}
	return notes
}

// unchanged fails when loc is no longer the file that was read, so a
// change made by someone else meanwhile is not overwritten.
func (src editSource) unchanged(loc Location) error {
	now, err := loc.Lstat()
	if err != nil || !os.SameFile(now, src.info) || now.Size() != src.info.Size() || !now.ModTime().Equal(src.info.ModTime()) {
		return fmt.Errorf("%s changed while the edits were being prepared; nothing was written: read it again and redo the edits", loc.Path())
	}
	return nil
}

// keepFinalNewline gives edited the final newline text had, or its lack of
// one: models often add or drop it by accident when editing the last line.
func keepFinalNewline(text, edited string) string {
	if text == "" || edited == "" {
		return edited
	}
	had, has := strings.HasSuffix(text, "\n"), strings.HasSuffix(edited, "\n")
	switch {
	case had && !has:
		return edited + "\n"
	case !had && has:
		return strings.TrimSuffix(edited, "\n")
	}
	return edited
}

// applyEdits applies edits to text in order. notes mention edits that
// matched only when ignoring whitespace. An edit whose result would be
// over limit bytes fails before the result is built: a few short edits
// can otherwise multiply a small file past any memory.
func applyEdits(ctx context.Context, text string, edits []editOp, normalize bool, limit int64) (string, []string, error) {
	var notes []string
	for i, e := range edits {
		if err := ctx.Err(); err != nil {
			return "", nil, err
		}
		old, repl := e.OldText, e.NewText
		if normalize {
			old = strings.ReplaceAll(old, "\r\n", "\n")
			repl = strings.ReplaceAll(repl, "\r\n", "\n")
		}
		out, n, loose, err := applyEdit(ctx, text, old, repl, e.ReplaceAll, limit)
		if err != nil {
			var after string
			if i > 0 {
				after = fmt.Sprintf(" (line numbers count in the text as edits[0..%d] left it)", i-1)
			}
			return "", nil, fmt.Errorf("edits[%d]: %w%s; no edit was applied and the file is unchanged", i, err, after)
		}
		if loose {
			times := ""
			if n > 1 {
				times = fmt.Sprintf(" (%d places)", n)
			}
			notes = append(notes, fmt.Sprintf("edits[%d] matched only when ignoring leading and trailing whitespace%s; new_text was re-indented to the file's indentation", i, times))
		}
		text = out
	}
	return text, notes, nil
}

// applyEdit replaces old with repl in text: an exact match first, else a
// match of whole lines ignoring leading and trailing whitespace. It
// returns how many places were replaced and whether the match was loose.
func applyEdit(ctx context.Context, text, old, repl string, all bool, limit int64) (string, int, bool, error) {
	switch n := strings.Count(text, old); {
	case n == 1 || (n > 1 && all):
		if int64(len(text))+int64(n)*int64(len(repl)-len(old)) > limit {
			return "", 0, false, overLimit(limit)
		}
		return strings.ReplaceAll(text, old, repl), n, false, nil
	case n > 1:
		return "", 0, false, ambiguousEdit(exactLines(text, old), "")
	}
	lines := diffSplit(text)
	keys := make([]string, len(lines))
	for i, l := range lines {
		keys[i] = strings.TrimSpace(l)
	}
	oldLines := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	oldKeys := make([]string, len(oldLines))
	blank := true
	for i, l := range oldLines {
		oldKeys[i] = strings.TrimSpace(l)
		blank = blank && oldKeys[i] == ""
	}
	if blank {
		return "", 0, false, errors.New("old_text was not found and is only whitespace: include a line with text in it")
	}
	starts := looseMatches(keys, oldKeys)
	switch {
	case len(starts) == 0:
		return "", 0, false, fmt.Errorf("old_text was not found, not even ignoring indentation; %s; read the file again and copy old_text exactly", closestLine(ctx, lines, oldKeys))
	case len(starts) > 1 && !all:
		for i := range starts {
			starts[i]++
		}
		return "", 0, false, ambiguousEdit(starts, " when ignoring indentation")
	}
	// Re-indenting gives each line of repl at most the longest indentation
	// of the lines it replaces; bound the result by that before building it.
	size, replLines := int64(len(text)), int64(strings.Count(repl, "\n")+1)
	for _, st := range starts {
		indent := 0
		for _, l := range lines[st : st+len(oldLines)] {
			indent = max(indent, len(leadingSpace(l)))
		}
		if size += int64(len(repl)) + replLines*int64(indent); size > limit {
			return "", 0, false, overLimit(limit)
		}
	}
	var b strings.Builder
	next := 0
	for _, st := range starts {
		for _, l := range lines[next:st] {
			b.WriteString(l)
		}
		b.WriteString(reindent(repl, oldLines, lines[st:st+len(oldLines)]))
		next = st + len(oldLines)
	}
	for _, l := range lines[next:] {
		b.WriteString(l)
	}
	return b.String(), len(starts), true, nil
}

// looseMatches returns where oldKeys occurs in keys, as the index of its
// first line, without overlaps. It searches the keys joined by newlines,
// which no key holds, so the search takes time linear in their length, not
// len(keys) × len(oldKeys) comparisons.
func looseMatches(keys, oldKeys []string) []int {
	hay := "\n" + strings.Join(keys, "\n") + "\n"
	needle := "\n" + strings.Join(oldKeys, "\n") + "\n"
	var starts []int
	line, from := 0, 0 // line counts the newlines in hay[:from]
	for {
		i := strings.Index(hay[from:], needle)
		if i < 0 {
			return starts
		}
		line += strings.Count(hay[from:from+i], "\n")
		starts = append(starts, line)
		// Go on from the match's last newline, which starts the next line.
		line += len(oldKeys)
		from += i + len(needle) - 1
	}
}

func overLimit(limit int64) error {
	return fmt.Errorf("the edit would make the file larger than this server's write limit of %s", humanSize(limit))
}

// ambiguousEdit is the error for old_text found in more than one place, at
// the 1-based lines given.
func ambiguousEdit(lines []int, how string) error {
	shown := make([]string, 0, 10)
	for i, l := range lines {
		if i == 10 {
			shown = append(shown, "…")
			break
		}
		shown = append(shown, fmt.Sprint(l))
	}
	return fmt.Errorf("old_text occurs %d times%s (lines %s): add surrounding lines to make it unique or set replace_all",
		len(lines), how, strings.Join(shown, ", "))
}

// exactLines returns the 1-based line of each occurrence of old in text.
func exactLines(text, old string) []int {
	var lines []int
	line, from := 1, 0
	for {
		i := strings.Index(text[from:], old)
		if i < 0 {
			return lines
		}
		line += strings.Count(text[from:from+i], "\n")
		lines = append(lines, line)
		line += strings.Count(old, "\n")
		from += i + len(old)
	}
}

// reindent turns repl into the lines replacing region, a run of file lines
// that matched oldLines ignoring whitespace. Each indentation old_text used
// is mapped to the one the file has on the same line, and repl's lines are
// indented through that map (by the longest mapped prefix, else at the
// first line's level). The region's final newline is kept.
func reindent(repl string, oldLines, region []string) string {
	if repl == "" {
		return ""
	}
	indents := map[string]string{}
	var keys []string
	base := ""
	for j, l := range oldLines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		oi := leadingSpace(l)
		if _, ok := indents[oi]; !ok {
			if len(keys) == 0 {
				base = leadingSpace(region[j])
			}
			indents[oi] = leadingSpace(region[j])
			keys = append(keys, oi)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	lines := strings.Split(strings.TrimSuffix(repl, "\n"), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			lines[i] = ""
			continue
		}
		li := leadingSpace(l)
		lines[i] = base + l[len(li):]
		for _, k := range keys {
			if strings.HasPrefix(li, k) {
				lines[i] = indents[k] + l[len(k):]
				break
			}
		}
	}
	out := strings.Join(lines, "\n")
	if strings.HasSuffix(region[len(region)-1], "\n") {
		out += "\n"
	}
	return out
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// closestLine names the line of the file most like old_text's first
// non-blank line, so a model can see what it misremembered.
func closestLine(ctx context.Context, lines, oldKeys []string) string {
	const maxLen = 200
	var want string
	for _, k := range oldKeys {
		if k != "" {
			want = k[:min(len(k), maxLen)]
			break
		}
	}
	best, bestDist := -1, 0
	for i, l := range lines {
		if i%1024 == 0 && ctx.Err() != nil {
			break
		}
		k := strings.TrimSpace(l)
		k = k[:min(len(k), maxLen)]
		if k == "" || (best >= 0 && max(len(k)-len(want), len(want)-len(k)) >= bestDist) {
			continue
		}
		if d := textdist.Levenshtein(k, want); best < 0 || d < bestDist {
			best, bestDist = i, d
		}
	}
	show := func(l string) string {
		l = strings.TrimRight(l, "\r\n")
		if len(l) > maxLen {
			l = l[:maxLen] + "…"
		}
		return fmt.Sprintf("%q", l)
	}
	switch {
	case best < 0:
		return "the file has no non-blank lines"
	case bestDist > 0:
		return fmt.Sprintf("the line most like its first line is line %d: %s", best+1, show(lines[best]))
	}
	// The first line is there: say where the rest stops matching.
	first := 0
	for first < len(oldKeys) && oldKeys[first] == "" {
		first++
	}
	start := best - first
	for j := first + 1; j < len(oldKeys); j++ {
		at := start + j
		if at >= len(lines) {
			return fmt.Sprintf("its first line is line %d, but the file ends before the rest of old_text", best+1)
		}
		if strings.TrimSpace(lines[at]) != oldKeys[j] {
			return fmt.Sprintf("its first line is line %d, but line %d is %s where old_text has %s", best+1, at+1, show(lines[at]), show(oldKeys[j]))
		}
	}
	return fmt.Sprintf("its first line is line %d, but the blank lines around it differ", best+1)
}
