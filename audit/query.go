package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"time"
)

// Filter selects events. The zero Filter selects all.
type Filter struct {
	Since, Until time.Time // Until is exclusive
	// Tool is a glob (path.Match syntax) on the tool's name, or on
	// "server/tool" when it holds a slash.
	Tool     string
	Server   string
	Group    string
	Decision string // allow, deny, ask
	Session  string
	Kind     Kind
	// Errors keeps only calls that failed: isError results, time-outs,
	// crashes and invalid calls.
	Errors bool
}

// Validate reports a filter Query would reject.
func (f Filter) Validate() error {
	if _, err := path.Match(f.Tool, ""); err != nil {
		return fmt.Errorf("tool pattern %q: %w", f.Tool, err)
	}
	switch f.Decision {
	case "", "allow", "deny", "ask":
	default:
		return fmt.Errorf("decision %q: want allow, deny or ask", f.Decision)
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return fmt.Errorf("--until %s is not after --since %s", f.Until.Format(time.RFC3339), f.Since.Format(time.RFC3339))
	}
	return nil
}

// failed reports whether a call end with this status and isError failed.
func failed(status string, isError bool) bool {
	switch status {
	case StatusError, StatusTimeout, StatusCrashed, StatusInvalid:
		return true
	}
	return isError
}

// Match reports whether e passes the filter.
func (f Filter) Match(e *Event) bool {
	switch {
	case !f.Since.IsZero() && e.TS.Before(f.Since),
		!f.Until.IsZero() && !e.TS.Before(f.Until),
		f.Server != "" && e.Server != f.Server,
		f.Group != "" && e.Group != f.Group,
		f.Decision != "" && e.Decision != f.Decision,
		f.Session != "" && e.Session != f.Session,
		f.Kind != "" && e.Event != f.Kind,
		f.Errors && !failed(e.Status, e.IsError),
		f.Tool != "" && !f.toolMatches([]byte(e.Server), []byte(e.Tool)):
		return false
	}
	return true
}

func (f Filter) toolMatches(server, tool []byte) bool {
	name := string(tool)
	if bytes.IndexByte([]byte(f.Tool), '/') >= 0 {
		name = string(server) + "/" + name
	}
	ok, _ := path.Match(f.Tool, name)
	return ok
}

// compiled is a filter prepared to reject lines before decoding them.
type compiled struct {
	Filter
	since, until []byte
}

// ceilMicro rounds t up to the microsecond, the precision of the log's
// timestamps, so that comparing the raw text and comparing times agree.
func ceilMicro(t time.Time) time.Time {
	if u := t.Truncate(time.Microsecond); !u.Equal(t) {
		return u.Add(time.Microsecond)
	}
	return t
}

// normalized is f with its bounds at the log's precision.
func (f Filter) normalized() Filter {
	if !f.Since.IsZero() {
		f.Since = ceilMicro(f.Since)
	}
	if !f.Until.IsZero() {
		f.Until = ceilMicro(f.Until)
	}
	return f
}

func (f Filter) compile() compiled {
	c := compiled{Filter: f}
	if !f.Since.IsZero() {
		c.since = f.Since.UTC().AppendFormat(nil, TimeFormat)
	}
	if !f.Until.IsZero() {
		c.until = f.Until.UTC().AppendFormat(nil, TimeFormat)
	}
	return c
}

