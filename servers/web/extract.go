package web

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page is a document reduced to what a reader wants: its main text and
// what is known about it.
type Page struct {
	Title, Byline, Site, Excerpt, Language string
	// Published is zero when unknown.
	Published time.Time
	// Image and Favicon are absolute URLs, or empty.
	Image, Favicon string
	// Text is the main text, paragraphs separated by blank lines.
	Text string
	// Markdown is the main content as Markdown, filled by RenderMarkdown.
	Markdown string
	// Method is "readability", "text" (the plain-text fallback), "plain"
	// (a text document) or "json".
	Method string
	// Unusable says why the page is not an article: "consent wall",
	// "paywall", "needs JavaScript", "too little text"; empty when it is
	// usable.
	Unusable string
	// Type is the page's og:type ("article", "website"), when it says.
	Type string
	// Links counts the links in the whole document, and LinkWords the
	// words inside them: section fronts are mostly links.
	Links, LinkWords, Words int

	content *html.Node
}

// ErrBinary is wrapped by Extract's error for content that is not text.
var ErrBinary = errors.New("binary content")

// minArticleWords is how long readability's text must be before it is
// trusted over the plain-text fallback.
const minArticleWords = 60

// Extract turns a fetched document into a Page. body is the raw bytes as
// served; contentType is the Content-Type header (it may carry a charset,
// or be empty); pageURL resolves relative links.
func Extract(body []byte, contentType string, pageURL *url.URL) (*Page, error) {
	kind := classify(body, contentType)
	switch kind {
	case "html":
		return extractHTML(decodeText(body, contentType), pageURL)
	case "json":
		return extractJSON(decodeText(body, contentType), pageURL)
	case "text":
		t := normalizeText(decodeText(body, contentType))
		return &Page{Title: pathTitle(pageURL), Site: siteOf(pageURL), Text: t, Markdown: t, Method: "plain", Words: countWords(t)}, nil
	}
	return nil, fmt.Errorf("%w (%s, %s): only HTML, text and JSON pages can be read", ErrBinary, kind, sizeOf(len(body)))
}

// classify tells HTML, JSON, text and binary apart, trusting the body over
// a Content-Type that is missing or generic.
func classify(body []byte, contentType string) string {
	mt := strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html"
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json"
	case mt == "text/plain" || mt == "text/markdown" || mt == "text/csv" || mt == "text/xml" || mt == "application/xml" || strings.HasSuffix(mt, "+xml") && !strings.HasPrefix(mt, "image/"):
		return "text"
	case strings.HasPrefix(mt, "image/"), strings.HasPrefix(mt, "audio/"), strings.HasPrefix(mt, "video/"), strings.HasPrefix(mt, "font/"),
		mt == "application/pdf", mt == "application/zip", mt == "application/gzip", mt == "application/x-tar", mt == "application/wasm":
		return mt
	}
	sniffed := http.DetectContentType(body)
	st := strings.SplitN(sniffed, ";", 2)[0]
	switch {
	case st == "text/html":
		return "html"
	case strings.HasPrefix(st, "text/"):
		trimmed := bytes.TrimSpace(body)
		if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return "json"
		}
		if strings.HasPrefix(mt, "text/") || mt == "" || mt == "application/octet-stream" {
			return "text"
		}
	}
	if mt == "" || mt == "application/octet-stream" {
		return st
	}
	return mt
}

func sizeOf(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func extractHTML(text string, u *url.URL) (*Page, error) {
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing the page: %w", err)
	}
	p := &Page{Site: siteOf(u)}
	meta := scanDocument(doc, p)
	parser := readability.NewParser()
	// Keep a pathological page from taking seconds.
	parser.MaxElemsToParse = 60000
	// Readability keeps menus and sign-up boxes that sit beside the text
	// in its chosen container; the furniture goes first. scanDocument has
	// seen the whole page, walls and banners included.
	stripFurniture(doc)
	focusMain(doc)
	art, rerr := parser.ParseDocument(doc, u)
	if rerr == nil {
		p.Title = strings.TrimSpace(art.Title())
		p.Byline = strings.TrimSpace(art.Byline())
		p.Excerpt = strings.TrimSpace(art.Excerpt())
		if s := strings.TrimSpace(art.SiteName()); s != "" {
			p.Site = s
		}
		p.Language = art.Language()
		if t, err := art.PublishedTime(); err == nil {
			p.Published = t
		}
		p.Image = resolve(u, art.ImageURL())
		p.Favicon = resolve(u, art.Favicon())
		if art.Node != nil {
			dropLegalese(art.Node)
			p.Text = normalizeText(render.InnerText(art.Node))
			p.content = art.Node
			p.Method = "readability"
		}
	}
	if p.Title == "" {
		p.Title = meta.title
	}
	if p.Published.IsZero() && meta.published != "" {
		p.Published = hitDate(meta.published, time.Now())
	}
	if p.Favicon == "" {
		// Readability picks only PNG icons with a size; any icon the page
		// names beats guessing /favicon.ico.
		p.Favicon = resolve(u, cmp.Or(meta.icon, "/favicon.ico"))
	}
	if w := countWords(p.Text); w < minArticleWords || w < 400 {
		// Too little, or perhaps one post of a thread that readability
		// took for the whole page: the plain text wins when it is much
		// longer and holds what readability found.
		fb := fallbackText(doc)
		fw := countWords(fb)
		if w < minArticleWords && fw > w || fw > 2*w && holds(fb, p.Text) {
			p.Text, p.Method, p.content = fb, "text", nil
		}
	}
	if p.Method == "" {
		p.Method = "text"
	}
	p.Words = countWords(p.Text)
	p.Unusable = unusable(p.Text, p.Words, meta.visible)
	return p, nil
}

