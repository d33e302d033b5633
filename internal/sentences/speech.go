package sentences

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// codeOmitted is said once in place of code blocks: reading code aloud
// helps no one.
const codeOmitted = "Code omitted."

var markdown = goldmark.New(goldmark.WithExtensions(
	extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList,
))

// ForSpeech turns Markdown into plain text to be spoken: the words of
// emphasis, code spans and links without their marks, bare URLs as their
// host, table rows as cells separated by commas, and code blocks as
// "Code omitted." once. Headings, list items, table rows and paragraphs
// become blocks separated by a blank line, so [Split] ends a sentence at
// each; inside a block, whitespace is collapsed.
func ForSpeech(markdownText string) string {
	src := []byte(markdownText)
	doc := markdown.Parser().Parse(text.NewReader(src))
	sp := speech{src: src}
	sp.block(doc)
	return strings.Join(sp.blocks, "\n\n")
}

type speech struct {
	src      []byte
	blocks   []string
	codeSaid bool
}

// add ends a block of text.
func (sp *speech) add(s string) {
	if s = strings.Join(strings.Fields(s), " "); s != "" {
		sp.blocks = append(sp.blocks, s)
	}
}

// block speaks a block node and its children.
func (sp *speech) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		if !sp.codeSaid {
			sp.add(codeOmitted)
			sp.codeSaid = true
		}
	case *ast.HTMLBlock, *ast.ThematicBreak:
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		var b strings.Builder
		sp.inline(&b, n)
		s := b.String()
		if strings.HasPrefix(strings.TrimSpace(s), "|") {
			s = pipeCells(s)
		}
		sp.add(s)
	case *east.TableHeader, *east.TableRow:
		var cells []string
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			var b strings.Builder
			sp.inline(&b, c)
			if s := strings.TrimSpace(b.String()); s != "" {
				cells = append(cells, s)
			}
		}
		sp.add(strings.Join(cells, ", "))
	case *ast.ListItem:
		first := len(sp.blocks)
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			sp.block(c)
		}
		// Numbers of ordered items stay: "step 2" may be referred to.
		if l, ok := n.Parent().(*ast.List); ok && l.IsOrdered() && first < len(sp.blocks) {
			num := l.Start
			for p := n.PreviousSibling(); p != nil; p = p.PreviousSibling() {
				num++
			}
			sp.blocks[first] = strconv.Itoa(num) + ". " + sp.blocks[first]
		}
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			sp.block(c)
		}
	}
}

// inline writes the words of n's inline children.
func (sp *speech) inline(b *strings.Builder, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(sp.src)
			if !c.IsRaw() {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if t, ok := t.(*ast.Text); ok {
					b.Write(t.Value(sp.src))
				}
			}
		case *ast.AutoLink:
			if c.AutoLinkType == ast.AutoLinkEmail {
				b.Write(c.Label(sp.src))
			} else {
				b.WriteString(host(string(c.URL(sp.src))))
			}
		case *ast.Link:
			var l strings.Builder
			sp.inline(&l, c)
			if strings.TrimSpace(l.String()) == "" {
				l.WriteString(host(string(c.Destination)))
			}
			b.WriteString(l.String())
		case *ast.RawHTML, *east.TaskCheckBox:
		default: // emphasis, strikethrough, image alt text
			sp.inline(b, c)
		}
	}
}

// pipeCells reads a table row that came without the rest of its table,
// as a sentence of a streamed reply does: "| a | b |" is "a, b", and the
// "|---|:--|" under a header is nothing.
func pipeCells(row string) string {
	var cells []string
	for c := range strings.SplitSeq(row, "|") {
		if c = strings.TrimSpace(c); strings.Trim(c, "-: ") != "" {
			cells = append(cells, c)
		}
	}
	return strings.Join(cells, ", ")
}

// host is what is said for a URL: its host without "www.".
func host(link string) string {
	u, err := url.Parse(link)
	if err != nil || u.Host == "" {
		u, err = url.Parse("http://" + link)
	}
	if err != nil || u.Hostname() == "" {
		return link
	}
	return strings.TrimPrefix(u.Hostname(), "www.")
}
