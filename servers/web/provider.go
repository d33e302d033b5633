package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/itlightning/dateparse"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// What the providers share: turning a provider's strings into plain text,
// its dates into times, and its answer into an error a model can act on
// when it is not what was asked for.

// askFor is how many hits a provider returns when max are wanted: a few
// more, because the router drops repeats and section fronts.
func askFor(max int) int {
	if max <= 0 {
		max = 10
	}
	return max + max/4 + 2
}

// hitList collects hits in order, keeping only those with an http(s)
// address and dropping exact repeats, up to a limit.
type hitList struct {
	hits []Hit
	seen map[string]bool
	max  int
}

func newHitList(max int) *hitList {
	return &hitList{hits: []Hit{}, seen: map[string]bool{}, max: askFor(max)}
}

// add appends h unless it has no usable address or repeats one; it
// reports whether the list has room for more.
func (l *hitList) add(h Hit) bool {
	if h.URL != "" && !l.seen[h.URL] && len(l.hits) < l.max {
		l.seen[h.URL] = true
		if h.Title == "" {
			h.Title = h.URL
		}
		l.hits = append(l.hits, h)
	}
	return len(l.hits) < l.max
}

// hitText turns a provider's title or snippet into plain text: tags
// dropped (with a space where a block ended), entities decoded, white
// space collapsed.
func hitText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.Join(strings.Fields(s), " ")
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return strings.Join(strings.Fields(b.String()), " ")
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Script, atom.Style, atom.Noscript:
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
			case atom.Br, atom.P, atom.Div, atom.Li, atom.Ol, atom.Ul, atom.Tr, atom.Td, atom.H1, atom.H2, atom.H3, atom.H4:
				b.WriteByte(' ')
			}
		}
	}
}

// reAge matches the relative ages search engines print ("2 hours ago",
// "a day ago", "3 wks ago").
var reAge = regexp.MustCompile(`^(\d+|an?|one)\s*(s|sec|secs|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?|mo|months?|y|yrs?|years?)\s+ago$`)

// hitDate reads the dates providers give, leniently: RFC 1123 and 3339,
// "2026-11-20 14:03:00" and most other absolute forms (taken as UTC when
// they name no zone), and relative ages, which become an approximate time
// before now. It returns the zero time for anything else.
func hitDate(s string, now time.Time) time.Time {
	s = strings.TrimSpace(s)
	low := strings.ToLower(s)
	switch low {
	case "", "null", "none", "0":
		return time.Time{}
	case "now", "just now", "today":
		return now
	case "yesterday":
		return now.AddDate(0, 0, -1)
	}
	if m := reAge.FindStringSubmatch(low); m != nil {
		n := 1
		if v, err := strconv.Atoi(m[1]); err == nil {
			n = v
		}
		switch u := m[2]; {
		case u == "mo" || strings.HasPrefix(u, "month"):
			return now.AddDate(0, -n, 0)
		case u[0] == 'y':
			return now.AddDate(-n, 0, 0)
		case u[0] == 'w':
			return now.AddDate(0, 0, -7*n)
		case u[0] == 'd':
			return now.AddDate(0, 0, -n)
		case u[0] == 'h':
			return now.Add(-time.Duration(n) * time.Hour)
		case u[0] == 'm':
			return now.Add(-time.Duration(n) * time.Minute)
		default:
			return now.Add(-time.Duration(n) * time.Second)
		}
	}
	t, err := dateparse.ParseIn(s, time.UTC)
	if err != nil || t.Year() < 1990 || t.After(now.Add(48*time.Hour)) {
		return time.Time{}
	}
	return t
}

// reTitle finds an HTML page's title, for saying which page came back.
var reTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// htmlPage reports whether text is an HTML page (an error page, a login
// or consent wall) rather than the JSON or feed asked for, and if so
// describes it by its title.
func htmlPage(contentType, text string) (string, bool) {
	head := strings.ToLower(strings.TrimSpace(text))
	if len(head) > 512 {
		head = head[:512]
	}
	switch {
	case strings.HasPrefix(head, "{"), strings.HasPrefix(head, "["), strings.HasPrefix(head, "<rss"), strings.HasPrefix(head, "<feed"),
		strings.HasPrefix(head, "<?xml") && !strings.Contains(head, "<html"):
		return "", false
	case strings.HasPrefix(head, "<!doctype html"), strings.Contains(head, "<html"),
		contentType == "text/html" && strings.HasPrefix(head, "<"):
	default:
		return "", false
	}
	desc := "an HTML page"
	if m := reTitle.FindStringSubmatch(text); m != nil {
		if t := hitText(m[1]); t != "" {
			if len(t) > 80 {
				t = strings.ToValidUTF8(t[:80], "") + "…"
			}
			desc += fmt.Sprintf(" (%q)", t)
		}
	}
	return desc, true
}

// recencySince is the earliest time a recency allows, or zero.
func recencySince(recency string, now time.Time) time.Time {
	switch recency {
	case "day":
		return now.AddDate(0, 0, -1)
	case "week":
		return now.AddDate(0, 0, -7)
	case "month":
		return now.AddDate(0, -1, 0)
	case "year":
		return now.AddDate(-1, 0, 0)
	}
	return time.Time{}
}

// decodeJSONAnswer decodes a provider's JSON answer into v. The body is
// decoded to UTF-8 first, so a mislabelled charset does not garble text.
func decodeJSONAnswer(resp *Response, v any) error {
	text := strings.TrimSpace(resp.Text())
	if text == "" {
		return errors.New("the answer was empty")
	}
	if page, ok := htmlPage(resp.ContentType, text); ok {
		return fmt.Errorf("expected JSON but got %s", page)
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		if resp.Truncated {
			return fmt.Errorf("the answer is larger than the %d-byte limit and was cut off", len(resp.Body))
		}
		return fmt.Errorf("the answer is not valid JSON: %w", err)
	}
	return nil
}
