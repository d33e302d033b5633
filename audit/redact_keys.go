package audit

import (
	"strings"
	"unicode"
)

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

// keyParts may follow "<qualifier> key" in a secret's name.
var keyParts = map[string]bool{
	"id": true, "value": true, "data": true, "pem": true, "hex": true, "base": true, "b": true, "str": true, "string": true, "bytes": true,
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

// flagWords, as the first word, make a key a switch about a secret:
// no_auth, use_token, has_password.
var flagWords = map[string]bool{
	"no": true, "disable": true, "enable": true, "skip": true, "allow": true, "require": true,
	"requires": true, "use": true, "has": true, "is": true,
}

// plainTokens are tokens that are no secret: MCP's progressToken, the
// page tokens of paginated APIs.
var plainTokens = map[string]bool{
	"progress": true, "page": true, "next": true, "continuation": true, "sync": true, "cancellation": true, "resume": true,
}

// secretKey reports whether an object key or variable names a secret. The
// name is split into words at separators and camelCase, so apiKey, API_KEY
// and x-api-key all read "api key". Plural "tokens" is a count (max_tokens,
// input_tokens); a last word like name, type, count, file or url describes
// a secret without holding it (token_type, password_file); a first word
// like no, use or has makes a switch (no_auth); progress and page tokens
// are no secrets; nor is the shell's PWD, though pwd is. Words must match
// whole: secretary, author and bypass are not.
func secretKey(name string) bool {
	if name == "PWD" || name == "OLDPWD" {
		return false // the shell's working directory
	}
	words := keyWords(name)
	n := len(words)
	if n == 0 {
		return false
	}
	last := words[n-1]
	if n > 1 && (metaWords[last] || flagWords[words[0]]) {
		return false
	}
	if n > 1 && last == "token" && plainTokens[words[n-2]] {
		return false
	}
	if last == "pass" {
		return true // db_pass, but not pass_through
	}
	for i, w := range words {
		switch {
		case secretWords[w]:
			return true
		case (w == "key" || w == "keys") && i > 0 && keyQualifiers[words[i-1]] && (i == n-1 || i == n-2 && keyParts[last]):
			return true // api_key, private_key_id, but not client_key_exchange
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
