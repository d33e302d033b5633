package main

import (
	"os"

	"golang.org/x/term"

	"github.com/domo-agent/domo/host/toolgate"
)

// isTerminal reports whether r is an interactive terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// prompter returns who answers permission prompts: the person at the
// terminal, or nobody (nil) when input or output is not a terminal.
func (e *env) prompter() toolgate.Prompter {
	if !isTerminal(e.stdin) || !isTerminal(e.stdout) {
		return nil
	}
	return nil
}
