package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/domo-agent/domo/host/llm"
	"github.com/domo-agent/domo/host/mcpclient"
	"github.com/domo-agent/domo/host/toolgate"
)

// The lookup path: the model turns the message into one web_search, the
// web server searches and reads the top pages, and a separate request
// answers from those pages alone, citing them by number. A follow-up on an
// earlier answer reads the source it is about and searches for related
// coverage instead. Every call goes through the gate and is shown to the
// user like the model's own calls: the user asked for the web.

// The servers and tools of the lookup path.
const (
	webServer     = "web"
	searchTool    = "web_search"
	readTool      = "web_read"
	browserServer = "browser"
	navigateTool  = "browser_navigate"
	getTextTool   = "browser_get_text"
)

// searchResults is how many results one web_search asks for; maxQuery
// bounds its query, in bytes.
const (
	searchResults = 5
	maxQuery      = 300
)

// Source is a web page a lookup's answer drew on, as listed under it.
type Source struct {
	// N is the number the answer cites it by, as in [2].
	N     int    `json:"n"`
	Title string `json:"title"`
	URL   string `json:"url"`
	// Site is the site's host or the publisher's name.
	Site string `json:"site"`
	// Published is RFC 3339, empty when unknown.
	Published string `json:"published,omitempty"`
}

// lookupState is what the last lookup listed, kept for follow-ups until
// the conversation is reset.
type lookupState struct {
	sources []Source
	news    bool
}

// searchPlan is the web search the model wrote for a message.
type searchPlan struct {
	Query   string `json:"query"`
	Recency string `json:"recency"`
	News    bool   `json:"news"`
}

// offeredTool returns the offered tool of server named name.
func offeredTool(tools []mcpclient.Tool, server, name string) (mcpclient.Tool, bool) {
	for _, t := range tools {
		if t.Server == server && t.Tool.Name == name {
			return t, true
		}
	}
	return mcpclient.Tool{}, false
}

// lookup answers a message from the web: a follow-up on the last lookup's
// sources, or a new search.
func (t *turn) lookup(ctx context.Context, text string, tools []mcpclient.Tool) error {
	t.msgs = []llm.Message{{Role: llm.RoleUser, Content: text}}
	t.result.Rounds = 1
	t.agent.mu.Lock()
	prev := t.agent.lookup
	t.agent.mu.Unlock()
	if len(prev.sources) > 0 && isFollowUp(text) {
		return t.followUp(ctx, text, tools, prev)
	}
	plan, err := t.plan(ctx, text)
	if err != nil {
		t.commit("")
		return err
	}
	if plan.Query == "" {
		return t.say("I could not turn your message into a web search: the model's answer was not the search asked for. Try /search with the words to look for.")
	}
	res, found := t.search(ctx, tools, plan)
	if stop, err := t.interrupted(ctx, res); stop {
		return err
	}
	if res.IsError || res.Status != "ok" {
		return t.say(fmt.Sprintf("The web search for %q %s", plan.Query, failure(res)))
	}
	pages := usablePages(found.pages())
	if len(pages) == 0 {
		return t.say(nothingUsable(plan.Query, found))
	}
	question := fmt.Sprintf("%s\n(Searched the web for: %s)", text, plan.Query)
	return t.answer(ctx, question, pages, plan.News, "")
}

// followUp answers a question about one of the last lookup's sources: it
// reads that page and searches for related coverage by its title, then
// answers from both, the page first.
func (t *turn) followUp(ctx context.Context, text string, tools []mcpclient.Tool, prev lookupState) error {
	src := pickSource(text, prev.sources)
	read, res := t.readPage(ctx, tools, src)
	if stop, err := t.interrupted(ctx, res); stop {
		return err
	}
	query := src.Title
	if query == "" {
		query = src.Site
	}
	res, found := t.search(ctx, tools, searchPlan{Query: query, News: prev.news})
	if stop, err := t.interrupted(ctx, res); stop {
		return err
	}
	var related []page
	if !res.IsError && res.Status == "ok" {
		for _, p := range found.pages() {
			if p.URL != src.URL {
				related = append(related, p)
			}
		}
	}
	pages := usablePages(append([]page{read}, related...))
	about := fmt.Sprintf("%q (%s)", src.Title, src.Site)
	if len(pages) == 0 {
		return t.say(fmt.Sprintf("I could not read %s: %s. The search for related coverage found nothing readable either, so I cannot say more about it.", about, read.unusable))
	}
	question := fmt.Sprintf("%s\n(The user is asking about the article %s.)", text, about)
	note := ""
	if read.unusable != "" {
		note = fmt.Sprintf("The article %s itself could not be read (%s): say so plainly, then answer from the related coverage; do not say that the article has no details.", about, read.unusable)
	}
	return t.answer(ctx, question, pages, prev.news, note)
}

