package launch

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrTerminal is returned by Argv for an application that must run in a
// terminal (Terminal=true): there is no terminal to run it in.
var ErrTerminal = errors.New("it runs in a terminal (Terminal=true), and there is no terminal to run it in")

// reserved are the characters the specification allows in an Exec line
// only inside double quotes. Outside quotes they are refused rather than
// guessed at: a file that uses them there was written for a shell, and
// taking them literally would run something other than what it means.
const reserved = "\t\n\"'\\><~|&;$*?#`"

// splitExec splits an Exec value, its string escapes already undone, into
// arguments by the quoting rules of the Desktop Entry Specification:
// arguments are separated by spaces; a double-quoted argument may hold any
// character, with \" \` \$ and \\ standing for the second character. It
// also reports which arguments were quoted, where a file name must not be
// spliced in.
func splitExec(s string) (args []string, quoted []bool, err error) {
	var cur strings.Builder
	inArg, inQuote, wasQuoted := false, false, false
	end := func() {
		if inArg {
			args = append(args, cur.String())
			quoted = append(quoted, wasQuoted)
		}
		cur.Reset()
		inArg, wasQuoted = false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(s) && strings.IndexByte("\"`$\\", s[i+1]) >= 0:
			i++
			cur.WriteByte(s[i])
		case inQuote && c == '"':
			inQuote = false
		case inQuote:
			cur.WriteByte(c)
		case c == ' ':
			end()
		case c == '"':
			inQuote, inArg, wasQuoted = true, true, true
		case strings.IndexByte(reserved, c) >= 0:
			return nil, nil, fmt.Errorf("the Exec line %q has %q outside double quotes, where the specification does not allow it", s, c)
		default:
			inArg = true
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, nil, fmt.Errorf("the Exec line %q has an unterminated double quote", s)
	}
	end()
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("the Exec line %q names no program", s)
	}
	return args, quoted, nil
}

// Argv is the command line that starts a with args, which are files or
// URLs to open. Each of args becomes one argument of its own, never joined
// with others and never interpreted.
//
// For a plain executable, args are appended to it as they are.
//
// For a desktop entry, the field codes of Exec are expanded: %f and %u to
// the one file or URL, %F and %U to all of them, each of these to nothing
// when args is empty; %i to --icon and the Icon, %c to the Name, %k to the
// desktop file, %% to %; the deprecated %d %D %n %N %v %m, and unknown
// codes, to nothing. For %f and %F a file: URL is turned into its path.
// Argv refuses, with an error saying why:
//   - args for an entry that takes no files or URLs (no %f %F %u %U);
//   - more than one arg for an entry that takes one at a time (%f or %u):
//     the specification would start it once for each, which is for the
//     caller to do, one Argv and Start per file;
//   - an arg that begins with '-', which the application would take as an
//     option: pass ./-name or an absolute path instead;
//   - an entry whose Exec puts a file code inside a quoted argument, such
//     as sh -c "viewer %f": the file name would be read as shell code;
//   - an entry with Terminal=true (ErrTerminal), or with no usable Exec.
func (a App) Argv(args []string) ([]string, error) {
	if a.ID == "" {
		if len(a.Exec) == 0 {
			return nil, errors.New("the app has no command")
		}
		return append(append([]string(nil), a.Exec...), args...), nil
	}
	if a.execErr != nil {
		return nil, fmt.Errorf("%s cannot be started: %w", a.ID, a.execErr)
	}
	if len(a.Exec) == 0 {
		return nil, fmt.Errorf("%s has no Exec line (it may start only through D-Bus activation, which this does not do)", a.ID)
	}
	if a.Terminal {
		return nil, fmt.Errorf("%s cannot be started: %w", a.ID, ErrTerminal)
	}
	files, err := a.checkArgs(args)
	if err != nil {
		return nil, err
	}
	var argv []string
	for i, t := range a.Exec {
		switch t {
		case "%f", "%u":
			argv = append(argv, files[:min(len(files), 1)]...)
			continue
		case "%F", "%U":
			argv = append(argv, files...)
			continue
		case "%i":
			if a.Icon != "" {
				argv = append(argv, "--icon", a.Icon)
			}
			continue
		}
		quoted := i < len(a.quoted) && a.quoted[i]
		s, err := a.expand(t, files, quoted)
		if err != nil {
			return nil, err
		}
		if s == "" && t != "" {
			continue // only field codes, which expanded to nothing
		}
		argv = append(argv, s)
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("%s: Exec line %q names no program", a.ID, strings.Join(a.Exec, " "))
	}
	return argv, nil
}

// checkArgs checks args against what a's Exec line takes, and returns them
// as they are to be passed: for %f and %F, file: URLs become paths.
func (a App) checkArgs(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	code := a.fileCode()
	switch {
	case code == 0:
		return nil, fmt.Errorf("%s does not open files or URLs: its Exec line has no %%f, %%F, %%u or %%U; start it without any", a.ID)
	case (code == 'f' || code == 'u') && len(args) > 1:
		return nil, fmt.Errorf("%s opens one file or URL at a time (%%%c), and %d were given; open them one by one", a.ID, code, len(args))
	}
	out := make([]string, len(args))
	for i, arg := range args {
		switch {
		case arg == "":
			return nil, fmt.Errorf("an empty file name or URL was given to %s", a.ID)
		case arg[0] == '-':
			return nil, fmt.Errorf("%q would be read by %s as an option, not a file: give a path such as ./%s or an absolute one", arg, a.ID, arg)
		}
		out[i] = arg
		if code == 'f' || code == 'F' {
			p, err := localPath(arg)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
	}
	return out, nil
}

// fileCode is the file or URL field code of a's Exec line (f, F, u or U),
// or 0 if it has none. The specification allows one; if there are more,
// a list code wins, so that all the args have a place.
func (a App) fileCode() byte {
	var code byte
	for _, t := range a.Exec {
		for i := 0; i+1 < len(t); i++ {
			if t[i] != '%' {
				continue
			}
			i++
			switch c := t[i]; c {
			case 'F', 'U':
				return c
			case 'f', 'u':
				code = c
			}
		}
	}
	return code
}

// localPath turns a file: URL into its path; anything else is taken to
// be a path already.
func localPath(arg string) (string, error) {
	if !strings.HasPrefix(arg, "file:") {
		return arg, nil
	}
	u, err := url.Parse(arg)
	if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
		return "", fmt.Errorf("%q is not a local file URL", arg)
	}
	return u.Path, nil
}

// expand expands the field codes inside one argument of the Exec line
// (one that is not a field code on its own).
func (a App) expand(t string, files []string, quoted bool) (string, error) {
	if !strings.ContainsRune(t, '%') {
		return t, nil
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '%' || i+1 == len(t) {
			b.WriteByte(t[i])
			continue
		}
		i++
		switch c := t[i]; c {
		case '%':
			b.WriteByte('%')
		case 'f', 'u', 'F', 'U':
			if len(files) == 0 {
				continue
			}
			if quoted || c == 'F' || c == 'U' {
				return "", fmt.Errorf("%s cannot open files: its Exec line puts %%%c inside the argument %q, where a file name could be read as code", a.ID, c, t)
			}
			b.WriteString(files[0])
		case 'i':
			b.WriteString(a.Icon)
		case 'c':
			b.WriteString(a.Name)
		case 'k':
			b.WriteString(a.Path)
		}
	}
	return b.String(), nil
}