// docMeta is what scanDocument gathers beside the Page's own fields.
type docMeta struct {
	title, published string
	// icon is the first <link rel="icon">'s address, as written.
	icon string
	// visible is the start of the document's visible text, for telling
	// consent walls and script-only shells apart from short articles.
	visible string
}

// scanDocument reads what readability does not report: og:type, a
// fallback title and date, and how much of the page is links.
func scanDocument(doc *html.Node, p *Page) docMeta {
	var m docMeta
	var vis strings.Builder
	var walk func(n *html.Node, inLink bool)
	walk = func(n *html.Node, inLink bool) {
		switch n.Type {
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Svg:
				return
			case atom.Title:
				if m.title == "" && n.FirstChild != nil {
					m.title = strings.TrimSpace(n.FirstChild.Data)
				}
			case atom.Meta:
				prop := strings.ToLower(attr(n, "property") + attr(n, "name") + attr(n, "itemprop"))
				content := attr(n, "content")
				switch prop {
				case "og:type":
					p.Type = strings.ToLower(content)
				case "article:published_time", "datepublished", "date", "pubdate", "dc.date", "parsely-pub-date", "sailthru.date":
					if m.published == "" {
						m.published = content
					}
				}
			case atom.Link:
				rel := " " + strings.ToLower(attr(n, "rel")) + " "
				if m.icon == "" && strings.Contains(rel, " icon ") {
					m.icon = attr(n, "href")
				}
			case atom.Time:
				if m.published == "" {
					m.published = attr(n, "datetime")
				}
			case atom.A:
				if attr(n, "href") != "" {
					p.Links++
					inLink = true
				}
			}
		case html.TextNode:
			w := countWords(n.Data)
			if inLink {
				p.LinkWords += w
			}
			if vis.Len() < 8<<10 {
				vis.WriteString(n.Data)
				vis.WriteByte(' ')
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inLink)
		}
	}
	walk(doc, false)
	m.visible = strings.Join(strings.Fields(vis.String()), " ")
	return m
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// boilerplate matches class and id names of page furniture.
var boilerplate = regexp.MustCompile(`(?i)(^|[-_ ])(nav|navbar|menu|header|footer|sidebar|aside|share|social|newsletter|subscribe|related|recommend|comments?|cookie|consent|banner|promo|advert|ads?|breadcrumbs?|masthead|popup|modal|toolbar|ticker|widget|outbrain|taboola)([-_ ]|$)`)

// reLegalese matches the copyright and reuse notices sites put after an
// article, which readability keeps as the article's sibling.
var reLegalese = regexp.MustCompile(`(?i)(subject to copyright|all rights reserved|no part (of this \w+ )?may be reproduced|may not be (re)?published, broadcast|^\s*(©|\(c\)|copyright)\s*\d{4}|\bretrieved \d{1,2} \w+ \d{4} from\b)`)

