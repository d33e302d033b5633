package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/host/chat"
)

const auditUsage = `Usage:
  domo audit [list] [filters] [--json] [--limit N]   events, oldest first
  domo audit show SEQ [--json]                       one event in full
  domo audit stats [filters] [--json]                calls, denials, errors, p50/p95 per tool
  domo audit tail [-f] [-n N] [filters] [--json]     the last events; -f follows new ones
  domo audit verify [--json]                         check the hash chain; exit 1 if damaged
  domo audit path                                    where the log and its files are

Filters:
  --since WHEN, --until WHEN   an age (30m, 2h, 3d), today, yesterday, or a date (2026-11-21 14:05)
  --tool GLOB                  a tool name or glob (write_*), or server/tool (files/*)
  --server NAME  --group NAME  --session ID  --event KIND
  --decision allow|deny|ask    --errors (only calls that failed)

Flags:
  --log FILE   the audit log (default $DOMO_AUDIT_LOG, else audit.path in the config,
               else $XDG_STATE_HOME/domo/audit.jsonl)
`

// auditFlags are the flags every audit subcommand shares.
type auditFlags struct {
	log          string
	json         bool
	since, until string
	f            audit.Filter
	kind         string
}

func newAuditFlags(name string, e *env, filters bool) (*flag.FlagSet, *auditFlags) {
	fs := flag.NewFlagSet("domo audit "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { fmt.Fprint(e.stderr, auditUsage) }
	a := &auditFlags{}
	fs.StringVar(&a.log, "log", "", "")
	fs.BoolVar(&a.json, "json", false, "")
	if filters {
		fs.StringVar(&a.since, "since", "", "")
		fs.StringVar(&a.until, "until", "", "")
		fs.StringVar(&a.f.Tool, "tool", "", "")
		fs.StringVar(&a.f.Server, "server", "", "")
		fs.StringVar(&a.f.Group, "group", "", "")
		fs.StringVar(&a.f.Decision, "decision", "", "")
		fs.StringVar(&a.f.Session, "session", "", "")
		fs.StringVar(&a.kind, "event", "", "")
		fs.BoolVar(&a.f.Errors, "errors", false, "")
	}
	return fs, a
}

// filter completes the filter from the parsed flags.
func (a *auditFlags) filter(now time.Time) (audit.Filter, error) {
	f := a.f
	var err error
	if f.Since, err = parseWhen(a.since, now); err != nil {
		return f, err
	}
	if f.Until, err = parseWhen(a.until, now); err != nil {
		return f, err
	}
	f.Kind = audit.Kind(a.kind)
	switch f.Kind {
	case "", audit.KindDecision, audit.KindCallStart, audit.KindCallEnd, audit.KindSession, audit.KindRecovered:
	default:
		if long := shortKinds[a.kind]; long != "" {
			f.Kind = long
			break
		}
		return f, fmt.Errorf("%w: --event %q: want decision, start, end, session or recovered", errUsage, a.kind)
	}
	if err := f.Validate(); err != nil {
		return f, fmt.Errorf("%w: %v", errUsage, err)
	}
	return f, nil
}

var shortKinds = map[string]audit.Kind{
	"decision": audit.KindDecision, "start": audit.KindCallStart, "end": audit.KindCallEnd,
	"session": audit.KindSession, "recovered": audit.KindRecovered,
}

// logPath is the audit log to read: --log, $DOMO_AUDIT_LOG, the config's
// audit.path, the default.
func (a *auditFlags) logPath(e *env) (string, error) {
	if a.log != "" {
		return a.log, nil
	}
	if p := os.Getenv("DOMO_AUDIT_LOG"); p != "" {
		return p, nil
	}
	cfg, err := e.config()
	if err != nil {
		return "", err
	}
	return cfg.Audit.Path, nil
}

func runAudit(ctx context.Context, e *env, args []string) error {
	sub := "list"
	if i := subcommandAt(args); i >= 0 {
		sub, args = args[i], append(args[:i:i], args[i+1:]...)
	}
	switch sub {
	case "list", "ls":
		return auditList(e, args)
	case "show":
		return auditShow(e, args)
	case "stats":
		return auditStats(e, args)
	case "tail":
		return auditTail(ctx, e, args)
	case "verify":
		return auditVerify(e, args)
	case "path":
		return auditPath(e, args)
	case "help":
		fmt.Fprint(e.stdout, auditUsage)
		return nil
	}
	return fmt.Errorf("%w: unknown audit command %q (want list, show, stats, tail, verify or path)", errUsage, sub)
}

// boolFlags take no value.
var boolFlags = map[string]bool{"json": true, "errors": true, "f": true, "follow": true}

// subcommandAt finds the subcommand among the arguments, so that flags may
// come before it ("domo audit --log L verify"): the first argument that is
// not a flag or a flag's value. It returns -1 when there is none.
func subcommandAt(args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return -1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return i
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") && !boolFlags[name] {
			i++ // skip the flag's value
		}
	}
	return -1
}

