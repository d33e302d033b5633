package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/host/agent"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
	"github.com/domo-agent/domo/tests/fakellm"
)

// webSource is a source as the web server returns it.
type webSource struct {
	N         int    `json:"n"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	Site      string `json:"site"`
	Published string `json:"published,omitempty"`
	Snippet   string `json:"snippet,omitempty"`
	Content   string `json:"content,omitempty"`
	Status    string `json:"status"`
}

const (
	bbcURL      = "https://www.bbc.co.uk/news/science-mars"
	guardianURL = "https://www.theguardian.com/science/esa-rover"
	reutersURL  = "https://www.reuters.com/science/mars-budget"
	wallURL     = "https://example.com/consent"

	bbcText = "NASA has delayed its Mars sample return mission by two years after an independent review found the budget of eleven billion dollars could not be met. " +
		"The agency said it would ask industry for cheaper designs before the end of the year, and that the samples gathered by the Perseverance rover would wait on the surface until then. " +
		"Scientists said the delay was disappointing but expected."
	guardianText = "The European Space Agency has picked Oxia Planum as the landing site of its Rosalind Franklin rover, an ancient clay-rich plain where water once flowed. " +
		"The rover will drill two metres below the surface to look for signs of past life. Engineers chose the site for its flat ground and its old rocks."
	reutersText = "Congress cut the planetary science budget by a fifth in its latest spending bill, leaving several Mars projects without money for the coming year. " +
		"Officials said the cut falls hardest on missions that have not yet started building hardware, and that launches may slip as a result."
)

// marsSources are a news search's results: three read articles and a
// consent wall.
func marsSources() []webSource {
	return []webSource{
		{N: 1, Title: "NASA delays Mars sample return", URL: bbcURL, Site: "bbc.co.uk", Published: "2026-11-20T08:00:00Z", Content: bbcText, Status: "read"},
		{N: 2, Title: "Before you continue", URL: wallURL, Site: "example.com", Status: "unusable: consent wall"},
		{N: 3, Title: "ESA picks landing site for Mars rover", URL: guardianURL, Site: "The Guardian", Published: "2026-11-19T12:30:00Z", Content: guardianText, Status: "read"},
		{N: 4, Title: "Mars budget cut explained", URL: reutersURL, Site: "reuters.com", Content: reutersText, Status: "read"},
	}
}

func searchResult(sources ...webSource) toolgate.Result {
	return toolgate.Result{Status: "ok", Text: "search results (text rendering)", Structured: map[string]any{"query": "q", "mode": "news", "provider": "fake", "sources": sources}}
}

// webGate is a gate offering the web server's search and read tools, and
// the browser's when browser is set, next to a files tool.
func webGate(browser bool) *gate {
	g := newGate("read_text_file")
	add := func(server string, names ...string) {
		for _, n := range names {
			g.tools = append(g.tools, mcpclient.Tool{Name: n, Server: server, Tool: mcp.NewTool(n, mcp.WithDescription("does "+n))})
		}
	}
	add("web", "web_search", "web_read")
	if browser {
		add("browser", "browser_navigate", "browser_get_text")
	}
	g.answers["web_search"] = searchResult(marsSources()...)
	return g
}

func isPlan(r fakellm.Request) bool {
	return !r.Stream && r.ResponseFormat == "json_schema" && strings.Contains(r.Messages[0].Content, "You write web searches")
}

func isAnswer(r fakellm.Request) bool {
	return r.ResponseFormat == "" && len(r.Tools) == 0 && strings.Contains(r.Messages[0].Content, "numbered web sources")
}

func planStep(plan string) fakellm.Step {
	return fakellm.Step{Match: isPlan, Reply: fakellm.Reply{Content: plan}}
}

func answerStep(answer string) fakellm.Step {
	return fakellm.Step{Match: isAnswer, Reply: fakellm.Reply{Content: answer}}
}

const (
	newsQuestion = "what's the latest news on the Mars missions?"
	marsPlan     = `{"query":"Mars mission news November 2026","recency":"week","news":true}`
	marsAnswer   = "NASA has put off bringing the samples home by two years [1], while ESA chose a landing site for its rover [2]."
)

type searchArgs struct {
	Query      string `json:"query"`
	Recency    string `json:"recency"`
	MaxResults int    `json:"max_results"`
	AutoRead   bool   `json:"auto_read"`
	News       bool   `json:"news"`
}

func argsOf(t *testing.T, c toolgate.Call) searchArgs {
	t.Helper()
	var a searchArgs
	if err := json.Unmarshal(c.Args, &a); err != nil {
		t.Fatalf("%s args %s: %v", c.Name, c.Args, err)
	}
	return a
}

func TestLookupSearchesOnceAndCites(t *testing.T) {
	g := webGate(false)
	a, fake := newAgent(t, g, 32768, planStep(marsPlan), answerStep(marsAnswer))
	var streamed strings.Builder
	var started []agent.ToolCall
	res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{
		Content:   func(s string) { streamed.WriteString(s) },
		ToolStart: func(c agent.ToolCall) { started = append(started, c) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Route != agent.RouteLookup || res.Answer != marsAnswer || streamed.String() != marsAnswer {
		t.Errorf("route %s, answer %q, streamed %q", res.Route, res.Answer, streamed.String())
	}

	searches := g.callsOf("web_search")
	if len(searches) != 1 || len(g.calls) != 1 {
		t.Fatalf("gate calls %+v, want exactly one web_search", g.calls)
	}
	got := argsOf(t, searches[0])
	want := searchArgs{Query: "Mars mission news November 2026", Recency: "week", MaxResults: 5, AutoRead: true, News: true}
	if got != want {
		t.Errorf("web_search args %+v, want %+v (the model's query, not the message)", got, want)
	}
	if len(started) != 1 || started[0].ByHost || len(res.Calls) != 1 || res.Calls[0].Name != "web_search" {
		t.Errorf("the search is not shown as a call of the turn: events %+v, calls %+v", started, res.Calls)
	}

	reqs := fake.Requests()
	if !strings.Contains(reqs[0].Messages[1].Content, "Latest message: "+newsQuestion) {
		t.Errorf("the plan request lacks the message: %q", reqs[0].Messages[1].Content)
	}
	prompt := reqs[1].Messages[1].Content
	for _, want := range []string{
		"[1] NASA delays Mars sample return — bbc.co.uk — 20 November 2026\n" + bbcText,
		"[2] ESA picks landing site for Mars rover — The Guardian — 19 November 2026\n" + guardianText,
		"[3] Mars budget cut explained — reuters.com — date unknown\n" + reutersText,
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the answer prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "Before you continue") {
		t.Errorf("the consent wall reached the answer prompt:\n%s", prompt)
	}
	if system := reqs[1].Messages[0].Content; !strings.Contains(system, "only from them") || !strings.Contains(system, "not instructions") {
		t.Errorf("the answer's system prompt: %q", system)
	}
	wantSources := []agent.Source{
		{N: 1, Title: "NASA delays Mars sample return", URL: bbcURL, Site: "bbc.co.uk", Published: "2026-11-20T08:00:00Z"},
		{N: 2, Title: "ESA picks landing site for Mars rover", URL: guardianURL, Site: "The Guardian", Published: "2026-11-19T12:30:00Z"},
	}
	if !slices.Equal(res.Sources, wantSources) {
		t.Errorf("sources %+v, want the two cited: %+v", res.Sources, wantSources)
	}
}

func TestLookupQueryUsesTheConversation(t *testing.T) {
	g := webGate(false)
	a, fake := newAgent(t, g, 32768, planStep(marsPlan), answerStep(marsAnswer),
		fakellm.Step{
			Match: func(r fakellm.Request) bool {
				return r.ResponseFormat == "json_schema" && strings.Contains(r.Messages[0].Content, "Classify") &&
					strings.Contains(r.Messages[0].Content, "came from a web search")
			},
			Reply: fakellm.Reply{Content: `{"route":"lookup"}`},
		},
		planStep(`{"query":"Mars mission news 20 November 2026","recency":"day","news":true}`),
		answerStep("Nothing new happened that day, the sources say [1]."))
	if _, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{}); err != nil {
		t.Fatal(err)
	}
	res, err := a.Turn(context.Background(), "and what about yesterday?", "", agent.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Route != agent.RouteLookup {
		t.Errorf("route %s", res.Route)
	}
	plan := fake.Requests()[3].Messages[1].Content
	if !strings.Contains(plan, "user: "+newsQuestion) || !strings.Contains(plan, "assistant: "+marsAnswer) || !strings.HasSuffix(plan, "Latest message: and what about yesterday?") {
		t.Errorf("the plan request lacks the conversation:\n%s", plan)
	}
	searches := g.callsOf("web_search")
	if len(searches) != 2 || argsOf(t, searches[1]).Query != "Mars mission news 20 November 2026" {
		t.Errorf("web_search calls %+v", searches)
	}
}

func TestLookupRewritesADump(t *testing.T) {
	copied := "As reported [1]: " + strings.Join(strings.Fields(bbcText)[:45], " ")
	tests := []struct {
		name        string
		first       string
		wantProblem string // "" when the first answer is kept
	}{
		{"good answer is kept", marsAnswer, ""},
		{"no citations", "NASA delayed the mission and ESA chose a site.", "cites no source"},
		{"copied passage", copied, "copies a long passage of source [1]"},
		{"list of links", "[1] " + bbcURL + "\n[2] " + guardianURL + "\n[3] " + reutersURL, "is mostly a list of links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const rewritten = "In short: NASA delayed the return by two years [1]."
			steps := []fakellm.Step{planStep(marsPlan), answerStep(tt.first)}
			if tt.wantProblem != "" {
				steps = append(steps, fakellm.Step{
					Match: func(r fakellm.Request) bool {
						last := r.Messages[len(r.Messages)-1]
						return isAnswer(r) && len(r.Messages) == 4 && r.Messages[2].Content == tt.first &&
							strings.HasPrefix(last.Content, "Your answer "+tt.wantProblem)
					},
					Reply: fakellm.Reply{Content: rewritten},
				})
			}
			g := webGate(false)
			a, fake := newAgent(t, g, 32768, steps...)
			var streamed strings.Builder
			res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{Content: func(s string) { streamed.WriteString(s) }})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.first
			if tt.wantProblem != "" {
				want = rewritten
			}
			if res.Answer != want || streamed.String() != want {
				t.Errorf("answer %q, streamed %q, want %q", res.Answer, streamed.String(), want)
			}
			if n := len(fake.Requests()); n != len(steps) {
				t.Errorf("%d requests, want %d", n, len(steps))
			}
			if n := len(g.callsOf("web_search")); n != 1 {
				t.Errorf("%d searches", n)
			}
		})
	}
}

// searched returns an agent that answered newsQuestion from marsSources,
// citing the BBC [1] and the Guardian [2], with steps to come.
func searched(t *testing.T, g *gate, steps ...fakellm.Step) (*agent.Agent, *fakellm.Server) {
	t.Helper()
	a, fake := newAgent(t, g, 32768, append([]fakellm.Step{planStep(marsPlan), answerStep(marsAnswer)}, steps...)...)
	if res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{}); err != nil || len(res.Sources) != 2 {
		t.Fatalf("the first lookup: %v, %+v", err, res)
	}
	return a, fake
}

const rovingText = "A guide to the rover's landing site: Oxia Planum is a plain of clay minerals about three billion years old. " +
	"Mission planners say its flat ground lowers the risk of landing, and that the rocks hold the best chance of preserved organic matter."

// relatedResults is what the search by the Guardian article's title finds:
// the article itself again, and one more.
func relatedResults() toolgate.Result {
	return searchResult(
		webSource{N: 1, Title: "ESA picks landing site for Mars rover", URL: guardianURL, Site: "The Guardian", Content: guardianText, Status: "read"},
		webSource{N: 2, Title: "Oxia Planum, explained", URL: "https://www.space.com/oxia-planum", Site: "space.com", Content: rovingText, Status: "read"},
	)
}

func TestFollowUpReadsTheSourceAndSearchesRelated(t *testing.T) {
	g := webGate(false)
	const pageText = "Full article: the European Space Agency has picked Oxia Planum for the Rosalind Franklin rover. " +
		"The rover launches in 2028 and lands in 2030; its drill reaches two metres down, deeper than any rover before it."
	a, fake := searched(t, g, answerStep("The rover launches in 2028 [1], and the site is three billion years old [2]."))
	g.answers["web_read"] = toolgate.Result{Status: "ok", Text: "Title: ESA picks landing site for Mars rover\n\n" + pageText,
		Structured: map[string]any{"title": "ESA picks landing site for Mars rover", "url": guardianURL, "site": "The Guardian", "content": pageText}}
	g.answers["web_search"] = relatedResults()

	res, err := a.Turn(context.Background(), "tell me more about the second one", "", agent.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Route != agent.RouteLookup {
		t.Errorf("route %s", res.Route)
	}
	reads := g.callsOf("web_read")
	var readArgs struct {
		URL       string `json:"url"`
		MaxLength int    `json:"max_length"`
	}
	if len(reads) != 1 || json.Unmarshal(reads[0].Args, &readArgs) != nil || readArgs.URL != guardianURL || readArgs.MaxLength <= 0 {
		t.Fatalf("web_read calls %+v, want one of %s", reads, guardianURL)
	}
	searches := g.callsOf("web_search")
	if len(searches) != 2 {
		t.Fatalf("%d searches in all, want one per turn", len(searches))
	}
	if got := argsOf(t, searches[1]); got.Query != "ESA picks landing site for Mars rover" || !got.News {
		t.Errorf("the related search %+v, want the source's title in news mode", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests: the follow-up should need only the answer", len(reqs))
	}
	prompt := reqs[2].Messages[1].Content
	if !strings.Contains(prompt, "[1] ESA picks landing site for Mars rover — The Guardian — 19 November 2026\n"+pageText) ||
		!strings.Contains(prompt, "[2] Oxia Planum, explained — space.com") || strings.Contains(prompt, "[3]") {
		t.Errorf("the answer prompt, want the page as [1] and the one related article as [2]:\n%s", prompt)
	}
	if len(res.Sources) != 2 || res.Sources[0].URL != guardianURL || res.Sources[1].Site != "space.com" {
		t.Errorf("sources %+v", res.Sources)
	}
}

func TestFollowUpPicksTheSource(t *testing.T) {
	tests := []struct {
		name, msg, wantURL string
	}{
		{"ordinal word", "tell me more about the second one", guardianURL},
		{"citation mark", "more on [1] please", bbcURL},
		{"numbered", "what does number 2 say?", guardianURL},
		{"site name", "open the BBC one", bbcURL},
		{"publisher name", "what does the guardian article say about the drill?", guardianURL},
		{"title words", "what does the article say about the landing site?", guardianURL},
		{"nothing named", "what else do we know about that?", bbcURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := webGate(false)
			a, _ := searched(t, g, answerStep("More [1]."))
			g.answers["web_read"] = toolgate.Result{Status: "ok", Text: "Title: x\n\n" + rovingText}
			g.answers["web_search"] = relatedResults()
			if _, err := a.Turn(context.Background(), tt.msg, "", agent.Events{}); err != nil {
				t.Fatal(err)
			}
			reads := g.callsOf("web_read")
			if len(reads) != 1 || !strings.Contains(string(reads[0].Args), `"url":"`+tt.wantURL+`"`) {
				t.Errorf("web_read calls %+v, want %s", reads, tt.wantURL)
			}
		})
	}
}

func TestUnusablePages(t *testing.T) {
	t.Run("a search that found only walls", func(t *testing.T) {
		g := webGate(false)
		g.answers["web_search"] = searchResult(
			webSource{N: 1, Title: "Before you continue", URL: wallURL, Site: "example.com", Status: "unusable: consent wall"},
			webSource{N: 2, Title: "Mars", URL: "https://x.example/mars", Site: "x.example", Status: "failed: timed out"},
		)
		a, fake := newAgent(t, g, 32768, planStep(marsPlan))
		res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Answer, "none of them could be read") || !strings.Contains(res.Answer, "consent wall") || len(res.Sources) != 0 {
			t.Errorf("answer %q, sources %+v", res.Answer, res.Sources)
		}
		if n := len(fake.Requests()); n != 1 {
			t.Errorf("%d requests: nothing should be summarized", n)
		}
	})
	t.Run("a followed-up page behind a consent wall", func(t *testing.T) {
		g := webGate(false)
		a, fake := searched(t, g, answerStep("The page could not be read, but related coverage says the site is old [1]."))
		g.answers["web_read"] = toolgate.Result{Status: "error", IsError: true, Text: "unusable: consent wall (the page asks to accept cookies)"}
		g.answers["web_search"] = relatedResults()
		res, err := a.Turn(context.Background(), "tell me more about the second one", "", agent.Events{})
		if err != nil {
			t.Fatal(err)
		}
		prompt := fake.Requests()[2].Messages[1].Content
		if !strings.Contains(prompt, "could not be read (consent wall (the page asks to accept cookies))") ||
			!strings.Contains(prompt, "do not say that the article has no details") ||
			!strings.Contains(prompt, "[1] Oxia Planum, explained") || strings.Contains(prompt, guardianText) {
			t.Errorf("the answer prompt:\n%s", prompt)
		}
		if len(res.Sources) != 1 || res.Sources[0].Site != "space.com" {
			t.Errorf("sources %+v", res.Sources)
		}
	})
	t.Run("an unmarked wall and nothing related", func(t *testing.T) {
		g := webGate(false)
		a, fake := searched(t, g)
		g.answers["web_read"] = toolgate.Result{Status: "ok", Text: "Title: The Guardian\nURL: " + guardianURL + "\n\nWe value your privacy. We and our partners use cookies. Accept all cookies or manage your privacy settings. " + strings.Repeat("Partner list. ", 20)}
		g.answers["web_search"] = searchResult()
		res, err := a.Turn(context.Background(), "tell me more about the second one", "", agent.Events{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Answer, "could not read") || !strings.Contains(res.Answer, "consent or login wall") || strings.Contains(res.Answer, "no details") {
			t.Errorf("answer %q", res.Answer)
		}
		if n := len(fake.Requests()); n != 2 {
			t.Errorf("%d requests: nothing should be summarized", n)
		}
	})
}

func TestFollowUpInTheBrowser(t *testing.T) {
	g := webGate(true)
	a, fake := searched(t, g, answerStep("The rover drills two metres down [1]."))
	g.answers["browser_get_text"] = toolgate.Result{Status: "ok", Text: guardianText + " " + rovingText}
	g.answers["web_search"] = relatedResults()
	if _, err := a.Turn(context.Background(), "tell me more about the second one", "", agent.Events{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range g.calls {
		names = append(names, c.Name)
	}
	if want := []string{"web_search", "browser_navigate", "browser_get_text", "web_search"}; !slices.Equal(names, want) {
		t.Errorf("calls %q, want %q", names, want)
	}
	if nav := g.callsOf("browser_navigate"); len(nav) != 1 || string(nav[0].Args) != `{"url":"`+guardianURL+`"}` {
		t.Errorf("browser_navigate %+v", nav)
	}
	if prompt := fake.Requests()[2].Messages[1].Content; !strings.Contains(prompt, "[1] ESA picks landing site for Mars rover — The Guardian — 19 November 2026\n"+guardianText+" "+rovingText) {
		t.Errorf("the answer prompt lacks the page read in the browser:\n%s", prompt)
	}
}

func TestSearchDeniedSaysSoAndStops(t *testing.T) {
	g := webGate(false)
	g.answers["web_search"] = toolgate.Result{Status: "denied", IsError: true, Text: "web_search was denied: it needs the user's permission (web: ask) and there is no terminal to ask on."}
	a, fake := newAgent(t, g, 32768, planStep(marsPlan))
	res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{})
	if err != nil {
		t.Fatal(err)
	}
	want := `The web search for "Mars mission news November 2026" was not allowed: web_search was denied: it needs the user's permission (web: ask) and there is no terminal to ask on.`
	if res.Answer != want || len(g.calls) != 1 || len(fake.Requests()) != 1 || res.Stopped != "" {
		t.Errorf("answer %q, %d calls, %d requests, stopped %q", res.Answer, len(g.calls), len(fake.Requests()), res.Stopped)
	}
}

