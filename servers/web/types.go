// Package web is the domo-web MCP server: web search through several
// providers behind one router, the top results read and extracted with
// readability, single pages read as clean text or Markdown, and news
// headlines. Every request, and every redirect hop, goes through one
// fetcher that refuses loopback, private, link-local and cloud-metadata
// addresses after DNS resolution unless an allowlist opens them.
package web

import (
	"context"
	"time"
)

// Query is what a provider is asked.
type Query struct {
	Text string
	// News asks for news articles rather than web pages.
	News bool
	// Recency is "", "day", "week", "month" or "year".
	Recency string
	// Max is how many hits the caller wants; a provider may return more
	// or fewer.
	Max int
	// Region is a country code like "US" or "GB"; Language a language
	// code like "en". Either may be empty.
	Region   string
	Language string
}

// Hit is one result as a provider returned it, before any page is read.
type Hit struct {
	Title   string
	URL     string
	Snippet string
	// Published is zero when the provider does not say.
	Published time.Time
	// Publisher is the publisher's name when the provider gives it
	// (Google News' <source>), e.g. "The Guardian".
	Publisher string
	Image     string
	// Favicon is the site's icon when the provider gives it.
	Favicon string
}

// Provider is one search backend.
type Provider interface {
	// Name is short and lowercase: "searxng", "duckduckgo", "googlenews",
	// "brave".
	Name() string
	// Search returns hits best first. An error means this provider failed
	// and the router should try the next one; no hits is not an error.
	Search(ctx context.Context, q Query) ([]Hit, error)
}

// Source is one result of web_search or news_headlines as the tools return
// it in structured content (and in the SOURCES_JSON block).
type Source struct {
	// N is the citation number, from 1.
	N     int    `json:"n" jsonschema:"the citation number, from 1"`
	Title string `json:"title" jsonschema:"the article's title"`
	URL   string `json:"url" jsonschema:"the page's address, after unwrapping redirect links"`
	// Site is the host without "www.", or the publisher's name.
	Site string `json:"site" jsonschema:"the site or publisher"`
	// Published is RFC 3339, empty when unknown.
	Published string `json:"published,omitempty" jsonschema:"when it was published (RFC 3339), when known"`
	Favicon   string `json:"favicon,omitempty" jsonschema:"the site's icon"`
	Image     string `json:"image,omitempty" jsonschema:"the article's lead image"`
	// Snippet is the provider's short description.
	Snippet string `json:"snippet,omitempty" jsonschema:"the search engine's description"`
	// Content is the page's extracted text, bounded; empty when the page
	// was not read or unusable.
	Content string `json:"content,omitempty" jsonschema:"the page's main text, extracted and shortened"`
	// Status says what became of the page: "read", "not read" (auto_read
	// off or beyond the time limit), "unusable: …" (a consent wall, a
	// paywall, a page needing JavaScript, a section front in news mode,
	// too little text) or "failed: …".
	Status   string `json:"status" jsonschema:"read, not read, unusable: why, or failed: why"`
	Provider string `json:"provider" jsonschema:"the search provider that found it"`
}

// SearchResult is the structured content of web_search and news_headlines.
type SearchResult struct {
	Query    string   `json:"query"`
	Mode     string   `json:"mode" jsonschema:"web or news"`
	Recency  string   `json:"recency,omitempty"`
	Provider string   `json:"provider" jsonschema:"the provider whose results these are"`
	Sources  []Source `json:"sources"`
	// Notes tell what went wrong on the way (a provider that failed, pages
	// that timed out), for the model and the user.
	Notes []string `json:"notes,omitempty"`
}
