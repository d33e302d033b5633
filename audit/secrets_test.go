package audit

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// corpusSecret is one secret of the corpus, and how a tool would show it.
type corpusSecret struct {
	name  string
	value string
	// core is the part of value that must never reach the log (value if
	// empty): what a URL, an account or a bot id around it is not.
	core string
	// kind is the marker redactText leaves in free text.
	kind string
	// text shows value in the context that marks it as a secret, with %s
	// where it goes; empty when the value's shape is enough.
	text string
}

// carrier returns c as it appears in free text.
func (c corpusSecret) carrier() string {
	if c.text == "" {
		return c.value
	}
	return strings.Replace(c.text, "%s", c.value, 1)
}

func (c corpusSecret) secretPart() string {
	if c.core != "" {
		return c.core
	}
	return c.value
}

// randomText draws made-up secrets from a fixed seed: the corpus is the same
// on every run, yet no literal in this file has the full shape of a token
// for a secret scanner to flag.
type randomText struct{ r *rand.Rand }

func (g randomText) of(chars string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[g.r.IntN(len(chars))]
	}
	return string(b)
}

const (
	digits     = "0123456789"
	lowerHex   = "0123456789abcdef"
	letters    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	alnums     = letters + digits
	upperAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + digits
	urlSafe    = alnums + "-_"
	stdBase64  = alnums + "+/"
	bech32     = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

// secretCorpus returns the secrets a tool call may carry, one of each
// shape redactText knows.
func secretCorpus() []corpusSecret {
	g := randomText{rand.New(rand.NewChaCha8([32]byte{'d', 'o', 'm', 'o', '-', 'a', 'u', 'd', 'i', 't'}))}
	password := func() string { return g.of(alnums, 6) + "-" + g.of(alnums, 6) + "_" + g.of(alnums, 6) }
	pem := func(label, nl string) string {
		var b strings.Builder
		b.WriteString("-----BEGIN " + label + "-----" + nl)
		for range 12 {
			b.WriteString(g.of(stdBase64, 64) + nl)
		}
		b.WriteString(g.of(stdBase64, 40) + "==" + nl + "-----END " + label + "-----")
		return b.String()
	}
	enc := base64.RawURLEncoding.EncodeToString
	jwt := enc([]byte(`{"alg":"RS256","kid":"`+g.of(lowerHex, 16)+`","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"`+g.of(digits, 12)+`","aud":"domo","exp":1924992000}`)) + "." + g.of(urlSafe, 342)
	discordID := enc([]byte("9" + g.of(digits, 17)))
	telegramID := g.of("123456789", 1) + g.of(digits, 9)
	telegram := "AA" + g.of(urlSafe, 33)
	slackPath := "T" + g.of(upperAlnum, 10) + "/B" + g.of(upperAlnum, 10) + "/" + g.of(alnums, 24)
	basicPassword := password()
	sig := g.of(alnums, 43)

	corpus := []corpusSecret{
		{name: "openai legacy", kind: "openai-key", value: "sk-" + g.of(alnums, 20) + "T3BlbkFJ" + g.of(alnums, 20)},
		{name: "openai project", kind: "openai-key", value: "sk-proj-" + g.of(urlSafe, 156)},
		{name: "openai service account", kind: "openai-key", value: "sk-svcacct-" + g.of(urlSafe, 120)},
		{name: "anthropic", kind: "anthropic-key", value: "sk-ant-api03-" + g.of(urlSafe, 93) + "AA"},
		{name: "anthropic admin", kind: "anthropic-key", value: "sk-ant-admin01-" + g.of(urlSafe, 93) + "AA"},
		{name: "openrouter", kind: "openrouter-key", value: "sk-or-v1-" + g.of(lowerHex, 64)},
		{name: "google api key", kind: "google-api-key", value: "AIza" + g.of(urlSafe, 35)},
		{name: "google oauth", kind: "google-oauth-token", value: "ya29." + g.of(urlSafe, 160)},
		{name: "google refresh", kind: "google-refresh-token", value: "1//0" + g.of(urlSafe, 99)},
		{name: "aws access key id", kind: "aws-key", value: "AKIA" + g.of(upperAlnum, 16)},
		{name: "aws sts key id", kind: "aws-key", value: "ASIA" + g.of(upperAlnum, 16)},
		{name: "github classic", kind: "github-token", value: "ghp_" + g.of(alnums, 36)},
		{name: "github oauth", kind: "github-token", value: "gho_" + g.of(alnums, 36)},
		{name: "github app", kind: "github-token", value: "ghs_" + g.of(alnums, 36)},
		{name: "github refresh", kind: "github-token", value: "ghr_" + g.of(alnums, 76)},
		{name: "github fine grained", kind: "github-token", value: "github_pat_" + g.of(alnums, 22) + "_" + g.of(alnums, 59)},
		{name: "gitlab", kind: "gitlab-token", value: "glpat-" + g.of(urlSafe, 20)},
		{name: "slack bot", kind: "slack-token", value: "xoxb-" + g.of(digits, 12) + "-" + g.of(digits, 13) + "-" + g.of(alnums, 24)},
		{name: "slack user", kind: "slack-token", value: "xoxp-" + g.of(digits, 12) + "-" + g.of(digits, 12) + "-" + g.of(digits, 13) + "-" + g.of(lowerHex, 32)},
		{name: "slack webhook", kind: "slack-webhook", value: "https://hooks.slack.com/services/" + slackPath, core: slackPath},
		{name: "stripe live", kind: "stripe-key", value: "sk_live_" + g.of(alnums, 99)},
		{name: "stripe test", kind: "stripe-key", value: "sk_test_" + g.of(alnums, 24)},
		{name: "stripe restricted", kind: "stripe-key", value: "rk_live_" + g.of(alnums, 99)},
		{name: "stripe webhook", kind: "stripe-webhook-secret", value: "whsec_" + g.of(alnums, 32)},
		{name: "huggingface", kind: "huggingface-token", value: "hf_" + g.of(letters, 34)},
		{name: "npm", kind: "npm-token", value: "npm_" + g.of(alnums, 36)},
		{name: "pypi", kind: "pypi-token", value: "pypi-AgEIcHlwaS5vcmc" + g.of(urlSafe, 150)},
		{name: "sendgrid", kind: "sendgrid-key", value: "SG." + g.of(urlSafe, 22) + "." + g.of(urlSafe, 43)},
		{name: "twilio", kind: "twilio-key", value: "SK" + g.of(lowerHex, 32)},
		{name: "mailgun", kind: "mailgun-key", value: "key-" + g.of(lowerHex, 32)},
		{name: "digitalocean", kind: "digitalocean-token", value: "dop_v1_" + g.of(lowerHex, 64)},
		{name: "discord bot", kind: "discord-token", value: discordID + "." + g.of(urlSafe, 6) + "." + g.of(urlSafe, 38)},
		{name: "telegram bot", kind: "telegram-token", value: telegramID + ":" + telegram, core: telegram},
		{name: "groq", kind: "groq-key", value: "gsk_" + g.of(alnums, 52)},
		{name: "xai", kind: "xai-key", value: "xai-" + g.of(alnums, 80)},
		{name: "replicate", kind: "replicate-token", value: "r8_" + g.of(alnums, 37)},
		{name: "perplexity", kind: "perplexity-key", value: "pplx-" + g.of(alnums, 48)},
		{name: "shopify", kind: "shopify-token", value: "shpat_" + g.of(lowerHex, 32)},
		{name: "databricks", kind: "databricks-token", value: "dapi" + g.of(lowerHex, 32)},
		{name: "linear", kind: "linear-key", value: "lin_api_" + g.of(alnums, 40)},
		{name: "notion", kind: "notion-token", value: "ntn_" + g.of(alnums, 46)},
		{name: "doppler", kind: "doppler-token", value: "dp.st.prd." + g.of(alnums, 43)},
		{name: "sentry", kind: "sentry-token", value: "sntrys_" + enc([]byte(`{"iat":1700000000,"url":"https://sentry.io","org":"domo"}`)) + "_" + g.of(stdBase64, 43)},
		{name: "grafana", kind: "grafana-token", value: "glsa_" + g.of(alnums, 32) + "_" + g.of(lowerHex, 8)},
		{name: "postman", kind: "postman-key", value: "PMAK-" + g.of(lowerHex, 24) + "-" + g.of(lowerHex, 34)},
		{name: "atlassian", kind: "atlassian-token", value: "ATATT3x" + g.of(urlSafe, 180) + "=" + g.of("0123456789ABCDEF", 8)},
		{name: "age", kind: "age-key", value: "AGE-SECRET-KEY-1" + g.of(bech32, 58)},
		{name: "jwt", kind: "jwt", value: jwt},
		{name: "pem rsa", kind: "private-key", value: pem("RSA PRIVATE KEY", "\n")},
		{name: "pem pkcs8", kind: "private-key", value: pem("PRIVATE KEY", "\r\n")},
		{name: "pem openssh", kind: "private-key", value: pem("OPENSSH PRIVATE KEY", "\n")},
		{name: "pem ec", kind: "private-key", value: pem("EC PRIVATE KEY", "\n")},
		{name: "pem encrypted", kind: "private-key", value: pem("ENCRYPTED PRIVATE KEY", "\n")},
		{name: "pem pgp", kind: "private-key", value: pem("PGP PRIVATE KEY BLOCK", "\n")},
		{name: "pem escaped newlines", kind: "private-key", value: pem("PRIVATE KEY", `\n`)},

		{name: "url password", kind: "url-password", value: password(), text: "postgres://app:%s@db.internal:5432/app?sslmode=require"},
		{name: "aws secret key", kind: "aws-secret-key", value: g.of(stdBase64, 40), text: "[default]\naws_access_key_id = AKIA" + strings.Repeat("X", 16) + "\naws_secret_access_key = %s\n"},
		{name: "azure storage", kind: "azure-key", value: g.of(stdBase64, 86) + "==",
			text: "DefaultEndpointsProtocol=https;AccountName=domoprod;AccountKey=%s;EndpointSuffix=core.windows.net"},
		{name: "bearer", kind: "bearer", value: g.of(alnums, 40), text: "curl -H 'Authorization: Bearer %s' https://api.domo.dev/v1/me"},
		{name: "basic auth", kind: "basic-auth", value: base64.StdEncoding.EncodeToString([]byte("deploy:" + basicPassword)),
			text: "Authorization: Basic %s"},
		{name: "env password", kind: "secret-assignment", value: password(), text: "DB_PASSWORD=%s ./migrate up"},
		{name: "export token", kind: "secret-assignment", value: g.of(alnums, 32), text: "export DEPLOY_TOKEN=\"%s\""},
		{name: "yaml password", kind: "secret-assignment", value: password(), text: "database:\n  user: app\n  password: %s\n  host: db\n"},
		{name: "json client secret", kind: "secret-assignment", value: g.of(urlSafe, 40), text: `{"client_id": "domo-cli", "client_secret": "%s"}`},
		{name: "sas signature", kind: "url-param", value: sig + "%3D", core: sig,
			text: "https://domo.blob.core.windows.net/logs/a.jsonl?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=%s"},
		{name: "query token", kind: "url-param", value: g.of(alnums, 40), text: "https://api.domo.dev/v1/export?format=csv&access_token=%s"},
		{name: "netrc", kind: "netrc-password", value: password(), text: "machine api.domo.dev\n  login ada\n  password %s\n"},
		{name: "cli flag", kind: "cli-secret", value: password(), text: "docker login --username ada --password %s registry.domo.dev"},
		{name: "curl user", kind: "cli-password", value: password(), text: "curl -u ada:%s https://api.domo.dev/v1/me"},
		{name: "cookie", kind: "secret-assignment", value: g.of(alnums, 48), text: "Cookie: theme=dark; remember_token=%s"},
		{name: "xml", kind: "secret-assignment", value: password(), text: "<settings><server><id>central</id><password>%s</password></server></settings>"},
	}
	return corpus
}

func TestSecretCorpusNeverLogged(t *testing.T) {
	corpus := secretCorpus()
	if len(corpus) < 45 {
		t.Fatalf("the corpus has %d secrets, want at least 45", len(corpus))
	}
	seen := map[string]string{}
	for _, c := range corpus {
		if other, dup := seen[c.value]; dup {
			t.Fatalf("%s and %s share a value", c.name, other)
		}
		seen[c.value] = c.name
	}
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			appendAll(t, filepath.Join(dir, "audit.jsonl"), Options{}, corpusEvents(t, c))
			log := readLogDir(t, dir)
			checkNoLeak(t, log, c)
			for _, marker := range []string{"[REDACTED:" + c.kind + "]", `"[REDACTED]"`} {
				if !strings.Contains(log, marker) {
					t.Errorf("the log lacks %s", marker)
				}
			}
		})
	}
}

