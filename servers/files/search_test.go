package files

import (
	"fmt"
	"strings"
	"testing"
)

func TestSearchFiles(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	d := f.dir
	runToolCases(t, f, "search_files", []toolCase{
		{name: "base name at any depth", args: map[string]any{"path": d, "pattern": "*.go"}, want: []string{d + "/sub/b.go\n", "1 match\n"}},
		{name: "relative path", args: map[string]any{"path": d, "pattern": "sub/*.go"}, want: []string{d + "/sub/b.go\n", "1 match\n"}},
		{name: "double star", args: map[string]any{"path": d, "pattern": "**/d2/*.txt"}, want: []string{d + "/sub/deep/d1/d2/leaf.txt\n", "1 match\n"}},
		{name: "braces", args: map[string]any{"path": d, "pattern": "{a,b}.*"}, want: []string{d + "/a.txt\n", d + "/sub/b.go\n", "2 matches\n"}},
		{name: "relative search path", args: map[string]any{"path": "sub", "pattern": "*.txt"}, want: []string{d + "/sub/deep/d1/d2/leaf.txt\n", "1 match\n"}, notWant: []string{"a.txt"}},
		{name: "directories only", args: map[string]any{"path": d, "pattern": "*", "type": "directory"}, want: []string{d + "/empty/\n", d + "/node_modules/\n", d + "/sub/\n", d + "/sub/deep/d1/d2/\n", "7 matches\n"},
			notWant: []string{"a.txt", "link-in"}},
		{name: "files only", args: map[string]any{"path": d, "pattern": "*", "type": "file"}, want: []string{d + "/a.txt\n", d + "/sub/b.go\n", "6 matches\n"},
			notWant: []string{"empty", "link-in", "dangling"}},
		{name: "symlinks named not followed", args: map[string]any{"path": d, "pattern": "**/*"}, want: []string{d + "/link-in -> sub\n", d + "/link-out -> " + f.top + "/outside\n", d + "/loop-a -> loop-b\n", "18 matches\n"},
			notWant: []string{"secret.txt", "link-in/b.go"}},
		{name: "exclude prunes a subtree", args: map[string]any{"path": d, "pattern": "*.js", "exclude": []any{"node_modules"}}, want: []string{`No entries match "*.js"`, "base names"}},
		{name: "exclude by path", args: map[string]any{"path": d, "pattern": "*.txt", "exclude": []any{"**/deep"}}, want: []string{d + "/a.txt\n", "1 match\n"}, notWant: []string{"leaf.txt"}},
		{name: "no match with a slash", args: map[string]any{"path": d, "pattern": "d2/*.txt"}, want: []string{"No entries match", "start it with **/"}},
		{name: "capped", args: map[string]any{"path": d, "pattern": "*", "max_results": 2}, want: []string{d + "/.hidden\n", d + "/a.txt\n", "[… 16 more matches not shown; narrow with", "2 of 18 matches shown"},
			notWant: []string{"big.bin"}},
		{name: "a file", args: map[string]any{"path": d + "/a.txt", "pattern": "*"}, wantErr: true, want: []string{"not a directory"}},
		{name: "outside", args: map[string]any{"path": f.top + "/outside", "pattern": "*"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink out", args: map[string]any{"path": d + "/link-out", "pattern": "*"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink loop", args: map[string]any{"path": d + "/loop-a", "pattern": "*"}, wantErr: true, want: []string{"too many levels"}},
		{name: "bad glob", args: map[string]any{"path": d, "pattern": "[a-"}, wantErr: true, want: []string{`pattern "[a-" is not a valid glob`}},
		{name: "bad exclude", args: map[string]any{"path": d, "pattern": "*", "exclude": []any{"{a,b"}}, wantErr: true, want: []string{"exclude pattern"}},
		{name: "empty pattern", args: map[string]any{"path": d, "pattern": ""}, wantErr: true, want: []string{"pattern"}},
		{name: "missing pattern", args: map[string]any{"path": d}, wantErr: true, want: []string{"pattern"}},
		{name: "bad type", args: map[string]any{"path": d, "pattern": "*", "type": "socket"}, wantErr: true, want: []string{"type"}},
		{name: "too many results", args: map[string]any{"path": d, "pattern": "*", "max_results": 5001}, wantErr: true, want: []string{"max_results"}},
		{name: "empty path", args: map[string]any{"path": "", "pattern": "*"}, wantErr: true, want: []string{"path is empty"}},
		{name: "unknown argument", args: map[string]any{"path": d, "pattern": "*", "regex": true}, wantErr: true, want: []string{"regex"}},
	})
}

func TestGrepFiles(t *testing.T) {
	f := newWalkFixture(t, DefaultOptions())
	d := f.dir
	var ctxLines, tens strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&ctxLines, "line %d\n", i)
		fmt.Fprintf(&tens, "hit %d\n", i)
	}
	writeTree(t, d, map[string]string{
		"grep/regex.txt": "a+b\naab\n",
		"grep/ctx.txt":   ctxLines.String(),
		"grep/hits.txt":  tens.String(),
		"grep/wide.txt":  strings.Repeat("é", 400) + " needle\n",
		"long/huge.txt":  "needle early\n" + strings.Repeat("x", 2<<20) + " needle\n",
		"long/ok.txt":    "needle\n",
	})
	g := d + "/grep"
	ctx := g + "/ctx.txt"
	runToolCases(t, f, "grep_files", []toolCase{
		{name: "regexp", args: map[string]any{"path": d, "pattern": "^al.ha$"}, want: []string{d + "/a.txt:1:alpha\n", "1 matching line in 1 file", "Skipped 1 binary file, 1 file with lines over 1.0 MiB."},
			notWant: []string{"big.bin:"}},
		{name: "case insensitive", args: map[string]any{"path": d, "pattern": "ALPHA", "case_insensitive": true}, want: []string{d + "/a.txt:1:alpha\n"}},
		{name: "case sensitive by default", args: map[string]any{"path": d, "pattern": "ALPHA"}, want: []string{"No matches in"}},
		{name: "fixed strings", args: map[string]any{"path": g, "pattern": "a+b", "fixed_strings": true}, want: []string{g + "/regex.txt:1:a+b\n", "1 matching line"}, notWant: []string{"aab"}},
		{name: "same as regexp", args: map[string]any{"path": g, "pattern": "a+b"}, want: []string{g + "/regex.txt:2:aab\n", "1 matching line"}, notWant: []string{":1:a+b"}},
		{name: "include", args: map[string]any{"path": d, "pattern": "b", "include": []any{"*.go"}}, want: []string{d + "/sub/b.go:1:package b\n", "1 matching line in 1 file (1 file searched)"}},
		{name: "include by path", args: map[string]any{"path": d, "pattern": "e", "include": []any{"sub/**"}}, want: []string{d + "/sub/deep/d1/d2/leaf.txt:1:leaf\n", "(2 files searched)"}},
		{name: "exclude prunes", args: map[string]any{"path": d, "pattern": "module", "exclude": []any{"node_modules", "grep", "long"}}, want: []string{"No matches in 4 files searched"}},
		{name: "exclude file glob", args: map[string]any{"path": g, "pattern": "line", "exclude": []any{"ctx.*"}}, want: []string{"No matches"}},
		{name: "context lines", args: map[string]any{"path": ctx, "pattern": `^line (5|15)$`, "context_lines": 2}, want: []string{
			ctx + "-3-line 3\n" + ctx + "-4-line 4\n" + ctx + ":5:line 5\n" + ctx + "-6-line 6\n" + ctx + "-7-line 7\n--\n" +
				ctx + "-13-line 13\n" + ctx + "-14-line 14\n" + ctx + ":15:line 15\n" + ctx + "-16-line 16\n" + ctx + "-17-line 17\n" +
				"2 matching lines in 1 file (1 file searched).\n",
		}},
		{name: "overlapping context", args: map[string]any{"path": ctx, "pattern": `^line (5|8)$`, "context_lines": 2}, want: []string{
			ctx + "-3-line 3\n" + ctx + "-4-line 4\n" + ctx + ":5:line 5\n" + ctx + "-6-line 6\n" + ctx + "-7-line 7\n" +
				ctx + ":8:line 8\n" + ctx + "-9-line 9\n" + ctx + "-10-line 10\n2 matching",
		}, notWant: []string{"--"}},
		{name: "context at file start", args: map[string]any{"path": ctx, "pattern": `^line 1$`, "context_lines": 3}, want: []string{
			ctx + ":1:line 1\n" + ctx + "-2-line 2\n" + ctx + "-3-line 3\n" + ctx + "-4-line 4\n1 matching",
		}},
		{name: "separator between files", args: map[string]any{"path": g, "pattern": `^(line|hit) 20$`, "context_lines": 1}, want: []string{
			g + "/ctx.txt-19-line 19\n" + g + "/ctx.txt:20:line 20\n--\n" + g + "/hits.txt-19-hit 19\n" + g + "/hits.txt:20:hit 20\n",
		}},
		{name: "max matches", args: map[string]any{"path": g + "/hits.txt", "pattern": "hit", "max_matches": 3}, want: []string{
			":1:hit 1\n", ":3:hit 3\n", "[… stopped at max_matches=3; more matches may follow; narrow with", "3 matching lines",
		}, notWant: []string{"hit 4"}},
		{name: "max matches with trailing context", args: map[string]any{"path": g + "/hits.txt", "pattern": "hit", "max_matches": 1, "context_lines": 1}, want: []string{
			":1:hit 1\n", "-2-hit 2\n", "stopped at max_matches=1",
		}, notWant: []string{"hit 3"}},
		{name: "long lines cut", args: map[string]any{"path": g + "/wide.txt", "pattern": "needle"}, want: []string{
			":1:" + strings.Repeat("é", 250) + " […line cut: 807 bytes in all]\n",
		}},
		{name: "file with an over-long line skipped", args: map[string]any{"path": d + "/long", "pattern": "needle"}, want: []string{
			d + "/long/ok.txt:1:needle\n", "1 matching line in 1 file (1 file searched).", "Skipped 1 file with lines over 1.0 MiB.",
		}, notWant: []string{"huge.txt"}},
		{name: "max file bytes", args: map[string]any{"path": d + "/long", "pattern": "needle", "max_file_bytes": 1000}, want: []string{
			"Skipped 1 file over max_file_bytes (1000 B).",
		}, notWant: []string{"huge.txt:"}},
		{name: "symlinks not followed", args: map[string]any{"path": d, "pattern": outsideText}, want: []string{"No matches"}},
		{name: "one file", args: map[string]any{"path": d + "/a.txt", "pattern": "beta"}, want: []string{d + "/a.txt:2:beta\n", "1 matching line in 1 file (1 file searched)."}},
		{name: "relative file", args: map[string]any{"path": "a.txt", "pattern": "beta"}, want: []string{d + "/a.txt:2:beta\n"}},
		{name: "one binary file", args: map[string]any{"path": d + "/big.bin", "pattern": "alpha"}, wantErr: true, want: []string{"is a binary file"}},
		{name: "one file with an over-long line", args: map[string]any{"path": d + "/long/huge.txt", "pattern": "needle"}, wantErr: true, want: []string{"longer than 1.0 MiB"}},
		{name: "one file too big", args: map[string]any{"path": d + "/big.bin", "pattern": "alpha", "max_file_bytes": 10}, wantErr: true, want: []string{"over max_file_bytes", "raise max_file_bytes"}},
		{name: "invalid regexp", args: map[string]any{"path": d, "pattern": "func (a"}, wantErr: true, want: []string{"not a valid Go (RE2) regular expression", "missing closing )", "fixed_strings"}},
		{name: "lookahead is not RE2", args: map[string]any{"path": d, "pattern": "a(?=b)"}, wantErr: true, want: []string{"invalid or unsupported Perl syntax"}},
		{name: "outside", args: map[string]any{"path": f.top + "/outside", "pattern": "x"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink out", args: map[string]any{"path": d + "/link-out", "pattern": "x"}, wantErr: true, want: []string{"outside the allowed directories"}},
		{name: "symlink loop", args: map[string]any{"path": d + "/loop-a", "pattern": "x"}, wantErr: true, want: []string{"too many levels"}},
		{name: "missing file", args: map[string]any{"path": d + "/nope.txt", "pattern": "x"}, wantErr: true, want: []string{"does not exist"}},
		{name: "empty pattern", args: map[string]any{"path": d, "pattern": ""}, wantErr: true, want: []string{"pattern"}},
		{name: "missing pattern", args: map[string]any{"path": d}, wantErr: true, want: []string{"pattern"}},
		{name: "too much context", args: map[string]any{"path": d, "pattern": "x", "context_lines": 11}, wantErr: true, want: []string{"context_lines"}},
		{name: "zero max matches", args: map[string]any{"path": d, "pattern": "x", "max_matches": 0}, wantErr: true, want: []string{"max_matches"}},
		{name: "bad include", args: map[string]any{"path": d, "pattern": "x", "include": []any{"[x"}}, wantErr: true, want: []string{"include pattern"}},
		{name: "wrong type", args: map[string]any{"path": d, "pattern": "x", "case_insensitive": "yes"}, wantErr: true, want: []string{"case_insensitive"}},
		{name: "empty path", args: map[string]any{"path": "", "pattern": "x"}, wantErr: true, want: []string{"path is empty"}},
	})
}

func TestGrepOutputLimit(t *testing.T) {
	opts := DefaultOptions()
	opts.MaxReadBytes = 300
	f := newWalkFixture(t, opts)
	writeTree(t, f.dir, map[string]string{"many.txt": strings.Repeat("needle in a line\n", 100)})
	res, text := f.call(t, "grep_files", map[string]any{"path": f.dir + "/many.txt", "pattern": "needle"})
	if res.IsError {
		t.Fatal(text)
	}
	if !strings.Contains(text, "[… stopped: the output reached the server's limit of 300 B; narrow with") {
		t.Errorf("no output-limit note in:\n%s", text)
	}
	if n := strings.Count(text, ":needle in a line"); n < 2 || n > 10 {
		t.Errorf("%d matching lines shown for a 300-byte budget:\n%s", n, text)
	}
}
