package chat

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/domo-agent/domo/host/agent"
)

// SourceList renders the sources listed under a lookup's answer, one
// "[n] title — site, date" each: the title is a hyperlink where the
// terminal takes them (OSC 8), else the address follows on its own line.
// Everything in it came from web pages and is cleaned; an address that is
// not plain http(s) is never made a link. It is "" for no sources.
func (t *Term) SourceList(sources []agent.Source) string {
	if len(sources) == 0 {
		return ""
	}
	dim := func(s string) string {
		if !t.Color {
			return s
		}
		return dimStyle.Render(s)
	}
	var b strings.Builder
	b.WriteString(dim("Sources:") + "\n")
	for _, s := range sources {
		title, link := oneLine(s.Title), linkable(s.URL)
		if title == "" {
			title = oneLine(s.URL)
		}
		if t.Links && link != "" {
			title = hyperlink(link, title)
		}
		fmt.Fprintf(&b, "  [%d] %s", s.N, title)
		if about := sourceAbout(s); about != "" {
			b.WriteString(dim(" — " + about))
		}
		b.WriteString("\n")
		if !t.Links || link == "" {
			fmt.Fprintf(&b, "      %s\n", dim(oneLine(s.URL)))
		}
	}
	return b.String()
}

// sourceAbout is "site, date" for a source, either part left out when
// unknown.
func sourceAbout(s agent.Source) string {
	var parts []string
	if site := oneLine(s.Site); site != "" {
		parts = append(parts, site)
	}
	if s.Published != "" {
		if p, err := time.Parse(time.RFC3339, s.Published); err == nil {
			parts = append(parts, p.Format("2 Jan 2006"))
		} else {
			parts = append(parts, oneLine(s.Published))
		}
	}
	return strings.Join(parts, ", ")
}

// linkable returns u when it is a plain http or https address that can go
// into an OSC 8 sequence unchanged, else "".
func linkable(u string) string {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	for _, r := range u {
		if r <= ' ' || r == 0x7f || r >= 0x80 {
			return ""
		}
	}
	return u
}

// hyperlink wraps text in an OSC 8 hyperlink to u.
func hyperlink(u, text string) string {
	return "\x1b]8;;" + u + "\x1b\\" + text + "\x1b]8;;\x1b\\"
}