// TestSecretCorpusTogether writes every secret into one log that rotates
// often, with all of them in each event, so that one secret's redaction
// cannot expose another's.
func TestSecretCorpusTogether(t *testing.T) {
	corpus := secretCorpus()
	var all []string
	for _, c := range corpus {
		all = append(all, c.carrier())
	}
	joined := strings.Join(all, "\n")
	args, err := json.Marshal(map[string]any{"command": joined, "files": all, "payload": string(mustJSON(t, all))})
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	for range 3 {
		events = append(events,
			Event{Session: "s1", Event: KindCallStart, Call: "c1", Server: "shell", Tool: "run", Args: args},
			Event{Session: "s1", Event: KindCallEnd, Call: "c1", Server: "shell", Tool: "run", Status: StatusOK, Result: joined})
	}
	dir := t.TempDir()
	appendAll(t, filepath.Join(dir, "audit.jsonl"), Options{MaxSize: 16 << 10, MaxResult: 64 << 10, MaxString: 64 << 10}, events)
	if logs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(logs) < 2 {
		t.Errorf("the log did not rotate: %v", logs)
	}
	log := readLogDir(t, dir)
	for _, c := range corpus {
		checkNoLeak(t, log, c)
	}
}

// corpusEvents embeds c in every place a secret reaches the writer: top
// level arguments under innocent names, a URL's password and query, nested
// objects and arrays, strings holding JSON, the result (plain, as JSON, and
// across the cut where results and strings are truncated) and a denial's
// reason.
func corpusEvents(t *testing.T, c corpusSecret) []Event {
	t.Helper()
	text := c.carrier()
	link := "https://git.domo.dev/org/repo.git"
	if !strings.ContainsAny(c.value, "\r\n") && !strings.Contains(c.value, `\n`) {
		u := url.URL{Scheme: "https", User: url.UserPassword("deploy", c.value), Host: "git.domo.dev", Path: "/org/repo.git",
			RawQuery: "ref=main&token=" + url.QueryEscape(c.value)}
		link = u.String()
	}
	args := map[string]any{
		"command": text,
		"path":    "/home/ada/project/.env",
		"content": "# settings\n" + text + "\n# end\n",
		"url":     link,
		"options": map[string]any{
			"env":    []any{map[string]any{"name": "VALUE", "value": text}, map[string]any{"name": "MODE", "value": "prod"}},
			"nested": map[string]any{"deeper": []any{[]any{text}, 42, true, nil}},
		},
		"payload":   string(mustJSON(t, map[string]any{"note": text, "password": c.value, "list": []string{text}})),
		"batch":     string(mustJSON(t, []string{text})),
		"env":       map[string]any{"SECRET_VALUE": c.value, "apiKey": c.value},
		"long_text": strings.Repeat("lorem ipsum ", 85) + text,
	}
	result := "$ cat .env\n" + text + "\n" + string(mustJSON(t, map[string]any{"output": text})) + "\nexit 0"
	// Padded so that the 4 KiB cut falls on the secret or its marker.
	long := strings.Repeat("log line\n", 455) + text + "\nmore output after the secret"
	return []Event{
		{Session: "s1", Event: KindDecision, Call: "c1", Server: "files", Tool: "write_file", Decision: "deny", DecidedBy: "user",
			Rule: "the user denied it", Reason: "do not write " + text + " to disk"},
		{Session: "s1", Event: KindCallStart, Call: "c2", Server: "files", Tool: "write_file", Args: mustJSON(t, args)},
		{Session: "s1", Event: KindCallEnd, Call: "c2", Server: "files", Tool: "write_file", Status: StatusOK, Result: result},
		{Session: "s1", Event: KindCallEnd, Call: "c3", Server: "shell", Tool: "run", Status: StatusOK, Result: long},
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendAll(t *testing.T, path string, opts Options, events []Event) {
	t.Helper()
	w, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if _, err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readLogDir returns every file the writer left in dir, rotated files and
// set-aside torn lines included, each headed by its name.
func readLogDir(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("== " + filepath.Base(name) + "\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.String()
}

// hashes are the chain's and the arguments' SHA-256 digests, which any
// 8 characters of a hex secret could match by chance.
var hashes = regexp.MustCompile(`[0-9a-f]{64}`)

var tokenRuns = regexp.MustCompile(`[A-Za-z0-9+/=_-]{8,}`)

// checkNoLeak fails if the log holds c's secret.
func checkNoLeak(t *testing.T, log string, c corpusSecret) {
	t.Helper()
	if l := leak(log, c); l != "" {
		t.Errorf("%s: %s", c.name, l)
	}
}

// leak says where log holds c's secret, whole or any 8 characters of it in
// a row, or returns "".
func leak(log string, c corpusSecret) string {
	core := c.secretPart()
	for _, s := range []string{c.value, core} {
		if i := strings.Index(log, s); i >= 0 {
			return "the log holds the secret: …" + excerpt(log, i) + "…"
		}
	}
	stripped := hashes.ReplaceAllString(log, "")
	for _, run := range tokenRuns.FindAllString(core, -1) {
		for i := 0; i+8 <= len(run); i++ {
			if j := strings.Index(stripped, run[i:i+8]); j >= 0 {
				return fmt.Sprintf("the log holds %q of the secret: …%s…", run[i:i+8], excerpt(stripped, j))
			}
		}
	}
	return ""
}

// TestSecretCorpusCheckFinds makes sure the corpus tests could fail: each
// secret, written without redaction, is found by leak.
func TestSecretCorpusCheckFinds(t *testing.T) {
	for _, c := range secretCorpus() {
		var raw strings.Builder
		for _, e := range corpusEvents(t, c) {
			raw.Write(mustJSON(t, e))
			raw.WriteByte('\n')
		}
		if leak(raw.String(), c) == "" {
			t.Errorf("%s: leak finds nothing in the unredacted events", c.name)
		}
		if tokenRuns.FindString(c.secretPart()) == "" {
			t.Errorf("%s: the secret has no 8 token characters in a row to look for", c.name)
		}
	}
}

func excerpt(s string, i int) string {
	return s[max(0, i-80):min(len(s), i+80)]
}
