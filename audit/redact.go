package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// redacted replaces the whole value of a secret-named key.
const redacted = "[REDACTED]"

// rule finds one shape of secret in free text and replaces it with
// [REDACTED:kind]. Only the first participating group whose name starts with
// "v" is replaced (the whole match if there is none), so that what surrounds
// a secret, such as a URL's user and host or a parameter's name, stays
// readable.
//
// Go's regexp runs at some tens of MB/s, too slow to pass every rule over
// every tool result; so one pass finds the hints of all rules, literals that
// every match contains, and a rule searches only the words around its own.
// A text holding none of a rule's hints costs that rule nothing.
type rule struct {
	kind  string
	hints []string // lowercase
	// near finds candidates where no literal hint would do.
	near func(lower string) []int
	re   *regexp.Regexp
	// fwd is how far past a hint a match may reach before the word that
	// holds its secret, for rules whose matches span whitespace.
	fwd int
	// multiline rules search the whole text instead.
	multiline bool
	// needs, if set, lists bytes of which a window must hold one to be
	// worth searching.
	needs string
	// key rules take the identifier holding a hint as the key, and match
	// re, anchored, against what follows it: cheaper than a regexp that
	// finds the identifier too, and identifiers are where hints are common.
	key bool
	// tail, if set, finds the secret's span from the end of the match, so
	// that a quoted value of any length is redacted whole.
	tail func(s string, at int) (start, end int)
	// ok, if set, vetoes a match that has the shape but not the substance.
	ok func(m match) bool

	values   []int   // indexes of the "v" groups
	keyGroup int     // index of the "key" group, or -1
	mask     hintSet // the rule's hints in the package's hints
}

// match is one candidate found by a rule; s[start:end] would be redacted.
type match struct {
	s          string
	loc        []int
	re         *regexp.Regexp
	start, end int
	keyAt      int // where key is in s, if the rule has one
	key        string
}

func (m match) value() string { return m.s[m.start:m.end] }

// group returns the named group's text, or "" if it did not participate.
func (m match) group(name string) string {
	i := m.re.SubexpIndex(name)
	if i < 0 || m.loc[2*i] < 0 {
		return ""
	}
	return m.s[m.loc[2*i]:m.loc[2*i+1]]
}

// keyHints are held by every key secretKey accepts, or nearly: the rules
// that go by a key's name look only where one of them is.
var keyHints = []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "cookie", "jwt"}

