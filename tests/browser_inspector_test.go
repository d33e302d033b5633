package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/domo-agent/domo/tests/testenv"
)

// browserTools are the tools domo-browser offers without --enable-evaluate.
var browserTools = []string{
	"browser_back", "browser_click", "browser_console_messages", "browser_fill_form", "browser_find",
	"browser_get_text", "browser_get_url", "browser_handle_dialog", "browser_hover", "browser_navigate",
	"browser_network_requests", "browser_press_key", "browser_screenshot", "browser_select_option",
	"browser_snapshot", "browser_tabs", "browser_type", "browser_wait_for",
}

// requireChromium returns the browser domo-browser is to drive, or ends the
// test through testenv.Missing: $DOMO_BROWSER_CHROME when set, else the
// executables the server looks for, Debian's /usr/bin/chromium first.
func requireChromium(t *testing.T) string {
	t.Helper()
	names := []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	if p := os.Getenv("DOMO_BROWSER_CHROME"); p != "" {
		// The one the user chose, or none.
		names = []string{p}
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "Chromium", "Debian package chromium, or DOMO_BROWSER_CHROME; domo-browser drives it")
	return ""
}

// harbourSite serves a page with a heading, a labelled text field, a button
// whose onclick changes the page's text, and a link.
func harbourSite(t *testing.T) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>Harbour notes</title>
<h1>Harbour notes</h1>
<label for="ferry">Ferry name</label> <input id="ferry">
<button onclick="document.getElementById('status').textContent = 'Timetable saved'">Save timetable</button>
<p id="status">Nothing saved yet</p>
<a href="/about">About the harbour</a>`)
		case "/about":
			fmt.Fprint(w, `<!doctype html><title>About</title><h1>About the harbour</h1>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site
}

// inspectorResult decodes the Inspector's JSON answer to a tools/call: the text
// of its content and whether it is an isError result.
func inspectorResult(t *testing.T, out string) (string, bool) {
	t.Helper()
	var res struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(firstJSONLine(out)), &res); err != nil {
		t.Fatalf("tools/call output is not JSON: %v\n%s", err, out)
	}
	var text strings.Builder
	for _, c := range res.Result.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	return text.String(), res.Result.IsError
}

// browserCall runs one tools/call that must succeed and returns its text.
func browserCall(t *testing.T, target []string, tool, args string) string {
	t.Helper()
	out, code := inspect(t, target, "--method", "tools/call", "--tool-name", tool, "--tool-args-json", args)
	text, isErr := inspectorResult(t, out)
	if code != 0 || isErr {
		t.Fatalf("%s %s: exit %d, isError %v\n%s", tool, args, code, isErr, out)
	}
	return text
}

