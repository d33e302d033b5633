package launch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeApp writes its arguments, each ended by a NUL, to $ARGV_OUT.
const fakeApp = `#!/bin/sh
: > "$ARGV_OUT"
for a in "$@"; do printf '%s\0' "$a" >> "$ARGV_OUT"; done
`

// world is a fake desktop: two data dirs (home before system) and a bin
// directory holding fakeapp.
type world struct {
	home, sys, bin string
	f              Finder
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{
		home: filepath.Join(root, "home"),
		sys:  filepath.Join(root, "sys"),
		bin:  filepath.Join(root, "bin"),
	}
	writeFile(t, filepath.Join(w.bin, "fakeapp"), fakeApp, 0o755)
	writeFile(t, filepath.Join(w.bin, "notexec"), "#!/bin/sh\n", 0o644)
	w.f = Finder{Dirs: []string{w.home, w.sys}, PATH: w.bin}
	return w
}

// desktop writes a desktop file under dir's applications directory.
func (w *world) desktop(t *testing.T, dir, rel, body string) string {
	t.Helper()
	p := filepath.Join(dir, "applications", rel)
	writeFile(t, p, body, 0o644)
	return p
}

func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

func app(name, exec string, extra ...string) string {
	return "[Desktop Entry]\nType=Application\nName=" + name + "\nExec=" + exec + "\n" + strings.Join(extra, "\n") + "\n"
}

func TestFindByID(t *testing.T) {
	w := newWorld(t)
	w.desktop(t, w.home, "foo.desktop", app("Foo Home", "fakeapp"))
	w.desktop(t, w.sys, "foo.desktop", app("Foo System", "fakeapp"))
	w.desktop(t, w.sys, "vendor/bar.desktop", app("Bar", "fakeapp"))
	w.desktop(t, w.sys, "org.example.Calc.desktop", app("Calculator", "fakeapp"))
	w.desktop(t, w.sys, "link.desktop", "[Desktop Entry]\nType=Link\nName=Link\nURL=https://example.com\n")
	w.desktop(t, w.home, "gone.desktop", app("Gone", "fakeapp", "Hidden=true"))
	w.desktop(t, w.sys, "gone.desktop", app("Gone System", "fakeapp"))

	tests := []struct {
		name, query, wantID, wantName string
	}{
		{"with suffix", "foo.desktop", "foo.desktop", "Foo Home"},
		{"without suffix", "foo", "foo.desktop", "Foo Home"},
		{"subdirectory", "vendor-bar.desktop", "vendor-bar.desktop", "Bar"},
		{"subdirectory without suffix", "vendor-bar", "vendor-bar.desktop", "Bar"},
		{"reverse DNS", "org.example.Calc", "org.example.Calc.desktop", "Calculator"},
		{"id ignoring case", "ORG.EXAMPLE.CALC", "org.example.Calc.desktop", "Calculator"},
		{"hidden by id", "gone", "gone.desktop", "Gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := w.f.Find(tt.query)
			if err != nil {
				t.Fatalf("Find(%q): %v", tt.query, err)
			}
			if a.ID != tt.wantID || a.Name != tt.wantName {
				t.Errorf("Find(%q) = %q %q, want %q %q", tt.query, a.ID, a.Name, tt.wantID, tt.wantName)
			}
		})
	}

	for _, q := range []string{"link", "vendor/bar.desktop", "bar.desktop"} {
		if a, err := w.f.Find(q); !errors.Is(err, ErrNotFound) {
			t.Errorf("Find(%q) = %+v, %v; want ErrNotFound", q, a, err)
		}
	}
	if a, err := w.f.Find("Bar"); err != nil || a.ID != "vendor-bar.desktop" {
		t.Errorf(`Find("Bar") = %q, %v; want vendor-bar.desktop by name`, a.ID, err)
	}
}

