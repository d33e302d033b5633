package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Local models often print their tool calls instead of sending them
// natively. These are the shapes recognised:
//
//	<tool_call>{"name": "x", "arguments": {…}}</tool_call>   (Hermes, Qwen)
//	```json\n{"name": "x", "arguments": {…}}\n```
//	{"name": "x", "parameters": {…}}                          (Llama 3)
//
// A JSON object is a call when it has only the keys name, arguments,
// parameters, function, id and type, names a known tool, and its arguments
// are an object or a string holding one. A tag or fence may hold several
// objects, or an array of them; all must be calls. Bare objects count only
// at the start of a line outside a code block.

const (
	tagOpen  = "<tool_call>"
	tagClose = "</tool_call>"
	fence    = "```"
)

// callKeys are the keys a printed tool call may have.
var callKeys = map[string]bool{"name": true, "arguments": true, "parameters": true, "function": true, "id": true, "type": true}

// ParseTextToolCalls finds the tool calls printed in content and returns
// the remaining prose with them. known reports whether a name is a tool;
// nil accepts every name. Calls get IDs "call_1", "call_2", … in order; when
// there is none, text is content unchanged.
func ParseTextToolCalls(content string, known func(name string) bool) (text string, calls []ToolCall) {
	s := newCallScanner(known, nil)
	s.feed(content)
	s.finish()
	text, calls = s.result()
	for i := range calls {
		calls[i].ID = fmt.Sprintf("call_%d", i+1)
	}
	return text, calls
}

type segKind int

const (
	segNone    segKind = iota
	segPartial         // what may be the start of a tag or fence, cut by the chunk's end
	segTag
	segFence
	segBrace
)

// callScanner cuts printed tool calls out of content fed piece by piece,
// passing on at once everything that cannot start one and holding back what
// may, until it is clear: a call is dropped, anything else is emitted after
// all. Every byte is looked at a bounded number of times, however the
// content is chunked.
type callScanner struct {
	known func(string) bool
	emit  func(string) // may be nil

	out     strings.Builder // the content, less the calls
	calls   []ToolCall
	pending []byte // not yet emitted nor dropped
	col0    bool   // only blanks since the last newline before pending
	inCode  bool   // inside a fenced block that is not a call

	// The candidate pending starts with, and how far it was examined.
	seg  segKind
	from int
	br   braceScan
}

// braceScan follows a bare JSON object to its end.
type braceScan struct {
	keyOK      bool
	pos, depth int
	inStr, esc bool
}

func newCallScanner(known func(string) bool, emit func(string)) *callScanner {
	return &callScanner{known: known, emit: emit, col0: true}
}

func (c *callScanner) feed(s string) {
	c.pending = append(c.pending, s...)
	c.scan(false)
}

// finish settles everything still held back.
func (c *callScanner) finish() { c.scan(true) }

// result returns the prose, trimmed when calls were cut out of it, and the
// calls.
func (c *callScanner) result() (string, []ToolCall) {
	text := c.out.String()
	if len(c.calls) > 0 {
		text = strings.TrimSpace(text)
	}
	return text, c.calls
}

func (c *callScanner) scan(final bool) {
	for len(c.pending) > 0 {
		if c.inCode {
			if !c.code(final) {
				return
			}
			continue
		}
		if c.seg == segNone {
			i, kind := c.candidate(final)
			if i < 0 {
				c.take(len(c.pending))
				return
			}
			c.take(i)
			c.seg, c.from, c.br = kind, 0, braceScan{}
		}
		var done bool
		switch c.seg {
		case segPartial:
			c.seg = segNone
			if final {
				c.take(len(c.pending))
			}
			done = final
		case segTag:
			done = c.tag(final)
		case segFence:
			done = c.fenced(final)
		case segBrace:
			done = c.brace(final)
		}
		if !done {
			return
		}
	}
}

