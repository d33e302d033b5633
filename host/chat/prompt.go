package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
)

// LineReader reads one line the user typed. *Editor is one.
type LineReader interface {
	ReadLine(prompt string) (string, error)
}

var (
	_ LineReader        = (*Editor)(nil)
	_ toolgate.Prompter = (*Asker)(nil)
)

// Limits on how much of a call's arguments the prompt shows.
const (
	argLines    = 40   // lines of indented JSON
	argLineSize = 1000 // characters in one line
	askTries    = 3    // answers that are not a choice before the prompt denies
)

// Asker asks the user, on the terminal, whether a tool call may run.
type Asker struct {
	t  *Term
	in LineReader
}

// NewAsker returns an Asker that shows its prompts on t and reads the
// answers from in. Answers read from an *Editor are kept out of its
// history.
func NewAsker(t *Term, in LineReader) *Asker {
	if e, ok := in.(*Editor); ok {
		in = nil
		if e != nil {
			in = answerReader{e}
		}
	}
	return &Asker{t: t, in: in}
}

// answerReader reads from an Editor without recording the lines in the
// history, which is for what the user said to the model.
type answerReader struct{ e *Editor }

func (r answerReader) ReadLine(prompt string) (string, error) {
	if r.e.rl == nil {
		return r.e.ReadLine(prompt)
	}
	r.e.rl.DisableHistory()
	defer r.e.rl.EnableHistory()
	return r.e.ReadLine(prompt)
}

var (
	headStyle        = lipgloss.NewStyle().Bold(true)
	labelStyle       = lipgloss.NewStyle().Faint(true)
	keyStyle         = lipgloss.NewStyle().Bold(true)
	dangerousStyle   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Yellow)
	destructiveStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Red)
)

// Ask shows the call and reads the user's choice. Enter alone denies. A
// deny comes with the reason the user gives for the model, if any. Ctrl-C
// cancels the turn; the end of input denies with io.EOF. With no terminal
// it asks nothing and returns toolgate.ErrNoTerminal.
func (a *Asker) Ask(ctx context.Context, p toolgate.Prompt) (policy.Answer, string, error) {
	if !a.t.TTY || a.in == nil {
		return policy.AnswerDeny, "", toolgate.ErrNoTerminal
	}
	if err := ctx.Err(); err != nil {
		return policy.AnswerCancel, "", err
	}
	destructive := isDestructive(p.Risk)
	io.WriteString(a.t.Out, a.describe(p, destructive))
	io.WriteString(a.t.Out, a.choices(p.Group, destructive)+"\n")
	letters := "y, s, a, n or c"
	if destructive {
		letters = "y, n or c"
	}
	for try := 1; ; try++ {
		line, err := a.in.ReadLine("› ")
		if answer, stop, err := a.ended(ctx, err); stop {
			return answer, "", err
		}
		answer, ok := parseAnswer(line, destructive)
		switch {
		case ok && answer == policy.AnswerDeny:
			return a.reason(ctx)
		case ok:
			return answer, "", nil
		case try == askTries:
			io.WriteString(a.t.Out, "No choice made: denied.\n")
			return policy.AnswerDeny, "", nil
		case destructive && (answer == policy.AnswerSession || answer == policy.AnswerAlways):
			fmt.Fprintf(a.t.Out, "A destructive tool asks every time: answer %s.\n", letters)
		default:
			fmt.Fprintf(a.t.Out, "%q is not a choice: answer %s.\n", strings.TrimSpace(line), letters)
		}
	}
}

// ended turns a failed read into the answer Ask returns, and says whether
// to stop.
func (a *Asker) ended(ctx context.Context, err error) (policy.Answer, bool, error) {
	switch {
	case ctx.Err() != nil:
		return policy.AnswerCancel, true, ctx.Err()
	case err == nil:
		return 0, false, nil
	case errors.Is(err, ErrInterrupt):
		return policy.AnswerCancel, true, nil
	}
	return policy.AnswerDeny, true, err
}