// interrupted ends the turn when the user cancelled it at a prompt or
// with Ctrl-C, and reports whether it did.
func (t *turn) interrupted(ctx context.Context, res toolgate.Result) (bool, error) {
	switch {
	case res.Cancel:
		t.result.Stopped = "cancelled"
		t.commit("(The user cancelled this task at a permission prompt.)")
		return true, nil
	case ctx.Err() != nil:
		t.commit("(The user interrupted this task.)")
		return true, ctx.Err()
	}
	return false, nil
}

// say ends the turn with a message of the host's own, shown like an
// answer.
func (t *turn) say(msg string) error {
	if t.ev.Content != nil {
		t.ev.Content(msg)
	}
	t.result.Answer = msg
	t.commit(msg)
	return nil
}

// failure says, after "the web search for …", how a call that did not
// return results ended.
func failure(res toolgate.Result) string {
	first, _, _ := strings.Cut(strings.TrimSpace(res.Text), "\n")
	switch res.Status {
	case "denied", "blocked":
		return "was not allowed: " + first
	case "canceled":
		return "was cancelled."
	}
	return "failed: " + first
}

// nothingUsable says why a search that ran left nothing to answer from.
func nothingUsable(query string, found searchOutcome) string {
	if len(found.Sources) == 0 {
		msg := fmt.Sprintf("The web search for %q found no results.", query)
		if len(found.Notes) > 0 {
			msg += " " + strings.Join(found.Notes, " ")
		}
		return msg
	}
	var why []string
	for _, p := range found.pages() {
		why = append(why, fmt.Sprintf("%s (%s): %s", p.Title, p.Site, p.unusable))
	}
	return fmt.Sprintf("The web search for %q found %d pages, but none of them could be read, so I cannot answer from them:\n- %s",
		query, len(found.Sources), strings.Join(why, "\n- "))
}

var planSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"query":{"type":"string"},` +
	`"recency":{"type":"string","enum":["","day","week","month","year"]},` +
	`"news":{"type":"boolean"}},` +
	`"required":["query","recency","news"],"additionalProperties":false}`)

const planSystem = `You write web searches for Domo, a personal assistant. Turn the user's latest message into one search-engine query. Answer JSON {"query": ..., "recency": ..., "news": ...}.
"query": the few words a search engine needs, complete on their own: resolve what the message refers to from the conversation (names, places, topics), and turn relative dates like "yesterday" into dates. Leave out anything private the search does not need.
"recency": "day", "week", "month" or "year" when the answer must be that recent, else "".
"news": true when the message is about news or current events.`

// plan asks the model for the web search that answers the message, given
// the end of the conversation so that "and yesterday?" becomes a whole
// query. The message itself is never sent as the query: a plan with no
// query comes back empty.
func (t *turn) plan(ctx context.Context, text string) (searchPlan, error) {
	system := planSystem + fmt.Sprintf("\nThe current time is %s.", t.agent.opts.Now().Format("Monday 2 January 2006, 15:04 MST"))
	if t.memory != "" {
		system += "\n\n" + memorySystem + "\n" + t.memory
	}
	prompt := "Latest message: " + text
	if recent := t.agent.recentContext(); recent != "" {
		prompt = "The conversation so far:\n" + recent + "\n" + prompt
	}
	zero := 0.0
	resp, err := t.agent.opts.Model.Chat(ctx, llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: prompt},
		},
		JSONSchema:  planSchema,
		MaxTokens:   200,
		Temperature: &zero,
	}, nil)
	if err != nil {
		return searchPlan{}, fmt.Errorf("write the web search: %w", err)
	}
	t.add(resp.Usage)
	return parsePlan(resp.Message.Content), nil
}

// parsePlan reads the model's search, tolerating a fence or prose around
// the JSON object; an unknown recency is dropped.
func parsePlan(content string) searchPlan {
	content = strings.TrimSpace(content)
	if i, j := strings.Index(content, "{"), strings.LastIndex(content, "}"); i >= 0 && j > i {
		content = content[i : j+1]
	}
	var p searchPlan
	if json.Unmarshal([]byte(content), &p) != nil {
		return searchPlan{}
	}
	p.Query = cutBytes(oneLine(p.Query), maxQuery)
	switch p.Recency {
	case "day", "week", "month", "year":
	default:
		p.Recency = ""
	}
	return p
}

// recentTurns is how many of the last turns the search writer reads.
const recentTurns = 3

// recentContext is the end of the conversation for the model that writes
// the search: the summary and the last turns' messages and answers,
// without tool calls and results.
func (a *Agent) recentContext() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	if a.history.summary != "" {
		b.WriteString("(earlier) " + clipText(a.history.summary, 600) + "\n")
	}
	turns := a.history.turns[max(0, len(a.history.turns)-recentTurns):]
	for _, turn := range turns {
		for _, m := range turn {
			if m.Role == llm.RoleTool || len(m.ToolCalls) > 0 {
				continue
			}
			b.WriteString(transcriptLine(m, 500))
		}
	}
	return b.String()
}

// search makes the turn's web_search call and decodes what it found.
func (t *turn) search(ctx context.Context, tools []mcpclient.Tool, p searchPlan) (toolgate.Result, searchOutcome) {
	tool, ok := offeredTool(tools, webServer, searchTool)
	if !ok {
		return toolgate.Result{Status: "blocked", IsError: true, Text: "the web server is not running"}, searchOutcome{}
	}
	args := map[string]any{"query": cutBytes(p.Query, maxQuery), "max_results": searchResults, "auto_read": true, "news": p.News}
	if p.Recency != "" {
		args["recency"] = p.Recency
	}
	res := t.lookupCall(ctx, tool, args)
	if res.IsError || res.Status != "ok" {
		return res, searchOutcome{}
	}
	return res, decodeSearch(res)
}

// readPage reads a source for a follow-up: in the browser when its
// server's tools are offered (falling back to web_read when the browser
// fails), else with web_read. The page comes back unusable, with the
// reason, when it could not be read or is not an article. The result is
// the last call's, for the caller to see a cancel.
func (t *turn) readPage(ctx context.Context, tools []mcpclient.Tool, src Source) (page, toolgate.Result) {
	p := page{Source: src}
	maxLen := min(t.agent.sourceBudget(ctx)/2, maxReadLength)
	nav, okNav := offeredTool(tools, browserServer, navigateTool)
	get, okGet := offeredTool(tools, browserServer, getTextTool)
	read, okRead := offeredTool(tools, webServer, readTool)
	if okNav && okGet {
		res := t.lookupCall(ctx, nav, map[string]any{"url": src.URL})
		if !res.IsError && res.Status == "ok" {
			res = t.lookupCall(ctx, get, map[string]any{})
		}
		p.content, p.unusable = browserText(res, maxLen)
		// A browser that failed leaves the page to web_read; one the
		// user refused does not.
		failed := res.IsError && res.Status != "denied" && !res.Cancel
		if !failed || !okRead || ctx.Err() != nil {
			return p, res
		}
	}
	if !okRead {
		p.unusable = "no tool to read pages is offered"
		return p, toolgate.Result{Status: "ok"}
	}
	res := t.lookupCall(ctx, read, map[string]any{"url": src.URL, "max_length": maxLen})
	var got webPage
	got, p.unusable = decodeRead(res)
	p.content = got.Content
	p.fill(got)
	return p, res
}

// lookupCall makes one of the lookup's calls through the gate, telling the
// events as the tool loop does for the model's calls, and records it. The
// calls are the path's fixed steps, not the model's choice of tools, so
// intent mode, which bounds that choice, does not apply; policy does.
func (t *turn) lookupCall(ctx context.Context, tool mcpclient.Tool, args map[string]any) toolgate.Result {
	raw, _ := json.Marshal(args)
	return t.gateCall(ctx, ToolCall{Name: tool.Name, Args: string(raw)}, nil)
}