// take emits the first n bytes of pending as prose.
func (c *callScanner) take(n int) {
	s := string(c.pending[:n])
	c.pending = c.pending[n:]
	c.seg = segNone
	if s == "" {
		return
	}
	c.out.WriteString(s)
	if c.emit != nil {
		c.emit(s)
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		c.col0 = strings.Trim(s[i+1:], " \t\r") == ""
	} else if strings.Trim(s, " \t\r") != "" {
		c.col0 = false
	}
}

// settle drops the first n bytes of pending when body holds calls, and
// emits them otherwise.
func (c *callScanner) settle(body []byte, n int) {
	calls, ok := parseCalls(body, c.known)
	if !ok {
		c.take(n)
		return
	}
	c.calls = append(c.calls, calls...)
	c.pending = c.pending[n:]
	c.seg = segNone
	c.col0 = true // a call may follow a call directly
}

// candidate finds the first place in pending where a call may start: a tag
// anywhere, a fence or a brace at the start of a line, or the beginning of a
// tag or fence cut by the end of pending. It returns -1 when there is none.
func (c *callScanner) candidate(final bool) (int, segKind) {
	best, kind := -1, segNone
	if i := bytes.Index(c.pending, []byte(tagOpen)); i >= 0 {
		best, kind = i, segTag
	} else if k := partialSuffix(c.pending, tagOpen); k > 0 && !final {
		best, kind = len(c.pending)-k, segPartial
	}
	limit := len(c.pending)
	if best >= 0 {
		limit = best
	}
	for ls := 0; ls < limit; {
		if ls > 0 || c.col0 {
			q := ls + len(c.pending[ls:]) - len(bytes.TrimLeft(c.pending[ls:], " \t"))
			if q < limit {
				rest := c.pending[q:]
				switch {
				case bytes.HasPrefix(rest, []byte(fence)):
					return q, segFence
				case rest[0] == '{':
					return q, segBrace
				case strings.HasPrefix(fence, string(rest)) && !final:
					return q, segPartial
				}
			}
		}
		nl := bytes.IndexByte(c.pending[ls:limit], '\n')
		if nl < 0 {
			break
		}
		ls += nl + 1
	}
	return best, kind
}

// tag settles a <tool_call> block once it is closed, or at the end.
func (c *callScanner) tag(final bool) bool {
	start := max(len(tagOpen), c.from)
	if j := bytes.Index(c.pending[start:], []byte(tagClose)); j >= 0 {
		c.settle(c.pending[len(tagOpen):start+j], start+j+len(tagClose))
		return true
	}
	if !final {
		c.from = max(len(tagOpen), len(c.pending)-len(tagClose)+1)
		return false
	}
	c.settle(c.pending[len(tagOpen):], len(c.pending)) // a tag left open at the end
	return true
}

// callFence reports whether a fence's info string may introduce a call.
func callFence(info string) bool {
	switch info {
	case "", "json", "tool_call", "tool_code", "tool":
		return true
	}
	return false
}

// fenced settles a fenced block: one that cannot hold a call is passed on
// as code; one that may is held until it closes.
func (c *callScanner) fenced(final bool) bool {
	nl := bytes.IndexByte(c.pending, '\n')
	if nl < 0 {
		if final {
			c.take(len(c.pending))
		}
		return final
	}
	if !callFence(strings.ToLower(strings.TrimSpace(string(c.pending[len(fence):nl])))) {
		c.take(nl + 1)
		c.inCode = true
		return true
	}
	ls := max(nl+1, c.from)
	for {
		q := ls + len(c.pending[ls:]) - len(bytes.TrimLeft(c.pending[ls:], " \t"))
		rest := c.pending[q:]
		if bytes.HasPrefix(rest, []byte(fence)) {
			c.settle(c.pending[nl+1:ls], q+len(fence))
			return true
		}
		e := bytes.IndexByte(rest, '\n')
		if e < 0 {
			if final {
				c.settle(c.pending[nl+1:], len(c.pending))
				return true
			}
			c.from = ls
			return false
		}
		ls = q + e + 1
	}
}