func TestSearchCancelledAtThePrompt(t *testing.T) {
	g := webGate(false)
	g.answers["web_search"] = toolgate.Result{Status: "canceled", IsError: true, Cancel: true, Text: "cancelled"}
	a, fake := newAgent(t, g, 32768, planStep(marsPlan))
	res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{})
	if err != nil || res.Stopped != "cancelled" || len(fake.Requests()) != 1 {
		t.Errorf("err %v, stopped %q, %d requests", err, res.Stopped, len(fake.Requests()))
	}
}

func TestSearchSourcesFromTheText(t *testing.T) {
	g := webGate(false)
	list, _ := json.Marshal([]webSource{
		{N: 1, Title: "NASA delays Mars sample return", URL: bbcURL, Site: "bbc.co.uk", Snippet: "NASA delays its Mars sample return by two years.", Status: "read"},
	})
	g.answers["web_search"] = toolgate.Result{Status: "ok", Text: "1 result\n\n[1] NASA delays Mars sample return\n\nSOURCES_JSON\n" + string(list) + "\n"}
	a, fake := newAgent(t, g, 32768, planStep(marsPlan), answerStep("Delayed by two years [1]."))
	res, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if prompt := fake.Requests()[1].Messages[1].Content; !strings.Contains(prompt, "[1] NASA delays Mars sample return — bbc.co.uk — date unknown (the search engine's summary; the page was not read)\nNASA delays its Mars sample return by two years.") {
		t.Errorf("the answer prompt:\n%s", prompt)
	}
	if len(res.Sources) != 1 || res.Sources[0].URL != bbcURL {
		t.Errorf("sources %+v", res.Sources)
	}
}