// dropLegalese removes short paragraphs that are copyright notices.
func dropLegalese(root *html.Node) {
	var doomed []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.DataAtom == atom.P || n.DataAtom == atom.Small) {
			if t := textOf(n); countWords(t) < 60 && reLegalese.MatchString(t) {
				doomed = append(doomed, n)
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	for _, n := range doomed {
		n.Parent.RemoveChild(n)
	}
}

// furniture matches class and id names of what is never the article.
var furniture = regexp.MustCompile(`(?i)(^|[-_ ])(nav|navbar|navigation|menu|dropdown|portlet|sidebar|share|sharing|social|newsletter|subscribe|signup|related|recommended|cookie|consent|promo|advert|ads|breadcrumbs?|popup|modal|ticker|outbrain|taboola|skip|jump-link|site-header|site-footer|masthead|alert-bar|contributions|donate|donation|epic|support-us|appeal|d-none|sr-only|visually-hidden)([-_ ]|$)`)

// reUIText matches the start of short blocks that are a site's own
// prompts and controls, not the article.
var reUIText = regexp.MustCompile(`(?i)^\s*(not the answer you're looking for|browse other questions tagged|edit this page|edit on github|improve this (page|answer|question)|was this (page|article) helpful|share this (article|story|page)|sign up for|subscribe to our|read more:?$|skip to (main )?content|jump to content|advertisement$|related (articles|stories)|emergency alert)`)

// stripFurniture removes navigation, banners, sign-up boxes, dialogs and
// hidden elements from doc, except an element holding most of the page's
// words, which is a layout wrapper whatever its name.
func stripFurniture(doc *html.Node) {
	total := countWords(textOf(doc))
	var doomed []*html.Node
	var walk func(n *html.Node, inArticle bool)
	walk = func(n *html.Node, inArticle bool) {
		if n.Type == html.ElementNode {
			if isFurniture(n, inArticle) {
				doomed = append(doomed, n)
				return
			}
			if n.DataAtom == atom.Article || n.DataAtom == atom.Main {
				inArticle = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inArticle)
		}
	}
	walk(doc, false)
	for _, n := range doomed {
		if countWords(textOf(n))*2 > total {
			continue
		}
		n.Parent.RemoveChild(n)
	}
}

// focusMain leaves only the page's <main> (or role=main) in the body when
// it holds most of the words: what sits outside it is the site's, not the
// article's, even when readability would take a container above it.
func focusMain(doc *html.Node) {
	var mains []*html.Node
	var body *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case n.DataAtom == atom.Body:
				body = n
			case n.DataAtom == atom.Main || strings.EqualFold(attr(n, "role"), "main"):
				mains = append(mains, n)
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(mains) != 1 || body == nil || mains[0].Parent == body && body.FirstChild == mains[0] && body.LastChild == mains[0] {
		return
	}
	main := mains[0]
	if countWords(textOf(main))*10 < countWords(textOf(body))*6 {
		return
	}
	main.Parent.RemoveChild(main)
	for c := body.FirstChild; c != nil; c = body.FirstChild {
		body.RemoveChild(c)
	}
	body.AppendChild(main)
}

func isFurniture(n *html.Node, inArticle bool) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Aside, atom.Dialog:
		return true
	case atom.Header, atom.Footer:
		// An article's own header holds its title and byline.
		return !inArticle
	case atom.Form:
		return countWords(textOf(n)) < 80
	}
	switch strings.ToLower(attr(n, "role")) {
	case "navigation", "contentinfo", "complementary", "dialog", "alertdialog", "menu", "menubar", "search":
		return true
	case "banner":
		return !inArticle
	}
	if attr(n, "aria-hidden") == "true" || hasAttr(n, "hidden") || strings.Contains(strings.ReplaceAll(strings.ToLower(attr(n, "style")), " ", ""), "display:none") {
		return true
	}
	if furniture.MatchString(attr(n, "class")) || furniture.MatchString(attr(n, "id")) || furniture.MatchString(attr(n, "data-component")) {
		return true
	}
	switch n.DataAtom {
	case atom.A, atom.P, atom.Div, atom.Li, atom.H2, atom.H3, atom.Span:
		if t := textOf(n); len(t) < 400 && reUIText.MatchString(t) {
			return true
		}
	}
	return false
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// textOf is the text of n's subtree as written, scripts and styles left
// out.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style || n.DataAtom == atom.Template) {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// holds reports whether most of the start of inner appears in outer: the
// plain text covers what readability chose.
func holds(outer, inner string) bool {
	sents := strings.FieldsFunc(inner, func(r rune) bool { return r == '\n' || r == '.' || r == '?' || r == '!' })
	flat := strings.Join(strings.Fields(outer), " ")
	checked, found := 0, 0
	for _, s := range sents {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) < 30 {
			continue
		}
		checked++
		if strings.Contains(flat, s) {
			found++
		}
		if checked == 6 {
			break
		}
	}
	return checked > 0 && found*4 >= checked*3
}

