package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// bigSnapshots is how many times each server snapshots the big page.
const bigSnapshots = 5

// benchBrowser compares domo-browser with @playwright/mcp on the same local
// pages: cold start to the first snapshot, warm navigate and snapshot,
// snapshot size, snapshot time on a big page, and whether domo names every
// control Playwright names. Both drive /usr/bin/chromium. While
// domo-browser does not build or fails, Playwright's figures still print.
func benchBrowser(ctx context.Context, w io.Writer, root, tmp string, o options) error {
	peerDir := filepath.Join(root, "tests/peers/node_modules/@playwright/mcp")
	peer := filepath.Join(peerDir, "cli.js")
	if _, err := os.Stat(peer); err != nil {
		return fmt.Errorf("the npm peers are not installed (%v): run `go tool task setup`", err)
	}
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		return fmt.Errorf("chromium is not installed (%v): run `go tool task setup`", err)
	}
	site := httptest.NewServer(browserPages())
	defer site.Close()

	bin := filepath.Join(tmp, "domo-browser")
	var buildErr bytes.Buffer
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./servers/browser/cmd/domo-browser")
	build.Dir, build.Stdout, build.Stderr = root, &buildErr, &buildErr
	servers := []browserServer{
		{server: server{name: "domo-browser", argv: []string{bin, "--chrome", chromium}}, most: map[string]any{"max_nodes": 5000}},
		// Playwright passes --no-sandbox to Chromium by itself (its
		// chromiumSandbox defaults to false), so it runs as root as it is.
		// Navigate writes its snapshot to a file: keep those out of the tree.
		{server: server{name: "@playwright/mcp", argv: []string{"node", peer, "--headless", "--browser", "chromium",
			"--executable-path", chromium, "--isolated", "--output-dir", filepath.Join(tmp, "playwright-mcp")}}},
	}
	domo, pw := &servers[0], &servers[1]
	if err := build.Run(); err != nil {
		domo.err = fmt.Errorf("build failed (%w):\n%s", err, indentLines(tail(buildErr.String(), 10), "    "))
	}

	fmt.Fprintf(w, "domo-browser vs @playwright/mcp %s (playwright-core %s), %s, %s, %s, %d CPUs\n",
		npmVersion(peerDir), npmVersion(filepath.Join(root, "tests/peers/node_modules/playwright-core")),
		chromiumVersion(chromium), nodeVersion(), runtime.Version(), runtime.NumCPU())
	fmt.Fprintf(w, "pages served by httptest: simple, form, news (30 nav links, 20 articles), big (%d rows, about %d DOM nodes)\n\n", bigRows, bigRows*nodesPerBigRow)

	simple := []string{site.URL + "/simple", site.URL + "/simple2"}
	for range o.browserStarts {
		for i := range servers {
			s := &servers[i]
			if s.err != nil {
				continue
			}
			d, err := coldSnapshot(ctx, s.server, simple[0])
			if err != nil {
				s.err = fmt.Errorf("cold start: %w", err)
				continue
			}
			s.cold = append(s.cold, d)
		}
	}
	// One server at a time, so the two Chromiums never share the CPUs.
	for i := range servers {
		if s := &servers[i]; s.err == nil {
			s.err = s.measure(ctx, site.URL, o.browserRuns)
		}
	}

	fmt.Fprintf(w, "Cold start, spawn to first snapshot (initialize, browser_navigate + browser_snapshot of simple; median of %d; min–max):\n", o.browserStarts)
	printTimes(w, servers, func(s *browserServer) []time.Duration { return s.cold })
	fmt.Fprintln(w)

	fmt.Fprintf(w, "Warm, one session alternating two simple pages (%d runs; median, p90):\n", o.browserRuns)
	fmt.Fprintf(w, "  %-26s %22s   %22s\n", "", "navigate + snapshot", "navigate alone")
	for _, s := range servers {
		if s.navSnap == nil {
			fmt.Fprintf(w, "  %-26s %22s   %22s\n", s.name, "—", "—")
			continue
		}
		fmt.Fprintf(w, "  %-26s %8.1f ms  p90 %6.1f   %8.1f ms  p90 %6.1f\n", s.name,
			ms(median(s.navSnap)), ms(p90(s.navSnap)), ms(median(s.nav)), ms(p90(s.nav)))
	}
	if domo.navSnap != nil && pw.navSnap != nil {
		fmt.Fprintf(w, "  %-26s %8.2f×                  %8.2f×\n", "ratio domo/playwright",
			float64(median(domo.navSnap))/float64(median(pw.navSnap)), float64(median(domo.nav))/float64(median(pw.nav)))
	}
	fmt.Fprintf(w, "  %-26s %s\n\n", "target", verdict("domo navigate + snapshot ≤ 50 ms", domo.navSnap != nil, domo.navSnap != nil && median(domo.navSnap) <= 50*time.Millisecond))

	fmt.Fprintln(w, "browser_snapshot size in bytes: whole text result, and the snapshot body alone (Playwright: the ```yaml block; domo: the \"-\" lines):")
	fmt.Fprintf(w, "  %-8s %10s %10s %7s   %10s %10s %7s\n", "page", "domo", "playwright", "ratio", "domo body", "pw body", "ratio")
	for _, p := range browserPageNames {
		d, pwSnap := domo.snaps[p], pw.snaps[p]
		fmt.Fprintf(w, "  %-8s %10s %10s %7s   %10s %10s %7s\n", p,
			size(d.full, domo.snaps != nil), size(pwSnap.full, pw.snaps != nil), ratioOf(len(d.full), len(pwSnap.full), domo.snaps != nil && pw.snaps != nil),
			size(d.body, domo.snaps != nil), size(pwSnap.body, pw.snaps != nil), ratioOf(len(d.body), len(pwSnap.body), domo.snaps != nil && pw.snaps != nil))
	}
	both := domo.snaps != nil && pw.snaps != nil
	// The big page is left out: domo's snapshot stops at its node limit there.
	met := both
	for _, p := range browserPageNames[:3] {
		met = met && float64(len(domo.snaps[p].body)) <= 0.7*float64(len(pw.snaps[p].body))
	}
	fmt.Fprintf(w, "  %-8s %s\n\n", "target", verdict("domo body ≤ 0.7× Playwright's on simple, form and news", both, met))

	fmt.Fprintf(w, "browser_snapshot time on the big page (median of %d; min–max):\n", bigSnapshots)
	printTimes(w, servers, func(s *browserServer) []time.Duration { return s.big })
	if d := domo.bigMost; d != nil && pw.snaps != nil {
		want := actionablePairs(pw.snaps["big"].body)
		n, _ := covered(want, actionablePairs(domo.bigMostSnap.body))
		fmt.Fprintf(w, "  %-26s %8.0f ms   (%.0f–%.0f)   body %d bytes (%.2f× Playwright's), names %d of Playwright's %d pairs\n",
			"domo-browser max_nodes 5000", ms(median(d)), ms(slices.Min(d)), ms(slices.Max(d)),
			len(domo.bigMostSnap.body), float64(len(domo.bigMostSnap.body))/float64(max(1, len(pw.snaps["big"].body))), n, len(want))
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "Coverage: actionable (role, \"name\") pairs in Playwright's snapshot that domo's also names (each occurrence counts):\n")
	fmt.Fprintf(w, "  %-8s %10s %10s %8s\n", "page", "playwright", "domo too", "missing")
	var missing []string
	var named, found int
	for _, p := range browserPageNames {
		want := actionablePairs(pw.snaps[p].body)
		if !both {
			n := "—"
			if pw.snaps != nil {
				n = fmt.Sprint(len(want))
			}
			fmt.Fprintf(w, "  %-8s %10s %10s %8s\n", p, n, "—", "—")
			continue
		}
		n, lack := covered(want, actionablePairs(domo.snaps[p].body))
		for _, q := range lack[:min(len(lack), 10-len(missing))] {
			missing = append(missing, fmt.Sprintf("%s: %s %q", p, q.role, q.name))
		}
		named += len(want)
		found += n
		fmt.Fprintf(w, "  %-8s %10d %10d %8d\n", p, len(want), n, len(want)-n)
	}
	if both {
		fmt.Fprintf(w, "  %-8s %10d %10d %8d\n", "all", named, found, named-found)
		if len(missing) > 0 {
			fmt.Fprintf(w, "  first missing: %s\n", strings.Join(missing, "; "))
		}
	}
	for _, s := range servers {
		if s.err != nil {
			fmt.Fprintf(w, "\n%s was not measured in full: %v\n", s.name, s.err)
		}
	}
	if pw.err != nil {
		return fmt.Errorf("%s: %w", pw.name, pw.err)
	}
	return nil
}

