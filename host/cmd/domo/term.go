package main

import (
	"os"

	"golang.org/x/term"

	"github.com/domo-agent/domo/host/chat"
	"github.com/domo-agent/domo/host/toolgate"
)

// isTerminal reports whether r is an interactive terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// prompter returns who answers permission prompts: the person at the
// terminal, or nobody (nil) when input or output is not a terminal. The
// caller runs done when it no longer needs it.
func (e *env) prompter() (p toolgate.Prompter, done func()) {
	in, okIn := e.stdin.(*os.File)
	out, okOut := e.stdout.(*os.File)
	if !okIn || !okOut || !isTerminal(in) || !isTerminal(out) {
		return nil, func() {}
	}
	t := chat.NewTerm(in, out)
	ed, err := chat.NewEditor(t, "", nil)
	if err != nil {
		return nil, func() {}
	}
	return chat.NewAsker(t, ed), func() { ed.Close() }
}
