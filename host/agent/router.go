package agent

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/domo-agent/domo/host/llm"
	"github.com/domo-agent/domo/host/mcpclient"
)

// The router's cheap heuristics. A follow-up on the last lookup's sources
// goes back to lookup; a message that names an action on the computer, a
// path or a URL goes to the tools; small talk and questions about the
// world go to chat; the rest is classified by the model.
var (
	reGreeting = regexp.MustCompile(`(?i)^(hi|hello|hey|yo|thanks|thank you|thx|good (morning|afternoon|evening|night)|bye|goodbye|ok|okay|cool|great|nice)\b[\s!.,?]*\S{0,12}[\s!.?]*$`)
	rePath     = regexp.MustCompile(`(^|\s)(~/|/|\./|\.\./)[^\s]*|[\w-]+\.(txt|md|go|py|js|ts|json|csv|pdf|png|jpe?g|log|yaml|yml|toml|html|xml|sh|rs|c|h|cpp|java)\b`)
	reURL      = regexp.MustCompile(`(?i)\bhttps?://|\bwww\.[\w-]+\.\w+`)
	reAction   = regexp.MustCompile(`(?i)\b(read|open|list|show me|delete|remove|rename|move|copy|write|save|create|edit|append|find|search|grep|look (in|at|up|for)|browse|navigate|click|type|press|fill|screenshot|remember|recall|forget|run|launch|start|close|download|check (my|the)|organi[sz]e|directory|folder|files?|clipboard|desktop|window|app|speak|say|listen)\b`)
	reLookup   = regexp.MustCompile(`(?i)\b(news|latest|today'?s|this week|headlines?|current(ly)?|right now|weather|price of|stock|score|who won|what happened)\b`)
	reChatOnly = regexp.MustCompile(`(?i)^(what is|what are|what's|who (is|was)|why|explain|define|tell me (a|about)|how (do|does|did|can|to)|write (a|me a) (poem|story|haiku|joke|limerick)|translate|summari[sz]e this|can you explain)\b`)
)

// route chooses a message's path: heuristics first, then the model.
func (a *Agent) route(ctx context.Context, text string, tools []mcpclient.Tool, t *turn) (Route, string) {
	if len(tools) == 0 {
		return RouteChat, "no tools are available"
	}
	switch {
	case reGreeting.MatchString(text):
		return RouteChat, "small talk"
	case a.followsUp(text) && hasWeb(tools):
		return RouteLookup, "a follow-up on the earlier search results"
	case reURL.MatchString(text):
		return RouteTools, "the message names a URL"
	case rePath.MatchString(text):
		return RouteTools, "the message names a file or path"
	case reLookup.MatchString(text) && hasWeb(tools):
		return RouteLookup, "the message asks about current events"
	case reAction.MatchString(text):
		return RouteTools, "the message asks for an action"
	case reChatOnly.MatchString(text) && len(text) < 200:
		return RouteChat, "a question the model can answer alone"
	}
	return a.classify(ctx, text, tools, t)
}

// followsUp reports whether a message asks more about the sources the
// last lookup listed.
func (a *Agent) followsUp(text string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.lookup.sources) > 0 && isFollowUp(text)
}

func hasWeb(tools []mcpclient.Tool) bool {
	for _, t := range tools {
		if t.Server == "web" {
			return true
		}
	}
	return false
}

var routeSchema = json.RawMessage(`{"type":"object","properties":{"route":{"type":"string","enum":["chat","tools","lookup"]}},"required":["route"],"additionalProperties":false}`)

// classify asks the model to choose, with its answer constrained to the
// three routes. Anything unusable sends the message to the tool loop, which
// can still answer without calling a tool.
func (a *Agent) classify(ctx context.Context, text string, tools []mcpclient.Tool, t *turn) (Route, string) {
	var names []string
	for i, tool := range tools {
		if i == 40 {
			names = append(names, "…")
			break
		}
		names = append(names, tool.Name)
	}
	system := `Classify the user's message for an assistant on their computer. Answer JSON {"route": …} with one of:
"chat": conversation or knowledge the model has (no action, no files, no current events);
"tools": needs acting on or reading from the computer (files, apps, browser, memory, devices) with tools: ` + strings.Join(names, ", ") + `;
"lookup": needs current information from the web, or asks more about web search results given earlier.`
	a.mu.Lock()
	searched := len(a.lookup.sources) > 0
	a.mu.Unlock()
	if searched {
		system += "\nThe previous answer came from a web search: a message that continues it (\"and yesterday?\") is lookup too."
	}
	zero := 0.0
	req := llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: text},
		},
		JSONSchema:  routeSchema,
		MaxTokens:   20,
		Temperature: &zero,
	}
	resp, err := a.opts.Model.Chat(ctx, req, nil)
	if err != nil {
		return RouteTools, "the classification failed"
	}
	t.add(resp.Usage)
	var out struct {
		Route Route `json:"route"`
	}
	content := strings.TrimSpace(resp.Message.Content)
	if json.Unmarshal([]byte(content), &out) != nil {
		// A model that ignored the format may still have said a word.
		for _, r := range []Route{RouteChat, RouteLookup, RouteTools} {
			if strings.Contains(strings.ToLower(content), string(r)) {
				out.Route = r
				break
			}
		}
	}
	switch out.Route {
	case RouteChat, RouteTools, RouteLookup:
		return out.Route, "the model classified the message"
	}
	return RouteTools, "the classification was unclear"
}
