package audit

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// keyHints are held by every key secretKey accepts: the rules that go by a
// key's name look only where one of them is.
var keyHints = []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "cookie", "jwt", "bearer", "conn"}

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
	{kind: "authorization", hints: []string{"authorization"}, fwd: 64, ok: headerValue,
		re: re(`(?i)\b(?:proxy-)?authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:[a-z][a-z0-9_-]*[ \t]+)?(?P<v>[^\s"'\\,;]+)`)},
	// ?access_token=x&sig=y, and user[password]=x in a form.
	{kind: "url-param", hints: append([]string{"sig"}, keyHints...), key: paramKey, fwd: 2, tail: paramValue, ok: plausibleValue,
		re: re(`^\]?=`)},
	{kind: "aws-secret-key", hints: []string{"secret"}, fwd: 32,
		re: re(`(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)\\?["']?[ \t]*(?:=|:|=>)[ \t]*\\?["']?(?P<v>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`)},
	// KEY=value, key: value, "key": "value", \"key\": \"value\" (JSON in
	// a JSON string) and key => 'value', for keys secretKey accepts.
	{kind: "secret-assignment", hints: keyHints, key: secretKeyAt, fwd: 48, tail: assignedValue, ok: assignment,
		re: re(`^\]?(?:\\?["'])?[ \t]*(?P<sep>=>|==?|:=|:)`)},
	// <password>s3cret</password>, also with < and > escaped as in JSON.
	{kind: "secret-assignment", hints: keyHints, key: elementKey, fwd: 6, tail: elementText, ok: plausibleValue,
		re: re(`^(?:>|\\u003[eE])`)},
	// --password hunter2, --token "abc def"
	{kind: "cli-secret", hints: []string{"-pass", "-pwd", "-token", "-secret", "-api", "-auth", "-cred"}, fwd: 16,
		tail: flagValue, ok: cliFlag,
		re: re(`(?i)(?:^|\s)--?(?P<key>[a-z][a-z0-9-]*)[ \t]`)},
	{kind: "cli-password", hints: []string{"-u", "--user"}, fwd: 16,
		re: re(`(?:^|\s)(?:-u|--user)[ \t]+["']?[A-Za-z0-9._@-]+:(?P<v>[^\s"']+)`)},
	// .netrc: machine host login user password secret
	{kind: "netrc-password", hints: []string{"password"}, fwd: 16, ok: netrc,
		re: re(`(?i)\bpassword[ \t]+(?P<v>\S+)`)},
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

func headerValue(m match) bool { return plausibleValue(m) && !codeLike(m.value()) }

func paramKey(m match) bool {
	c := before(m.s, m.keyAt)
	return c != 0 && strings.IndexByte("?&[", c) >= 0 && (secretKey(m.key) || querySecrets[strings.ToLower(m.key)])
}

func secretKeyAt(m match) bool { return secretKey(m.key) }

func elementKey(m match) bool { return before(m.s, m.keyAt) == '<' && secretKey(m.key) }

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

func cliFlag(m match) bool {
	return !strings.HasPrefix(m.value(), "-") && secretKey(m.key) && plausibleValue(m)
}

var netrcLogin = regexp.MustCompile(`(?i)\b(?:machine\s+\S+|default)\s+login\s+\S+\s+$`)

// netrc accepts "password x" only after "machine host login user", which
// prose lacks.
func netrc(m match) bool {
	before := m.s[max(0, m.loc[0]-256):m.loc[0]]
	return strings.Contains(asciiLower(before), "login") && netrcLogin.MatchString(before) && plausibleValue(m)
}

