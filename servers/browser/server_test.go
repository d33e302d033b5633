package browser

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

// requireChrome skips loudly when no Chromium is installed, and fails
// under CI, where the browser tests must run.
func requireChrome(t testing.TB) {
	t.Helper()
	if _, err := FindChrome(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v; scripts/setup.sh installs chromium", err)
		}
		t.Skipf("SKIPPING BROWSER TEST: %v (run `go tool task setup` to install chromium)", err)
	}
}

// site serves the test pages.
func site(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/form", html(`<!doctype html><title>Order form</title>
<h1>Order</h1>
<form action="/submitted" method="get">
 <label>Name <input name="name" required></label>
 <label>Colour <select name="colour"><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select></label>
 <label><input type="checkbox" name="gift"> Gift wrap</label>
 <fieldset><legend>Size</legend>
  <label><input type="radio" name="size" value="s"> Small</label>
  <label><input type="radio" name="size" value="l"> Large</label>
 </fieldset>
 <button type="submit">Send order</button>
</form>`))
	mux.HandleFunc("/submitted", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		fmt.Fprintf(w, `<!doctype html><title>Thanks</title><h1>Thanks</h1><p id="r">name=%s colour=%s gift=%s size=%s</p>`,
			q.Get("name"), q.Get("colour"), q.Get("gift"), q.Get("size"))
	})
	mux.HandleFunc("/buttons", html(`<!doctype html><title>Buttons</title>
<button onclick="document.getElementById('out').textContent='Saved at noon'">Save</button>
<div id="out"></div>
<div onclick="this.textContent='Panel opened'" style="cursor:pointer">Open panel</div>
<button disabled>Locked</button>
<a href="/form">Go to the form</a>
<a href="/form" target="_blank">Form in a new tab</a>
<button onclick="alert('Hello from the page')">Alert me</button>
<button onclick="document.getElementById('c').textContent = confirm('Delete it?') ? 'deleted' : 'kept'">Delete</button>
<p id="c"></p>
<button onclick="document.getElementById('p').textContent = 'Hi ' + prompt('Your name?')">Ask name</button>
<p id="p"></p>
<input aria-label="Shortcut box" onkeydown="if (event.ctrlKey && event.key === 'k') document.getElementById('k').textContent = 'ctrl-k pressed'">
<p id="k"></p>
<a href="/file.txt" download>Get the file</a>`))
	mux.HandleFunc("/file.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Disposition", `attachment; filename="notes.txt"`)
		fmt.Fprint(w, "downloaded notes")
	})
	mux.HandleFunc("/frame", html(`<!doctype html><title>Outer</title><h1>Outer page</h1><iframe title="Inner form" src="/inner"></iframe>`))
	mux.HandleFunc("/inner", html(`<!doctype html><title>Inner</title><label>Card number <input id="card"></label><button onclick="document.body.append('card ok')">Check card</button>`))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(800 * time.Millisecond)
		fmt.Fprint(w, `<!doctype html><title>Slow</title><h1>Slow but here</h1>`)
	})
	mux.HandleFunc("/never", func(w http.ResponseWriter, r *http.Request) {
		// The document arrives, but an image never finishes, so the load
		// event never fires.
		fmt.Fprint(w, `<!doctype html><title>Never done</title><h1>Partly here</h1><img src="/hang" alt="stuck">`)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><title>Big</title><h1>Catalogue</h1><table>`)
		for i := range 2500 {
			// 8 nodes a row: 20,000 in all.
			fmt.Fprintf(&b, `<tr><td>Item %d</td><td><a href="/item/%d">Details %d</a></td><td><button>Buy %d</button></td></tr>`, i, i, i, i)
		}
		b.WriteString(`</table><footer><a href="/last">The very last link</a></footer>`)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, b.String())
	})
	mux.HandleFunc("/console", html(`<!doctype html><title>Console</title><script>
console.log('hello %s', 'console'); console.warn('careful'); fetch('/api/data?x=1').then(r => r.text());
setTimeout(() => { throw new Error('boom') }, 0);
</script><h1>Console page</h1>`))
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	mux.HandleFunc("/remember", html(`<!doctype html><title>Remember</title><p id="m"></p><script>
const v = localStorage.getItem('k');
document.getElementById('m').textContent = v ? 'remembered: ' + v : 'first visit';
localStorage.setItem('k', 'hello');
</script>`))
	mux.HandleFunc("/api/data", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"ok":true}`) })
	mux.HandleFunc("/", html(`<!doctype html><title>Home</title><h1>Home page</h1><p>Welcome.</p><a href="/buttons">Buttons</a>`))
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// newClient starts a server over a fresh browser with o.
func newClient(t testing.TB, o Options, evaluate bool) (*client.Client, *Browser) {
	t.Helper()
	requireChrome(t)
	b := New(o)
	t.Cleanup(b.Close)
	s := NewServer(b)
	s.Evaluate = evaluate
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	return mcpkittest.Client(t, srv), b
}

func call(t *testing.T, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	text, isErr := mcpkittest.CallText(t, c, name, args)
	if isErr {
		t.Fatalf("%s %v: %s", name, args, text)
	}
	return text
}

func callErr(t *testing.T, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	text, isErr := mcpkittest.CallText(t, c, name, args)
	if !isErr {
		t.Fatalf("%s %v: want an error, got\n%s", name, args, text)
	}
	return text
}

// ref finds the ref of the line with role and name in a snapshot.
func ref(t *testing.T, snap, role, name string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)- ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=(e\d+)\]`)
	m := re.FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no %s %q with a ref in\n%s", role, name, snap)
	}
	return m[1]
}