// browserServer is one server under test and its figures; a server that
// fails keeps the figures it had and its error.
type browserServer struct {
	server
	err     error
	cold    []time.Duration
	nav     []time.Duration
	navSnap []time.Duration
	big     []time.Duration
	snaps   map[string]pageSnapshot
	// most, when set, are the browser_snapshot arguments that show the
	// most of a page; the big page is snapshot with them too.
	most        map[string]any
	bigMost     []time.Duration
	bigMostSnap pageSnapshot
}

// pageSnapshot is one browser_snapshot result: the whole text, and the
// snapshot lines alone.
type pageSnapshot struct{ full, body string }

// measure runs the warm figures in one session: navigate and snapshot,
// every page's snapshot, and the big page's snapshot time.
func (b *browserServer) measure(ctx context.Context, base string, runs int) error {
	s, err := start(ctx, b.server)
	if err != nil {
		return err
	}
	defer stopBrowser(s)
	if err := s.initialize(); err != nil {
		return err
	}
	simple := []string{base + "/simple", base + "/simple2"}
	for i := range runs + 2 { // the first two warm up both pages
		u := simple[i%2]
		t0 := time.Now()
		if _, err := toolCall(s, "browser_navigate", map[string]any{"url": u}); err != nil {
			return fmt.Errorf("browser_navigate %s: %w", u, err)
		}
		t1 := time.Now()
		if _, err := snapshot(s, nil); err != nil {
			return err
		}
		if i >= 2 {
			b.nav = append(b.nav, t1.Sub(t0))
			b.navSnap = append(b.navSnap, time.Since(t0))
		}
	}
	snaps := map[string]pageSnapshot{}
	for _, p := range browserPageNames {
		if _, err := toolCall(s, "browser_navigate", map[string]any{"url": base + "/" + p}); err != nil {
			return fmt.Errorf("browser_navigate %s: %w", p, err)
		}
		full, err := snapshot(s, nil)
		if err != nil {
			return err
		}
		snaps[p] = pageSnapshot{full: full, body: snapshotBody(full)}
	}
	b.snaps = snaps
	// The page is still the big one, the last of browserPageNames.
	var big []time.Duration
	for range bigSnapshots {
		t0 := time.Now()
		if _, err := snapshot(s, nil); err != nil {
			return err
		}
		big = append(big, time.Since(t0))
	}
	b.big = big
	if b.most == nil {
		return nil
	}
	var most []time.Duration
	for range bigSnapshots {
		t0 := time.Now()
		full, err := snapshot(s, b.most)
		if err != nil {
			return err
		}
		most = append(most, time.Since(t0))
		b.bigMostSnap = pageSnapshot{full: full, body: snapshotBody(full)}
	}
	b.bigMost = most
	return nil
}