// prepare parses a subcommand's flags and returns the log path and the
// filter, with at most maxPos positional arguments.
func prepare(fs *flag.FlagSet, a *auditFlags, e *env, args []string, maxPos int) (string, audit.Filter, []string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", audit.Filter{}, nil, err
	}
	if len(pos) > maxPos {
		return "", audit.Filter{}, nil, fmt.Errorf("%w: unexpected argument %q", errUsage, pos[maxPos])
	}
	f, err := a.filter(time.Now())
	if err != nil {
		return "", f, nil, err
	}
	path, err := a.logPath(e)
	return path, f, pos, err
}

func auditList(e *env, args []string) error {
	fs, a := newAuditFlags("list", e, true)
	limit := fs.Int("limit", -1, "")
	path, f, _, err := prepare(fs, a, e, args, 0)
	if err != nil {
		return err
	}
	n := *limit
	if n < 0 {
		n = 50
		if a.json {
			n = 0
		}
	}
	if n == 0 && a.json {
		// Everything, as stored: stream it rather than hold it.
		bw := bufio.NewWriterSize(e.stdout, 64<<10)
		err := audit.QueryRaw(path, f, func(line []byte) error {
			bw.Write(line)
			return bw.WriteByte('\n')
		})
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		return err
	}
	events, total, err := lastMatching(path, f, n)
	if err != nil {
		return err
	}
	if err := printLines(e.stdout, events, a.json); err != nil {
		return err
	}
	if !a.json {
		switch {
		case total == 0:
			fmt.Fprintf(e.stderr, "no events match in %s\n", path)
		case total > len(events):
			fmt.Fprintf(e.stderr, "the last %d of %d matching events (--limit 0 shows all)\n", len(events), total)
		}
	}
	return nil
}

// lastMatching returns the last n lines that pass f (all when n is 0),
// as stored, and how many passed.
func lastMatching(path string, f audit.Filter, n int) ([][]byte, int, error) {
	var ring [][]byte
	total := 0
	err := audit.QueryRaw(path, f, func(line []byte) error {
		total++
		if n > 0 && len(ring) == n {
			// Reuse the oldest line's buffer for the newest.
			oldest := ring[0]
			copy(ring, ring[1:])
			ring[n-1] = append(oldest[:0], line...)
			return nil
		}
		ring = append(ring, append([]byte(nil), line...))
		return nil
	})
	return ring, total, err
}

// printLines writes stored lines as they are (JSON lines), or decoded as a
// table.
func printLines(w io.Writer, lines [][]byte, asJSON bool) error {
	if asJSON {
		bw := bufio.NewWriterSize(w, 64<<10)
		for _, l := range lines {
			bw.Write(l)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	}
	events := make([]audit.Event, 0, len(lines))
	for _, l := range lines {
		var ev audit.Event
		if json.Unmarshal(l, &ev) == nil {
			events = append(events, ev)
		}
	}
	return printTable(w, events)
}

func printTable(w io.Writer, events []audit.Event) error {
	if len(events) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tEVENT\tTOOL\tOUTCOME\tDETAIL")
	for _, ev := range events {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ev.Seq, ev.TS.Local().Format("2006-01-02 15:04:05"),
			shortKind(ev.Event), oneLine(toolName(ev), 60), oneLine(outcome(ev), 40), oneLine(detail(ev), 80))
	}
	return tw.Flush()
}

