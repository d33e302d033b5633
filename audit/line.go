package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"unicode/utf8"
)

// A line is written in a fixed layout so that the chain can be checked and
// the log filtered without decoding every line:
//
//	{"seq":N,"ts":"…",<other fields>,"prev":"<hex>","hash":"<hex>"}\n
//
// hash is the SHA-256 of every byte before `,"hash":"`, so it covers the
// event and prev, which is the hash of the line before.

const (
	hashLen    = sha256.Size * 2
	hashPrefix = `,"hash":"`
	hashSuffix = `"}`
	// frameTail is the length of `,"hash":"<hex>"}`.
	frameTail = len(hashPrefix) + hashLen + len(hashSuffix)
)

// encodeLine appends e's line, newline included, to b. e must already be
// redacted; Args must be compact JSON.
func encodeLine(b []byte, e *Event) []byte {
	start := len(b)
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"ts":"`...)
	b = e.TS.UTC().AppendFormat(b, TimeFormat)
	b = append(b, '"')
	b = appendField(b, "session", e.Session)
	if e.Turn != 0 {
		b = append(b, `,"turn":`...)
		b = strconv.AppendInt(b, int64(e.Turn), 10)
	}
	b = appendField(b, "event", string(e.Event))
	b = appendField(b, "call", e.Call)
	b = appendField(b, "server", e.Server)
	b = appendField(b, "tool", e.Tool)
	b = appendField(b, "group", e.Group)
	b = appendField(b, "risk", e.Risk)
	b = appendField(b, "decision", e.Decision)
	b = appendField(b, "decided_by", e.DecidedBy)
	b = appendField(b, "rule", e.Rule)
	b = appendField(b, "reason", e.Reason)
	b = appendField(b, "status", e.Status)
	if len(e.Args) > 0 {
		b = append(b, `,"args":`...)
		b = append(b, e.Args...)
	}
	b = appendField(b, "args_sha256", e.ArgsSHA256)
	b = appendField(b, "result", e.Result)
	if e.IsError {
		b = append(b, `,"is_error":true`...)
	}
	if e.DurationMS != 0 {
		b = append(b, `,"duration_ms":`...)
		b = strconv.AppendInt(b, e.DurationMS, 10)
	}
	b = append(b, `,"prev":"`...)
	b = append(b, e.Prev...)
	b = append(b, '"')
	sum := sha256.Sum256(b[start:])
	e.Hash = hex.EncodeToString(sum[:])
	b = append(b, hashPrefix...)
	b = append(b, e.Hash...)
	b = append(b, hashSuffix...)
	return append(b, '\n')
}

// appendField appends `,"name":"value"` unless value is empty.
func appendField(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// every line is valid JSON.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but some line-oriented tools split on them.
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// frame is what the chain needs from one line, read without decoding it.
type frame struct {
	seq  uint64
	prev []byte
	hash []byte
	body []byte // the bytes the hash covers
}

var errLayout = errors.New("the line is not in the audit log's layout")

// parseFrame reads seq, ts, prev and hash from a line (without its newline)
// and checks nothing else: Verify decides what a mismatch means.
func parseFrame(line []byte) (frame, error) {
	var f frame
	if len(line) < frameTail+len(`{"seq":0,"prev":""`) ||
		!bytes.HasPrefix(line, []byte(`{"seq":`)) ||
		!bytes.HasSuffix(line, []byte(hashSuffix)) {
		return f, errLayout
	}
	tail := line[len(line)-frameTail:]
	if !bytes.HasPrefix(tail, []byte(hashPrefix)) {
		return f, errLayout
	}
	f.hash = tail[len(hashPrefix) : len(hashPrefix)+hashLen]
	f.body = line[:len(line)-frameTail]

	seq, _, ok := cutSeq(line)
	if !ok {
		return f, errLayout
	}
	f.seq = seq

	// prev is the last field of the body: `,"prev":"<hex or empty>"`.
	body := f.body
	if len(body) < 2 || body[len(body)-1] != '"' {
		return f, errLayout
	}
	q := bytes.LastIndexByte(body[:len(body)-1], '"')
	if q < 0 || !bytes.HasSuffix(body[:q+1], []byte(`,"prev":"`)) {
		return f, errLayout
	}
	f.prev = body[q+1 : len(body)-1]
	return f, nil
}

// checkHash reports whether the frame's hash is the hash of its body.
func (f frame) checkHash() bool {
	sum := sha256.Sum256(f.body)
	var want [hashLen]byte
	hex.Encode(want[:], sum[:])
	return bytes.Equal(want[:], f.hash)
}

// The string fields written before "args", which filters and stats read
// from the raw bytes.
const (
	fSession = iota
	fEvent
	fServer
	fTool
	fGroup
	fDecision
	fStatus
	nHeadFields
)

var headKeys = map[string]int{
	"session": fSession, "event": fEvent, "server": fServer, "tool": fTool,
	"group": fGroup, "decision": fDecision, "status": fStatus,
}

// head holds a line's head fields, read in one pass without decoding.
type head struct {
	value   [nHeadFields][]byte
	escaped [nHeadFields]bool
}

// field returns a head field's value; an absent field is empty. ok is
// false when the value holds escapes: the caller must decode the line.
func (h *head) field(i int) (value []byte, ok bool) {
	return h.value[i], !h.escaped[i]
}

// parseHead reads the head fields of a line in the writer's layout. ok is
// false for a line it cannot read that way. A key cannot be faked from
// inside a value: quotes in string values are escaped, and the scan stops
// at the first field that is not a string or a number.
func parseHead(line []byte) (h head, ok bool) {
	_, rest, found := cutSeq(line)
	if !found {
		return h, false
	}
	for {
		r, found := bytes.CutPrefix(rest, []byte(`,"`))
		if !found {
			return h, false
		}
		k := bytes.IndexByte(r, '"')
		if k < 0 || k+1 >= len(r) || r[k+1] != ':' {
			return h, false
		}
		key := r[:k]
		r = r[k+2:]
		switch string(key) {
		case "args", "args_sha256", "result", "is_error", "duration_ms", "prev":
			return h, true // the head ends here
		}
		if len(r) == 0 {
			return h, false
		}
		if r[0] != '"' {
			if rest = skipNumber(r); len(rest) == len(r) {
				return h, false
			}
			continue
		}
		end, escaped := stringEnd(r)
		if end < 0 {
			return h, false
		}
		if i, ok := headKeys[string(key)]; ok {
			h.value[i], h.escaped[i] = r[1:end], escaped
		}
		rest = r[end+1:]
	}
}

// skipNumber skips an integer.
func skipNumber(b []byte) []byte {
	i := 0
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '-') {
		i++
	}
	return b[i:]
}

// stringEnd finds the closing quote of the JSON string starting at b[0].
func stringEnd(b []byte) (end int, escaped bool) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return -1, escaped
}

// cutSeq reads the sequence number every line starts with and returns
// what follows it.
func cutSeq(line []byte) (seq uint64, rest []byte, ok bool) {
	rest, ok = bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return 0, nil, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	seq, err := strconv.ParseUint(string(rest[:i]), 10, 64)
	return seq, rest[i:], err == nil
}

// lineSeq reads a line's sequence number.
func lineSeq(line []byte) (uint64, bool) {
	seq, _, ok := cutSeq(line)
	return seq, ok
}