func mustContain(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("lacks %q in\n%s", w, text)
		}
	}
}

func TestToolDeclarations(t *testing.T) {
	s := NewServer(New(Options{}))
	s.Evaluate = true
	srv, err := s.MCP()
	if err != nil {
		t.Fatal(err)
	}
	mcpkittest.CheckAnnotations(t, srv)
	mcpkittest.Snapshot(t, srv)
	if n := len(srv.Tools); n != 19 {
		t.Errorf("%d tools with --enable-evaluate, want 19", n)
	}
	for _, tool := range srv.Tools {
		if err := tool.Verify(); err != nil {
			t.Error(err)
		}
	}
	off, _ := NewServer(New(Options{})).MCP()
	for _, tool := range off.Tools {
		if tool.Def.Name == "browser_evaluate" {
			t.Error("browser_evaluate is offered without --enable-evaluate")
		}
	}
}

func TestBadArguments(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{}, false)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"browser_navigate", map[string]any{"url": ""}, "url"},
		{"browser_navigate", map[string]any{"url": "file:///etc/passwd"}, "file:// URLs are refused"},
		{"browser_navigate", map[string]any{"url": "javascript:alert(1)"}, "scheme is refused"},
		{"browser_navigate", map[string]any{"url": "chrome://settings"}, "scheme is refused"},
		{"browser_navigate", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, "cloud metadata address"},
		{"browser_navigate", map[string]any{"url": "http://metadata.google.internal/computeMetadata/v1/"}, "cloud metadata address"},
		{"browser_tabs", map[string]any{"action": "new", "url": "http://[fd00:ec2::254]/"}, "cloud metadata address"},
		{"browser_navigate", map[string]any{"url": ts.URL + "/to?u=http://169.254.169.254/latest/meta-data/"}, "origin policy"},
		{"browser_click", map[string]any{"ref": "button"}, "not a ref"},
		{"browser_click", map[string]any{}, "ref"},
		{"browser_click", map[string]any{"ref": "e999999"}, "never given out"},
		{"browser_press_key", map[string]any{"key": "Hyper+Q"}, "unknown modifier"},
		{"browser_press_key", map[string]any{"key": "Smash"}, "unknown key"},
		{"browser_find", map[string]any{}, "give text"},
		{"browser_wait_for", map[string]any{}, "give text"},
		{"browser_tabs", map[string]any{"action": "explode"}, "action"},
		{"browser_tabs", map[string]any{"action": "select", "index": 9}, "no tab 9"},
		{"browser_fill_form", map[string]any{"fields": []any{}}, "fields"},
		{"browser_select_option", map[string]any{"ref": "e1", "values": []string{}}, "values"},
		{"browser_handle_dialog", map[string]any{"accept": true}, "no dialog is open"},
		{"browser_snapshot", map[string]any{"max_nodes": 0}, "max_nodes"},
		{"browser_get_text", map[string]any{"ref": "e77777"}, "never given out"},
	} {
		got := callErr(t, c, tc.tool, tc.args)
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: error %q lacks %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

func TestFormSnapshotAndFill(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{}, false)
	snap := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/form"})
	mustContain(t, snap, "Order form", `heading "Order" [level=1]`, `textbox "Name" [required]`, `combobox "Colour"`, `checkbox "Gift wrap"`, `radio "Small"`, `button "Send order"`, "(HTTP 200)")
	name := ref(t, snap, "textbox", "Name")
	colour := ref(t, snap, "combobox", "Colour")
	gift := ref(t, snap, "checkbox", "Gift wrap")
	large := ref(t, snap, "radio", "Large")

	out := call(t, c, "browser_type", map[string]any{"ref": name, "text": "Ada Lovelace"})
	mustContain(t, out, "Typed 12 characters", "Ada Lovelace")
	out = call(t, c, "browser_select_option", map[string]any{"ref": colour, "values": []string{"Green"}})
	mustContain(t, out, `Selected "Green"`)
	msg := callErr(t, c, "browser_select_option", map[string]any{"ref": colour, "values": []string{"Purple"}})
	mustContain(t, msg, `no option "Purple"`, "Red, Green, Blue")
	msg = callErr(t, c, "browser_type", map[string]any{"ref": gift, "text": "x"})
	mustContain(t, msg, "not a text field")
	out = call(t, c, "browser_fill_form", map[string]any{"fields": []map[string]string{{"ref": gift, "value": "true"}, {"ref": large, "value": "true"}}})
	mustContain(t, out, "Filled 2 fields", "checkbox \"Gift wrap\" [checked]", "radio \"Large\" [checked]")

	send := ref(t, call(t, c, "browser_snapshot", nil), "button", "Send order")
	out = call(t, c, "browser_click", map[string]any{"ref": send})
	mustContain(t, out, "A new page loaded", "Thanks", "name=Ada Lovelace colour=g gift=on size=l")

	// The form's refs died with its page.
	msg = callErr(t, c, "browser_click", map[string]any{"ref": send})
	mustContain(t, msg, "stale", "take a new snapshot")

	out = call(t, c, "browser_back", nil)
	mustContain(t, out, "Went back", "Order form")
}

