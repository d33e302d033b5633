package chat

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/policy"
)

// script is a LineReader that answers from a list, then reports io.EOF.
type script struct {
	replies []reply
	prompts []string
}

type reply struct {
	line string
	err  error
}

func (s *script) ReadLine(prompt string) (string, error) {
	s.prompts = append(s.prompts, prompt)
	if len(s.replies) == 0 {
		return "", io.EOF
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r.line, r.err
}

func lines(ls ...string) []reply {
	rs := make([]reply, len(ls))
	for i, l := range ls {
		rs[i] = reply{line: l}
	}
	return rs
}

func writeCall(risk policy.Risk) toolgate.Prompt {
	return toolgate.Prompt{
		Name: "files__write_file", Server: "files", Tool: "write_file", Group: "files.write", Risk: risk,
		Args: json.RawMessage(`{"path":"/tmp/a.txt","content":"hi"}`), Rule: "group files.write asks",
	}
}

func ttyTerm(b *strings.Builder) *Term {
	return &Term{Out: b, TTY: true, Width: 80}
}

func TestAskWithoutATerminal(t *testing.T) {
	var b strings.Builder
	in := &script{replies: lines("y")}
	answer, reason, err := NewAsker(Plain(&b), in).Ask(context.Background(), writeCall(policy.RiskCaution))
	if answer != policy.AnswerDeny || reason != "" || !errors.Is(err, toolgate.ErrNoTerminal) {
		t.Errorf("Ask = %v, %q, %v; want deny, \"\", ErrNoTerminal", answer, reason, err)
	}
	if b.Len() != 0 || len(in.prompts) != 0 {
		t.Errorf("asked anyway: printed %q, read %d lines", b.String(), len(in.prompts))
	}
}

func TestAskAnswers(t *testing.T) {
	tests := []struct {
		name        string
		risk        policy.Risk
		replies     []reply
		want        policy.Answer
		wantReason  string
		wantErr     error
		wantPrompts int
	}{
		{name: "y", replies: lines("y"), want: policy.AnswerOnce, wantPrompts: 1},
		{name: "yes in capitals", replies: lines(" YES "), want: policy.AnswerOnce, wantPrompts: 1},
		{name: "once", replies: lines("once"), want: policy.AnswerOnce, wantPrompts: 1},
		{name: "s", replies: lines("s"), want: policy.AnswerSession, wantPrompts: 1},
		{name: "session", replies: lines("Session"), want: policy.AnswerSession, wantPrompts: 1},
		{name: "a", replies: lines("a"), want: policy.AnswerAlways, wantPrompts: 1},
		{name: "always", replies: lines("ALWAYS"), want: policy.AnswerAlways, wantPrompts: 1},
		{name: "n with a reason", replies: lines("n", "  use the other file  "), want: policy.AnswerDeny, wantReason: "use the other file", wantPrompts: 2},
		{name: "deny without a reason", replies: lines("deny", ""), want: policy.AnswerDeny, wantPrompts: 2},
		{name: "Enter alone denies", replies: lines("", "no"), want: policy.AnswerDeny, wantReason: "no", wantPrompts: 2},
		{name: "c", replies: lines("c"), want: policy.AnswerCancel, wantPrompts: 1},
		{name: "cancel", replies: lines("Cancel"), want: policy.AnswerCancel, wantPrompts: 1},
		{name: "invalid then y", replies: lines("maybe", "y"), want: policy.AnswerOnce, wantPrompts: 2},
		{name: "invalid three times denies", replies: lines("x", "maybe", "?", "y"), want: policy.AnswerDeny, wantPrompts: 3},
		{name: "destructive: once", risk: policy.RiskDestructive, replies: lines("y"), want: policy.AnswerOnce, wantPrompts: 1},
		{name: "destructive: session is re-asked", risk: policy.RiskDestructive, replies: lines("s", "once"), want: policy.AnswerOnce, wantPrompts: 2},
		{name: "destructive: never session or always", risk: policy.RiskDestructive, replies: lines("session", "a", "always"), want: policy.AnswerDeny, wantPrompts: 3},
		{name: "unknown risk counts as destructive", risk: "bogus", replies: lines("a", "c"), want: policy.AnswerCancel, wantPrompts: 2},
		{name: "Ctrl-C cancels", replies: []reply{{err: ErrInterrupt}}, want: policy.AnswerCancel, wantPrompts: 1},
		{name: "Ctrl-C at the reason cancels", replies: []reply{{line: "n"}, {err: ErrInterrupt}}, want: policy.AnswerCancel, wantPrompts: 2},
		{name: "end of input denies", replies: nil, want: policy.AnswerDeny, wantErr: io.EOF, wantPrompts: 1},
		{name: "end of input at the reason", replies: lines("n"), want: policy.AnswerDeny, wantErr: io.EOF, wantPrompts: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			risk := tt.risk
			if risk == "" {
				risk = policy.RiskCaution
			}
			var b strings.Builder
			in := &script{replies: tt.replies}
			answer, reason, err := NewAsker(ttyTerm(&b), in).Ask(context.Background(), writeCall(risk))
			if answer != tt.want || reason != tt.wantReason || !errors.Is(err, tt.wantErr) {
				t.Errorf("Ask = %v, %q, %v; want %v, %q, %v", answer, reason, err, tt.want, tt.wantReason, tt.wantErr)
			}
			if len(in.prompts) != tt.wantPrompts {
				t.Errorf("read %d lines, want %d; printed:\n%s", len(in.prompts), tt.wantPrompts, b.String())
			}
		})
	}
}

func TestAskCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b strings.Builder
	in := &script{replies: lines("y")}
	answer, _, err := NewAsker(ttyTerm(&b), in).Ask(ctx, writeCall(policy.RiskCaution))
	if answer != policy.AnswerCancel || !errors.Is(err, context.Canceled) || len(in.prompts) != 0 {
		t.Errorf("Ask = %v, %v after %d lines; want cancel, context.Canceled, none", answer, err, len(in.prompts))
	}
}

// cancelling answers y, but cancels the turn while the user typed it.
type cancelling struct{ cancel func() }

func (c cancelling) ReadLine(string) (string, error) {
	c.cancel()
	return "y", nil
}

func TestAskContextCancelledWhileReading(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var b strings.Builder
	answer, _, err := NewAsker(ttyTerm(&b), cancelling{cancel}).Ask(ctx, writeCall(policy.RiskCaution))
	if answer != policy.AnswerCancel || !errors.Is(err, context.Canceled) {
		t.Errorf("Ask = %v, %v; want cancel, context.Canceled", answer, err)
	}
}

func TestAskShows(t *testing.T) {
	tests := []struct {
		name    string
		risk    policy.Risk
		args    string
		color   bool
		want    []string
		notWant []string
	}{
		{
			name: "the call and every choice",
			risk: policy.RiskCaution,
			args: `{"path":"/tmp/a.txt","content":"hi"}`,
			want: []string{"files", "write_file (as files__write_file)", "files.write", "caution", "group files.write asks",
				"    {\n      \"path\": \"/tmp/a.txt\",\n      \"content\": \"hi\"\n    }\n",
				"[y] allow once", "[s] this session (group files.write)", "[a] always (group files.write)", "[N] deny", "[c] cancel turn"},
		},
		{
			name:    "destructive offers no session or always",
			risk:    policy.RiskDestructive,
			args:    `{"path":"/tmp/a.txt"}`,
			want:    []string{"destructive", "[y] allow once", "[N] deny", "[c] cancel turn"},
			notWant: []string{"[s]", "[a]", "session", "always"},
		},
		{
			name:    "a bidi override and a C1 control in the arguments",
			risk:    policy.RiskCaution,
			args:    "{\"path\":\"/tmp/\u202egnp.exe\",\"note\":\"\u009b2J\"}",
			want:    []string{`"/tmp/\u202egnp.exe"`, `"\u009b2J"`},
			notWant: []string{"\u202e", "\u009b"},
		},
		{
			name:    "raw escapes in arguments that are not JSON",
			risk:    policy.RiskCaution,
			args:    "{\"path\":\"\x1b]0;owned\x07\x1b[2J\"}",
			want:    []string{`\u001b]0;owned\u0007\u001b[2J`},
			notWant: []string{"\x1b", "\x07"},
		},
		{
			name:    "long arguments are cut",
			risk:    policy.RiskCaution,
			args:    "[" + strings.Repeat("1,", 99) + "1]",
			want:    []string{"… 62 more lines"},
			notWant: []string{strings.Repeat("      1,\n", 50)},
		},
		{
			name:    "destructive is highlighted with colour",
			risk:    policy.RiskDestructive,
			args:    `{}`,
			color:   true,
			want:    []string{"\x1b[", "destructive"},
			notWant: []string{"[s]"},
		},
		{
			name:    "no colour without Color",
			risk:    policy.RiskDestructive,
			args:    `{}`,
			notWant: []string{"\x1b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			term := ttyTerm(&b)
			term.Color = tt.color
			p := writeCall(tt.risk)
			p.Args = json.RawMessage(tt.args)
			NewAsker(term, &script{replies: lines("y")}).Ask(context.Background(), p)
			out := b.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q missing from:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("%q in:\n%s", w, out)
				}
			}
			if !tt.color {
				if i := strings.IndexFunc(out, unsafeRune); i >= 0 {
					t.Errorf("unsafe character printed: %q", out[i:])
				}
			}
		})
	}
}

func TestNewAskerWithANilEditor(t *testing.T) {
	var b strings.Builder
	var ed *Editor
	_, _, err := NewAsker(ttyTerm(&b), ed).Ask(context.Background(), writeCall(policy.RiskCaution))
	if !errors.Is(err, toolgate.ErrNoTerminal) {
		t.Errorf("err = %v, want ErrNoTerminal", err)
	}
}
