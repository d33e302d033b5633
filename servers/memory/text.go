package memory

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The kinds of memory.
var kinds = []string{"fact", "preference", "event", "note", "summary"}

// The sensitivity levels. Sensitive memories are recalled only when the
// query asks for them.
const (
	Normal    = "normal"
	Sensitive = "sensitive"
)

// formatID and parseID convert between row ids and the "m12" form tools use.
func formatID(id int64) string { return "m" + strconv.FormatInt(id, 10) }

func parseID(s string) (int64, error) {
	t := strings.TrimPrefix(strings.TrimSpace(strings.ToLower(s)), "m")
	t = strings.Trim(t, "[]")
	t = strings.TrimPrefix(t, "m")
	id, err := strconv.ParseInt(t, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not a memory id: ids look like m12", s)
	}
	return id, nil
}

// words splits text into lowercase words: runs of letters and digits.
func words(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// stopwords are dropped from fingerprints, shingles and queries: they match
// everything and say nothing.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto about
		as is are was were be been being am do does did doing have has had having i me my mine myself we us our ours
		you your yours he him his she her hers it its they them their theirs this that these those there here what
		which who whom whose when where why how all any both each few more most other some such no nor not only own
		same so than too very can will just should would could may might must shall s t d ll m re ve also get got
		user users user's tell know remember recall please something anything thing things like
		often usually much many ever`) {
		m[w] = true
	}
	return m
}()

// contentWords are the words of s without stopwords; all of them when
// nothing else is left.
func contentWords(s string) []string {
	all := words(s)
	var out []string
	for _, w := range all {
		if !stopwords[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// fingerprint is the text reduced to what makes two memories the same:
// case, punctuation, spacing and stopwords do not.
func fingerprint(text string) string {
	ws := contentWords(text)
	slices.Sort(ws)
	return strings.Join(slices.Compact(ws), " ")
}

// jaccard is the overlap of two sets of terms.
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for _, t := range a {
		if _, ok := slices.BinarySearch(b, t); ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// normalizeTags lowercases tags, turns spaces into dashes, drops empty ones
// and repeats, and sorts them.
func normalizeTags(tags []string) ([]string, error) {
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "#")))
		t = strings.Join(strings.Fields(t), "-")
		if t == "" {
			continue
		}
		if len(t) > 64 {
			return nil, fmt.Errorf("tag %q is longer than 64 characters", t[:64])
		}
		for _, r := range t {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_.:/", r)) {
				return nil, fmt.Errorf("tag %q has %q: tags use letters, digits and - _ . : /", t, r)
			}
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func splitTags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// secretPatterns match credentials, which memory refuses to keep: a
// memory is recalled into prompts and shown in lists, where a secret leaks.
var secretPatterns = []struct {
	what string
	re   *regexp.Regexp
}{
	{"an API key", regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}`)},
	{"an AWS access key", regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`)},
	{"a GitHub token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`)},
	{"a Slack token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"a private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`)},
	{"a JSON web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.`)},
	{"a password", regexp.MustCompile(`(?i)\b(password|passwd|passcode|pin code|pin)\b\s*(is|:|=)\s*\S{3,}`)},
	{"a card number", regexp.MustCompile(`\b(?:\d[ -]?){13,19}\b`)},
}

// checkSecrets refuses text that holds a credential.
func checkSecrets(text string) error {
	for _, p := range secretPatterns {
		if p.re.MatchString(text) {
			if p.what == "a card number" && !luhn(p.re.FindString(text)) {
				continue
			}
			return fmt.Errorf("this looks like %s; memory does not store credentials, because memories are shown in prompts and lists. Remember where the secret is kept instead (e.g. \"the API key is in the password manager\")", p.what)
		}
	}
	return nil
}

func luhn(s string) bool {
	var digits []int
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits = append(digits, int(r-'0'))
		}
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := digits[i]
		if (len(digits)-1-i)%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return len(digits) >= 13 && sum%10 == 0
}

// sensitiveWords mark a memory sensitive when its sensitivity is not given:
// health, money, identity and intimate life are not for every prompt.
var sensitiveWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`health medical medication medicine diagnosis diagnosed disease illness therapy therapist
		depression anxiety pregnant pregnancy surgery hospital cancer diabetes hiv disability allergy allergic
		salary income debt debts loan mortgage bank account iban ssn passport
		religion religious sexual sexuality gay lesbian bisexual transgender political politics vote voted
		divorce divorced affair arrested criminal lawsuit addiction rehab`) {
		m[w] = true
	}
	return m
}()

func guessSensitivity(text string, tags []string) string {
	for _, w := range words(text) {
		if sensitiveWords[w] {
			return Sensitive
		}
	}
	for _, t := range tags {
		if sensitiveWords[t] {
			return Sensitive
		}
	}
	return Normal
}

// parseTime reads a point in time as tools give it: a date (2026-03-02),
// RFC 3339, or an age before now (7d, 36h, 2w).
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	if n := len(s); n >= 2 {
		if v, err := strconv.Atoi(s[:n-1]); err == nil && v >= 0 {
			unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour, 'y': 365 * 24 * time.Hour}[s[n-1]]
			if unit != 0 {
				return now.Add(-time.Duration(v) * unit), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use a date like 2026-03-02, an RFC 3339 time, or an age like 7d", s)
}

// dateWords are what the FTS index holds of a memory's date, so that a
// query naming a month or a year finds what happened then.
func dateWords(t time.Time) string {
	return fmt.Sprintf("%s %d %s", strings.ToLower(t.Month().String()), t.Year(), t.Format("2006-01-02"))
}

var errEmptyText = errors.New("text is empty: say what to remember in a sentence")