func TestButtonsLinksAndTabs(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{}, false)
	snap := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/buttons"})
	mustContain(t, snap, `button "Locked" [disabled]`)

	out := call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Save")})
	mustContain(t, out, "Clicked button \"Save\"", "+ ", "Saved at noon")
	if strings.Contains(out, "Go to the form") {
		t.Errorf("an in-page change repeated the whole page:\n%s", out)
	}

	// A div that only has a click handler and a pointer cursor is still
	// something to click.
	panel := regexp.MustCompile(`\[ref=(e\d+)\]: Open panel`).FindStringSubmatch(snap)
	if panel == nil {
		t.Fatalf("the clickable div has no ref:\n%s", snap)
	}
	out = call(t, c, "browser_click", map[string]any{"ref": panel[1]})
	mustContain(t, out, "Panel opened")

	msg := callErr(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Locked")})
	mustContain(t, msg, "disabled")

	box := ref(t, snap, "textbox", "Shortcut box")
	call(t, c, "browser_click", map[string]any{"ref": box})
	out = call(t, c, "browser_press_key", map[string]any{"key": "Control+k"})
	mustContain(t, out, "ctrl-k pressed")

	out = call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "link", "Form in a new tab")})
	mustContain(t, out, "new tab (tab 2)", "Order form")
	list := call(t, c, "browser_tabs", map[string]any{"action": "list"})
	mustContain(t, list, "2 open tabs", "* 2. Order form", "  1. Buttons")
	out = call(t, c, "browser_get_url", nil)
	mustContain(t, out, "/form", "Tab: 2")

	// Refs of tab 1 are not refs of tab 2.
	msg = callErr(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Save")})
	mustContain(t, msg, "belongs to tab 1")

	out = call(t, c, "browser_tabs", map[string]any{"action": "close"})
	mustContain(t, out, "Closed tab 2", "1 open tabs")
	out = call(t, c, "browser_tabs", map[string]any{"action": "new", "url": ts.URL + "/"})
	mustContain(t, out, "Opened tab 3", "Home page")
	call(t, c, "browser_tabs", map[string]any{"action": "select", "index": 1})

	out = call(t, c, "browser_click", map[string]any{"ref": ref(t, call(t, c, "browser_snapshot", nil), "link", "Go to the form")})
	mustContain(t, out, "A new page loaded", "Order form")

	// Closing the first tab leaves the browser and the other tab running.
	out = call(t, c, "browser_tabs", map[string]any{"action": "close", "index": 1})
	mustContain(t, out, "Closed tab 1", "1 open tabs", "* 3. Home")
	out = call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/form"})
	mustContain(t, out, "Tab 3: Order form")
}

