package audit

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
)

// ToolStats sums up one tool's calls.
type ToolStats struct {
	Server, Tool string
	Calls        int // finished calls (tool_call_end)
	Denials      int // decisions that denied a call
	Errors       int // finished calls that failed
	P50, P95     time.Duration
	durations    []int64
}

// Stats accumulates events into per-tool figures. The zero value is ready.
type Stats struct {
	byTool map[[2]string]*ToolStats
}

// Add counts one event.
func (s *Stats) Add(e Event) {
	if e.Tool == "" {
		return
	}
	if s.byTool == nil {
		s.byTool = map[[2]string]*ToolStats{}
	}
	k := [2]string{e.Server, e.Tool}
	t := s.byTool[k]
	if t == nil {
		t = &ToolStats{Server: e.Server, Tool: e.Tool}
		s.byTool[k] = t
	}
	switch e.Event {
	case KindDecision:
		if e.Decision == "deny" {
			t.Denials++
		}
	case KindCallEnd:
		t.Calls++
		if failed(e.Status, e.IsError) {
			t.Errors++
		}
		t.durations = append(t.durations, e.DurationMS)
	}
}

// AddLine counts one stored line, reading only the fields it needs from
// the raw bytes when it can.
func (s *Stats) AddLine(line []byte) {
	h, ok := parseHead(line)
	var e Event
	for _, f := range []struct {
		field int
		dst   *string
	}{{fServer, &e.Server}, {fTool, &e.Tool}, {fEvent, (*string)(&e.Event)}, {fDecision, &e.Decision}, {fStatus, &e.Status}} {
		v, good := h.field(f.field)
		ok = ok && good
		*f.dst = string(v)
	}
	if ok && e.Event == KindCallEnd {
		e.IsError, e.DurationMS, ok = tail(line)
	}
	if !ok {
		// Fields the raw bytes cannot give: decode the line.
		e = Event{}
		if json.Unmarshal(line, &e) != nil {
			return
		}
	}
	s.Add(e)
}

// Tools returns the figures per tool, busiest first.
func (s *Stats) Tools() []ToolStats {
	out := make([]ToolStats, 0, len(s.byTool))
	for _, t := range s.byTool {
		d := slices.Clone(t.durations)
		slices.Sort(d)
		r := *t
		r.durations = nil
		r.P50, r.P95 = percentile(d, 50), percentile(d, 95)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ToolStats) int {
		if c := cmp.Compare(b.Calls+b.Denials, a.Calls+a.Denials); c != 0 {
			return c
		}
		return cmp.Compare(a.Server+"/"+a.Tool, b.Server+"/"+b.Tool)
	})
	return out
}

// percentile picks the nearest-rank percentile of sorted milliseconds.
func percentile(sorted []int64, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n)
	return time.Duration(sorted[max(rank, 1)-1]) * time.Millisecond
}