// fallbackText is the plain-text extraction used when readability finds
// too little: the visible text of the blocks that are not page furniture.
func fallbackText(doc *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Nav, atom.Header, atom.Footer,
				atom.Aside, atom.Form, atom.Iframe, atom.Button, atom.Select, atom.Head, atom.Dialog:
				return
			}
			switch strings.ToLower(attr(n, "role")) {
			case "navigation", "banner", "contentinfo", "complementary", "dialog", "alertdialog", "menu", "search":
				return
			}
			if boilerplate.MatchString(attr(n, "class")) || boilerplate.MatchString(attr(n, "id")) || attr(n, "hidden") != "" || attr(n, "aria-hidden") == "true" {
				return
			}
			if n.DataAtom == atom.Br {
				b.WriteString("\n")
			}
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && isBlock(n.DataAtom) {
			b.WriteString("\n\n")
		}
	}
	walk(doc)
	// Keep the lines that read like prose, not menus.
	var out []string
	for _, para := range strings.Split(normalizeText(b.String()), "\n\n") {
		if countWords(para) >= 8 || strings.ContainsAny(para, ".!?") && countWords(para) >= 4 {
			out = append(out, para)
		}
	}
	return strings.Join(out, "\n\n")
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Li, atom.Ul, atom.Ol, atom.Table, atom.Tr,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Blockquote, atom.Pre, atom.Dd, atom.Dt, atom.Figure, atom.Figcaption, atom.Td, atom.Th:
		return true
	}
	return false
}

// The signs of pages that are not the article they claim to be.
var (
	reConsent = regexp.MustCompile(`(?i)\b(cookies?|consent|accept all|reject all|manage (your )?(preferences|choices|options)|we value your privacy|before you continue|privacy settings|partners process)\b`)
	rePaywall = regexp.MustCompile(`(?i)(subscribe (now )?to (continue|keep) reading|subscribe to read|subscribers? only|already a subscriber|this (article|content) is (only )?(available|reserved) (to|for) subscribers|create a free account to (continue|read)|sign in to (continue|keep) reading|you('ve| have) (reached|used) (your|all) (free|of your free) (articles|limit))`)
	reNeedsJS = regexp.MustCompile(`(?i)(enable javascript|javascript (is )?(required|disabled|must be enabled)|requires javascript|turn on javascript|you need to enable javascript|browser (does not|doesn't) support javascript)`)
)

// unusable reports why a page with this main text is not an article.
func unusable(text string, words int, visible string) string {
	if words >= 250 {
		return ""
	}
	probe := text + " " + visible
	switch {
	case rePaywall.MatchString(probe):
		return "paywall"
	case reNeedsJS.MatchString(probe) && words < 80:
		return "needs JavaScript"
	case consentWall(text, words, probe):
		return "consent wall"
	case words < 25:
		return "too little text"
	}
	return ""
}

// consentWall reports a page whose text is about cookies and consent: a
// couple of mentions on a short page, or one in every 40 words of a
// longer one.
func consentWall(text string, words int, probe string) bool {
	if words < 150 && len(reConsent.FindAllString(probe, 4)) >= 2 {
		return true
	}
	return words < 400 && len(reConsent.FindAllString(text, -1))*40 >= words
}

// RenderMarkdown fills p.Markdown from the extracted content, or from the
// text when the content is not HTML.
func (p *Page) RenderMarkdown(u *url.URL) {
	if p.Markdown != "" {
		return
	}
	if p.content == nil {
		p.Markdown = p.Text
		return
	}
	var opts []converter.ConvertOptionFunc
	if u != nil {
		opts = append(opts, converter.WithDomain(u.Scheme+"://"+u.Host))
	}
	md, err := htmltomarkdown.ConvertNode(p.content, opts...)
	if err != nil {
		p.Markdown = p.Text
		return
	}
	p.Markdown = strings.TrimSpace(string(md))
}

// extractJSON pretty-prints a JSON document.
func extractJSON(text string, u *url.URL) (*Page, error) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(strings.TrimSpace(text)), "", "  "); err != nil {
		t := normalizeText(text)
		return &Page{Title: pathTitle(u), Site: siteOf(u), Text: t, Markdown: t, Method: "plain", Words: countWords(t)}, nil
	}
	t := buf.String()
	return &Page{Title: pathTitle(u), Site: siteOf(u), Text: t, Markdown: "```json\n" + t + "\n```", Method: "json", Words: countWords(t)}, nil
}

// normalizeText collapses runs of spaces within lines and runs of blank
// lines, and trims every line.
func normalizeText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.Join(strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' || r == '\u00a0' || r == '\f' || r == '\v' }), " ")
		if l == "" {
			blank++
			continue
		}
		if len(out) > 0 && blank > 0 {
			out = append(out, "")
		}
		blank = 0
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func countWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if !in {
				n++
			}
			in = true
		} else if r != '\'' && r != '’' && r != '-' {
			in = false
		}
	}
	return n
}

func siteOf(u *url.URL) string {
	if u == nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

func pathTitle(u *url.URL) string {
	if u == nil {
		return ""
	}
	p := strings.Trim(u.Path, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return siteOf(u)
	}
	if s, err := url.PathUnescape(p); err == nil && utf8.ValidString(s) {
		return s
	}
	return p
}

func resolve(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if base != nil {
		r = base.ResolveReference(r)
	}
	if r.Scheme != "http" && r.Scheme != "https" {
		return ""
	}
	return r.String()
}