func TestLookupWithoutTheWebServerRunsTheToolLoop(t *testing.T) {
	g := newGate("read_text_file")
	a, _ := newAgent(t, g, 32768, text("I cannot search the web."))
	res, err := a.Turn(context.Background(), "mars news", agent.RouteLookup, agent.Events{})
	if err != nil || res.Route != agent.RouteTools || len(g.calls) != 0 {
		t.Errorf("err %v, route %s, calls %+v", err, res.Route, g.calls)
	}
}

func TestSourcesAreDroppedOnReset(t *testing.T) {
	g := webGate(false)
	a, _ := searched(t, g,
		fakellm.Step{Match: func(r fakellm.Request) bool { return strings.Contains(r.Messages[0].Content, "Classify") }, Reply: fakellm.Reply{Content: `{"route":"chat"}`}},
		text("Which one?"))
	a.Reset()
	res, err := a.Turn(context.Background(), "tell me more about the second one", "", agent.Events{})
	if err != nil || res.Route != agent.RouteChat || len(g.callsOf("web_read")) != 0 {
		t.Errorf("after reset: err %v, route %s, calls %+v", err, res.Route, g.calls)
	}
}

func TestSourcesFitTheContext(t *testing.T) {
	g := webGate(false)
	long := strings.Repeat("The rover drives on. ", 2000) // 42,000 bytes
	g.answers["web_search"] = searchResult(
		webSource{N: 1, Title: "Long one", URL: "https://a.example/1", Site: "a.example", Content: long, Status: "read"},
		webSource{N: 2, Title: "Long two", URL: "https://b.example/2", Site: "b.example", Content: long, Status: "read"},
		webSource{N: 3, Title: "Short", URL: "https://c.example/3", Site: "c.example", Content: reutersText, Status: "read"},
	)
	a, fake := newAgent(t, g, 8192, planStep(marsPlan), answerStep("It drives [1][2][3]."))
	if _, err := a.Turn(context.Background(), newsQuestion, "", agent.Events{}); err != nil {
		t.Fatal(err)
	}
	prompt := fake.Requests()[1].Messages[1].Content
	// At three bytes a token, the prompt and two answers of 1,024 tokens
	// (the first and a rewrite) fit the window.
	if tokens := len(prompt) / 3; tokens+2*1024 > 8192 {
		t.Errorf("the answer prompt is up to %d tokens, too many for a window of 8192", tokens)
	}
	if !strings.Contains(prompt, reutersText) {
		t.Error("the short source was cut")
	}
	one := strings.Index(prompt, "[2] Long two")
	if one < 0 || strings.Count(prompt[:one], "drives on") < 100 || strings.Count(prompt[one:], "drives on") < 100 {
		t.Errorf("the budget is not shared between the long sources")
	}
}

func TestFollowUpRouting(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want agent.Route
	}{
		{"ordinal", "tell me more about the second one", agent.RouteLookup},
		{"more on that", "more on that", agent.RouteLookup},
		{"what else", "what else do we know about that?", agent.RouteLookup},
		{"site", "open the BBC one", agent.RouteLookup},
		{"citation", "what does [2] say about the drill?", agent.RouteLookup},
		{"small talk", "thanks!", agent.RouteChat},
		{"an action", "open the downloads folder", agent.RouteTools},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := webGate(false)
			a, fake := searched(t, g)
			g.answers["web_read"] = toolgate.Result{Status: "ok", Text: rovingText}
			g.answers["web_search"] = searchResult()
			fake.SetFallback(fakellm.Reply{Content: "An answer [1]."})
			res, err := a.Turn(context.Background(), tt.msg, "", agent.Events{})
			if err != nil || res.Route != tt.want {
				t.Errorf("route %s (%v), want %s", res.Route, err, tt.want)
			}
		})
	}
}