// snapshot calls browser_snapshot and returns its text.
func snapshot(s *session, args map[string]any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	raw, err := toolCall(s, "browser_snapshot", args)
	if err != nil {
		return "", err
	}
	return resultText(raw), nil
}

// coldSnapshot returns the wall time from spawn to the first snapshot of u.
func coldSnapshot(ctx context.Context, srv server, u string) (time.Duration, error) {
	t0 := time.Now()
	s, err := start(ctx, srv)
	if err != nil {
		return 0, err
	}
	defer stopBrowser(s)
	if err := s.initialize(); err != nil {
		return 0, err
	}
	if _, err := toolCall(s, "browser_navigate", map[string]any{"url": u}); err != nil {
		return 0, err
	}
	text, err := snapshot(s, nil)
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	if !strings.Contains(text, "Search terms") {
		return 0, fmt.Errorf("the snapshot of %s lacks the search box: %.300s", u, text)
	}
	return d, nil
}

// stopBrowser ends a browser server gently: a server closes its Chromium
// when its stdin closes, and one killed outright would leave Chromium
// running.
func stopBrowser(s *session) {
	s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Kill} {
		select {
		case <-done:
			return
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Signal(sig)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// snapshotBody returns the snapshot lines of a browser_snapshot text:
// Playwright's ```yaml block, or else every line that is a "-" item.
func snapshotBody(text string) string {
	if _, after, ok := strings.Cut(text, "```yaml\n"); ok {
		body, _, _ := strings.Cut(after, "\n```")
		return body
	}
	var lines []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "-") {
			lines = append(lines, strings.TrimSuffix(line, "\n"))
		}
	}
	return strings.Join(lines, "\n")
}

