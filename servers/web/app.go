package web

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// Endpoints are the providers' addresses; tests and self-hosted mirrors
// change them.
type Endpoints struct {
	SearxNG    string
	DuckDuckGo string
	GoogleNews string
	Brave      string
	BraveKey   string
}

// DefaultEndpoints are the public services' addresses.
var DefaultEndpoints = Endpoints{
	DuckDuckGo: "https://html.duckduckgo.com/html/",
	GoogleNews: "https://news.google.com/rss",
	Brave:      "https://api.search.brave.com",
}

// knownProviders in their default order for web pages and for news.
var (
	webOrder  = []string{"searxng", "brave", "duckduckgo"}
	newsOrder = []string{"googlenews", "searxng", "brave", "duckduckgo"}
)

// Providers builds the web and news provider lists from names (empty: all
// that are configured, in the default order). SearxNG needs a URL and
// Brave a key; naming one that is not configured is an error.
func Providers(f *Fetcher, names []string, ep Endpoints) (web, news []Provider, err error) {
	build := func(name string, explicit bool) (Provider, error) {
		switch name {
		case "searxng":
			if ep.SearxNG == "" {
				if explicit {
					return nil, fmt.Errorf("%w: provider searxng needs --searxng-url", mcpkit.ErrUsage)
				}
				return nil, nil
			}
			return NewSearxNG(f, ep.SearxNG), nil
		case "brave":
			if ep.BraveKey == "" {
				if explicit {
					return nil, fmt.Errorf("%w: provider brave needs an API key in $BRAVE_API_KEY (or --brave-key-env)", mcpkit.ErrUsage)
				}
				return nil, nil
			}
			return NewBrave(f, ep.BraveKey, ep.Brave), nil
		case "duckduckgo", "ddg":
			return NewDuckDuckGo(f, ep.DuckDuckGo), nil
		case "googlenews", "google-news", "gnews":
			return NewGoogleNews(f, ep.GoogleNews), nil
		}
		return nil, fmt.Errorf("%w: unknown provider %q: want searxng, brave, duckduckgo or googlenews", mcpkit.ErrUsage, name)
	}
	add := func(list []Provider, order []string, explicit bool, newsOnly bool) ([]Provider, error) {
		for _, n := range order {
			n = strings.ToLower(strings.TrimSpace(n))
			if n == "" || (!newsOnly && (n == "googlenews" || n == "google-news" || n == "gnews")) {
				continue
			}
			p, err := build(n, explicit)
			if err != nil {
				return nil, err
			}
			if p != nil {
				list = append(list, p)
			}
		}
		return list, nil
	}
	if len(names) == 0 {
		if web, err = add(nil, webOrder, false, false); err != nil {
			return nil, nil, err
		}
		news, err = add(nil, newsOrder, false, true)
		return web, news, err
	}
	if web, err = add(nil, names, true, false); err != nil {
		return nil, nil, err
	}
	news, err = add(nil, names, true, true)
	return web, news, err
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

func envOr(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// App is the domo-web command: its flags and server.
func App() mcpkit.App {
	var (
		providers, allow, keyEnv string
		ep                       = DefaultEndpoints
		fo                       FetcherOptions
		region, language         string
		pageTimeout, readTimeout time.Duration
	)
	return mcpkit.App{
		Name:    "domo-web",
		Summary: "MCP server for web search, news and reading pages, with an SSRF guard",
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&providers, "providers", os.Getenv("DOMO_WEB_PROVIDERS"), "search providers to use, in order: `LIST` of searxng, brave, duckduckgo, googlenews (default: every one configured; googlenews serves news only)")
			fs.StringVar(&ep.SearxNG, "searxng-url", envOr("DOMO_WEB_SEARXNG_URL", "SEARXNG_URL"), "a SearxNG instance's `URL` (its JSON format must be enabled)")
			fs.StringVar(&keyEnv, "brave-key-env", "BRAVE_API_KEY", "the environment `VARIABLE` holding a Brave Search API key")
			fs.StringVar(&ep.DuckDuckGo, "duckduckgo-url", ep.DuckDuckGo, "DuckDuckGo's HTML endpoint `URL`")
			fs.StringVar(&ep.GoogleNews, "googlenews-url", ep.GoogleNews, "Google News' RSS `URL`")
			fs.StringVar(&ep.Brave, "brave-url", ep.Brave, "Brave Search API's base `URL`")
			fs.StringVar(&allow, "allow", os.Getenv("DOMO_WEB_ALLOW"), "let requests reach these otherwise blocked hosts: `LIST` of names, addresses and prefixes (e.g. searx.lan,192.168.1.0/24)")
			fs.BoolVar(&fo.Robots, "respect-robots", os.Getenv("DOMO_WEB_RESPECT_ROBOTS") == "true", "honour robots.txt when reading pages")
			fs.DurationVar(&fo.Timeout, "timeout", 15*time.Second, "the longest one request may take")
			fs.DurationVar(&pageTimeout, "page-timeout", 8*time.Second, "the longest reading one search result may take")
			fs.DurationVar(&readTimeout, "read-timeout", 12*time.Second, "the longest reading all of one search's results may take")
			fs.Int64Var(&fo.MaxBytes, "max-bytes", 5<<20, "the largest page, in bytes, that is read")
			fs.DurationVar(&fo.CacheTTL, "cache-ttl", 10*time.Minute, "how long fetched pages are kept for follow-ups (0 keeps the default, negative turns the cache off)")
			fs.StringVar(&region, "region", envOr("DOMO_WEB_REGION"), "the default news region, a country code such as US")
			fs.StringVar(&language, "language", envOr("DOMO_WEB_LANGUAGE"), "the default news language, such as en")
		},
		Build: func(ctx context.Context, args []string, listOnly bool) (*mcpkit.Server, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("%w: domo-web takes no arguments (got %q)", mcpkit.ErrUsage, args[0])
			}
			Version = mcpkit.Version
			fo.Allow = splitList(allow)
			f, err := NewFetcher(fo)
			if err != nil {
				return nil, fmt.Errorf("%w: --allow: %v", mcpkit.ErrUsage, err)
			}
			ep.BraveKey = os.Getenv(keyEnv)
			web, news, err := Providers(f, splitList(providers), ep)
			if err != nil {
				return nil, err
			}
			e := &Engine{Fetch: f, Web: web, News: news, PageTimeout: pageTimeout, ReadTimeout: readTimeout}
			s := NewServer(e)
			if region != "" {
				s.Region = strings.ToUpper(region)
			}
			if language != "" {
				s.Language = language
			}
			return s.MCP()
		},
	}
}