func TestFindByName(t *testing.T) {
	w := newWorld(t)
	w.desktop(t, w.sys, "calc.desktop", app("Calculator", "fakeapp", "Name[de]=Rechner", "GenericName=Arithmetic"))
	w.desktop(t, w.sys, "edit.desktop", app("Text Editor", "fakeapp"))
	w.desktop(t, w.sys, "view.desktop", app("Text Viewer", "fakeapp"))
	w.desktop(t, w.sys, "secret.desktop", app("Secret Tool", "fakeapp", "NoDisplay=true"))
	w.desktop(t, w.sys, "gone.desktop", app("Gone Tool", "fakeapp", "Hidden=true"))
	w.desktop(t, w.sys, "term.desktop", app("Terminal Thing", "fakeapp", "NoDisplay=true"))
	w.desktop(t, w.sys, "term2.desktop", app("Terminal Thing", "fakeapp"))

	tests := []struct {
		name, query, wantID string
	}{
		{"exact", "Calculator", "calc.desktop"},
		{"ignoring case", "cALCULATOR", "calc.desktop"},
		{"generic name", "arithmetic", "calc.desktop"},
		{"prefix", "calc", "calc.desktop"},
		{"substring", "ulato", "calc.desktop"},
		{"unique prefix", "text e", "edit.desktop"},
		{"NoDisplay by name", "secret tool", "secret.desktop"},
		{"shown wins over NoDisplay", "terminal thing", "term2.desktop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := w.f.Find(tt.query)
			if err != nil {
				t.Fatalf("Find(%q): %v", tt.query, err)
			}
			if a.ID != tt.wantID {
				t.Errorf("Find(%q) = %q, want %q", tt.query, a.ID, tt.wantID)
			}
		})
	}

	t.Run("ambiguous", func(t *testing.T) {
		_, err := w.f.Find("text")
		var amb *AmbiguousError
		if !errors.As(err, &amb) {
			t.Fatalf("Find(text) error = %v, want *AmbiguousError", err)
		}
		ids := []string{}
		for _, a := range amb.Apps {
			ids = append(ids, a.ID)
		}
		if !slices.Equal(ids, []string{"edit.desktop", "view.desktop"}) {
			t.Errorf("candidates = %v", ids)
		}
		for _, s := range []string{"Text Editor (edit.desktop)", "Text Viewer (view.desktop)"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not name %q", err, s)
			}
		}
	})

	t.Run("at most ten candidates", func(t *testing.T) {
		for i := range 12 {
			w.desktop(t, w.sys, "many"+strconv.Itoa(i)+".desktop", app("Many "+strconv.Itoa(i), "fakeapp"))
		}
		_, err := w.f.Find("many")
		if err == nil || !strings.Contains(err.Error(), "and 2 more") || strings.Count(err.Error(), ".desktop)") != 10 {
			t.Errorf("error = %v, want ten candidates and 2 more", err)
		}
	})

	for _, q := range []string{"Rechner", "Gone Tool", "nothing like it", ""} {
		t.Run("not found "+q, func(t *testing.T) {
			_, err := w.f.Find(q)
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("Find(%q) error = %v, want ErrNotFound", q, err)
			}
			if q != "" && !strings.Contains(err.Error(), "list the applications") {
				t.Errorf("error %q does not suggest listing", err)
			}
		})
	}
}

func TestList(t *testing.T) {
	w := newWorld(t)
	w.desktop(t, w.sys, "b.desktop", app("beta", "fakeapp", "Comment=Second letter"))
	w.desktop(t, w.sys, "a.desktop", app("Alpha", "fakeapp"))
	w.desktop(t, w.sys, "t.desktop", app("Top", "fakeapp", "Terminal=true"))
	w.desktop(t, w.sys, "n.desktop", app("NoDisplay", "fakeapp", "NoDisplay=true"))
	w.desktop(t, w.sys, "h.desktop", app("Hidden", "fakeapp", "Hidden=true"))
	w.desktop(t, w.sys, "x.desktop", app("TryExec Missing", "fakeapp", "TryExec=no-such-program"))
	w.desktop(t, w.sys, "y.desktop", app("TryExec Present", "fakeapp", "TryExec=fakeapp"))
	w.desktop(t, w.sys, "q.desktop", app("Bad Quote", `fakeapp "open`))
	w.desktop(t, w.sys, "broken.desktop", "not a desktop file\n")

	names := func(apps []App) []string {
		var out []string
		for _, a := range apps {
			out = append(out, a.Name)
		}
		return out
	}
	all, err := w.f.List("")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Alpha", "beta", "Top", "TryExec Present"}; !slices.Equal(names(all), want) {
		t.Errorf("List() = %q, want %q", names(all), want)
	}
	got, err := w.f.List("LETTER")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"beta"}; !slices.Equal(names(got), want) {
		t.Errorf("List(LETTER) = %q, want %q", names(got), want)
	}
	if _, err := (Finder{}).List(""); err == nil {
		t.Error("List with no data dirs: no error")
	}

	if _, err := w.f.Find("x.desktop"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find of an entry whose TryExec is missing: %v, want ErrNotFound", err)
	}
	a, err := w.f.Find("q")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Argv(nil); err == nil || !strings.Contains(err.Error(), "unterminated") {
		t.Errorf("Argv of an entry with a bad Exec: %v", err)
	}
}

