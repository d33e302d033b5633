//go:build linux

package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Attacks on the server's time and memory: arguments and trees that make
// a call hang, run for hours, or allocate far past its limits.

// allocatedDuring reports how many bytes the process allocated while f ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestEditFileGrowthBounded makes edit_file build results far over the
// write limit from a tiny file and a small request. The limit must stop
// each edit before its result is built, not after: one edit of a 1 MiB
// file replacing every byte with 100 KiB would otherwise need 100 GiB.
func TestEditFileGrowthBounded(t *testing.T) {
	dir := realTempDir(t)
	opts := DefaultOptions()
	opts.MaxWriteBytes = 1 << 20
	c := newTestClient(t, opts, dir)
	// Sized so that without the bound each case allocates about 100 MB,
	// enough to see and small enough not to take the test machine down.
	tests := []struct {
		name  string
		file  string
		edits []any
	}{
		{
			name:  "replace_all with a long new_text",
			file:  strings.Repeat("a", 1000),
			edits: []any{map[string]any{"old_text": "a", "new_text": strings.Repeat("b", 100_000), "replace_all": true}},
		},
		{
			name: "each edit multiplies the last",
			file: strings.Repeat("a", 1000),
			edits: []any{
				map[string]any{"old_text": "a", "new_text": strings.Repeat("b", 10), "replace_all": true},
				map[string]any{"old_text": "b", "new_text": strings.Repeat("c", 10), "replace_all": true},
				map[string]any{"old_text": "c", "new_text": strings.Repeat("d", 10), "replace_all": true},
				map[string]any{"old_text": "d", "new_text": strings.Repeat("e", 10), "replace_all": true},
				map[string]any{"old_text": "e", "new_text": strings.Repeat("f", 10), "replace_all": true},
			},
		},
		{
			// old_text matches only ignoring whitespace, so new_text's
			// 5,000 lines are each re-indented to the file's 20 KB.
			name:  "re-indented to a huge indentation",
			file:  strings.Repeat(" ", 20_000) + "x\n",
			edits: []any{map[string]any{"old_text": "\tx", "new_text": strings.Repeat("y\n", 5000)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(p, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			var text string
			var isErr bool
			n := allocatedDuring(func() {
				text, isErr = callTool(t, c, "edit_file", map[string]any{"path": p, "edits": tt.edits})
			})
			if !isErr || !strings.Contains(text, "write limit") {
				t.Errorf("edit_file = %.200q, want a refusal naming the write limit", text)
			}
			if n > 32<<20 {
				t.Errorf("edit_file allocated %d MiB to refuse an edit over a 1 MiB limit", n>>20)
			}
			if got := mustReadFile(t, p); got != tt.file {
				t.Error("the file changed")
			}
		})
	}
}

// TestEditFileLooseMatchLinear gives edit_file an old_text that matches
// the start of the file at every line, ignoring whitespace, but never in
// full. Trying it at each line costs lines × old lines comparisons: ten
// billion here, minutes of CPU that cancellation cannot stop.
func TestEditFileLooseMatchLinear(t *testing.T) {
	dir := realTempDir(t)
	p := filepath.Join(dir, "f.txt")
	file := strings.Repeat("a\n", 100_000)
	if err := os.WriteFile(p, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t, DefaultOptions(), dir)
	tests := []struct {
		name    string
		old     string
		wantErr string
	}{
		{name: "never matches in full", old: strings.Repeat(" a\n", 50_000) + "b", wantErr: "not found"},
		{name: "matches twice", old: strings.Repeat(" a\n", 50_000), wantErr: "occurs 2 times when ignoring indentation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, ok := callBounded(t, c, 10*time.Second, "edit_file", map[string]any{
				"path": p, "edits": []any{map[string]any{"old_text": tt.old, "new_text": "x"}},
			})
			if !ok {
				t.Fatal("edit_file did not answer within 10s")
			}
			if text := resultText(res); !res.IsError || !strings.Contains(text, tt.wantErr) {
				t.Errorf("edit_file = %.200q, want an error with %q", text, tt.wantErr)
			}
			t.Logf("answered in %v", time.Since(start))
		})
	}
}

// TestNarrowToFIFORoot declares an MCP root that is a FIFO inside the
// allowed directory. Opening it as a directory must fail, not wait for a
// writer while holding the session.
func TestNarrowToFIFORoot(t *testing.T) {
	dir := realTempDir(t)
	writeTree(t, dir, map[string]string{"file.txt": "x"})
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	sb, err := NewSandbox([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, root string }{
		{"fifo", fifo},
		{"regular file", filepath.Join(dir, "file.txt")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan []string, 1)
			go func() {
				n, _ := sb.Narrow([]string{"file://" + tt.root})
				done <- n.ShownDirs()
			}()
			select {
			case dirs := <-done:
				if len(dirs) != 0 {
					t.Errorf("narrowed to %v, want no directories", dirs)
				}
			case <-time.After(5 * time.Second):
				t.Error("Narrow blocked opening the root")
				releaseFIFOs(fifo)
				<-done
			}
		})
	}
}