func TestDialogs(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{}, false)
	snap := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/buttons"})

	out := call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Alert me")})
	mustContain(t, out, "alert dialog opened", "Hello from the page", "browser_handle_dialog")
	msg := callErr(t, c, "browser_snapshot", nil)
	mustContain(t, msg, "dialog is open", "browser_handle_dialog")
	out = call(t, c, "browser_handle_dialog", map[string]any{"accept": true})
	mustContain(t, out, "Accepted the alert dialog")

	out = call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Delete")})
	mustContain(t, out, "confirm dialog opened", "Delete it?")
	out = call(t, c, "browser_handle_dialog", map[string]any{"accept": false})
	mustContain(t, out, "Dismissed", "kept")

	call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Ask name")})
	out = call(t, c, "browser_handle_dialog", map[string]any{"accept": true, "prompt_text": "Grace"})
	mustContain(t, out, "Hi Grace")
}

func TestIframe(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{}, false)
	snap := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/frame"})
	mustContain(t, snap, "Outer page", `iframe "Inner form"`, `textbox "Card number"`)
	card := ref(t, snap, "textbox", "Card number")
	out := call(t, c, "browser_type", map[string]any{"ref": card, "text": "4242"})
	mustContain(t, out, "4242")
	out = call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Check card")})
	mustContain(t, out, "card ok")
}

func TestSlowAndNeverLoadingPages(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{NavTimeout: 2 * time.Second}, false)
	out := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/slow"})
	mustContain(t, out, "Slow but here")
	start := time.Now()
	out = call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/never"})
	mustContain(t, out, "still loading", "Partly here")
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("a page that never finishes held the call for %s", d)
	}
	// The page is usable while it loads.
	out = call(t, c, "browser_get_text", nil)
	mustContain(t, out, "Partly here")
}

func TestBigPageStaysBounded(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{}, false)
	call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/big"})
	snap := call(t, c, "browser_snapshot", map[string]any{"max_nodes": 200})
	lines := strings.Count(snap, "\n- ") + strings.Count(snap, "\n  ")
	if lines > 260 {
		t.Errorf("a 200-node snapshot has %d lines", lines)
	}
	if !regexp.MustCompile(`truncated: \d+ more nodes not shown`).MatchString(snap) {
		t.Errorf("no truncation marker:\n%s", snap[len(snap)-300:])
	}
	if len(snap) > 30_000 {
		t.Errorf("a 200-node snapshot is %d bytes", len(snap))
	}
	found := call(t, c, "browser_find", map[string]any{"text": "The very last link"})
	last := regexp.MustCompile(`link "The very last link"[^\n]*\[ref=(e\d+)\]`).FindStringSubmatch(found)
	if last == nil {
		t.Fatalf("browser_find did not find the last link:\n%s", found)
	}
	out := call(t, c, "browser_click", map[string]any{"ref": last[1]})
	mustContain(t, out, "/last")
}

