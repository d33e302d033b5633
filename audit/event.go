// Package audit owns Domo's audit log: an append-only JSONL file in which
// every permission decision and every tool call is one line, each line
// chained to the one before by a SHA-256 hash so that an edited, dropped,
// reordered or torn line is found by Verify. Secrets are redacted before
// anything reaches the disk.
//
// It must import nothing else from Domo and decides nothing: policy decides,
// toolgate calls, audit only records and reads back.
package audit

import (
	"encoding/json"
	"time"
)

// Kind names what an event records.
type Kind string

// The event kinds.
const (
	KindDecision  Kind = "permission_decision" // policy or the user decided a call
	KindCallStart Kind = "tool_call_start"     // a call was sent to its server
	KindCallEnd   Kind = "tool_call_end"       // a call finished, in any way
	KindSession   Kind = "session_start"       // a host session began
)

// Status says how a call ended, on tool_call_end (and on decisions that stop
// a call before it starts).
const (
	StatusOK       = "ok"       // the tool answered without isError
	StatusError    = "error"    // the tool answered with isError
	StatusDenied   = "denied"   // policy or the user refused the call
	StatusBlocked  = "blocked"  // the group or tool is off
	StatusInvalid  = "invalid"  // unknown tool or arguments failing the schema
	StatusTimeout  = "timeout"  // the call ran out of time
	StatusCanceled = "canceled" // the user cancelled the turn
	StatusCrashed  = "crashed"  // the server died during the call
)

// Event is one line of the log. The writer fills TS (if zero), Seq, Prev and
// Hash, redacts Args and Result and computes ArgsSHA256; callers fill the
// rest. Fields are written in declaration order.
type Event struct {
	Seq       uint64    `json:"seq"`
	TS        time.Time `json:"ts"`
	Session   string    `json:"session,omitempty"`
	Turn      int       `json:"turn,omitempty"`
	Event     Kind      `json:"event"`
	Call      string    `json:"call,omitempty"` // ties a call's decision, start and end together
	Server    string    `json:"server,omitempty"`
	Tool      string    `json:"tool,omitempty"`
	Group     string    `json:"group,omitempty"`
	Risk      string    `json:"risk,omitempty"`
	Decision  string    `json:"decision,omitempty"`   // allow, deny, ask
	DecidedBy string    `json:"decided_by,omitempty"` // policy, user, intent, ...
	Rule      string    `json:"rule,omitempty"`       // why, in words
	Reason    string    `json:"reason,omitempty"`     // a denial's reason, passed to the model
	Status    string    `json:"status,omitempty"`     // one of the Status constants
	// Args are the call's arguments as sent; they are stored redacted, and
	// ArgsSHA256 is the hash of the bytes given here, before redaction.
	Args       json.RawMessage `json:"args,omitempty"`
	ArgsSHA256 string          `json:"args_sha256,omitempty"`
	// Result is a summary of what the tool returned; it is stored redacted
	// and truncated.
	Result     string `json:"result,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	Prev       string `json:"prev"`
	Hash       string `json:"hash"`
}

// TimeFormat is how TS is written: UTC with fixed-width microseconds, so
// that timestamps compare as strings in the order of time.
const TimeFormat = "2006-01-02T15:04:05.000000Z"
