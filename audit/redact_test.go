package audit

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fill returns prefix followed by n characters cycling through chars. Test
// secrets are built this way, not written out, so that no literal in the
// repository has the full shape of a live token for scanners to flag.
func fill(prefix, chars string, n int) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := range n {
		b.WriteByte(chars[(i*7+3)%len(chars)])
	}
	return b.String()
}

const (
	alnum  = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zcFiLoR"
	hexLow = "0123456789abcdef"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64    = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z+/"
	urlB64 = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z-_"
)

func discordToken() string {
	id := base64.RawURLEncoding.EncodeToString([]byte("912345678901234567"))
	return id + "." + fill("", urlB64, 6) + "." + fill("", urlB64, 38)
}

func jwtToken() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." +
		enc([]byte(`{"sub":"1234567890","name":"Ada","iat":1516239022}`)) + "." + fill("", urlB64, 43)
}

func pemBlock(label, nl string) string {
	body := fill("", b64, 64) + nl + fill("", b64, 64) + nl + fill("", b64, 20) + "=="
	return "-----BEGIN " + label + "-----" + nl + body + nl + "-----END " + label + "-----"
}

func TestRedactText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "openai legacy", in: "key " + fill("sk-", alnum, 48) + " end", want: "key [REDACTED:openai-key] end"},
		{name: "openai project", in: "OPENAI_API_KEY=" + fill("sk-proj-", alnum+"_-", 156), want: "OPENAI_API_KEY=[REDACTED:openai-key]"},
		{name: "anthropic", in: `"` + fill("sk-ant-api03-", alnum+"_-", 93) + `AA"`, want: `"[REDACTED:anthropic-key]"`},
		{name: "google api key", in: "?key=" + fill("AIza", alnum+"_-", 35), want: "?key=[REDACTED:google-api-key]"},
		{name: "google oauth", in: "token " + fill("ya29.", alnum+"_-", 120), want: "token [REDACTED:google-oauth-token]"},
		{name: "aws key id", in: "id " + fill("AKIA", upper, 16) + ".", want: "id [REDACTED:aws-key]."},
		{name: "aws sts key id", in: fill("ASIA", upper, 16), want: "[REDACTED:aws-key]"},
		{name: "aws secret", in: "aws_secret_access_key = " + fill("", b64, 40), want: "aws_secret_access_key = [REDACTED:aws-secret-key]"},
		{name: "github classic", in: "git push " + fill("ghp_", alnum, 36), want: "git push [REDACTED:github-token]"},
		{name: "github oauth", in: fill("gho_", alnum, 36), want: "[REDACTED:github-token]"},
		{name: "github fine grained", in: fill("github_pat_", alnum, 22) + fill("_", alnum, 59), want: "[REDACTED:github-token]"},
		{name: "gitlab", in: fill("glpat-", alnum, 20), want: "[REDACTED:gitlab-token]"},
		{name: "slack bot", in: "xoxb-123456789012-1234567890123-" + fill("", alnum, 24), want: "[REDACTED:slack-token]"},
		{name: "slack webhook", in: "POST https://hooks.slack.com/services/T00000000/B00000000/" + fill("", alnum, 24),
			want: "POST https://hooks.slack.com/services/[REDACTED:slack-webhook]"},
		{name: "stripe live", in: fill("sk_live_", alnum, 99), want: "[REDACTED:stripe-key]"},
		{name: "stripe restricted", in: fill("rk_live_", alnum, 24), want: "[REDACTED:stripe-key]"},
		{name: "huggingface", in: fill("hf_", "aBcDeFgHiJkLmN", 34), want: "[REDACTED:huggingface-token]"},
		{name: "npm", in: "//registry.npmjs.org/:_authToken=" + fill("npm_", alnum, 36), want: "//registry.npmjs.org/:_authToken=[REDACTED:npm-token]"},
		{name: "pypi", in: "password = " + fill("pypi-AgEIcHlwaS5vcmc", urlB64, 120), want: "password = [REDACTED:pypi-token]"},
		{name: "sendgrid", in: fill("SG.", urlB64, 22) + fill(".", urlB64, 43), want: "[REDACTED:sendgrid-key]"},
		{name: "twilio", in: fill("SK", hexLow, 32), want: "[REDACTED:twilio-key]"},
		{name: "mailgun", in: fill("key-", alnum, 32), want: "[REDACTED:mailgun-key]"},
		{name: "digitalocean", in: fill("dop_v1_", hexLow, 64), want: "[REDACTED:digitalocean-token]"},
		{name: "discord bot", in: "Bot " + discordToken(), want: "Bot [REDACTED:discord-token]"},
		{name: "telegram bot", in: "https://api.telegram.org/bot" + fill("7123456789:AA", urlB64, 33) + "/getMe",
			want: "https://api.telegram.org/bot[REDACTED:telegram-token]/getMe"},
		{name: "azure connection string", in: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + fill("", b64, 86) + "==;EndpointSuffix=core.windows.net",
			want: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net"},
		{name: "bearer header", in: "Authorization: Bearer " + fill("", alnum, 40), want: "Authorization: Bearer [REDACTED:bearer]"},
		{name: "bearer jwt", in: "-H 'Authorization: Bearer " + jwtToken() + "'", want: "-H 'Authorization: Bearer [REDACTED:jwt]'"},
		{name: "basic header", in: "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:hunter2")),
			want: "Authorization: Basic [REDACTED:basic-auth]"},
		{name: "other scheme", in: "Authorization: token 0123abcd4567ef", want: "Authorization: token [REDACTED:authorization]"},
		{name: "jwt", in: "id_token " + jwtToken() + " ok", want: "id_token [REDACTED:jwt] ok"},
		{name: "url password", in: "postgres://app:S3cr3t-pa55@db.internal:5432/app",
			want: "postgres://app:[REDACTED:url-password]@db.internal:5432/app"},
		{name: "url password with at", in: "https://deploy:p@ss:w0rd@git.example.com/repo.git",
			want: "https://deploy:[REDACTED:url-password]@git.example.com/repo.git"},
		{name: "url password without user", in: "redis://:hunter2@cache:6379/0", want: "redis://:[REDACTED:url-password]@cache:6379/0"},
		{name: "query parameters", in: "https://api.example.com/cb?code=abc&access_token=xyz123&state=s&api_key=k9&sig=Zm9v%3D",
			want: "https://api.example.com/cb?code=abc&access_token=[REDACTED:url-param]&state=s&api_key=[REDACTED:url-param]&sig=[REDACTED:url-param]"},
		{name: "env assignment", in: "PASSWORD=hunter2 ./run.sh", want: "PASSWORD=[REDACTED:secret-assignment] ./run.sh"},
		{name: "export", in: "export DATABRICKS_TOKEN='opaque value 42'\n", want: "export DATABRICKS_TOKEN='[REDACTED:secret-assignment]'\n"},
		{name: "json in text", in: `{"api_key": "abc", "user": "bob"}`, want: `{"api_key": "[REDACTED:secret-assignment]", "user": "bob"}`},
		{name: "json with escaped quote", in: `{"password":"pa\"ss","user":"bob"}`, want: `{"password":"[REDACTED:secret-assignment]","user":"bob"}`},
		{name: "escaped json in text", in: `"{\"password\":\"pw1\",\"user\":\"bob\"}"`, want: `"{\"password\":\"[REDACTED:secret-assignment]\",\"user\":\"bob\"}"`},
		{name: "yaml", in: "db:\n  user: app\n  password: hunter2\n", want: "db:\n  user: app\n  password: [REDACTED:secret-assignment]\n"},
		{name: "yaml word at end of line", in: "password: correcthorse # old\n", want: "password: [REDACTED:secret-assignment] # old\n"},
		{name: "python dict", in: "{'client_secret': 'abc'}", want: "{'client_secret': '[REDACTED:secret-assignment]'}"},
		{name: "ruby hash", in: `password => "abc"`, want: `password => "[REDACTED:secret-assignment]"`},
		{name: "connection string password", in: "Server=db;User Id=sa;Password=My!P@ss#1;", want: "Server=db;User Id=sa;Password=[REDACTED:secret-assignment];"},
		{name: "cookie header", in: "Cookie: session=abc123; theme=dark", want: "Cookie: [REDACTED:secret-assignment]; theme=dark"},
		{name: "vetoed key hides none", in: "key: password=abc", want: "key: password=[REDACTED:secret-assignment]"},
		{name: "xml", in: "<server><password>s3cret</password></server>", want: "<server><password>[REDACTED:secret-assignment]</password></server>"},
		{name: "cli flag", in: "login --password hunter2 --user bob", want: "login --password [REDACTED:cli-secret] --user bob"},
		{name: "curl user", in: "curl -u admin:pw123 https://x", want: "curl -u admin:[REDACTED:cli-password] https://x"},
		{name: "netrc", in: "machine api.example.com login bob password s3cret", want: "machine api.example.com login bob password [REDACTED:netrc-password]"},
		{name: "pem rsa", in: "key:\n" + pemBlock("RSA PRIVATE KEY", "\n") + "\ndone", want: "key:\n[REDACTED:private-key]\ndone"},
		{name: "pem openssh", in: pemBlock("OPENSSH PRIVATE KEY", "\n"), want: "[REDACTED:private-key]"},
		{name: "pem ec", in: pemBlock("EC PRIVATE KEY", "\r\n"), want: "[REDACTED:private-key]"},
		{name: "pem encrypted", in: pemBlock("ENCRYPTED PRIVATE KEY", "\n"), want: "[REDACTED:private-key]"},
		{name: "pem escaped newlines", in: `{"private_key": "` + pemBlock("PRIVATE KEY", `\n`) + `\n", "x": 1}`,
			want: `{"private_key": "[REDACTED:private-key]\n", "x": 1}`},
		{name: "pem cut off", in: "-----BEGIN PRIVATE KEY-----\n" + fill("", b64, 64), want: "[REDACTED:private-key]"},
		{name: "sentry", in: "SENTRY_AUTH_TOKEN=" + fill("sntrys_", b64+"_", 80), want: "SENTRY_AUTH_TOKEN=[REDACTED:sentry-token]"},
		{name: "doppler", in: fill("dp.st.prd.", alnum, 43), want: "[REDACTED:doppler-token]"},
		{name: "percent-encoded tail", in: "?t=" + fill("ATATT3x", urlB64, 150) + "%3D" + fill("", hexLow, 8) + "&x=1",
			want: "?t=[REDACTED:atlassian-token]&x=1"},
		{name: "escaped ampersand", in: `"https://x/y?a=1\u0026sig=` + fill("", alnum, 40) + `\u0026b=2"`, want: `"https://x/y?a=1\u0026sig=[REDACTED:url-param]\u0026b=2"`},
		{name: "escaped xml", in: `\u003cpassword\u003es3cret\u003c/password\u003e`, want: `\u003cpassword\u003e[REDACTED:secret-assignment]\u003c/password\u003e`},
		{name: "form field", in: "user[name]=ada&user[password]=s3cret", want: "user[name]=ada&user[password]=[REDACTED:url-param]"},
		{name: "two secrets", in: fill("ghp_", alnum, 36) + " and " + fill("glpat-", alnum, 20), want: "[REDACTED:github-token] and [REDACTED:gitlab-token]"},

		// What must survive.
		{name: "uuid", in: "id 550e8400-e29b-41d4-a716-446655440000", want: "id 550e8400-e29b-41d4-a716-446655440000"},
		{name: "git sha", in: "commit 9fceb02d0ae598e95dc970b74767f19372d61af8", want: "commit 9fceb02d0ae598e95dc970b74767f19372d61af8"},
		{name: "sha256", in: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			want: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "path", in: "/home/ada/.config/domo/token_cache/auth.json", want: "/home/ada/.config/domo/token_cache/auth.json"},
		{name: "url", in: "https://example.com:8443/search?q=token&page=2#top", want: "https://example.com:8443/search?q=token&page=2#top"},
		{name: "ssh url", in: "ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git",
			want: "ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git"},
		{name: "prose", in: "The token expired; enter your password again. Secrets rotate weekly.",
			want: "The token expired; enter your password again. Secrets rotate weekly."},
		{name: "prose with colon", in: "error: invalid password: please try again", want: "error: invalid password: please try again"},
		{name: "token counts", in: `max_tokens=4096 {"input_tokens": 12, "token_count": 3} token_type=bearer`,
			want: `max_tokens=4096 {"input_tokens": 12, "token_count": 3} token_type=bearer`},
		{name: "bearer prose", in: "Use Bearer authentication or Basic authentication.", want: "Use Bearer authentication or Basic authentication."},
		{name: "kebab after sk", in: "see sk-learn-compatible-estimators", want: "see sk-learn-compatible-estimators"},
		{name: "masked", in: "password: ********", want: "password: ********"},
		{name: "env reference", in: "PASSWORD=$DB_PASSWORD token: ${{ secrets.GITHUB_TOKEN }}", want: "PASSWORD=$DB_PASSWORD token: ${{ secrets.GITHUB_TOKEN }}"},
		{name: "null", in: `{"password": null, "token": ""}`, want: `{"password": null, "token": ""}`},
		{name: "secretary", in: "secretary: Alice", want: "secretary: Alice"},
		{name: "primary key", in: "primary_key: id", want: "primary_key: id"},
		{name: "code", in: "func (t *Token) Valid() bool { return t.Expiry.After(now) }", want: "func (t *Token) Valid() bool { return t.Expiry.After(now) }"},
		{name: "email", in: "mail ada@example.com", want: "mail ada@example.com"},
		{name: "go code", in: "token := next()\nif token == want {\ncfg.ClientSecret = opts.ClientSecret\nstore = tokenStore\nreturn fmt.Errorf(\"bad token: %w\", err)",
			want: "token := next()\nif token == want {\ncfg.ClientSecret = opts.ClientSecret\nstore = tokenStore\nreturn fmt.Errorf(\"bad token: %w\", err)"},
		{name: "names of secrets", in: `env: {"token": "GITHUB_TOKEN", "auth_method": "client_secret_basic"}`, want: `env: {"token": "GITHUB_TOKEN", "auth_method": "client_secret_basic"}`},
		{name: "lock file", in: `"cookie": "^0.7.1", "cookie-signature": "1.0.6"`, want: `"cookie": "^0.7.1", "cookie-signature": "1.0.6"`},
		{name: "placeholders", in: "Authorization: Bearer <token>\nAPI_KEY=YOUR_API_KEY\n\"Authorization\": \"Bearer ${input:token}\"",
			want: "Authorization: Bearer <token>\nAPI_KEY=YOUR_API_KEY\n\"Authorization\": \"Bearer ${input:token}\""},
		{name: "prose with login", in: "the login session password has changed", want: "the login session password has changed"},
		{name: "comment after key", in: "case encodeUserPassword: // RFC 3986", want: "case encodeUserPassword: // RFC 3986"},
		{name: "snapshot placeholder", in: "Action=GetSessionToken&TokenCode=__TokenCode__", want: "Action=GetSessionToken&TokenCode=__TokenCode__"},
		{name: "date -u", in: "date -u +%Y-%m-%dT%H:%M:%SZ", want: "date -u +%Y-%m-%dT%H:%M:%SZ"},
		{name: "marker", in: "[REDACTED:github-token] password=[REDACTED:url-password]", want: "[REDACTED:github-token] password=[REDACTED:url-password]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redactText(tt.in)
			if got != tt.want {
				t.Errorf("redactText(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := redactText(got); again != got {
				t.Errorf("redacting again changed %q to %q", got, again)
			}
		})
	}
}

func TestSecretKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{name: "token", key: "token", want: true},
		{name: "access token", key: "access_token", want: true},
		{name: "refresh token", key: "refresh_token", want: true},
		{name: "id token", key: "id_token", want: true},
		{name: "secret", key: "secret", want: true},
		{name: "client secret", key: "client_secret", want: true},
		{name: "password", key: "password", want: true},
		{name: "passwd", key: "passwd", want: true},
		{name: "pwd", key: "pwd", want: true},
		{name: "passphrase", key: "passphrase", want: true},
		{name: "api key", key: "api_key", want: true},
		{name: "apikey", key: "apikey", want: true},
		{name: "api-key", key: "api-key", want: true},
		{name: "x-api-key", key: "X-Api-Key", want: true},
		{name: "auth", key: "auth", want: true},
		{name: "authorization", key: "Authorization", want: true},
		{name: "cookie", key: "cookie", want: true},
		{name: "set-cookie", key: "Set-Cookie", want: true},
		{name: "session token", key: "session_token", want: true},
		{name: "private key", key: "private_key", want: true},
		{name: "credentials", key: "credentials", want: true},
		{name: "connection string", key: "connection_string", want: true},
		{name: "camel api key", key: "apiKey", want: true},
		{name: "acronym api key", key: "APIKey", want: true},
		{name: "aws secret", key: "AWS_SECRET_ACCESS_KEY", want: true},
		{name: "camel token", key: "githubToken", want: true},
		{name: "camel password", key: "dbPassword", want: true},
		{name: "joined", key: "accesstoken", want: true},
		{name: "upper joined", key: "PGPASSWORD", want: true},
		{name: "numbered", key: "password2", want: true},
		{name: "db pass", key: "db_pass", want: true},
		{name: "dotted", key: "spring.datasource.password", want: true},
		{name: "account key", key: "AccountKey", want: true},
		{name: "npmrc", key: "_authToken", want: true},
		{name: "mixed case pwd", key: "Pwd", want: true},

		{name: "max tokens", key: "max_tokens", want: false},
		{name: "token count", key: "token_count", want: false},
		{name: "input tokens", key: "input_tokens", want: false},
		{name: "tokens used", key: "tokens_used", want: false},
		{name: "camel max tokens", key: "maxTokens", want: false},
		{name: "token type", key: "token_type", want: false},
		{name: "token url", key: "token_url", want: false},
		{name: "password file", key: "password_file", want: false},
		{name: "secret name", key: "secretName", want: false},
		{name: "secretary", key: "secretary", want: false},
		{name: "author", key: "author", want: false},
		{name: "bypass", key: "bypass", want: false},
		{name: "pass through", key: "pass_through", want: false},
		{name: "key", key: "key", want: false},
		{name: "working directory", key: "PWD", want: false},
		{name: "primary key", key: "primary_key", want: false},
		{name: "key exchange", key: "ClientKeyExchange", want: false},
		{name: "private key id", key: "private_key_id", want: true},
		{name: "switch", key: "no_auth", want: false},
		{name: "progress token", key: "progressToken", want: false},
		{name: "page token", key: "next_page_token", want: false},
		{name: "path", key: "path", want: false},
		{name: "content", key: "content", want: false},
		{name: "empty", key: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := secretKey(tt.key); got != tt.want {
				t.Errorf("secretKey(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestRedactJSON(t *testing.T) {
	ghp := fill("ghp_", alnum, 36)
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "nil", in: "", want: ""},
		{name: "blank", in: " \n", want: ""},
		{name: "plain", in: `{"path": "/tmp/x", "n": 3}`, want: `{"n":3,"path":"/tmp/x"}`},
		{name: "secret key of any type", in: `{"auth":{"user":"a","pass":"b"},"password":123,"tokens":[1],"api_key":null}`,
			want: `{"api_key":"[REDACTED]","auth":"[REDACTED]","password":"[REDACTED]","tokens":[1]}`},
		{name: "counts kept", in: `{"max_tokens":4096,"usage":{"input_tokens":12,"output_tokens":7}}`,
			want: `{"max_tokens":4096,"usage":{"input_tokens":12,"output_tokens":7}}`},
		{name: "numbers preserved", in: `[12345678901234567890, 1.50, -0, 1e400]`, want: `[12345678901234567890,1.50,-0,1e400]`},
		{name: "nested", in: `{"req":{"headers":[{"Authorization":"Bearer x"},{"Accept":"*/*"}],"body":"` + ghp + `"}}`,
			want: `{"req":{"body":"[REDACTED:github-token]","headers":[{"Authorization":"[REDACTED]"},{"Accept":"*/*"}]}}`},
		{name: "string holding json", in: `{"content":"{\"password\":\"hunter2\",\"user\":\"bob\",\"n\":1}"}`,
			want: `{"content":"{\"n\":1,\"password\":\"[REDACTED]\",\"user\":\"bob\"}"}`},
		{name: "string holding json array", in: `{"content":" [{\"token\":{\"v\":1}}, \"` + ghp + `\"]"}`,
			want: `{"content":"[{\"token\":\"[REDACTED]\"},\"[REDACTED:github-token]\"]"}`},
		{name: "string holding broken json", in: `{"content":"{\"password\": \"hunter2\""}`,
			want: `{"content":"{\"password\": \"[REDACTED:secret-assignment]\""}`},
		{name: "secrets as keys", in: `{"` + ghp + `":"octocat","` + fill("ghp_", hexLow, 36) + `":"hubot"}`,
			want: `{"[REDACTED:github-token]":"hubot","[REDACTED:github-token]#2":"octocat"}`},
		{name: "truncated", in: `{"content":"aaaaaaaaaa","b":"bbb"}`, max: 4, want: `{"b":"bbb","content":"aaaa…[truncated, 10 bytes]"}`},
		{name: "redacted before truncated", in: `{"content":"` + ghp + `"}`, max: 8, want: `{"content":"[REDACTE…[truncated, 23 bytes]"}`},
		{name: "no escaping of html", in: `{"q":"a<b && c>d"}`, want: `{"q":"a<b && c>d"}`},
		{name: "newlines stay escaped", in: "{\"s\":\"a\\nb\"}\n", want: `{"s":"a\nb"}`},
		{name: "not json", in: "not json " + ghp + "\n", want: `"not json [REDACTED:github-token]\n"`},
		{name: "trailing data", in: `{"a":1} {"b":2}`, want: `"{\"a\":1} {\"b\":2}"`},
		{name: "not json truncated", in: "abcdef", max: 3, want: `"abc…[truncated, 6 bytes]"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redactJSON([]byte(tt.in), tt.max)
			if string(got) != tt.want {
				t.Errorf("redactJSON(%s, %d)\n got %s\nwant %s", tt.in, tt.max, got, tt.want)
			}
			if tt.want == "" && got != nil {
				t.Errorf("redactJSON(%q) = %q, want nil", tt.in, got)
			}
			if got != nil && !json.Valid(got) {
				t.Errorf("redactJSON(%s) = %s, which is not JSON", tt.in, got)
			}
			if strings.ContainsAny(string(got), "\r\n") {
				t.Errorf("redactJSON(%s) = %q, which holds a line break", tt.in, got)
			}
		})
	}
	if got := redactJSON(nil, 0); got != nil {
		t.Errorf("redactJSON(nil) = %q, want nil", got)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "short", in: "abc", max: 5, want: "abc"},
		{name: "exact", in: "abcde", max: 5, want: "abcde"},
		{name: "long", in: "abcdef", max: 5, want: "abcde…[truncated, 6 bytes]"},
		{name: "no limit", in: "abcdef", max: 0, want: "abcdef"},
		{name: "negative", in: "abcdef", max: -1, want: "abcdef"},
		{name: "empty", in: "", max: 1, want: ""},
		{name: "rune boundary", in: "héllo", max: 2, want: "h…[truncated, 6 bytes]"},
		{name: "after rune", in: "héllo", max: 3, want: "hé…[truncated, 6 bytes]"},
		{name: "first rune too long", in: "日本", max: 2, want: "…[truncated, 6 bytes]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := truncate(tt.in, tt.max); got != tt.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// toolResult is a typical result of about 2 KB: a directory listing, some
// Go source and a JSON status, with the words token, key and password in
// ordinary use.
const toolResult = `total 48
drwxr-xr-x  5 ada staff   160 Mar  3 10:12 .
drwxr-xr-x 12 ada staff   384 Mar  3 09:58 ..
-rw-r--r--  1 ada staff  1532 Mar  3 10:12 main.go
-rw-r--r--  1 ada staff   211 Mar  3 10:01 go.mod
-rw-r--r--  1 ada staff  4096 Mar  3 10:05 token_cache.go

package main

import (
	"fmt"
	"os"
)

// Config holds the settings read from config.yaml. The API key is read
// from the environment, never from the file.
type Config struct {
	Endpoint  string ` + "`json:\"endpoint\"`" + `
	MaxTokens int    ` + "`json:\"max_tokens\"`" + `
	Model     string ` + "`json:\"model\"`" + `
}

func main() {
	cfg, err := load("config.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, "load config:", err)
		os.Exit(1)
	}
	for i, m := range cfg.Models {
		fmt.Printf("%d: %s (%d tokens)\n", i, m.Name, m.Limit)
	}
}

{"status":"ok","commit":"9fceb02d0ae598e95dc970b74767f19372d61af8","id":"550e8400-e29b-41d4-a716-446655440000",
 "usage":{"input_tokens":1532,"output_tokens":211},"url":"https://example.com/api/v1/items?page=2&sort=asc",
 "digest":"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}

Tests: 42 passed, 0 failed. Reset your password from the settings page if the
login fails; the session key rotates every hour. See docs/auth.md for details.
Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor
incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis
nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.

$ git log --oneline -3
d0b6e0a gofmt write_test.go
873cacb Reuse writeTree and one fileType in domo-files; make its tests fail instead of skip
1bb58a5 Share one RENAME_EXCHANGE swap loop among the race tests
$ go test ./...
ok   github.com/domo-agent/domo/policy  0.012s
ok   github.com/domo-agent/domo/servers/files  1.304s
`

func BenchmarkRedactText(b *testing.B) {
	withSecrets := strings.Replace(toolResult, "Lorem ipsum", "export GITHUB_TOKEN="+fill("ghp_", alnum, 36)+
		" Authorization: Bearer "+jwtToken()+" postgres://app:S3cr3t@db/app "+fill("sk-proj-", alnum, 100), 1)
	for _, bc := range []struct {
		name, text string
	}{
		{name: "clean", text: toolResult},
		{name: "secrets", text: withSecrets},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			for b.Loop() {
				redactText(bc.text)
			}
		})
	}
}

// FuzzRedact checks what must hold for any input: no panic, valid UTF-8
// stays valid, and redactJSON always returns one line of JSON.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"Authorization: Bearer abc123def456", "postgres://u:p@h/db", `{"password":"x","n":[1,"` + fill("ghp_", alnum, 36) + `"]}`,
		"password: hunter2\n", `\u0026sig=abc`, "<password>x</password>", pemBlock("RSA PRIVATE KEY", "\n"), "key: password=abc",
		"--token 'a b'", "machine h login u password p", "DB_PASSWORD=\"unterminated",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := redactText(s)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Errorf("redactText(%q) = %q, not UTF-8", s, got)
		}
		j := redactJSON([]byte(s), 16)
		if len(strings.TrimSpace(s)) > 0 && (!json.Valid(j) || strings.ContainsAny(string(j), "\r\n")) {
			t.Errorf("redactJSON(%q) = %q, not one line of JSON", s, j)
		}
	})
}

// TestRedactTextLinear guards against quadratic time on text a tool could
// be made to return: a rule that rescans the rest of a long line for every
// hint on it takes minutes here, not milliseconds.
func TestRedactTextLinear(t *testing.T) {
	for _, unit := range []string{
		"sk-learn-", "bearer ", "Basic YWJjZA== ", "authorization: ", "password: ", "password=", "?token=", "&sig=",
		"key: ", `\u0026sig=`, "<password>", "--password ", "-u a:", "machine h login a password ", "://a:b@", "eyJabcd.eyJabcd.",
		"MTIzNDU2Nzg5MDEyMzQ1Njc4.abcdef.", "-----BEGIN PRIVATE KEY-----", "1234567890:AA", `"token":"`, "keykey",
		"aws_secret_access_key=",
	} {
		s := strings.Repeat(unit, 64<<10/len(unit))
		start := time.Now()
		redactText(s)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("redacting %d bytes of %q took %v", len(s), unit, d)
		}
	}
}
