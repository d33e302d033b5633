package agent

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/domo-agent/domo/host/toolgate"
)

// What the web server returns, decoded by the host's own small types: the
// host reaches servers only through MCP and never imports their packages.

// webSource is one result of web_search.
type webSource struct {
	N         int    `json:"n"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	Site      string `json:"site"`
	Published string `json:"published"`
	Snippet   string `json:"snippet"`
	Content   string `json:"content"`
	// Status is "read", "not read", "unusable: why" or "failed: why".
	Status string `json:"status"`
}

// searchOutcome is web_search's structured content.
type searchOutcome struct {
	Sources []webSource `json:"sources"`
	// Notes say what went wrong on the way: a provider that failed, pages
	// that timed out.
	Notes []string `json:"notes"`
}

// webPage is web_read's structured content.
type webPage struct {
	Title     string `json:"title"`
	URL       string `json:"url"`
	Site      string `json:"site"`
	Published string `json:"published"`
	Content   string `json:"content"`
	Unusable  string `json:"unusable"`
}

// sourcesMarker heads the JSON list of sources at the end of web_search's
// text, for clients that do not read structured content.
const sourcesMarker = "SOURCES_JSON\n"

// decodeStructured decodes a tool's structured content into v.
func decodeStructured(structured any, v any) bool {
	if structured == nil {
		return false
	}
	b, err := json.Marshal(structured)
	return err == nil && json.Unmarshal(b, v) == nil
}

// decodeSearch reads web_search's result: its structured content, else
// the SOURCES_JSON block of its text (which lists the sources without
// their text, leaving their snippets to answer from).
func decodeSearch(res toolgate.Result) searchOutcome {
	var out searchOutcome
	if decodeStructured(res.Structured, &out) && len(out.Sources) > 0 {
		return out
	}
	text := "\n" + res.Text
	if i := strings.LastIndex(text, "\n"+sourcesMarker); i >= 0 {
		var listed []webSource
		if json.NewDecoder(strings.NewReader(text[i+1+len(sourcesMarker):])).Decode(&listed) == nil {
			out.Sources = listed
		}
	}
	return out
}

// decodeRead reads web_read's result, and says why the page is unusable
// ("" when it is not): the call did not run or failed, the server found a
// consent wall or a stub, or the text looks like one.
func decodeRead(res toolgate.Result) (webPage, string) {
	if why := callProblem(res); why != "" {
		return webPage{}, why
	}
	var p webPage
	if !decodeStructured(res.Structured, &p) || (p.Content == "" && p.Unusable == "") {
		p = parseReadText(res.Text)
	}
	if p.Unusable != "" {
		return p, unusableReason(p.Unusable)
	}
	return p, wallReason(p.Content)
}

// parseReadText reads web_read's text: header lines (Title:, URL:,
// Site:, Published:) up to a blank line, then the content.
func parseReadText(text string) webPage {
	var p webPage
	fields := map[string]*string{"Title": &p.Title, "URL": &p.URL, "Site": &p.Site, "Published": &p.Published}
	lines := strings.Split(text, "\n")
	i := 0
	for ; i < len(lines); i++ {
		key, value, ok := strings.Cut(lines[i], ":")
		field := fields[key]
		if !ok || field == nil {
			break
		}
		*field = strings.TrimSpace(value)
	}
	p.Content = strings.TrimSpace(strings.Join(lines[i:], "\n"))
	return p
}

// browserText reads browser_get_text's result, and says why the page is
// unusable ("" when it is not).
func browserText(res toolgate.Result, maxLen int) (string, string) {
	if why := callProblem(res); why != "" {
		return "", why
	}
	text := cutBytes(strings.TrimSpace(res.Text), maxLen)
	return text, wallReason(text)
}

// callProblem says why a call to read a page gave no page: the tool's own
// error ("unusable: consent wall", "failed: …"), or how the gate ended the
// call. It is "" when the call gave a page.
func callProblem(res toolgate.Result) string {
	first, _, _ := strings.Cut(strings.TrimSpace(res.Text), "\n")
	switch {
	case res.IsError && res.Status == "error":
		return unusableReason(first)
	case res.IsError || res.Status != "ok":
		return "the call ended " + res.Status + ": " + first
	}
	return ""
}

// unusableReason turns "unusable: consent wall" into "consent wall".
func unusableReason(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > len("unusable:") && strings.EqualFold(s[:len("unusable:")], "unusable:") {
		s = strings.TrimSpace(s[len("unusable:"):])
	}
	if s == "" {
		return "unusable"
	}
	return s
}

// A page's text below minPageText bytes is a stub; one below wallPageText
// that speaks of cookies, consent or logging in is a wall in front of the
// article. The web server marks most of these itself; this catches the
// rest, and pages read in the browser.
const (
	minPageText  = 200
	wallPageText = 2000
)

var reWall = regexp.MustCompile(`(?i)\b(accept (all )?cookies|cookie (settings|preferences|policy|consent)|we value your privacy|before you continue|consent to (the|our) use|manage (your )?(privacy|consent)|enable javascript|turn on javascript|subscribe to (continue|read)|sign in to (continue|read)|verify (that )?you are (a )?human|are you a robot)`)

// wallReason says why a page's text is not an article: "" when it may be.
func wallReason(text string) string {
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(strings.ToLower(t), "unusable:"):
		return unusableReason(t)
	case len(t) < minPageText:
		return "too little text: the page is a stub"
	case len(t) < wallPageText && reWall.MatchString(t):
		return "a consent or login wall"
	}
	return ""
}

// page is a source with the text an answer is written from.
type page struct {
	Source
	content string
	// snippet is set when content is the search engine's description: the
	// page itself was not read.
	snippet bool
	// unusable says why the page cannot be answered from; "" when it can.
	unusable string
}

// pages turns the search's sources into pages, the unusable ones marked.
func (s searchOutcome) pages() []page {
	var out []page
	for _, w := range s.Sources {
		p := page{Source: Source{N: w.N, Title: w.Title, URL: w.URL, Site: w.Site, Published: w.Published}}
		switch {
		case strings.HasPrefix(w.Status, "unusable"), strings.HasPrefix(w.Status, "failed"):
			p.unusable = unusableReason(w.Status)
		case strings.TrimSpace(w.Content) != "":
			p.content, p.unusable = w.Content, wallReason(w.Content)
		case strings.TrimSpace(w.Snippet) != "":
			p.content, p.snippet = w.Snippet, true
		default:
			p.unusable = "no text"
		}
		out = append(out, p)
	}
	return out
}

// fill completes a page's source with what reading it told.
func (p *page) fill(w webPage) {
	if p.Title == "" {
		p.Title = w.Title
	}
	if p.Site == "" {
		p.Site = w.Site
	}
	if p.Published == "" {
		p.Published = w.Published
	}
}

// usablePages keeps the pages that can be answered from.
func usablePages(pages []page) []page {
	var out []page
	for _, p := range pages {
		if p.unusable == "" {
			out = append(out, p)
		}
	}
	return out
}

// A follow-up asks more about the last lookup's results: "tell me more",
// "what else do we know about that", "the second one", "[2]", "open the
// BBC one", "what does the article say about…".
var reFollowUp = regexp.MustCompile(`(?i)\b(tell me more|more (about|on|from|of) (it|that|this|them|these|those|the)\b|what else|go on|elaborate|expand on|dig deeper|in more detail|(the|that|this) (article|story|piece|report|link|source)s?\b|(first|second|third|fourth|fifth|last|\d+(st|nd|rd|th)) (one|article|story|link|source|result|piece)\b|(number|no\.)\s*\d|open (it|that)\b|the [\w.-]+ (one|article|story|piece|report)\b)|\[\d+\]|#\d\b`)

// isFollowUp reports whether a message follows up on earlier results.
func isFollowUp(text string) bool {
	return reFollowUp.MatchString(text)
}

var (
	reOrdinal = regexp.MustCompile(`(?i)\[(\d+)\]|(?:\b(?:number|no\.|source|result|link|article)\s*|#)(\d+)\b|\b(\d+)(?:st|nd|rd|th)\b|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)\b`)
	ordinals  = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
)

// pickSource chooses the source a follow-up is about: by ordinal ("the
// second one", "the 2nd", "number 2", "[2]"), by site name ("the BBC
// one"), by the words it shares with a title; else the first. sources is
// not empty.
func pickSource(text string, sources []Source) Source {
	if s, ok := byOrdinal(text, sources); ok {
		return s
	}
	words := map[string]bool{}
	for _, w := range wordsOf(text) {
		words[w] = true
	}
	for _, s := range sources {
		for _, name := range siteNames(s.Site) {
			if words[name] {
				return s
			}
		}
	}
	best, bestScore := sources[0], 0
	for _, s := range sources {
		score := 0
		for _, w := range wordsOf(s.Title) {
			if len(w) >= 4 && !stopWords[w] && words[w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// byOrdinal finds the source a message names by number: the one cited by
// that number, else the one listed at that place.
func byOrdinal(text string, sources []Source) (Source, bool) {
	for _, m := range reOrdinal.FindAllStringSubmatch(text, -1) {
		k := 0
		switch word := strings.ToLower(m[4]); {
		case word == "last":
			k = sources[len(sources)-1].N
		case word != "":
			k = ordinals[word]
		default:
			k, _ = strconv.Atoi(m[1] + m[2] + m[3])
		}
		for _, s := range sources {
			if s.N == k {
				return s, true
			}
		}
		if k >= 1 && k <= len(sources) {
			return sources[k-1], true
		}
	}
	return Source{}, false
}

// siteNames are the words a person would call a site by: "bbc" for
// bbc.co.uk, "sky" for news.sky.com, "guardian" for "The Guardian".
func siteNames(site string) []string {
	var out []string
	for _, w := range wordsOf(site) {
		if len(w) >= 2 && !genericSiteWords[w] {
			out = append(out, w)
		}
	}
	return out
}

var genericSiteWords = map[string]bool{
	"www": true, "com": true, "co": true, "org": true, "net": true, "news": true, "uk": true, "the": true,
	"gov": true, "edu": true, "io": true, "info": true, "de": true, "fr": true, "us": true, "au": true,
	"ca": true, "en": true, "m": true, "amp": true, "mobile": true, "online": true,
}

// stopWords do not tell one title from another.
var stopWords = map[string]bool{
	"more": true, "about": true, "tell": true, "what": true, "does": true, "that": true, "this": true,
	"article": true, "story": true, "with": true, "from": true, "they": true, "them": true, "know": true,
	"else": true, "open": true, "says": true, "said": true, "have": true, "there": true, "their": true,
	"which": true, "would": true, "could": true, "should": true, "were": true, "been": true, "into": true,
	"than": true, "then": true, "when": true, "where": true, "will": true, "your": true, "page": true,
	"link": true, "source": true, "report": true, "piece": true, "also": true, "some": true, "just": true,
	"news": true, "latest": true,
}

// wordsOf splits text into lowercase words of letters and digits.
func wordsOf(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
