package audit

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// redactJSON returns raw as compact JSON with secrets redacted: the value of
// every secret-named key, whatever its type, becomes "[REDACTED]"; every
// string is passed through redactText, or walked as JSON if it holds an
// object or array; strings are then cut to maxString bytes (no limit if
// maxString <= 0). Raw that is not JSON is stored as one redacted string.
func redactJSON(raw []byte, maxString int) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	v, ok := decodeJSON(raw)
	if !ok {
		return marshal(truncate(redactText(string(raw)), maxString))
	}
	return marshal(redactValue(v, maxString))
}

func decodeJSON(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // 12345678901234567890 must not become 1.2345678901234567e+19
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func redactValue(v any, maxString int) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		// Sorted, so that two keys redacted alike are told apart the same
		// way every time.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			x := v[k]
			if secretKey(k) {
				x = redacted
			} else {
				x = redactValue(x, maxString)
			}
			// A key may be a secret too: {"ghp_…": "octocat"}.
			rk := redactText(k)
			for i := 2; ; i++ {
				if _, dup := out[rk]; !dup {
					break
				}
				rk = redactText(k) + "#" + strconv.Itoa(i)
			}
			out[rk] = x
		}
		return out
	case []any:
		for i := range v {
			v[i] = redactValue(v[i], maxString)
		}
		return v
	case string:
		return redactString(v, maxString)
	}
	return v
}

func redactString(s string, maxString int) string {
	// A string too long to keep is only redacted as far as it is kept
	// (redactBounded); decoding it as JSON would cost its whole length.
	if t := strings.TrimSpace(s); len(t) > 1 && (t[0] == '{' || t[0] == '[') && (maxString <= 0 || len(t) <= 4*maxString) {
		if v, ok := decodeJSON([]byte(t)); ok {
			return truncate(string(marshal(redactValue(v, maxString))), maxString)
		}
	}
	return redactBounded(s, maxString)
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only values decoded from JSON get here, so this cannot happen.
		return []byte(`"[unencodable]"`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// truncate cuts s to at most limit bytes, at a rune boundary, and says how
// long it was. Callers redact first, so that a cut never leaves the prefix
// of a secret that redaction would no longer recognise.
func truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	return cutTo(s, limit, len(s))
}

// cutTo cuts s to at most limit bytes, at a rune boundary, with a marker
// giving the length of the whole, which may be longer than s.
func cutTo(s string, limit, whole int) string {
	cut := min(limit, len(s))
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[truncated, " + strconv.Itoa(whole) + " bytes]"
}