func TestBrowserKilledBetweenAndDuringCalls(t *testing.T) {
	ts := site(t)
	c, b := newClient(t, Options{}, false)
	call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/"})
	kill := func() {
		b.mu.Lock()
		p := chromedp.FromContext(b.session.root).Browser.Process()
		b.mu.Unlock()
		if err := p.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.Wait()
	}
	kill()
	out := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/form"})
	mustContain(t, out, "Order form")

	// Killed while a call waits: that call fails clearly, the next works.
	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(500 * time.Millisecond)
		p := chromedp.FromContext(b.session.root).Browser.Process()
		p.Signal(syscall.SIGKILL)
	})
	msg := callErr(t, c, "browser_wait_for", map[string]any{"text": "never there", "timeout": 20})
	wg.Wait()
	mustContain(t, msg, "Chromium exited", "next browser call starts a new browser")
	out = call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/"})
	mustContain(t, out, "Home page")
}

func TestOriginsAndFiles(t *testing.T) {
	ts := site(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Other</title><h1>Other site</h1>`)
	}))
	defer other.Close()
	host := strings.TrimPrefix(ts.URL, "http://")
	c, _ := newClient(t, Options{Origins: Origins{Allow: []string{host}}}, false)
	msg := callErr(t, c, "browser_navigate", map[string]any{"url": other.URL + "/"})
	mustContain(t, msg, "not in domo-browser's --allowed-origins")
	out := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/"})
	mustContain(t, out, "Home page")

	// A page of the allowed site cannot redirect to another.
	msg = callErr(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/to?u=" + other.URL + "/"})
	mustContain(t, msg, "origin policy")

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "local.html"), []byte("<h1>Local file</h1>"), 0o644)
	c2, _ := newClient(t, Options{Origins: Origins{Block: []string{other.URL}}}, false)
	msg = callErr(t, c2, "browser_navigate", map[string]any{"url": other.URL + "/x"})
	mustContain(t, msg, "blocked by domo-browser's --blocked-origins")
	msg = callErr(t, c2, "browser_navigate", map[string]any{"url": "file://" + dir + "/local.html"})
	mustContain(t, msg, "--allow-file-urls")
	c3, _ := newClient(t, Options{AllowFile: true}, false)
	out = call(t, c3, "browser_navigate", map[string]any{"url": "file://" + dir + "/local.html"})
	mustContain(t, out, "Local file")
}

func TestDownloadsConsoleNetwork(t *testing.T) {
	ts := site(t)
	dir := t.TempDir()
	c, _ := newClient(t, Options{DownloadsDir: dir}, false)
	snap := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/buttons"})
	out := call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "link", "Get the file")})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out, "Downloaded") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		out = call(t, c, "browser_wait_for", map[string]any{"time": 0.1})
	}
	mustContain(t, out, "Downloaded", dir)
	// The navigation that became a download does not hold later actions.
	start := time.Now()
	call(t, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Save")})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a click after a download took %s", d)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Fatalf("downloads dir holds %v", files)
	}
	if b, _ := os.ReadFile(files[0]); string(b) != "downloaded notes" {
		t.Errorf("downloaded %q", b)
	}

	call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/console"})
	call(t, c, "browser_wait_for", map[string]any{"time": 0.3})
	out = call(t, c, "browser_console_messages", nil)
	mustContain(t, out, "[log] hello console", "[warning] careful", "boom")
	out = call(t, c, "browser_console_messages", map[string]any{"level": "error"})
	if strings.Contains(out, "careful") {
		t.Errorf("level error lists a warning:\n%s", out)
	}
	out = call(t, c, "browser_network_requests", nil)
	mustContain(t, out, "GET "+ts.URL+"/console → 200", "GET "+ts.URL+"/api/data?x=1 → 200")
}

func TestScreenshotAndEvaluate(t *testing.T) {
	ts := site(t)
	c, _ := newClient(t, Options{Width: 800, Height: 600}, true)
	snap := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/buttons"})
	shot := func(args map[string]any) (int, int) {
		t.Helper()
		res := mcpkittest.Call(t, c, "browser_screenshot", args)
		if res.IsError {
			t.Fatalf("screenshot %v: %s", args, mcpkittest.Text(res))
		}
		for _, ct := range res.Content {
			if img, ok := ct.(mcp.ImageContent); ok {
				raw, err := base64.StdEncoding.DecodeString(img.Data)
				if err != nil {
					t.Fatal(err)
				}
				im, err := png.Decode(bytes.NewReader(raw))
				if err != nil {
					t.Fatalf("not a PNG: %v", err)
				}
				return im.Bounds().Dx(), im.Bounds().Dy()
			}
		}
		t.Fatalf("no image in %v", res.Content)
		return 0, 0
	}
	if w, h := shot(nil); w != 800 || h != 600 {
		t.Errorf("viewport screenshot is %dx%d, want 800x600", w, h)
	}
	if w, h := shot(map[string]any{"ref": ref(t, snap, "button", "Save")}); w < 20 || w > 200 || h < 10 || h > 60 {
		t.Errorf("a button's screenshot is %dx%d", w, h)
	}
	out := call(t, c, "browser_evaluate", map[string]any{"function": "() => document.title + ' ' + (1 + 2)"})
	mustContain(t, out, `"Buttons 3"`)
	out = call(t, c, "browser_evaluate", map[string]any{"function": "(el) => el.textContent", "ref": ref(t, snap, "button", "Save")})
	mustContain(t, out, `"Save"`)
	msg := callErr(t, c, "browser_evaluate", map[string]any{"function": "() => { throw new Error('nope') }"})
	mustContain(t, msg, "nope")
}

func TestPersistentProfile(t *testing.T) {
	ts := site(t)
	profile := t.TempDir()
	for i, want := range []string{"first visit", "remembered: hello"} {
		c, b := newClient(t, Options{UserDataDir: profile}, false)
		out := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/remember"})
		mustContain(t, out, want)
		b.Close()
		if i == 0 {
			if _, err := os.Stat(filepath.Join(profile, "Default")); err != nil {
				t.Fatalf("the profile was not kept: %v", err)
			}
		}
	}
}

func TestAttachToRunningChrome(t *testing.T) {
	requireChrome(t)
	ts := site(t)
	chrome, _ := FindChrome()
	// Not t.TempDir: Chromium's helper processes may still write to it
	// for a moment after the browser is killed.
	dir, err := os.MkdirTemp("", "domo-attach-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd := exec.Command(chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--remote-debugging-port=0", "--user-data-dir="+dir, ts.URL+"/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var port string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil && strings.Contains(string(b), "\n") {
			port, _, _ = strings.Cut(string(b), "\n")
			break
		}
	}
	if port == "" {
		t.Fatal("chromium wrote no DevToolsActivePort")
	}
	c, b := newClient(t, Options{CDPEndpoint: "http://127.0.0.1:" + port}, false)
	out := call(t, c, "browser_navigate", map[string]any{"url": ts.URL + "/form"})
	mustContain(t, out, "Order form")
	out = call(t, c, "browser_tabs", map[string]any{"action": "list"})
	mustContain(t, out, "Order form")
	b.Close()
	// Detaching leaves the user's browser and their own tab alone.
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("closing the server ended the user's browser: %v", err)
	}
	resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list bytes.Buffer
	list.ReadFrom(resp.Body)
	if !strings.Contains(list.String(), `"title": "Home"`) {
		t.Errorf("the user's own tab is gone:\n%s", list.String())
	}
}