// classify decides from the raw bytes whether a line passes, without
// decoding it. sure is false when a field it needs could not be read that
// way (a value with escapes, a line not in the writer's layout): then the
// caller decodes the line and asks Match.
func (c *compiled) classify(line []byte) (pass, sure bool) {
	sure = true
	if c.since != nil || c.until != nil {
		ts := rawTS(line)
		switch {
		case ts == nil:
			sure = false
		case c.since != nil && bytes.Compare(ts, c.since) < 0,
			c.until != nil && bytes.Compare(ts, c.until) >= 0:
			return false, true
		}
	}
	h, ok := parseHead(line)
	if !ok {
		return true, false
	}
	for _, eq := range [...]struct {
		field int
		want  string
	}{
		{fServer, c.Server}, {fGroup, c.Group}, {fDecision, c.Decision},
		{fSession, c.Session}, {fEvent, string(c.Kind)},
	} {
		if eq.want == "" {
			continue
		}
		v, ok := h.field(eq.field)
		if !ok {
			sure = false
		} else if string(v) != eq.want {
			return false, true
		}
	}
	if c.Tool != "" {
		tool, ok1 := h.field(fTool)
		server, ok2 := h.field(fServer)
		if !ok1 || !ok2 {
			sure = false
		} else if !c.toolMatches(server, tool) {
			return false, true
		}
	}
	if c.Errors {
		status, ok := h.field(fStatus)
		if !ok {
			sure = false
		} else if isError, _, ok := tail(line); !ok {
			sure = false
		} else if !failed(string(status), isError) {
			return false, true
		}
	}
	return true, sure
}

// rawTS returns the timestamp of a line in the writer's layout, or nil.
func rawTS(line []byte) []byte {
	_, rest, ok := cutSeq(line)
	if !ok {
		return nil
	}
	ts, ok := bytes.CutPrefix(rest, []byte(`,"ts":"`))
	if !ok || len(ts) < len(TimeFormat) {
		return nil
	}
	return ts[:len(TimeFormat)]
}

// tail reads is_error and duration_ms, the last fields before the chain's,
// backwards from the end of a line in the writer's layout. Reading from
// the end means nothing in args or result can be mistaken for them.
func tail(line []byte) (isError bool, durationMS int64, ok bool) {
	fr, err := parseFrame(line)
	if err != nil {
		return false, 0, false
	}
	// body ends with `,"prev":"<hex>"`.
	b := fr.body[:len(fr.body)-len(fr.prev)-len(`,"prev":""`)]
	i := len(b)
	for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	if i > 0 && b[i-1] == '-' {
		i--
	}
	if i < len(b) && bytes.HasSuffix(b[:i], []byte(`,"duration_ms":`)) {
		durationMS, _ = strconv.ParseInt(string(b[i:]), 10, 64)
		b = b[:i-len(`,"duration_ms":`)]
	}
	return bytes.HasSuffix(b, []byte(`,"is_error":true`)), durationMS, true
}

// Query calls fn with every event of the log at path that passes f, oldest
// first. A line that is not an event (torn, or damaged beyond decoding) is
// skipped: Verify is the tool for damage. fn may return an error to stop.
func Query(path string, f Filter, fn func(Event) error) error {
	return QueryRaw(path, f, func(line []byte) error {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil
		}
		return fn(e)
	})
}

// QueryRaw is Query handing over each matching line as stored, without
// its newline and valid only during the call, decoding only the lines
// whose bytes cannot decide the filter. It is the fast path for output
// that needs no decoding (JSON lines) or only the last few events.
func QueryRaw(path string, f Filter, fn func(line []byte) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	f = f.normalized()
	c := f.compile()
	return eachLine(path, func(_ string, _ int, line []byte, complete bool) error {
		if !complete {
			return nil
		}
		pass, sure := c.classify(line)
		if !pass {
			return nil
		}
		// A line whose hash holds is exactly as a writer wrote it, so
		// valid JSON; any other is decoded before it is passed on.
		if sure {
			fr, err := parseFrame(line)
			sure = err == nil && fr.checkHash()
		}
		if !sure {
			var e Event
			if json.Unmarshal(line, &e) != nil || !f.Match(&e) {
				return nil
			}
		}
		return fn(line)
	})
}

// Find returns the event with sequence number seq.
func Find(path string, seq uint64) (Event, bool, error) {
	var found Event
	var ok bool
	err := eachLine(path, func(_ string, _ int, line []byte, complete bool) error {
		if s, good := lineSeq(line); !complete || !good || s != seq {
			return nil
		}
		if err := json.Unmarshal(line, &found); err != nil {
			return fmt.Errorf("seq %d is not a readable event: %w", seq, err)
		}
		ok = true
		return errStop
	})
	return found, ok, err
}