// assignment accepts a value given to a secret-named key, unless the value
// names a secret rather than holds one, or the text reads as source code or
// prose. Code is common in tool results, and a secret written in code is
// quoted; so unquoted values are let go when they look like code.
func assignment(m match) bool {
	v := m.value()
	if !plausibleValue(m) || namesSecret(v) {
		return false
	}
	if strings.IndexByte("\"'`", m.s[m.start-1]) >= 0 {
		return true
	}
	switch sep := m.group("sep"); {
	case sep == ":=" || sep == "==" || sep == "=>":
		return false // token := next(), if token == want, token => token.trim()
	case codeLike(v), fieldName(m.key):
		return false // f(x), hs.masterSecret, tokenStore; cfg.Token = …
	case strings.HasPrefix(v, "//"), strings.HasPrefix(v, "/*"), v[0] == '#' && m.start > 0 && isSpace(m.s[m.start-1]):
		return false // a comment after "case encodePassword:"
	case sep == ":" && strings.IndexFunc(v, func(r rune) bool { return !unicode.IsLetter(r) }) < 0:
		// "invalid password: please try again" is prose; YAML's
		// "password: hunter" ends its line, or has a comment after.
		rest := strings.TrimLeft(m.s[m.end:], " \t\r")
		return rest == "" || rest[0] == '\n' || rest[0] == '#'
	}
	return true
}

// codeLike reports whether an unquoted value looks like source code: a
// call, an index or an identifier.
func codeLike(v string) bool { return strings.ContainsAny(v, "()[]{}") || codeName(v) }

// fieldName reports whether key is a field of a Go, Java or C# value
// (cfg.ClientSecret), which configuration keys, lowercase, are not.
func fieldName(key string) bool {
	i := strings.LastIndexByte(key, '.')
	return i >= 0 && i+1 < len(key) && 'A' <= key[i+1] && key[i+1] <= 'Z'
}

// codeName reports whether v looks like an identifier of source code, not
// a password: dotted (c.config.token) or camelCase (tokenStore), without
// digits, which generated secrets nearly always have.
func codeName(v string) bool {
	camel := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '.' && i > 0 && i < len(v)-1:
			camel = true
		case 'A' <= c && c <= 'Z':
			if i > 0 && 'a' <= v[i-1] && v[i-1] <= 'z' {
				camel = true
			}
		case 'a' <= c && c <= 'z', c == '_':
		default:
			return false
		}
	}
	return camel
}

// namesSecret reports whether v is the name of a secret, such as an
// environment variable's (GITHUB_TOKEN) or an option's
// (client_secret_basic), rather than one.
func namesSecret(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isLetter(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return secretKey(v)
}

// placeholders are values that stand for no secret.
var placeholders = map[string]bool{
	"null": true, "nil": true, "none": true, "true": true, "false": true, "undefined": true,
	"required": true, "optional": true, "string": true, "redacted": true, "hidden": true, "masked": true,
	"<redacted>": true, "<hidden>": true, "bearer": true, "basic": true, "token": true,
}

// version matches version numbers, which "cookie": "^0.7.1" in a lock
// file holds; verb matches fmt's verbs, as in "bad token: %w".
var (
	version = regexp.MustCompile(`^[~^=<>v]*\d+(?:\.\d+){1,3}(?:[-+][0-9A-Za-z.-]+)?$`)
	verb    = regexp.MustCompile(`^%[-+# 0-9.*]*[a-zA-Z]$`)
)

// plausibleValue rejects placeholders ("<token>", "YOUR_API_KEY", "__TOKEN__"), masks
// ("********"), version numbers and references to where the secret really
// is ($TOKEN, ${TOKEN}, %TOKEN%, {{ .token }}), also after an
// authorization scheme ("Bearer ${TOKEN}").
func plausibleValue(m match) bool {
	v := strings.Trim(m.value(), `"'`)
	if scheme, rest, ok := strings.Cut(v, " "); ok && placeholders[strings.ToLower(scheme)] {
		v = strings.TrimLeft(rest, " ")
	}
	lower := strings.ToLower(v)
	switch {
	case v == "", placeholders[lower], strings.Trim(v, "*xX•.") == "", version.MatchString(v), verb.MatchString(v):
		return false
	case v[0] == '<' && strings.IndexByte(v, '>') > 0, strings.HasPrefix(lower, "your"):
		return false
	case len(v) > 4 && strings.HasPrefix(v, "__") && strings.HasSuffix(v, "__"):
		return false
	case len(v) > 1 && v[0] == '$' && (v[1] == '{' || v[1] == '(' || v[1] == '_' || isLetter(v[1])):
		return false
	case len(v) > 2 && v[0] == '%' && v[len(v)-1] == '%':
		return false
	}
	return !strings.HasPrefix(v, "{{")
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