// rules run in order. Structures come first (a PEM block, a URL's
// userinfo), then the shapes of known providers, so that their kinds are
// precise, and last the generic rules that go by the name a value is given.
// A redacted span is never redacted again.
var rules = []*rule{
	// A block cut off before its END line is redacted to the end of the
	// text: the tool may have truncated its own output.
	{kind: "private-key", hints: []string{"private key"}, multiline: true,
		re: re(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)},
	// The password may hold an unescaped "@": the greedy group runs to
	// the last "@" of the authority.
	{kind: "url-password", hints: []string{"://"}, needs: "@",
		re: re(`(?i)\b[a-z][a-z0-9+.-]*://[^\s:/?#@"'<>\\]*:(?P<v>[^\s/?#"'<>\\]+)@`)},
	{kind: "slack-webhook", hints: []string{"hooks.slack.com"},
		re: re(`(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{8,})`)},
	{kind: "discord-webhook", hints: []string{"/api/webhooks/"},
		re: re(`(?i)discord(?:app)?\.com/api/webhooks/\d+/(?P<v>[A-Za-z0-9_-]{20,})`)},
	{kind: "jwt", hints: []string{"eyj"},
		re: re(`eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)},

	{kind: "anthropic-key", hints: []string{"sk-ant-"}, re: re(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{kind: "openrouter-key", hints: []string{"sk-or-"}, re: re(`\bsk-or-v1-[A-Za-z0-9]{32,}`)},
	// Digits and letters both, so that kebab-case words after "sk-" stay.
	{kind: "openai-key", hints: []string{"sk-"}, ok: digitAndLetter,
		re: re(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`)},
	{kind: "google-api-key", hints: []string{"aiza"}, re: re(`\bAIza[0-9A-Za-z_-]{35}`)},
	{kind: "google-oauth-token", hints: []string{"ya29."}, re: re(`\bya29\.[0-9A-Za-z_-]{20,}`)},
	{kind: "google-refresh-token", hints: []string{"1//0"}, re: re(`\b1//0[0-9A-Za-z_-]{30,}`)},
	{kind: "aws-key", hints: []string{"akia", "asia", "abia", "acca", "a3t"},
		re: re(`\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b`)},
	{kind: "github-token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re: re(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{kind: "gitlab-token", hints: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-", "glimt-"},
		re: re(`\bgl(?:pat|dt|rt|ptt|cbt|ft|soat|imt)-[A-Za-z0-9_-]{20,}`)},
	{kind: "slack-token", hints: []string{"xox", "xapp-"},
		re: re(`\b(?:xox[abposr]-[0-9A-Za-z-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})`)},
	{kind: "stripe-key", hints: []string{"_live_", "_test_"}, re: re(`\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}`)},
	{kind: "stripe-webhook-secret", hints: []string{"whsec_"}, re: re(`\bwhsec_[A-Za-z0-9+/=]{24,}`)},
	{kind: "huggingface-token", hints: []string{"hf_"}, ok: mixedCase, re: re(`\bhf_[A-Za-z0-9]{30,}`)},
	{kind: "npm-token", hints: []string{"npm_"}, re: re(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "pypi-token", hints: []string{"pypi-"}, re: re(`\bpypi-Ag[A-Za-z0-9_-]{50,}`)},
	{kind: "sendgrid-key", hints: []string{"sg."}, re: re(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`)},
	{kind: "twilio-key", hints: []string{"sk"}, re: re(`\bSK[0-9a-f]{32}\b`)},
	{kind: "mailgun-key", hints: []string{"key-"}, ok: digitAndLetter, re: re(`\bkey-[0-9A-Za-z]{32}\b`)},
	{kind: "digitalocean-token", hints: []string{"_v1_"}, re: re(`\bdo[opr]_v1_[a-f0-9]{64}\b`)},
	{kind: "groq-key", hints: []string{"gsk_"}, re: re(`\bgsk_[A-Za-z0-9]{48,}`)},
	{kind: "xai-key", hints: []string{"xai-"}, ok: digitAndLetter, re: re(`\bxai-[A-Za-z0-9]{60,}`)},
	{kind: "replicate-token", hints: []string{"r8_"}, ok: digitAndLetter, re: re(`\br8_[A-Za-z0-9]{37,}`)},
	{kind: "perplexity-key", hints: []string{"pplx-"}, re: re(`\bpplx-[A-Za-z0-9]{40,}`)},
	{kind: "shopify-token", hints: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, re: re(`\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`)},
	{kind: "databricks-token", hints: []string{"dapi"}, re: re(`\bdapi[a-f0-9]{32}(?:-\d+)?\b`)},
	{kind: "linear-key", hints: []string{"lin_api_", "lin_oauth_"}, re: re(`\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b`)},
	{kind: "notion-token", hints: []string{"ntn_", "secret_"}, ok: digitAndLetter,
		re: re(`\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b`)},
	{kind: "doppler-token", hints: []string{"dp."}, re: re(`\bdp\.(?:st|sa|ct|pt|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9_-]{40,}`)},
	{kind: "sentry-token", hints: []string{"sntrys_", "sntryu_"}, re: re(`\bsntry[su]_[A-Za-z0-9+/=_-]{40,}`)},
	{kind: "grafana-token", hints: []string{"glsa_", "glc_"},
		re: re(`\b(?:glsa_[A-Za-z0-9]{32}_[0-9a-f]{8}|glc_[A-Za-z0-9+/=_-]{32,})`)},
	{kind: "postman-key", hints: []string{"pmak-"}, re: re(`\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`)},
	{kind: "atlassian-token", hints: []string{"atatt3x"}, re: re(`\bATATT3x[A-Za-z0-9_=-]{100,}`)},
	{kind: "age-key", hints: []string{"age-secret-key-1"}, re: re(`\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b`)},
	// The user id before the first dot is base64 of decimal digits,
	// which tells a bot token from a dotted identifier.
	{kind: "discord-token", near: dotPairs, ok: discordID,
		re: re(`\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`)},
	// No \b: the token sits inside ".../bot<token>/getMe".
	{kind: "telegram-token", hints: []string{":aa"}, re: re(`\d{8,10}:AA[A-Za-z0-9_-]{33}`)},
	{kind: "azure-key", hints: []string{"accountkey=", "sharedaccesskey="},
		re: re(`(?i)\b(?:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/=]{20,})`)},

	{kind: "bearer", hints: []string{"bearer"}, fwd: 16, ok: tokenLike,
		re: re(`(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{8,}=*)`)},
	{kind: "basic-auth", hints: []string{"basic"}, fwd: 16, ok: basicCredential,
		re: re(`(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{4,}={0,2})`)},
	// Any other scheme: "Authorization: token abc", "Authorization: abc".
	{kind: "authorization", hints: []string{"authorization"}, fwd: 64, ok: plausibleValue,
		re: re(`(?i)\b(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:[a-z][a-z0-9_-]*[ \t]+)?(?P<v>[^\s"'\\,;]+)`)},
	// ?access_token=x&sig=y, and user[password]=x in a form.
	{kind: "url-param", hints: append([]string{"sig"}, keyHints...), key: true, fwd: 2, ok: secretParam,
		re: re(`^\]?=(?P<v>[^&#;\s"'<>\\]+)`)},
	{kind: "aws-secret-key", hints: []string{"secret"}, fwd: 32,
		re: re(`(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)\\?["']?[ \t]*(?:=|:|=>)[ \t]*\\?["']?(?P<v>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`)},
	// KEY=value, key: value, "key": "value", \"key\": \"value\" (JSON in
	// a JSON string) and key => 'value', for keys secretKey accepts.
	{kind: "secret-assignment", hints: keyHints, key: true, fwd: 48, tail: assignedValue, ok: assignment,
		re: re(`^\]?(?:\\?["'])?[ \t]*(?P<sep>=>|==?|:=|:)`)},
	// <password>s3cret</password>, also with < and > escaped as in JSON.
	{kind: "secret-assignment", hints: keyHints, key: true, fwd: 1, tail: elementText, ok: xmlElement,
		re: re(`^(?:>|\\u003[eE])`)},
	// --password hunter2, --token "abc def"
	{kind: "cli-secret", hints: []string{"-pass", "-pwd", "-token", "-secret", "-api", "-auth", "-cred"}, fwd: 16,
		tail: flagValue, ok: cliFlag,
		re: re(`(?i)(?:^|\s)--?(?P<key>[a-z][a-z0-9-]*)[ \t]`)},
	{kind: "cli-password", hints: []string{"-u", "--user"}, fwd: 16,
		re: re(`(?:^|\s)(?:-u|--user)[ \t]+["']?[^\s:"']+:(?P<v>[^\s"']+)`)},
	// .netrc: machine host login user password secret
	{kind: "netrc-password", hints: []string{"password"}, fwd: 16, ok: netrc,
		re: re(`(?i)\bpassword[ \t]+(?P<v>\S+)`)},
}

// hints lists every rule's hints once; byPair indexes them by their first
// two bytes, so that one pass over a text finds them all, and pairBits says
// which pairs start one in a table small enough to stay in the L1 cache.
var (
	hints     []string
	byPair    [1 << 16]uint8 // 1 + index in pairHints; 0 for none
	pairBits  [1 << 16 / 64]uint64
	pairHints [][]int
)

const maxHints = 128

// hintSet is a set of indexes in hints.
type hintSet [maxHints / 64]uint64

func (h *hintSet) add(i int)     { h[i/64] |= 1 << (i % 64) }
func (h hintSet) has(i int) bool { return h[i/64]&(1<<(i%64)) != 0 }

func (h hintSet) meets(o hintSet) bool {
	for i := range h {
		if h[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// hit is hints[hint] found at lower[at:at+n].
type hit struct{ at, n, hint int }

func findHints(lower string) (hits []hit, present hintSet) {
	for i := 0; i+1 < len(lower); i++ {
		pair := uint16(lower[i])<<8 | uint16(lower[i+1])
		if pairBits[pair/64]&(1<<(pair%64)) == 0 {
			continue
		}
		for _, h := range pairHints[byPair[pair]-1] {
			if strings.HasPrefix(lower[i:], hints[h]) {
				hits = append(hits, hit{i, len(hints[h]), h})
				present.add(h)
			}
		}
	}
	return hits, present
}

func init() {
	index := map[string]int{}
	for _, r := range rules {
		r.keyGroup = r.re.SubexpIndex("key")
		for i, name := range r.re.SubexpNames() {
			if strings.HasPrefix(name, "v") {
				r.values = append(r.values, i)
			}
		}
		for _, h := range r.hints {
			n, ok := index[h]
			if !ok {
				if len(h) < 2 || h != strings.ToLower(h) {
					panic("audit: a redaction hint must be lowercase and two bytes or longer: " + h)
				}
				n = len(hints)
				index[h] = n
				hints = append(hints, h)
				pair := uint16(h[0])<<8 | uint16(h[1])
				if byPair[pair] == 0 {
					pairHints = append(pairHints, nil)
					byPair[pair] = uint8(len(pairHints))
					pairBits[pair/64] |= 1 << (pair % 64)
				}
				pairHints[byPair[pair]-1] = append(pairHints[byPair[pair]-1], n)
			}
			r.mask.add(n)
		}
	}
	if len(hints) > maxHints || len(pairHints) > 255 {
		panic("audit: too many redaction hints")
	}
}

func re(expr string) *regexp.Regexp { return regexp.MustCompile(expr) }

// redactText replaces every secret found in s with [REDACTED:kind].
func redactText(s string) string {
	lower := asciiLower(s)
	hits, present := findHints(lower)
	for _, r := range rules {
		if r.near == nil && !r.mask.meets(present) {
			continue
		}
		if t := r.apply(s, lower, hits); t != s {
			s, lower = t, asciiLower(t)
			hits, present = findHints(lower)
		}
	}
	return s
}

// asciiLower lowercases only ASCII letters, so that offsets in the result
// are offsets in s.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func (r *rule) apply(s, lower string, hits []hit) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for _, w := range r.windows(s, lower, hits) {
		pos := max(w.start, done)
		if r.key {
			if w.keyAt < done {
				continue // inside a value already redacted
			}
			pos = w.start
		}
		if r.needs != "" && !strings.ContainsAny(s[pos:w.end], r.needs) {
			continue
		}
		for pos < w.end {
			loc := r.re.FindStringSubmatchIndex(s[pos:w.end])
			if loc == nil {
				break
			}
			for i := range loc {
				if loc[i] >= 0 {
					loc[i] += pos
				}
			}
			m := match{s: s, loc: loc, re: r.re, start: loc[0], end: loc[1]}
			if r.key {
				m.keyAt, m.key = w.keyAt, s[w.keyAt:w.start]
			} else if g := r.keyGroup; g >= 0 && loc[2*g] >= 0 {
				m.keyAt, m.key = loc[2*g], s[loc[2*g]:loc[2*g+1]]
			}
			for _, g := range r.values {
				if loc[2*g] >= 0 {
					m.start, m.end = loc[2*g], loc[2*g+1]
					break
				}
			}
			if r.tail != nil {
				m.start, m.end = r.tail(s, loc[1])
			} else if len(r.values) == 0 && !r.multiline {
				m.end = tokenEnd(s, m.end)
			}
			if m.start == m.end || strings.HasPrefix(s[m.start:], "[REDACTED") || (r.ok != nil && !r.ok(m)) {
				if r.key {
					break
				}
				// Look again inside the value: in "?next=/x?token=y" the
				// vetoed "next" match must not hide the "token" one.
				if m.start > loc[0] && m.start < w.end {
					pos = m.start
				} else {
					_, n := utf8.DecodeRuneInString(s[loc[0]:])
					pos = loc[0] + max(n, 1)
				}
				continue
			}
			b.WriteString(s[done:m.start])
			b.WriteString("[REDACTED:")
			b.WriteString(r.kind)
			b.WriteString("]")
			done = m.end
			pos = max(loc[1], m.end)
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// window is a stretch of s that a rule searches. For key rules it starts
// right after the key, s[keyAt:start].
type window struct{ keyAt, start, end int }

// windows returns, in order, the stretches of s that r searches: the words
// around each hint and up to fwd bytes beyond it, within its line, merged
// where they overlap. Each starts after whitespace, so that \b and ^ mean
// there what they mean in s. Every byte is looked at a bounded number of
// times, so a long line full of hints costs no more per byte than a short
// one.
func (r *rule) windows(s, lower string, hits []hit) []window {
	if r.multiline {
		return []window{{start: 0, end: len(s)}}
	}
	if r.near != nil {
		hits = nil
		for _, at := range r.near(lower) {
			hits = append(hits, hit{at: at, n: 1})
		}
	}
	var ws []window
	lineStart, lineEnd := 0, -1
	for _, h := range hits {
		if r.near == nil && !r.mask.has(h.hint) {
			continue
		}
		if h.at > lineEnd {
			lineStart = strings.LastIndexByte(s[:h.at], '\n') + 1
			lineEnd = len(s)
			if j := strings.IndexByte(s[h.at:], '\n'); j >= 0 {
				lineEnd = h.at + j
			}
		}
		if r.key {
			if w, ok := keyWindow(s, h.at, h.at+h.n, lineStart, lineEnd, r.fwd); ok && (len(ws) == 0 || w.keyAt != ws[len(ws)-1].keyAt) {
				ws = append(ws, w)
			}
			continue
		}
		floor, end := lineStart, h.at+h.n+r.fwd
		if len(ws) > 0 {
			floor = max(floor, ws[len(ws)-1].end)
			end = max(end, ws[len(ws)-1].end)
		}
		start := h.at
		for start > floor && !isSpace(s[start-1]) {
			start--
		}
		end = min(end, lineEnd)
		for end < lineEnd && !isSpace(s[end]) {
			end++
		}
		if len(ws) > 0 && start <= ws[len(ws)-1].end {
			ws[len(ws)-1].end = max(ws[len(ws)-1].end, end)
		} else {
			ws = append(ws, window{start: start, end: end})
		}
	}
	return ws
}

// maxKey bounds the identifiers taken for keys, so that a long run of
// identifier bytes full of hints costs a bounded amount per hint.
const maxKey = 128

// keyWindow returns the window of a key rule for the hint at s[i:j]: the
// identifier holding it is the key, and what follows it is searched, to fwd
// bytes and then the end of the word.
func keyWindow(s string, i, j, lineStart, lineEnd, fwd int) (window, bool) {
	hint := i
	for ; i > lineStart && isIdent(s[i-1]); i-- {
		if hint-i > maxKey {
			return window{}, false
		}
	}
	// In \u0026password= the key starts after the escape.
	if i > lineStart && s[i-1] == '\\' && i+5 <= hint && s[i] == 'u' {
		if _, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
			i += 5
		}
	}
	for end := j; j < lineEnd && isIdent(s[j]); j++ {
		if j-end > maxKey {
			return window{}, false
		}
	}
	end := min(j+fwd, lineEnd)
	for end < lineEnd && !isSpace(s[end]) {
		end++
	}
	return window{keyAt: i, start: j, end: end}, true
}

// tokenEnd extends a secret's shape over the token characters right after
// it, so that a longer variant, or one percent-encoded in a URL
// ("…%3D5F2A…"), leaves no tail behind.
func tokenEnd(s string, end int) int {
	for end < len(s) {
		switch c := s[end]; {
		case isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '=':
			end++
		case c == '%' && end+2 < len(s) && isHex(s[end+1]) && isHex(s[end+2]):
			end += 3
		default:
			return end
		}
	}
	return end
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdent(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// dotPairs finds dots seven bytes apart, as in a Discord bot token.
func dotPairs(lower string) []int {
	var at []int
	for i := 0; ; {
		j := strings.IndexByte(lower[i:], '.')
		if j < 0 {
			return at
		}
		i += j
		if i+7 < len(lower) && lower[i+7] == '.' {
			at = append(at, i)
		}
		i++
	}
}

// valueAt returns the span of the value that starts at or after at, past
// blanks: the inside of a quoted string (JSON escapes allowed), of a string
// quoted with \" (JSON held in a JSON string), or a word ending at
// whitespace or at a byte in stop. A quote left open runs to the line's end.
func valueAt(s string, at int, stop string) (int, int) {
	for at < len(s) && (s[at] == ' ' || s[at] == '\t') {
		at++
	}
	end := len(s)
	if j := strings.IndexByte(s[at:], '\n'); j >= 0 {
		end = at + j
	}
	line := s[at:end]
	switch {
	case strings.HasPrefix(line, `\"`):
		if j := strings.Index(line[2:], `\"`); j >= 0 {
			return at + 2, at + 2 + j
		}
		return at + 2, end
	case line != "" && strings.IndexByte("\"'`", line[0]) >= 0:
		for j := 1; j < len(line); j++ {
			if line[j] == '\\' && line[0] == '"' {
				j++
			} else if line[j] == line[0] {
				return at + 1, at + j
			}
		}
		return at + 1, end
	}
	j := 0
	for j < len(line) && !isSpace(line[j]) && strings.IndexByte(stop, line[j]) < 0 {
		j++
	}
	return at, at + j
}

// assignedValue ends an unquoted value where a list, a statement or a query
// parameter would go on.
func assignedValue(s string, at int) (int, int) {
	start, end := valueAt(s, at, "\"'`,;&\\")
	if start < end && strings.IndexByte("{[(<", s[start]) >= 0 {
		return start, start // an object or a call, not a secret
	}
	return start, end
}

func flagValue(s string, at int) (int, int) { return valueAt(s, at, "\"'`") }

// elementText returns the text of <password>text</password>.
func elementText(s string, at int) (int, int) {
	line, _, _ := strings.Cut(s[at:], "\n")
	for j := range len(line) {
		if strings.HasPrefix(line[j:], "</") || strings.HasPrefix(asciiLower(line[j:min(j+7, len(line))]), `\u003c/`) {
			return at, at + j
		}
	}
	return at, at
}

func digitAndLetter(m match) bool {
	v := m.value()
	return strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, unicode.IsLetter) >= 0
}

func mixedCase(m match) bool {
	v := m.value()
	return strings.IndexFunc(v, unicode.IsUpper) >= 0 && strings.IndexFunc(v, unicode.IsLower) >= 0
}

// tokenLike keeps prose such as "bearer authentication" while random
// tokens, which nearly always hold a digit, are redacted.
func tokenLike(m match) bool {
	v := m.value()
	return strings.ContainsAny(v, "0123456789") || len(v) >= 24
}

// basicCredential accepts only base64 of "user:password", so that "Basic
// authentication" is left alone.
func basicCredential(m match) bool {
	v := m.value()
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	}
	return err == nil && bytes.IndexByte(b, ':') > 0 && utf8.Valid(b)
}

func discordID(m match) bool {
	id, _, _ := strings.Cut(m.value(), ".")
	b, err := base64.RawURLEncoding.DecodeString(id)
	if err != nil || len(b) < 15 {
		return false
	}
	return strings.Trim(string(b), "0123456789") == ""
}

// querySecrets are parameter names that hold secrets in URLs though
// secretKey does not accept them as JSON keys.
var querySecrets = map[string]bool{"sig": true, "signature": true, "x-amz-signature": true, "x-goog-signature": true}

func secretParam(m match) bool {
	if c := before(m.s, m.keyAt); c == 0 || strings.IndexByte("?&[", c) < 0 {
		return false
	}
	return (secretKey(m.key) || querySecrets[strings.ToLower(m.key)]) && plausibleValue(m)
}

func secretNamed(m match) bool { return secretKey(m.key) && plausibleValue(m) }

func xmlElement(m match) bool { return before(m.s, m.keyAt) == '<' && secretNamed(m) }

// before returns the byte before s[i], decoding a JSON escape such as
// \u0026, which Go's encoder writes for & < and >.
func before(s string, i int) byte {
	if i >= 6 && s[i-6] == '\\' && s[i-5] == 'u' {
		if c, err := strconv.ParseUint(s[i-4:i], 16, 8); err == nil {
			return byte(c)
		}
	}
	if i > 0 {
		return s[i-1]
	}
	return 0
}

func cliFlag(m match) bool { return !strings.HasPrefix(m.value(), "-") && secretNamed(m) }

var netrcLogin = regexp.MustCompile(`^(?i)login\s+\S+\s+$`)

// netrc accepts "password x" only after "login user", which prose lacks.
func netrc(m match) bool {
	before := m.s[max(0, m.loc[0]-256):m.loc[0]]
	i := strings.LastIndex(asciiLower(before), "login")
	return i >= 0 && (i == 0 || !isLetter(before[i-1])) && netrcLogin.MatchString(before[i:]) && plausibleValue(m)
}

// assignment accepts a value given to a secret-named key, except where an
// unquoted "key: word more words" reads as prose ("invalid password: please
// try again") rather than as YAML.
func assignment(m match) bool {
	if !secretNamed(m) {
		return false
	}
	v := m.value()
	quoted := strings.IndexByte("\"'`", m.s[m.start-1]) >= 0
	if quoted || m.group("sep") != ":" || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
		return true
	}
	rest, _, _ := strings.Cut(m.s[m.end:], "\n")
	rest = strings.TrimSpace(rest)
	return rest == "" || strings.HasPrefix(rest, "#")
}

// placeholders are values that stand for no secret.
var placeholders = map[string]bool{
	"null": true, "nil": true, "none": true, "true": true, "false": true, "undefined": true,
	"required": true, "optional": true, "string": true, "redacted": true, "hidden": true, "masked": true,
	"<redacted>": true, "<hidden>": true, "bearer": true, "basic": true, "token": true,
}

// plausibleValue rejects placeholders, masks ("********") and references
// to where the secret really is ($TOKEN, ${TOKEN}, %TOKEN%, {{ .token }}).
func plausibleValue(m match) bool {
	v := strings.Trim(m.value(), `"'`)
	switch {
	case v == "", placeholders[strings.ToLower(v)], strings.Trim(v, "*xX•.") == "":
		return false
	case len(v) > 1 && v[0] == '$' && (v[1] == '{' || v[1] == '(' || v[1] == '_' || isLetter(v[1])):
		return false
	case len(v) > 2 && v[0] == '%' && v[len(v)-1] == '%':
		return false
	}
	return !strings.HasPrefix(v, "{{")
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// secretWords mark a key as secret wherever they appear in it.
var secretWords = map[string]bool{
	"password": true, "passwords": true, "passwd": true, "pwd": true, "passphrase": true, "passcode": true,
	"secret": true, "secrets": true, "token": true, "credential": true, "credentials": true, "creds": true,
	"cookie": true, "cookies": true, "auth": true, "authorization": true, "bearer": true, "jwt": true,
	"apikey": true, "apikeys": true, "privatekey": true, "connectionstring": true, "connstr": true,
}

// keyQualifiers make "<qualifier> key" a secret: api_key, private_key,
// access_key, but not primary_key or sort_key.
var keyQualifiers = map[string]bool{
	"api": true, "private": true, "access": true, "secret": true, "signing": true, "encryption": true,
	"master": true, "account": true, "shared": true, "client": true, "app": true, "auth": true,
	"session": true, "admin": true, "service": true, "consumer": true, "license": true,
}

// metaWords, as the last word, make a key describe a secret rather than
// hold one: token_type, password_file, secret_name, max_token_count.
var metaWords = map[string]bool{
	"name": true, "names": true, "type": true, "types": true, "kind": true, "count": true, "counts": true,
	"limit": true, "limits": true, "max": true, "min": true, "size": true, "length": true, "len": true,
	"num": true, "total": true, "usage": true, "used": true, "remaining": true, "budget": true,
	"estimate": true, "file": true, "filename": true, "files": true, "path": true, "paths": true,
	"dir": true, "url": true, "uri": true, "endpoint": true, "host": true, "header": true, "method": true,
	"methods": true, "mode": true, "scheme": true, "provider": true, "policy": true, "hint": true,
	"expiry": true, "expires": true, "expiration": true, "exp": true, "at": true, "ttl": true,
	"lifetime": true, "timeout": true, "version": true, "required": true, "enabled": true, "env": true,
	"var": true, "ref": true, "arn": true, "format": true, "algorithm": true, "alg": true,
	"stdin": true, "field": true, "label": true, "description": true,
}

// joinedSuffixes catch keys written as one word: accesstoken, dbpassword,
// xapikey.
var joinedSuffixes = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "privatekey",
	"secretkey", "accesskey", "cookie", "credentials",
}

// secretKey reports whether an object key or variable names a secret. The
// name is split into words at separators and camelCase, so apiKey, API_KEY
// and x-api-key all read "api key". Plural "tokens" is a count (max_tokens,
// input_tokens), and a last word like name, type, count, file or url
// describes a secret without holding it (token_type, password_file);
// neither is a secret. Words must match whole: secretary, author and
// bypass are not.
func secretKey(name string) bool {
	words := keyWords(name)
	n := len(words)
	if n == 0 {
		return false
	}
	last := words[n-1]
	if n > 1 && metaWords[last] {
		return false
	}
	if last == "pass" {
		return true // db_pass, but not pass_through
	}
	for i, w := range words {
		switch {
		case secretWords[w]:
			return true
		case (w == "key" || w == "keys") && i > 0 && keyQualifiers[words[i-1]]:
			return true
		case (w == "string" || w == "strings" || w == "str") && i > 0 && (words[i-1] == "connection" || words[i-1] == "conn"):
			return true
		}
	}
	for _, w := range words {
		for _, suf := range joinedSuffixes {
			if strings.HasSuffix(w, suf) {
				return true
			}
		}
	}
	return false
}

// keyWords splits a key into lowercase words, dropping trailing digits
// (password2 is a password).
func keyWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		w := strings.TrimRightFunc(strings.ToLower(string(cur)), unicode.IsDigit)
		if w != "" {
			words = append(words, w)
		}
		cur = cur[:0]
	}
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			// dbPassword -> db Password; APIKey -> API Key
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

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
	if t := strings.TrimSpace(s); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
		if v, ok := decodeJSON([]byte(t)); ok {
			return truncate(string(marshal(redactValue(v, maxString))), maxString)
		}
	}
	return truncate(redactText(s), maxString)
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
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[truncated, " + strconv.Itoa(len(s)) + " bytes]"
}
