package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/domo-agent/domo/audit"
	"github.com/domo-agent/domo/tests/fakellm"
	"github.com/domo-agent/domo/tests/testenv"
)

// article is a page the fake web serves, and the fake SearxNG finds.
type article struct {
	path, title, published string
	paragraphs             []string
}

var marsArticles = []article{
	{"/science/mars-sample-return-delayed", "NASA delays Mars sample return by two years", "2026-11-20T08:00:00Z", []string{
		"NASA has delayed its Mars sample return mission by two years after an independent review found that the budget of eleven billion dollars could not be met by the current design.",
		"The agency said it would ask industry for cheaper designs before the end of the year. The samples gathered by the Perseverance rover will wait in their tubes on the surface of Jezero crater until a lander can collect them.",
		"Scientists called the delay disappointing but expected, and said the samples would keep. The review board recommended a smaller lander and a simpler ascent vehicle.",
	}},
	{"/world/esa-rover-landing-site", "ESA picks Oxia Planum as landing site for its Mars rover", "2026-11-19T12:30:00Z", []string{
		"The European Space Agency has picked Oxia Planum as the landing site of its Rosalind Franklin rover, an ancient clay-rich plain where water once flowed billions of years ago.",
		"The rover will drill two metres below the surface, deeper than any rover before it, to look for signs of past life that radiation at the surface would have destroyed.",
		"Engineers chose the site for its flat ground, which lowers the risk of landing, and for its old rocks, which scientists think hold the best chance of preserved organic matter.",
	}},
}

// html renders the article as a news page.
func (a article) html() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>`+
		`<meta property="og:title" content="%s"><meta property="article:published_time" content="%s"></head>`+
		`<body><header><nav><a href="/">Home</a> <a href="/science">Science</a></nav></header><main><article><h1>%s</h1>`,
		a.title, a.title, a.published, a.title)
	for _, p := range a.paragraphs {
		b.WriteString("<p>" + p + "</p>")
	}
	b.WriteString(`</article></main><footer>© The Fake Times</footer></body></html>`)
	return b.String()
}

// fakeWeb is a news site and a SearxNG instance that finds its articles,
// both on loopback. It records the queries SearxNG was asked.
type fakeWeb struct {
	site, searx *httptest.Server

	mu      sync.Mutex
	queries []string
}

func newFakeWeb(t *testing.T) *fakeWeb {
	t.Helper()
	w := &fakeWeb{}
	site := http.NewServeMux()
	site.HandleFunc("GET /robots.txt", func(rw http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(rw, "User-agent: *\nAllow: /\n")
	})
	for _, a := range marsArticles {
		page := a.html()
		site.HandleFunc("GET "+a.path, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, page)
		})
	}
	w.site = httptest.NewServer(site)
	t.Cleanup(w.site.Close)

	searx := http.NewServeMux()
	searx.HandleFunc("GET /search", func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.queries = append(w.queries, r.URL.Query().Get("q"))
		w.mu.Unlock()
		type result struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"publishedDate"`
			Engine        string `json:"engine"`
		}
		var out struct {
			Results []result `json:"results"`
		}
		for _, a := range marsArticles {
			out.Results = append(out.Results, result{a.title, w.site.URL + a.path, a.paragraphs[0][:80], a.published, "fakenews"})
		}
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(out)
	})
	w.searx = httptest.NewServer(searx)
	t.Cleanup(w.searx.Close)
	return w
}

func (w *fakeWeb) searched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.queries)
}

// server is domo-web's config entry, searching only the fake SearxNG and
// allowed to fetch from loopback.
func (w *fakeWeb) server(t *testing.T) map[string]any {
	return map[string]any{
		"command": testenv.Binary(t, "domo-web"),
		"args":    []string{"--providers", "searxng", "--searxng-url", w.searx.URL, "--allow", "127.0.0.1"},
	}
}

// urlOf returns the address of the article titled title.
func (w *fakeWeb) urlOf(title string) string {
	for _, a := range marsArticles {
		if a.title == title {
			return w.site.URL + a.path
		}
	}
	return ""
}

const marsQuestion = "what's the latest news on the Mars missions?"

var reSourceHead = regexp.MustCompile(`(?m)^\[(\d+)\] (.+?) — `)

// numbered maps each source title of an answer prompt to its number.
func numbered(prompt string) map[string]string {
	out := map[string]string{}
	for _, m := range reSourceHead.FindAllStringSubmatch(prompt, -1) {
		out[m[2]] = m[1]
	}
	return out
}

func isWebPlan(r fakellm.Request) bool {
	return !r.Stream && r.ResponseFormat == "json_schema" && strings.Contains(r.Messages[0].Content, "You write web searches")
}

func isWebAnswer(r fakellm.Request) bool {
	return strings.Contains(r.Messages[0].Content, "numbered web sources")
}

// citeBoth answers from a prompt that must hold both articles' text,
// citing each by the number the prompt gave it.
func citeBoth(t *testing.T) func(r fakellm.Request) fakellm.Reply {
	return func(r fakellm.Request) fakellm.Reply {
		prompt := r.Messages[len(r.Messages)-1].Content
		n := numbered(prompt)
		delay, site := n[marsArticles[0].title], n[marsArticles[1].title]
		if delay == "" || site == "" || !strings.Contains(prompt, "Perseverance rover") || !strings.Contains(prompt, "deeper than any rover") {
			t.Errorf("the answer prompt lacks the articles' text:\n%s", prompt)
		}
		return fakellm.Reply{Content: fmt.Sprintf("NASA has put off the sample return by two years [%s], and ESA chose Oxia Planum for its rover [%s].", delay, site)}
	}
}