func shortKind(k audit.Kind) string {
	for short, long := range shortKinds {
		if long == k {
			return short
		}
	}
	return string(k)
}

func toolName(ev audit.Event) string {
	switch {
	case ev.Tool == "":
		return "-"
	case ev.Server == "":
		return ev.Tool
	}
	return ev.Server + "/" + ev.Tool
}

func outcome(ev audit.Event) string {
	switch ev.Event {
	case audit.KindDecision:
		if ev.DecidedBy != "" {
			return ev.Decision + " (" + ev.DecidedBy + ")"
		}
		return ev.Decision
	case audit.KindCallEnd:
		s := ev.Status
		if s == "" && ev.IsError {
			s = audit.StatusError
		}
		return s + " " + (time.Duration(ev.DurationMS) * time.Millisecond).String()
	}
	return ev.Status
}

func detail(ev audit.Event) string {
	switch ev.Event {
	case audit.KindDecision:
		if ev.Reason != "" {
			return ev.Rule + " — " + ev.Reason
		}
		return ev.Rule
	case audit.KindCallStart:
		return string(ev.Args)
	}
	if ev.Reason != "" {
		return ev.Reason
	}
	return ev.Result
}

// oneLine flattens s to one line of at most n runes, safe for a terminal.
func oneLine(s string, n int) string {
	s = chat.Clean(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func auditShow(e *env, args []string) error {
	fs, a := newAuditFlags("show", e, false)
	path, _, pos, err := prepare(fs, a, e, args, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: audit show takes one sequence number", errUsage)
	}
	seq, err := strconv.ParseUint(pos[0], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not a sequence number", errUsage, pos[0])
	}
	ev, ok, err := audit.Find(path, seq)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no event with seq %d in %s", seq, path)
	}
	if a.json {
		return printJSON(e.stdout, ev)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, oneLine(v, 1000))
		}
	}
	row("seq", strconv.FormatUint(ev.Seq, 10))
	row("time", ev.TS.Local().Format("2006-01-02 15:04:05.000000 MST"))
	row("event", string(ev.Event))
	row("session", ev.Session)
	if ev.Turn != 0 {
		row("turn", strconv.Itoa(ev.Turn))
	}
	row("call", ev.Call)
	row("tool", toolName(ev))
	row("group", ev.Group)
	row("risk", ev.Risk)
	row("decision", ev.Decision)
	row("decided by", ev.DecidedBy)
	row("rule", ev.Rule)
	row("reason", ev.Reason)
	row("status", ev.Status)
	if ev.IsError {
		row("is error", "true")
	}
	if ev.Event == audit.KindCallEnd {
		row("duration", (time.Duration(ev.DurationMS) * time.Millisecond).String())
	}
	row("args sha256", ev.ArgsSHA256)
	row("prev", ev.Prev)
	row("hash", ev.Hash)
	tw.Flush()
	if len(ev.Args) > 0 {
		var pretty bytes.Buffer
		if json.Indent(&pretty, ev.Args, "  ", "  ") != nil {
			pretty.Write(ev.Args)
		}
		fmt.Fprintf(e.stdout, "\nargs (redacted):\n  %s\n", chat.Clean(pretty.String()))
	}
	if ev.Result != "" {
		fmt.Fprintf(e.stdout, "\nresult (redacted):\n%s\n", indent(chat.Clean(ev.Result), "  "))
	}
	return nil
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+prefix)
}

