package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/domo-agent/domo/tests/fakellm"
	"github.com/domo-agent/domo/tests/testenv"
)

// TestBrowserThroughTheHost: `domo ask` drives domo-browser in a real
// Chromium through the gate: the model opens a local page, clicks the ref
// the snapshot gave it, and answers from what the click changed; the audit
// log holds both calls. Without --allow, the browser group asks, and with
// no terminal to ask, nothing is opened.
func TestBrowserThroughTheHost(t *testing.T) {
	requireChromium(t)
	var visits int
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		visits++
		fmt.Fprint(w, `<!doctype html><title>Kettle</title><h1>Kettle settings</h1>`+
			`<button onclick="document.getElementById('s').textContent='Boil scheduled for 07:00'">Save</button><p id="s">Nothing saved</p>`)
	}))
	defer site.Close()
	fake := fakellm.New(t)
	h := newHostHome(t, fake.URL, map[string]any{
		"browser": map[string]any{"command": testenv.Binary(t, "domo-browser"), "args": []string{}},
	}, nil)
	reRef := regexp.MustCompile(`button "Save" \[ref=(e\d+)\]`)
	click := fakellm.Step{Respond: func(r fakellm.Request) fakellm.Reply {
		m := reRef.FindStringSubmatch(toolResult(r))
		if m == nil {
			return fakellm.Reply{Content: "no Save button in: " + toolResult(r)}
		}
		return fakellm.Reply{ToolCalls: []fakellm.Call{{ID: "call_2", Name: "browser_click", Arguments: `{"ref":"` + m[1] + `"}`}}}
	}}
	ask := "use the browser: open " + site.URL + "/ and press the Save button"

	fake.Push(llmToolCall("browser_navigate", `{"url":"`+site.URL+`/"}`), click, fakellm.Step{Respond: echoResult})
	out, errOut, code := h.run(t, "", "ask", "--allow", "browser", ask)
	if code != 0 || !strings.Contains(out, "Boil scheduled for 07:00") || !strings.Contains(out, `Clicked button "Save"`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	before := visits
	fake.Push(llmToolCall("browser_navigate", `{"url":"`+site.URL+`/"}`), fakellm.Step{Respond: echoResult})
	out, _, _ = h.run(t, "", "ask", ask)
	if !strings.Contains(out, "--allow browser") || visits != before {
		t.Errorf("without --allow the page was opened (%d visits) or the model was not told why:\n%s", visits-before, out)
	}

	want := []string{
		"session_start",
		"permission_decision browser_navigate allow/policy", "tool_call_start browser_navigate", "tool_call_end browser_navigate ok",
		"permission_decision browser_click allow/policy", "tool_call_start browser_click", "tool_call_end browser_click ok",
		"session_start",
		"permission_decision browser_navigate deny/no_terminal denied",
	}
	if got := h.events(t); !slices.Equal(got, want) {
		t.Errorf("audit events:\n got %q\nwant %q", got, want)
	}
}