// releaseFIFOs opens each FIFO for writing, which lets an open blocked on
// it for reading return.
func releaseFIFOs(paths ...string) {
	for _, p := range paths {
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
}

// TestDirectorySwappedForFIFO exchanges a directory with a FIFO as fast as
// it can while tools list, walk and count it. An open of a directory that
// has just become a FIFO must fail, not block until a writer comes: that
// would hang the call for good, since cancellation cannot reach a blocked
// open.
func TestDirectorySwappedForFIFO(t *testing.T) {
	dir := realTempDir(t)
	writeTree(t, dir, map[string]string{"race/d/a.txt": "a\n", "race/d/sub/b.txt": "b\n"})
	d, fifo := filepath.Join(dir, "race/d"), filepath.Join(dir, "race/fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	c := newTestClient(t, DefaultOptions(), dir)

	stop := swapLoop(d, fifo, nil)
	defer func() {
		stop()
		// Free any call still blocked, so the test can end.
		for range 100 {
			releaseFIFOs(d, fifo)
			time.Sleep(time.Millisecond)
		}
	}()

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_directory", map[string]any{"path": d}},
		{"directory_tree", map[string]any{"path": dir + "/race"}},
		{"directory_tree", map[string]any{"path": dir, "max_depth": 1}},
		{"search_files", map[string]any{"path": dir, "pattern": "*.txt"}},
		{"grep_files", map[string]any{"path": dir, "pattern": "a"}},
		{"delete_file", map[string]any{"path": d}},
	}
	deadline := time.Now().Add(3 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		call := calls[n%len(calls)]
		if _, ok := callBounded(t, c, 5*time.Second, call.tool, call.args); !ok {
			t.Fatalf("%s %v blocked after %d calls", call.tool, call.args, n)
		}
	}
}

// TestDeepTreeWalkBounded walks a chain of directories 6,000 deep. Every
// open in a walk resolves the path from the top again, so without a bound
// on depth a walk costs depth² lookups: half a minute here, and each
// move_file of a chain into another adds up to 2,000 levels.
func TestDeepTreeWalkBounded(t *testing.T) {
	dir := realTempDir(t)
	const depth = 6000
	deep := filepath.Join(dir, "deep")
	if err := os.Mkdir(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(deep)
	if err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := r.Mkdir("d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := r.OpenRoot("d")
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		r = next
	}
	if err := r.WriteFile("needle.txt", []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Close()
	c := newTestClient(t, DefaultOptions(), dir)
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"search_files", map[string]any{"path": deep, "pattern": "needle.txt"}},
		{"grep_files", map[string]any{"path": deep, "pattern": "needle"}},
		{"delete_file", map[string]any{"path": deep, "recursive": true}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			start := time.Now()
			res, ok := callBounded(t, c, 15*time.Second, tt.tool, tt.args)
			if !ok {
				t.Fatal("no answer within 15s")
			}
			if res.IsError {
				t.Errorf("%s failed: %s", tt.tool, resultText(res))
			}
			t.Logf("answered in %v: %.200s", time.Since(start), resultText(res))
		})
	}
	if _, err := os.Lstat(deep); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("delete_file left the deep tree behind: %v", err)
	}
}