// code passes on a code block line by line until its closing fence.
func (c *callScanner) code(final bool) bool {
	if c.col0 {
		rest := bytes.TrimLeft(c.pending, " \t")
		switch {
		case bytes.HasPrefix(rest, []byte(fence)):
			c.inCode = false
			c.take(len(c.pending) - len(rest) + len(fence))
			return true
		case strings.HasPrefix(fence, string(rest)) && !final:
			return false
		}
	}
	if e := bytes.IndexByte(c.pending, '\n'); e >= 0 {
		c.take(e + 1)
	} else {
		c.take(len(c.pending))
	}
	return true
}

// brace settles a bare JSON object at the start of a line. Its first key
// decides early whether it can be a call at all.
func (c *callScanner) brace(final bool) bool {
	s, b := c.pending, &c.br
	if !b.keyOK {
		i := len(s) - len(bytes.TrimLeft(s[1:], blanks))
		if i < len(s) && s[i] != '"' {
			c.take(1) // not an object with keys: prose
			return true
		}
		end := -1
		if i < len(s) {
			end = bytes.IndexByte(s[i+1:], '"')
		}
		if end < 0 {
			if final {
				c.take(len(s))
			}
			return final
		}
		if !callKeys[string(s[i+1:i+1+end])] {
			c.take(1)
			return true
		}
		b.keyOK = true
	}
	for ; b.pos < len(s); b.pos++ {
		switch ch := s[b.pos]; {
		case b.esc:
			b.esc = false
		case b.inStr:
			b.esc = ch == '\\'
			b.inStr = ch != '"'
		case ch == '"':
			b.inStr = true
		case ch == '{' || ch == '[':
			b.depth++
		case ch == '}' || ch == ']':
			if b.depth--; b.depth == 0 {
				c.settle(s[:b.pos+1], b.pos+1)
				return true
			}
		}
	}
	if final {
		c.take(len(s)) // never closed: not JSON
	}
	return final
}

// parseCalls reads body as one or more JSON calls, or arrays of them; all
// must be calls of known tools.
func parseCalls(body []byte, known func(string) bool) ([]ToolCall, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var calls []ToolCall
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false
		}
		items := []json.RawMessage{raw}
		if raw[0] == '[' {
			if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
				return nil, false
			}
		}
		for _, it := range items {
			tc, ok := callFrom(it, known, true)
			if !ok {
				return nil, false
			}
			calls = append(calls, tc)
		}
	}
	return calls, len(calls) > 0
}

// callFrom reads one call object. nested allows OpenAI's own shape,
// {"type": "function", "function": {"name": …, "arguments": …}}, one level
// deep.
func callFrom(raw json.RawMessage, known func(string) bool, nested bool) (ToolCall, bool) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return ToolCall{}, false
	}
	for k := range m {
		if !callKeys[k] {
			return ToolCall{}, false
		}
	}
	var name string
	if v, ok := m["name"]; ok && json.Unmarshal(v, &name) != nil {
		return ToolCall{}, false
	}
	if f, ok := m["function"]; ok && name == "" {
		if json.Unmarshal(f, &name) != nil {
			if !nested {
				return ToolCall{}, false
			}
			return callFrom(f, known, false)
		}
	}
	name = strings.TrimSpace(name)
	if name == "" || (known != nil && !known(name)) {
		return ToolCall{}, false
	}
	args, ok := m["arguments"]
	if !ok {
		args = m["parameters"]
	}
	text, ok := argumentsText(args)
	if !ok {
		return ToolCall{}, false
	}
	return ToolCall{Name: name, Arguments: text, FromText: true}, true
}

// argumentsText returns arguments given as an object, or as a string
// holding one, as compact JSON; none at all is "{}".
func argumentsText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", true
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		if raw = bytes.TrimSpace([]byte(s)); len(raw) == 0 {
			return "{}", true
		}
	}
	if raw[0] != '{' {
		return "", false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return "", false
	}
	return buf.String(), true
}