func TestTerminal(t *testing.T) {
	w := newWorld(t)
	w.desktop(t, w.sys, "top.desktop", app("Top", "top", "Terminal=true"))
	a, err := w.f.Find("top.desktop")
	if err != nil {
		t.Fatal(err)
	}
	if !a.Terminal {
		t.Error("Terminal = false")
	}
	if _, err := a.Argv(nil); !errors.Is(err, ErrTerminal) {
		t.Errorf("Argv error = %v, want ErrTerminal", err)
	}
}

func TestFindExecutable(t *testing.T) {
	w := newWorld(t)
	fake := filepath.Join(w.bin, "fakeapp")

	for _, q := range []string{"fakeapp", fake} {
		a, err := w.f.Find(q)
		if err != nil {
			t.Fatalf("Find(%q): %v", q, err)
		}
		if a.ID != "" || a.Path != fake || a.Name != "fakeapp" || !slices.Equal(a.Exec, []string{fake}) {
			t.Errorf("Find(%q) = %+v", q, a)
		}
		argv, err := a.Argv([]string{"-x", "a b"})
		if err != nil || !slices.Equal(argv, []string{fake, "-x", "a b"}) {
			t.Errorf("Argv = %q, %v", argv, err)
		}
	}

	for _, q := range []string{"notexec", filepath.Join(w.bin, "notexec"), "bin/fakeapp", "./fakeapp", ".", "..", w.bin} {
		if _, err := w.f.Find(q); !errors.Is(err, ErrNotFound) {
			t.Errorf("Find(%q) error = %v, want ErrNotFound", q, err)
		}
	}

	t.Run("relative PATH entries are ignored", func(t *testing.T) {
		t.Chdir(filepath.Dir(w.bin))
		f := Finder{PATH: "bin"}
		if _, err := f.Find("fakeapp"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Find found fakeapp through a relative PATH entry: %v", err)
		}
	})

	t.Run("desktop file by path", func(t *testing.T) {
		p := w.desktop(t, w.sys, "vendor/thing.desktop", app("Thing", "fakeapp"))
		a, err := w.f.Find(p)
		if err != nil || a.ID != "vendor-thing.desktop" {
			t.Errorf("Find(%s) = %q, %v", p, a.ID, err)
		}
		other := filepath.Join(t.TempDir(), "else.desktop")
		writeFile(t, other, app("Else", "fakeapp"), 0o644)
		a, err = w.f.Find(other)
		if err != nil || a.ID != "else.desktop" {
			t.Errorf("Find(%s) = %q, %v", other, a.ID, err)
		}
	})

	t.Run("program of a desktop entry", func(t *testing.T) {
		w := newWorld(t)
		w.desktop(t, w.sys, "org.example.Fake.desktop", app("Fake Application", "/usr/bin/fakeapp %U"))
		a, err := w.f.Find("fakeapp")
		if err != nil || a.ID != "org.example.Fake.desktop" {
			t.Errorf(`Find("fakeapp") = %q, %v; want the entry that runs it`, a.ID, err)
		}
	})
}