// toolNames lists the tools of a tools/list answer, sorted, and reports
// the schema problems the Inspector finds.
func toolNames(t *testing.T, out string) []string {
	t.Helper()
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
		SchemaFindings []any `json:"schemaFindings"`
	}
	if err := json.Unmarshal([]byte(firstJSONLine(out)), &list); err != nil {
		t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
	}
	for _, f := range list.SchemaFindings {
		t.Errorf("the Inspector finds a schema portability problem: %v", f)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// refOf finds the ref of the snapshot line with role and name.
func refOf(t *testing.T, snap, role, name string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)- ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=(e\d+)\]`)
	m := re.FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no %s %q with a ref in\n%s", role, name, snap)
	}
	return m[1]
}

func wantLines(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q\n%s", what, w, text)
		}
	}
}

// TestBrowserInspector drives domo-browser over stdio with the MCP
// Inspector CLI. Each Inspector call starts its own server, and so its own
// fresh browser: a call sees only what it opened itself.
func TestBrowserInspector(t *testing.T) {
	chrome := requireChromium(t)
	bin := testenv.Binary(t, "domo-browser")
	site := harbourSite(t)
	target := []string{bin, "--chrome", chrome}

	out, code := inspect(t, target, "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict: exit %d\n%s", code, out)
	}
	if names := toolNames(t, out); !slices.Equal(names, browserTools) {
		t.Errorf("tools = %v\nwant %v", names, browserTools)
	}
	out, code = inspect(t, append(slices.Clone(target), "--enable-evaluate"), "--method", "tools/list", "--strict")
	if code != 0 {
		t.Fatalf("tools/list --strict with --enable-evaluate: exit %d\n%s", code, out)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(browserTools), "browser_evaluate")))
	if names := toolNames(t, out); !slices.Equal(names, want) {
		t.Errorf("tools with --enable-evaluate = %v\nwant %v", names, want)
	}

	snap := browserCall(t, target, "browser_navigate", `{"url":"`+site.URL+`/"}`)
	wantLines(t, "browser_navigate", snap,
		"Harbour notes — "+site.URL+"/",
		`- heading "Harbour notes" [level=1]`,
		`- textbox "Ferry name" [ref=e`,
		`- button "Save timetable" [ref=e`,
		`- link "About the harbour" [ref=e`,
	)

	// A new server has a new browser, still on its blank start page.
	snap = browserCall(t, target, "browser_snapshot", `{}`)
	if strings.Contains(snap, "Harbour notes") {
		t.Errorf("a fresh server's snapshot shows the page an earlier server opened:\n%s", snap)
	}

	// The refusal is an isError result, which the Inspector reports with
	// exit code 5, not a broken connection.
	out, code = inspect(t, target, "--method", "tools/call", "--tool-name", "browser_navigate", "--tool-arg", "url=file:///etc/passwd")
	text, isErr := inspectorResult(t, out)
	if code != 5 || !isErr || !strings.Contains(text, "file:// URLs are refused") {
		t.Errorf("opening file:///etc/passwd: exit %d, isError %v, want 5 and a refusal\n%s", code, isErr, out)
	}
	if strings.Contains(text, "root:") {
		t.Errorf("the refusal leaked /etc/passwd:\n%s", text)
	}
}

// TestBrowserInspectorHTTP serves domo-browser over Streamable HTTP, so one
// server and one browser outlive the Inspector's calls: a page opened by one
// call is read, searched and clicked by the next, with the refs it gave out.
func TestBrowserInspectorHTTP(t *testing.T) {
	chrome := requireChromium(t)
	bin := testenv.Binary(t, "domo-browser")
	site := harbourSite(t)
	addr := startHTTPServer(t, bin, "--chrome", chrome, "--http", "127.0.0.1:0", "--no-auth")
	target := []string{"--transport", "http", "--server-url", "http://" + addr + "/mcp"}

	browserCall(t, target, "browser_navigate", `{"url":"`+site.URL+`/"}`)

	snap := browserCall(t, target, "browser_snapshot", `{}`)
	wantLines(t, "browser_snapshot", snap,
		`- heading "Harbour notes" [level=1]`,
		`- textbox "Ferry name" [ref=e`,
		`- link "About the harbour" [ref=e`,
	)
	button := refOf(t, snap, "button", "Save timetable")

	text := browserCall(t, target, "browser_get_text", `{}`)
	wantLines(t, "browser_get_text", text, "Harbour notes", "Nothing saved yet", "About the harbour")

	found := browserCall(t, target, "browser_find", `{"role":"button","name":"save"}`)
	wantLines(t, "browser_find", found, "1 matches", `button "Save timetable" [ref=`+button+`]`)
	if strings.Contains(found, "About the harbour") {
		t.Errorf("browser_find by role and name matched the link too:\n%s", found)
	}

	clicked := browserCall(t, target, "browser_click", `{"ref":"`+button+`"}`)
	wantLines(t, "browser_click", clicked, "+ paragraph: Timetable saved", "− paragraph: Nothing saved yet")
	text = browserCall(t, target, "browser_get_text", `{}`)
	if !strings.Contains(text, "Timetable saved") || strings.Contains(text, "Nothing saved yet") {
		t.Errorf("after the click the page reads:\n%s", text)
	}
}