// actionableRoles are the roles a model acts on, so a snapshot must name them.
var actionableRoles = map[string]bool{
	"link": true, "button": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "slider": true, "spinbutton": true, "switch": true,
	"tab": true, "menuitem": true, "treeitem": true,
}

type rolePair struct{ role, name string }

// covered counts the pairs of want that got also holds, each occurrence
// matched once, and returns those it lacks.
func covered(want, got []rolePair) (n int, lack []rolePair) {
	have := map[rolePair]int{}
	for _, q := range got {
		have[q]++
	}
	for _, q := range want {
		if have[q] > 0 {
			have[q]--
			n++
		} else {
			lack = append(lack, q)
		}
	}
	return n, lack
}

// actionablePairs returns the named actionable nodes of a snapshot, in
// order. Both servers write `- role "name" [attr]...`, the name a JSON
// string; Playwright wraps the whole item in YAML single quotes when it
// holds characters YAML would misread (`- 'link "a: b" [ref=e2]'`).
func actionablePairs(body string) []rolePair {
	var pairs []rolePair
	for line := range strings.Lines(body) {
		item, ok := strings.CutPrefix(strings.TrimLeft(line, " "), "- ")
		if !ok {
			continue
		}
		item = strings.TrimRight(item, "\n")
		if strings.HasPrefix(item, "'") {
			item = yamlSingleQuoted(item)
		}
		role, rest, ok := strings.Cut(item, " ")
		if !ok || !actionableRoles[role] || !strings.HasPrefix(rest, `"`) {
			continue
		}
		var name string
		if err := json.NewDecoder(strings.NewReader(rest)).Decode(&name); err != nil || name == "" {
			continue
		}
		pairs = append(pairs, rolePair{role, name})
	}
	return pairs
}

// yamlSingleQuoted returns the content of the single-quoted YAML scalar s
// starts with, in which a doubled quote stands for one.
func yamlSingleQuoted(s string) string {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			break
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func p90(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(math.Ceil(0.9*float64(len(s))))-1]
}

// printTimes prints each server's median and range of one figure, then the
// ratio of the medians, domo's over Playwright's.
func printTimes(w io.Writer, servers []browserServer, figure func(*browserServer) []time.Duration) {
	for i := range servers {
		d := figure(&servers[i])
		if d == nil {
			fmt.Fprintf(w, "  %-26s %8s\n", servers[i].name, "—")
			continue
		}
		fmt.Fprintf(w, "  %-26s %8.0f ms   (%.0f–%.0f)\n", servers[i].name, ms(median(d)), ms(slices.Min(d)), ms(slices.Max(d)))
	}
	if domo, pw := figure(&servers[0]), figure(&servers[1]); domo != nil && pw != nil {
		fmt.Fprintf(w, "  %-26s %8.2f×\n", "ratio domo/playwright", float64(median(domo))/float64(median(pw)))
	}
}

