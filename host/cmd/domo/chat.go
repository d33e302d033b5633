package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"github.com/domo-agent/domo/host/chat"
	"github.com/domo-agent/domo/host/toolgate"
)

const chatUsage = `Usage: domo chat [flags]

Talks with a local LLM that can use the configured MCP servers' tools;
every call goes through the permission gate and the audit log.

Flags:
` + hostFlagsHelp + `  --think           show the model's reasoning (also /think)
  --voice           voice mode (also /voice): Enter on an empty line listens,
                    answers are spoken, any key stops the speech
  --wake-phrase PHRASE
                    voice mode that listens after PHRASE is heard instead
                    (also /voice wake PHRASE)
`

func runChat(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet(e, "chat", chatUsage)
	var sf sessionFlags
	var lf llmFlags
	addHostFlags(fs, &sf, &lf)
	think := fs.Bool("think", false, "")
	voiceMode := fs.Bool("voice", false, "")
	wake := fs.String("wake-phrase", "", "")
	if err := noArgs(fs, args); err != nil {
		return err
	}
	in, ok := e.stdin.(*os.File)
	if !ok {
		return errors.New("domo chat reads standard input, which is not a file here")
	}
	var t *chat.Term
	if out, ok := e.stdout.(*os.File); ok {
		t = chat.NewTerm(in, out)
	} else {
		t = chat.Plain(e.stdout)
		t.In = in
	}
	ed, err := chat.NewEditor(t, filepath.Join(xdg.StateHome, "domo", "chat_history"), chat.CommandNames())
	if err != nil {
		return err
	}
	defer ed.Close()
	var prompter toolgate.Prompter
	if t.TTY {
		prompter = chat.NewAsker(t, ed)
	}
	h, err := startHost(ctx, e, sf, lf, prompter, "domo chat")
	if err != nil {
		return err
	}
	defer h.Close()

	banner := h.banner(ctx)
	// Ctrl-C cancels the running answer, not the program: chat takes
	// SIGINT over from main's context while it runs.
	signal.Reset(os.Interrupt)
	intr := make(chan os.Signal, 2)
	signal.Notify(intr, os.Interrupt)
	defer signal.Stop(intr)

	voice, noVoice := h.voice()
	repl := &chat.REPL{
		T: t, Ed: ed, Agent: h.agent, Host: h.slashHost(e),
		Interrupts: intr, Think: *think, Banner: banner,
		Voice: voice, NoVoice: noVoice,
		VoiceMode: *voiceMode, WakePhrase: strings.TrimSpace(*wake),
	}
	return repl.Run(ctx)
}