// TestWebLookup asks a news question with `domo ask` against the built
// domo-web, a fake SearxNG and a fake news site: the model writes the
// search, exactly one web_search runs through the gate (allowed by the
// default "web" policy), the answer cites the pages it was given and the
// sources are listed under it, in text and in JSON.
func TestWebLookup(t *testing.T) {
	web := newFakeWeb(t)
	fake := fakellm.New(t)
	h := newHostHome(t, fake.URL, map[string]any{"web": web.server(t)}, nil)

	fake.Push(
		fakellm.Step{Match: isWebPlan, Reply: fakellm.Reply{Content: `{"query":"Mars missions news","recency":"week","news":true}`}},
		fakellm.Step{Match: isWebAnswer, Respond: citeBoth(t)},
	)
	out, errOut, code := h.run(t, "", "ask", "--json", marsQuestion)
	if code != 0 {
		t.Fatalf("domo ask: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	var res struct {
		Answer  string
		Route   string
		Calls   []struct{ Name, Status string } `json:"tool_calls"`
		Sources []struct {
			N                           int
			Title, URL, Site, Published string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Route != "lookup" || len(res.Calls) != 1 || res.Calls[0].Name != "web_search" || res.Calls[0].Status != "ok" {
		t.Errorf("route %s, calls %+v", res.Route, res.Calls)
	}
	if len(res.Sources) != 2 {
		t.Fatalf("sources %+v, want the two cited articles", res.Sources)
	}
	for _, s := range res.Sources {
		if !strings.Contains(res.Answer, fmt.Sprintf("[%d]", s.N)) || web.urlOf(s.Title) != s.URL || s.Published == "" {
			t.Errorf("source %+v does not match the answer %q", s, res.Answer)
		}
	}
	if got := web.searched(); !slices.Equal(got, []string{"Mars missions news"}) {
		t.Errorf("SearxNG was asked %q, want the model's query once", got)
	}
	if got := countEvents(h.events(t), "tool_call_start web_search"); got != 1 {
		t.Errorf("%d web_search calls in the audit log, want 1", got)
	}
	if !slices.Contains(h.events(t), "permission_decision web_search allow/policy") {
		t.Errorf("web_search was not allowed by policy: %q", h.events(t))
	}

	fake.Push(
		fakellm.Step{Match: isWebPlan, Reply: fakellm.Reply{Content: `{"query":"Mars missions news","recency":"","news":true}`}},
		fakellm.Step{Match: isWebAnswer, Respond: citeBoth(t)},
	)
	out, errOut, code = h.run(t, "", "ask", marsQuestion)
	if code != 0 {
		t.Fatalf("domo ask: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	answer, list, ok := strings.Cut(out, "\nSources:\n")
	if !ok || !strings.Contains(answer, "Oxia Planum") {
		t.Fatalf("no sources under the answer:\n%s", out)
	}
	for _, a := range marsArticles {
		if !strings.Contains(list, a.title+" — ") || !strings.Contains(list, web.site.URL+a.path) {
			t.Errorf("the list lacks %q:\n%s", a.title, list)
		}
	}
}

// TestWebLookupFollowUp drives a piped `domo chat`: a news question, then
// "tell me more about the second one", which reads that article with
// web_read and searches for related coverage by its title.
func TestWebLookupFollowUp(t *testing.T) {
	web := newFakeWeb(t)
	fake := fakellm.New(t)
	h := newHostHome(t, fake.URL, map[string]any{"web": web.server(t)}, nil)

	var second string // the title of the source the first answer cited as [2]
	fake.Push(
		fakellm.Step{Match: isWebPlan, Reply: fakellm.Reply{Content: `{"query":"Mars missions news","recency":"week","news":true}`}},
		fakellm.Step{Match: isWebAnswer, Respond: func(r fakellm.Request) fakellm.Reply {
			for title, n := range numbered(r.Messages[1].Content) {
				if n == "2" {
					second = title
				}
			}
			return fakellm.Reply{Content: "Two stories: the sample return slips [1], and a rover landing site [2]."}
		}},
		fakellm.Step{Match: isWebAnswer, Respond: func(r fakellm.Request) fakellm.Reply {
			prompt := r.Messages[1].Content
			if n := numbered(prompt); n[second] != "1" {
				t.Errorf("the followed-up article %q is not source [1]:\n%s", second, prompt)
			}
			return fakellm.Reply{Content: "More on it [1]."}
		}},
	)
	out, errOut, code := h.run(t, marsQuestion+"\ntell me more about the second one\n", "chat")
	if code != 0 {
		t.Fatalf("domo chat: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if second == "" || !strings.Contains(out, "More on it [1].") {
		t.Fatalf("the follow-up was not answered (second source %q):\n%s", second, out)
	}
	if got := web.searched(); !slices.Equal(got, []string{"Mars missions news", second}) {
		t.Errorf("SearxNG was asked %q, want the model's query, then the second source's title", got)
	}
	var reads []string
	err := audit.Query(h.log, audit.Filter{}, func(ev audit.Event) error {
		if ev.Event == audit.KindCallStart && ev.Tool == "web_read" {
			var args struct{ URL string }
			json.Unmarshal(ev.Args, &args)
			reads = append(reads, args.URL)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{web.urlOf(second)}; !slices.Equal(reads, want) {
		t.Errorf("web_read calls of %q, want %q", reads, want)
	}
	if got := countEvents(h.events(t), "tool_call_start web_search"); got != 2 {
		t.Errorf("%d web_search calls in the audit log, want one per turn", got)
	}
}

func countEvents(events []string, want string) int {
	n := 0
	for _, e := range events {
		if e == want {
			n++
		}
	}
	return n
}