func auditStats(e *env, args []string) error {
	fs, a := newAuditFlags("stats", e, true)
	path, f, _, err := prepare(fs, a, e, args, 0)
	if err != nil {
		return err
	}
	var st audit.Stats
	if err := audit.QueryRaw(path, f, func(line []byte) error { st.AddLine(line); return nil }); err != nil {
		return err
	}
	tools := st.Tools()
	if a.json {
		type row struct {
			Server  string `json:"server"`
			Tool    string `json:"tool"`
			Calls   int    `json:"calls"`
			Denials int    `json:"denials"`
			Errors  int    `json:"errors"`
			P50MS   int64  `json:"p50_ms"`
			P95MS   int64  `json:"p95_ms"`
		}
		rows := make([]row, 0, len(tools))
		for _, t := range tools {
			rows = append(rows, row{t.Server, t.Tool, t.Calls, t.Denials, t.Errors, t.P50.Milliseconds(), t.P95.Milliseconds()})
		}
		return printJSON(e.stdout, rows)
	}
	if len(tools) == 0 {
		fmt.Fprintf(e.stderr, "no tool events match in %s\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TOOL\tCALLS\tDENIED\tERRORS\tP50\tP95\t")
	var calls, denials, errs int
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t\n", oneLine(t.Server+"/"+t.Tool, 60), t.Calls, t.Denials, t.Errors, ms(t.P50), ms(t.P95))
		calls, denials, errs = calls+t.Calls, denials+t.Denials, errs+t.Errors
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t\t\t\n", calls, denials, errs)
	return tw.Flush()
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

func auditTail(ctx context.Context, e *env, args []string) error {
	fs, a := newAuditFlags("tail", e, true)
	follow := fs.Bool("f", false, "")
	fs.BoolVar(follow, "follow", false, "")
	n := fs.Int("n", 10, "")
	path, f, _, err := prepare(fs, a, e, args, 0)
	if err != nil {
		return err
	}
	if *n < 0 {
		return fmt.Errorf("%w: -n %d: want 0 or more", errUsage, *n)
	}
	if *n > 0 {
		events, _, err := lastMatching(path, f, *n)
		if err != nil {
			return err
		}
		if err := printLines(e.stdout, events, a.json); err != nil {
			return err
		}
	}
	if !*follow {
		return nil
	}
	return audit.Follow(ctx, path, f, 200*time.Millisecond, func(ev audit.Event) error {
		if a.json {
			return json.NewEncoder(e.stdout).Encode(ev)
		}
		_, err := fmt.Fprintf(e.stdout, "%d  %s  %s  %s  %s  %s\n", ev.Seq, ev.TS.Local().Format("15:04:05"),
			shortKind(ev.Event), oneLine(toolName(ev), 60), oneLine(outcome(ev), 40), oneLine(detail(ev), 80))
		return err
	})
}

func auditVerify(e *env, args []string) error {
	fs, a := newAuditFlags("verify", e, false)
	path, _, _, err := prepare(fs, a, e, args, 0)
	if err != nil {
		return err
	}
	r, err := audit.Verify(path)
	if err != nil {
		return err
	}
	if a.json {
		out := struct {
			Intact  bool           `json:"intact"`
			Events  uint64         `json:"events"`
			First   uint64         `json:"first_seq"`
			Last    uint64         `json:"last_seq"`
			Head    string         `json:"head"`
			Files   []string       `json:"files"`
			Torn    []string       `json:"torn,omitempty"`
			Problem *audit.Problem `json:"problem,omitempty"`
		}{r.Problem == nil, r.Events, r.First, r.Last, r.Head, r.Files, r.Torn, r.Problem}
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if r.Problem == nil {
		if r.Events == 0 {
			fmt.Fprintf(e.stdout, "intact: %s is empty\n", path)
		} else {
			fmt.Fprintf(e.stdout, "intact: %d events, seq %d to %d, in %d file(s); head %.16s\n", r.Events, r.First, r.Last, len(r.Files), r.Head)
		}
		for _, t := range r.Torn {
			fmt.Fprintf(e.stdout, "note: %s holds torn lines a crashed writer left; each recovery is recorded in the log\n", t)
		}
	} else {
		p := r.Problem
		fmt.Fprintf(e.stdout, "DAMAGED at seq %d: %s: %s\n", p.Seq, p.Damage, p.Detail)
		if p.Line > 0 {
			fmt.Fprintf(e.stdout, "  in %s, line %d\n", filepath.Base(p.File), p.Line)
		}
		if r.Events > 0 {
			fmt.Fprintf(e.stdout, "  seq %d to %d verify before it\n", r.First, r.Last)
		}
	}
	if r.Problem != nil {
		return errQuiet
	}
	return nil
}

func auditPath(e *env, args []string) error {
	fs, a := newAuditFlags("path", e, false)
	path, _, _, err := prepare(fs, a, e, args, 0)
	if err != nil {
		return err
	}
	files, err := audit.Files(path)
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, err := os.Stat(f); err == nil || f == path {
			fmt.Fprintln(e.stdout, f)
		}
	}
	return nil
}