// reason asks why the user denied, for the model.
func (a *Asker) reason(ctx context.Context) (policy.Answer, string, error) {
	line, err := a.in.ReadLine("Reason for the model (optional): ")
	if answer, stop, err := a.ended(ctx, err); stop {
		return answer, "", err
	}
	return policy.AnswerDeny, strings.TrimSpace(line), nil
}

// parseAnswer reads a choice: a letter or a word, in any case. For a
// destructive tool, session and always are recognised but not ok.
func parseAnswer(line string, destructive bool) (policy.Answer, bool) {
	var a policy.Answer
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes", "once":
		a = policy.AnswerOnce
	case "s", "session":
		a = policy.AnswerSession
	case "a", "always":
		a = policy.AnswerAlways
	case "", "n", "no", "deny":
		a = policy.AnswerDeny
	case "c", "cancel":
		a = policy.AnswerCancel
	default:
		return 0, false
	}
	if destructive && (a == policy.AnswerSession || a == policy.AnswerAlways) {
		return a, false
	}
	return a, true
}

// isDestructive mirrors policy: a risk it does not know counts as
// destructive.
func isDestructive(r policy.Risk) bool {
	switch r {
	case policy.RiskSafe, policy.RiskCaution, policy.RiskDangerous:
		return false
	}
	return true
}

// describe shows what the call is and why policy asks.
func (a *Asker) describe(p toolgate.Prompt, destructive bool) string {
	var b strings.Builder
	b.WriteString(a.style(headStyle, "Allow this tool call?") + "\n")
	row := func(label, value string) {
		fmt.Fprintf(&b, "  %s %s\n", a.style(labelStyle, fmt.Sprintf("%-6s", label)), value)
	}
	row("server", oneLine(p.Server))
	tool := oneLine(p.Tool)
	if p.Name != "" && p.Name != p.Tool {
		tool += " (as " + oneLine(p.Name) + ")"
	}
	row("tool", tool)
	row("group", oneLine(p.Group))
	risk := oneLine(string(p.Risk))
	switch {
	case p.Risk == "":
		risk = a.style(destructiveStyle, "unknown, treated as destructive")
	case destructive:
		risk = a.style(destructiveStyle, risk)
	case p.Risk == policy.RiskDangerous:
		risk = a.style(dangerousStyle, risk)
	}
	row("risk", risk)
	if p.Rule != "" {
		row("why", oneLine(p.Rule))
	}
	b.WriteString("  " + a.style(labelStyle, "arguments") + "\n")
	b.WriteString(argsText(p.Args, "    "))
	return b.String()
}

// choices is the line of answers on offer; Enter alone denies, so deny is
// shown as the default.
func (a *Asker) choices(group string, destructive bool) string {
	key := func(k, text string) string { return a.style(keyStyle, "["+k+"]") + " " + text }
	parts := []string{key("y", "allow once")}
	if !destructive {
		g := oneLine(group)
		parts = append(parts, key("s", "this session (group "+g+")"), key("a", "always (group "+g+")"))
	}
	parts = append(parts, key("N", "deny"), key("c", "cancel turn"))
	return strings.Join(parts, "  ")
}

// style applies st when the terminal takes colour.
func (a *Asker) style(st lipgloss.Style, s string) string {
	if !a.t.Color {
		return s
	}
	return st.Render(s)
}

// argsText shows a call's arguments as indented JSON, exactly as sent but
// cleaned, each line after prefix, cut to argLines lines of at most
// argLineSize characters.
func argsText(raw json.RawMessage, prefix string) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return prefix + "(none)\n"
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	lines := strings.Split(strings.TrimRight(Clean(buf.String()), "\n"), "\n")
	more := 0
	if len(lines) > argLines {
		more = len(lines) - argLines
		lines = lines[:argLines]
	}
	var b strings.Builder
	for _, l := range lines {
		if r := []rune(l); len(r) > argLineSize {
			l = fmt.Sprintf("%s… (%d more characters)", string(r[:argLineSize]), len(r)-argLineSize)
		}
		b.WriteString(prefix + l + "\n")
	}
	if more > 0 {
		fmt.Fprintf(&b, "%s… %d more lines\n", prefix, more)
	}
	return b.String()
}