func verdict(target string, measured, met bool) string {
	switch {
	case !measured:
		return target + ": not measured"
	case met:
		return target + ": met"
	default:
		return target + ": MISSED"
	}
}

func size(s string, measured bool) string {
	if !measured {
		return "—"
	}
	return fmt.Sprint(len(s))
}

func ratioOf(a, b int, measured bool) string {
	if !measured || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func chromiumVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "chromium ?"
	}
	return strings.TrimSpace(string(out))
}

// browserPageNames are the pages whose snapshots are compared, the big one
// last.
var browserPageNames = []string{"simple", "form", "news", "big"}

const (
	bigRows = 2000
	// nodesPerBigRow counts a big row's DOM nodes: tr, 4 td, a, button,
	// and 4 text nodes.
	nodesPerBigRow = 11
)

// browserPages serves the benchmark's pages. Each names an empty favicon so
// that no 404 lands in a console log.
func browserPages() http.Handler {
	page := func(title, body string) []byte {
		return []byte("<!doctype html><html lang=en><head><meta charset=utf-8><link rel=icon href=\"data:,\"><title>" +
			title + "</title></head><body>" + body + "</body></html>")
	}
	simple := func(title, text string) []byte {
		return page(title, `<h1>`+title+`</h1><p>`+text+`</p><a href="/docs">Docs</a>`+
			`<form action="/search"><label for=q>Search terms</label> <input id=q name=q type=text> <button type=submit>Search</button></form>`)
	}
	pages := map[string][]byte{
		"simple":  simple("Simple page", "A short paragraph of plain text on the first simple page."),
		"simple2": simple("Second simple page", "Another short paragraph, on the second simple page."),
		"form": page("Sign up", `<h1>Sign up</h1><form action="/signup">
<p><label for=name>Full name</label> <input id=name name=name type=text required></p>
<p><label for=email>Email</label> <input id=email name=email type=email placeholder="you@example.com"></p>
<p><label for=country>Country</label> <select id=country name=country><option>France</option><option selected>Germany</option><option>Italy</option><option>Spain</option></select></p>
<p><label><input type=checkbox name=news checked> Send me the newsletter</label></p>
<fieldset><legend>Plan</legend><label><input type=radio name=plan value=free checked> Free</label> <label><input type=radio name=plan value=pro> Pro</label> <label><input type=radio name=plan value=team> Team</label></fieldset>
<p><label for=msg>Message</label> <textarea id=msg name=msg>Hello there</textarea></p>
<p><button type=submit>Create account</button> <button type=reset>Clear</button> <button type=button disabled>Save draft</button></p>
</form>`),
	}
	var news strings.Builder
	news.WriteString(`<header><nav><ul>`)
	for i := range 30 {
		fmt.Fprintf(&news, `<li><a href="/section/%d">Section %d</a></li>`, i+1, i+1)
	}
	news.WriteString(`</ul></nav></header><main><h1>Today's news</h1>`)
	for i := range 20 {
		fmt.Fprintf(&news, `<article><h2><a href="/story/%d">Council approves harbour plan, part %d</a></h2>`+
			`<p>The council voted on the plan for the harbour on Tuesday evening after a long debate; story %d of the day.</p>`+
			`<button type=button>Share</button></article>`, i+1, i+1, i+1)
	}
	news.WriteString(`</main><footer><a href="/about">About us</a> <a href="/contact">Contact</a> <a href="/privacy">Privacy</a><p>© 2026 The Daily Bench</p></footer>`)
	pages["news"] = page("Today's news", news.String())
	var big strings.Builder
	big.WriteString(`<h1>Inventory</h1><table><tbody>`)
	for i := range bigRows {
		fmt.Fprintf(&big, `<tr><td>%d</td><td><a href="/item/%d">Item %d</a></td><td>in stock</td><td><button type=button>Edit</button></td></tr>`, i+1, i+1, i+1)
	}
	big.WriteString(`</tbody></table>`)
	pages["big"] = page("Inventory", big.String())

	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, ok := pages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.Write(b)
	})
}