// TestGlobAlternativesBounded gives glob patterns whose {…} groups
// multiply: the matcher tries every combination against each name in
// turn, so twenty-four groups of two take it minutes per name, in one call
// that cancellation cannot interrupt. Patterns like that are refused;
// ordinary groups still work.
func TestGlobAlternativesBounded(t *testing.T) {
	dir := realTempDir(t)
	writeTree(t, dir, map[string]string{strings.Repeat("a", 100) + ".txt": "a\n"})
	c := newTestClient(t, DefaultOptions(), dir)
	bomb := strings.Repeat("{a,*}", 24) + "x"
	nested := strings.Repeat("{{,},{,}}", 12) + "x"
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr bool
	}{
		{"search pattern", "search_files", map[string]any{"path": dir, "pattern": bomb}, true},
		{"search nested groups", "search_files", map[string]any{"path": dir, "pattern": nested}, true},
		{"search exclude", "search_files", map[string]any{"path": dir, "pattern": "*", "exclude": []any{bomb}}, true},
		{"tree exclude", "directory_tree", map[string]any{"path": dir, "exclude": []any{bomb}}, true},
		{"grep include", "grep_files", map[string]any{"path": dir, "pattern": "a", "include": []any{bomb}}, true},
		{"grep exclude", "grep_files", map[string]any{"path": dir, "pattern": "a", "exclude": []any{bomb}}, true},
		{"many extensions", "search_files", map[string]any{"path": dir, "pattern": "*.{go,ts,tsx,js,jsx,py,rb,java,c,h,cpp,hpp,rs,kt,txt}"}, false},
		{"several groups", "search_files", map[string]any{"path": dir, "pattern": "{a,b,c,d}{a,b,c,d}*.{txt,md,go,rs}"}, false},
		{"literal braces", "search_files", map[string]any{"path": dir, "pattern": strings.Repeat(`\{a,*\}[{]`, 24) + "*"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ok := callBounded(t, c, 10*time.Second, tt.tool, tt.args)
			if !ok {
				t.Fatal("no answer within 10s")
			}
			text := resultText(res)
			if res.IsError != tt.wantErr {
				t.Errorf("%s: error %v, want %v: %.300s", tt.tool, res.IsError, tt.wantErr, text)
			}
			if tt.wantErr && !strings.Contains(text, "alternatives") {
				t.Errorf("%s: %.300s; want a message about alternatives", tt.tool, text)
			}
		})
	}
}

// TestGlobAlternatives counts what brace expansion makes of a glob.
func TestGlobAlternatives(t *testing.T) {
	tests := []struct {
		pattern string
		want    int
	}{
		{"*.go", 1},
		{"{a,b}", 2},
		{"{a,b}{c,d,e}", 6},
		{"{a,{b,c}}", 3},
		{"{a{b,c},d}", 3},
		{"{,}", 2},
		{`\{a,b\}`, 1},
		{"[{]a,b[}]", 1},
		{"{[,],x}", 2},
		{"{[\\]],x}", 2},
		{strings.Repeat("{a,b}", 40), maxGlobAlternatives + 1},
		{strings.Repeat("{a,b,", 40) + "c" + strings.Repeat("}", 40), 81},
	}
	for _, tt := range tests {
		if got := globAlternatives(tt.pattern); got != tt.want {
			t.Errorf("globAlternatives(%q) = %d, want %d", tt.pattern, got, tt.want)
		}
	}
}

// TestGrepPatternCost searches long lines with patterns Go's regexp
// matches slowly: its time grows with the line's length times the size of
// the compiled pattern, and one match cannot be interrupted. A pattern of
// many counted repeats is refused; a slow but allowed one must still stop
// between lines when the call is cancelled.
func TestGrepPatternCost(t *testing.T) {
	dir := realTempDir(t)
	line := strings.Repeat("a", 256<<10)
	writeTree(t, dir, map[string]string{"long.txt": strings.Repeat(line+"\n", 60)})
	c := newTestClient(t, DefaultOptions(), dir)

	t.Run("huge program refused", func(t *testing.T) {
		res, ok := callBounded(t, c, 10*time.Second, "grep_files", map[string]any{
			"path": dir, "pattern": strings.Repeat("[ab]{1000}", 50) + "c", "max_file_bytes": 32 << 20,
		})
		if !ok {
			t.Fatal("no answer within 10s")
		}
		if text := resultText(res); !res.IsError || !strings.Contains(text, "too complex") {
			t.Errorf("grep_files = %.300s; want it refused as too complex", text)
		}
	})
	t.Run("ordinary counted repeats allowed", func(t *testing.T) {
		if text, isErr := callTool(t, c, "grep_files", map[string]any{"path": dir, "pattern": `[a-z]{1,100}@[a-z]{1,100}\.com`, "max_file_bytes": 1}); isErr {
			t.Errorf("grep_files refused an ordinary pattern: %s", text)
		}
	})
	t.Run("cancelled between long lines", func(t *testing.T) {
		const pattern = "[ab]{30}c"
		start := time.Now()
		regexp.MustCompile(pattern).MatchString(line)
		perLine := time.Since(start) // a race-detector build is ten times slower
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "grep_files"
		req.Params.Arguments = map[string]any{"path": dir, "pattern": pattern, "max_file_bytes": 32 << 20}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = c.CallTool(ctx, req)
		}()
		// All 60 lines take 60 × perLine; stopping after the line being
		// matched takes one or two.
		limit := 500*time.Millisecond + 3*perLine + 2*time.Second
		select {
		case <-done:
		case <-time.After(limit):
			t.Fatalf("grep_files went on for %v after it was cancelled (one line takes %v)", limit, perLine)
		}
	})
}