func TestParseEntry(t *testing.T) {
	const file = "\ufeff# comment\n" +
		"[Desktop Entry]\n" +
		"Name[de]=Rechner\n" +
		"Name = Calculator\n" +
		"Name=Second\n" +
		"Comment=one\\stwo\\nthree\\tfour\\rfive\\\\six\\q\n" +
		"Terminal=true\n" +
		"\n" +
		"[Desktop Action new]\n" +
		"Name=New Window\n" +
		"Exec=other\n"
	e, err := parseEntry(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.text("Name"); got != "Calculator" {
		t.Errorf("Name = %q", got)
	}
	if got, want := e.text("Comment"), "one two\nthree\tfour\rfive\\six\\q"; got != want {
		t.Errorf("Comment = %q, want %q", got, want)
	}
	if !e.flag("Terminal") || e.flag("Hidden") {
		t.Error("flags wrong")
	}
	if _, ok := e["Exec"]; ok {
		t.Error("Exec of an action read as the entry's")
	}
	for _, bad := range []string{"Name=x\n", "[Desktop Action a]\nName=x\n", "[Desktop Entry]\nNo equals sign\n", "[Desktop Entry\nName=x\n"} {
		if _, err := parseEntry(strings.NewReader(bad)); err == nil {
			t.Errorf("parseEntry(%q): no error", bad)
		}
	}
}

func TestSplitExec(t *testing.T) {
	tests := []struct {
		name    string
		raw     string // as in the file, before string escapes are undone
		want    []string
		quoted  []bool
		wantErr string
	}{
		{name: "plain", raw: "app  --flag %U", want: []string{"app", "--flag", "%U"}, quoted: []bool{false, false, false}},
		{name: "quoted spaces", raw: `"/opt/My App/bin/app" "two words"`, want: []string{"/opt/My App/bin/app", "two words"}, quoted: []bool{true, true}},
		{name: "escaped quote", raw: `app "say \"hi\""`, want: []string{"app", `say "hi"`}},
		{name: "escaped dollar and backtick", raw: `app "\$HOME \` + "`x`" + `"`, want: []string{"app", "$HOME `x`"}},
		{name: "backslash needs four", raw: `app "a\\\\b"`, want: []string{"app", `a\b`}},
		{name: "dollar after string escape", raw: `app "\\$x"`, want: []string{"app", "$x"}},
		{name: "empty quoted", raw: `app ""`, want: []string{"app", ""}},
		{name: "joined quote", raw: `app --x="a b"c`, want: []string{"app", "--x=a bc"}},
		{name: "space escape", raw: `app\sarg`, want: []string{"app", "arg"}},
		{name: "unterminated", raw: `app "open`, wantErr: "unterminated"},
		{name: "semicolon", raw: `app; rm -rf /`, wantErr: `';'`},
		{name: "single quote", raw: `sh -c 'x'`, wantErr: `'\''`},
		{name: "dollar", raw: `app $HOME`, wantErr: `'$'`},
		{name: "pipe", raw: `app | other`, wantErr: `'|'`},
		{name: "empty", raw: ``, wantErr: "names no program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, quoted, err := splitExec(unescape(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("splitExec(%q) = %q, %v; want error containing %q", tt.raw, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("splitExec(%q): %v", tt.raw, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("splitExec(%q) = %q, want %q", tt.raw, got, tt.want)
			}
			if tt.quoted != nil && !slices.Equal(quoted, tt.quoted) {
				t.Errorf("quoted = %v, want %v", quoted, tt.quoted)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	tests := []struct {
		name    string
		exec    string
		args    []string
		want    []string
		wantErr string
	}{
		{name: "no codes", exec: "app --new", want: []string{"app", "--new"}},
		{name: "%f one", exec: "app %f", args: []string{"/a b.txt"}, want: []string{"app", "/a b.txt"}},
		{name: "%f none", exec: "app %f --x", want: []string{"app", "--x"}},
		{name: "%f file URL", exec: "app %f", args: []string{"file:///tmp/a%20b"}, want: []string{"app", "/tmp/a b"}},
		{name: "%f remote file URL", exec: "app %f", args: []string{"file://host/x"}, wantErr: "not a local file URL"},
		{name: "%f two", exec: "app %f", args: []string{"/a", "/b"}, wantErr: "at a time"},
		{name: "%F many", exec: "app %F", args: []string{"/a", "/b c"}, want: []string{"app", "/a", "/b c"}},
		{name: "%u keeps URL", exec: "app %u", args: []string{"https://example.com/?q=a;b"}, want: []string{"app", "https://example.com/?q=a;b"}},
		{name: "%U many", exec: "app --x %U --y", args: []string{"https://a", "/b"}, want: []string{"app", "--x", "https://a", "/b", "--y"}},
		{name: "%U none", exec: "app %U", want: []string{"app"}},
		{name: "no file code", exec: "app", args: []string{"/a"}, wantErr: "does not open files"},
		{name: "option-like arg", exec: "app %F", args: []string{"--evil"}, wantErr: "as an option"},
		{name: "empty arg", exec: "app %F", args: []string{""}, wantErr: "empty"},
		{name: "%i", exec: "app %i", want: []string{"app", "--icon", "app-icon"}},
		{name: "%c and %k", exec: "app --title %c --from=%k", want: []string{"app", "--title", "My App", "--from=/apps/my.desktop"}},
		{name: "%%", exec: `app 100%% "50%%"`, want: []string{"app", "100%", "50%"}},
		{name: "embedded %f", exec: "app --file=%f", args: []string{"/a"}, want: []string{"app", "--file=/a"}},
		{name: "embedded %f none", exec: "app --file=%f", want: []string{"app", "--file="}},
		{name: "deprecated codes dropped", exec: "app %d %D %n %N %v %m --x%d", want: []string{"app", "--x"}},
		{name: "unknown code dropped", exec: "app %z", want: []string{"app"}},
		{name: "quoted %f spliced into script", exec: `sh -c "viewer %f"`, args: []string{"/a"}, wantErr: "inside the argument"},
		{name: "quoted %f with no file", exec: `sh -c "viewer %f"`, want: []string{"sh", "-c", "viewer "}},
		{name: "embedded %F", exec: "app --files=%F", args: []string{"/a"}, wantErr: "inside the argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := App{ID: "my.desktop", Name: "My App", Path: "/apps/my.desktop", Icon: "app-icon"}
			a.Exec, a.quoted, a.execErr = splitExec(tt.exec)
			got, err := a.Argv(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Argv(%q) = %q, %v; want error containing %q", tt.args, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Argv(%q): %v", tt.args, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Argv(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

// TestNoShell passes shell syntax in queries and arguments and checks that
// it reaches the program literally and runs nothing.
func TestNoShell(t *testing.T) {
	w := newWorld(t)
	marker := t.TempDir()
	pwned := func(n int) string { return filepath.Join(marker, "pwned"+strconv.Itoa(n)) }
	nasty := []string{
		"/x; touch " + pwned(1),
		"/x && touch " + pwned(2),
		"/$(touch " + pwned(3) + ")",
		"/`touch " + pwned(4) + "`",
		"/x' \"quoted\" \\ | touch " + pwned(5),
		"/x\ntouch " + pwned(6),
	}
	w.desktop(t, w.sys, "org.example.Viewer.desktop", app("Viewer", "fakeapp --open %F"))

	for _, q := range append(slices.Clone(nasty), "fakeapp; touch "+pwned(7), "fakeapp;touch x", "$(fakeapp)", "`fakeapp`", "fakeapp --help") {
		if a, err := w.f.Find(q); !errors.Is(err, ErrNotFound) {
			t.Errorf("Find(%q) = %+v, %v; want ErrNotFound", q, a, err)
		}
	}

	run := func(t *testing.T, a App) []string {
		t.Helper()
		argv, err := a.Argv(nasty)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "argv")
		env := append(os.Environ(), "ARGV_OUT="+out, "PATH="+w.bin)
		s, err := start(t.Context(), argv, env, "", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		waitExit(t, s)
		if err := s.Err(); err != nil {
			t.Fatalf("fakeapp failed: %v; stderr %q", err, s.Stderr())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	}

	t.Run("desktop entry", func(t *testing.T) {
		a, err := w.f.Find("viewer")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := run(t, a), append([]string{"--open"}, nasty...); !slices.Equal(got, want) {
			t.Errorf("argv = %q, want %q", got, want)
		}
	})
	t.Run("plain executable", func(t *testing.T) {
		a, err := w.f.Find(filepath.Join(w.bin, "fakeapp"))
		if err != nil {
			t.Fatal(err)
		}
		if got := run(t, a); !slices.Equal(got, nasty) {
			t.Errorf("argv = %q, want %q", got, nasty)
		}
	})

	for i := 1; i <= 7; i++ {
		if _, err := os.Stat(pwned(i)); err == nil {
			t.Errorf("%s exists: something ran a shell", pwned(i))
		}
	}
	if _, err := os.Stat("x"); err == nil {
		t.Error("./x exists: something ran a shell")
	}
}

func waitExit(t *testing.T, s *Started) {
	t.Helper()
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("process %d did not exit", s.Process.Pid)
	}
}

func TestStartFailsFast(t *testing.T) {
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "failer"), "#!/bin/sh\necho 'cannot open display: :99' >&2\nexit 3\n", 0o755)
	_, err := start(t.Context(), []string{"failer"}, []string{"PATH=" + bin}, "", 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "cannot open display: :99") {
		t.Fatalf("error = %v, want one quoting stderr", err)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("error = %v, want an *exec.ExitError with status 3", err)
	}

	if _, err := Start(t.Context(), []string{"no-such-program-anywhere"}, nil, ""); err == nil || !strings.Contains(err.Error(), "not on PATH") {
		t.Errorf("Start of a missing program: %v", err)
	}
	if _, err := Start(t.Context(), []string{"bin/sleep"}, nil, ""); err == nil {
		t.Error("Start of a relative path: no error")
	}
	if _, err := Start(t.Context(), nil, nil, ""); err == nil {
		t.Error("Start of nothing: no error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Start(ctx, []string{"sleep", "60"}, nil, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context: %v", err)
	}
}

func TestStartSucceedsFast(t *testing.T) {
	s, err := start(t.Context(), []string{"true"}, nil, "", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, s)
	if s.Err() != nil {
		t.Errorf("Err = %v", s.Err())
	}
}

// procStat is the state and session id of a process, from /proc.
func procStat(t *testing.T, pid int) (state string, session int, ok bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid pgrp session ...; comm may hold spaces.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	session, _ = strconv.Atoi(f[3])
	return f[0], session, true
}

func TestStartLongRunning(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "chatty")
	ready := filepath.Join(dir, "ready")
	writeFile(t, script, "#!/bin/sh\nhead -c 10000 /dev/zero | tr '\\0' x >&2\necho more >&2\n: > \""+ready+"\"\nexec sleep 60\n", 0o755)

	s, err := Start(t.Context(), []string{script}, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	pid := s.Process.Pid
	t.Cleanup(func() { _ = s.Process.Kill() })

	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script did not get past writing 10000 bytes to stderr (stderr so far: %d bytes)", len(s.Stderr()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-s.Exited():
		t.Fatalf("process exited: %v", s.Err())
	default:
	}
	if got := s.Stderr(); got != strings.Repeat("x", stderrMax) {
		t.Errorf("Stderr = %d bytes, want %d of x", len(got), stderrMax)
	}
	if _, session, ok := procStat(t, pid); !ok || session != pid {
		t.Errorf("session of %d = %d, want its own", pid, session)
	}

	if err := s.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitExit(t, s)
	if s.Err() == nil {
		t.Error("Err = nil after kill")
	}
	if got := s.Stderr(); len(got) != stderrMax {
		t.Errorf("Stderr after exit = %d bytes", len(got))
	}
	for {
		state, _, ok := procStat(t, pid)
		if !ok || state != "Z" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is a zombie", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSystemWidgetFactory finds a real application through the real XDG
// directories: scripts/setup.sh installs gtk-3-examples.
func TestSystemWidgetFactory(t *testing.T) {
	const path = "/usr/share/applications/gtk3-widget-factory.desktop"
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing; scripts/setup.sh installs gtk-3-examples: %v", path, err)
		}
		t.Skipf("SKIPPING: %s is missing (install gtk-3-examples, as scripts/setup.sh does): %v", path, err)
	}
	e, err := readEntry(path)
	if err != nil {
		t.Fatal(err)
	}
	name := e.text("Name")
	f := DefaultFinder()
	for _, q := range []string{"gtk3-widget-factory", "gtk3-widget-factory.desktop", name, strings.ToUpper(name)} {
		a, err := f.Find(q)
		if err != nil {
			t.Errorf("Find(%q): %v", q, err)
			continue
		}
		if a.ID != "gtk3-widget-factory.desktop" || a.Name != name || len(a.Exec) == 0 || filepath.Base(a.Exec[0]) != "gtk3-widget-factory" {
			t.Errorf("Find(%q) = %+v", q, a)
		}
		if argv, err := a.Argv(nil); err != nil || filepath.Base(argv[0]) != "gtk3-widget-factory" {
			t.Errorf("Argv = %q, %v", argv, err)
		}
	}
}
