package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/servers/internal/mcpkit"
)

// Server offers a Store as MCP tools.
type Server struct {
	store *Store
}

// NewServer serves store.
func NewServer(store *Store) *Server { return &Server{store: store} }

const instructions = `domo-memory is long-term memory about the user, kept across conversations in a local SQLite file. ` +
	`Call memory_recall before answering anything that may depend on what you were told before (names, preferences, plans), ` +
	`and memory_remember when the user tells you something durable about themselves. Store one fact per memory, in a full sentence ` +
	`that makes sense on its own ("The user's boss is Sarah Chen"). Never store passwords or keys. Cite memories by id, e.g. [m12].`

// MCP builds the MCP server offering the memory tools.
func (s *Server) MCP() (*mcpkit.Server, error) {
	return mcpkit.NewServer("domo-memory", instructions, s.Tools())
}

// Tools lists every tool of the memory server.
func (s *Server) Tools() []mcpkit.Tool {
	return []mcpkit.Tool{
		s.remember(),
		s.recall(),
		s.forget(),
		s.list(),
		s.update(),
		s.link(),
		s.entities(),
		s.stats(),
		s.importGraph(),
	}
}

var (
	reads   = mcpkit.Annotations{ReadOnly: mcpkit.Yes, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}
	adds    = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.No, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}
	changes = mcpkit.Annotations{ReadOnly: mcpkit.No, Destructive: mcpkit.Yes, Idempotent: mcpkit.Yes, OpenWorld: mcpkit.No}
)

// rememberArgs is one memory to store.
type memoryArgs struct {
	Text        string   `json:"text" jsonschema:"the memory: one self-contained sentence, e.g. The user's daughter Mia was born on 2019-04-02"`
	Kind        string   `json:"kind,omitempty" jsonschema:"fact (default), preference, event, note or summary"`
	Tags        []string `json:"tags,omitempty" jsonschema:"short topic words, e.g. family, work"`
	Importance  *float64 `json:"importance,omitempty" jsonschema:"0..1, how much this matters for later (default 0.5)"`
	Sensitivity string   `json:"sensitivity,omitempty" jsonschema:"normal or sensitive (health, money, identity...); guessed from the text when not given. Sensitive memories are recalled only when a query asks for them"`
	Source      string   `json:"source,omitempty" jsonschema:"where this came from, e.g. the conversation or tool"`
	Entities    []string `json:"entities,omitempty" jsonschema:"names of the people, places, organizations or things it is about"`
	OccurredAt  string   `json:"occurred_at,omitempty" jsonschema:"when it happened, for events: a date like 2026-03-02 or an RFC 3339 time"`
}

func (a memoryArgs) toNew(now time.Time) (NewMemory, error) {
	m := NewMemory{Text: a.Text, Kind: a.Kind, Tags: a.Tags, Importance: a.Importance, Sensitivity: a.Sensitivity, Source: a.Source, Entities: a.Entities}
	if a.OccurredAt != "" {
		t, err := parseTime(a.OccurredAt, now)
		if err != nil {
			return m, fmt.Errorf("occurred_at: %w", err)
		}
		m.Occurred = t
	}
	return m, nil
}

type rememberArgs struct {
	memoryArgs
	Memories []memoryArgs `json:"memories,omitempty" jsonschema:"several memories at once (up to 1000), instead of text and the fields beside it"`
}

func (a *rememberArgs) Validate() error {
	one := a.Text != "" || a.Kind != "" || len(a.Tags) > 0 || a.Importance != nil || a.Sensitivity != "" || a.Source != "" || len(a.Entities) > 0 || a.OccurredAt != ""
	switch {
	case len(a.Memories) > 0 && one:
		return errors.New("give either text (one memory) or memories (several), not both")
	case len(a.Memories) == 0 && strings.TrimSpace(a.Text) == "":
		return errEmptyText
	case len(a.Memories) > 1000:
		return fmt.Errorf("%d memories in one call; send at most 1000 at a time", len(a.Memories))
	}
	return nil
}

type rememberResult struct {
	Results []Outcome `json:"results"`
}

func (s *Server) remember() mcpkit.Tool {
	return mcpkit.NewTool("memory_remember",
		"Store something worth remembering about the user across conversations: a fact, preference, event, note or summary. "+
			"One self-contained sentence per memory. Writing a near-duplicate of an existing memory updates that memory instead of adding a copy. "+
			"Credentials (passwords, API keys) are refused.",
		adds,
		func(ctx context.Context, req mcp.CallToolRequest, in rememberArgs) (*mcp.CallToolResult, error) {
			now := s.store.now()
			batch := in.Memories
			if len(batch) == 0 {
				batch = []memoryArgs{in.memoryArgs}
			}
			ms := make([]NewMemory, len(batch))
			for i, a := range batch {
				m, err := a.toNew(now)
				if err != nil {
					if len(batch) > 1 {
						return nil, fmt.Errorf("memories[%d]: %w", i, err)
					}
					return nil, err
				}
				ms[i] = m
			}
			out, err := s.store.Remember(ctx, ms)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			counts := map[string]int{}
			for i, o := range out {
				counts[o.Status]++
				if i < 50 {
					fmt.Fprintf(&b, "%s %s: %s\n", o.ID, o.Status, oneLine(ms[i].Text, 120))
					if o.Merged != "" && o.Merged != ms[i].Text {
						fmt.Fprintf(&b, "   (was: %s)\n", oneLine(o.Merged, 120))
					}
				}
			}
			if len(out) > 50 {
				fmt.Fprintf(&b, "… and %d more: %d created, %d updated, %d unchanged in all\n", len(out)-50, counts["created"], counts["updated"], counts["unchanged"])
			}
			return mcpkit.Structured(strings.TrimSuffix(b.String(), "\n"), rememberResult{Results: out}), nil
		},
		mcpkit.Title("Remember"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			memorySchema(sc)
			// text is required only without memories; Validate says so.
			sc.Required = nil
			memorySchema(sc.Properties["memories"].Items)
			sc.Properties["memories"].MaxItems = ptr(1000)
		}),
		mcpkit.Output[rememberResult](nil),
	)
}

func ptr[T any](v T) *T { return &v }

// memorySchema refines the schema of one memory's fields.
func memorySchema(sc *jsonschema.Schema) {
	mcpkit.SetEnum(sc, "kind", kinds...)
	mcpkit.SetEnum(sc, "sensitivity", Normal, Sensitive)
	sc.Properties["sensitivity"].Default = nil
	imp := sc.Properties["importance"]
	imp.Types, imp.Type = nil, "number"
	imp.Minimum, imp.Maximum, imp.Default = ptr(0.0), ptr(1.0), json.RawMessage("0.5")
	sc.Properties["text"].MinLength = ptr(1)
	sc.Properties["text"].MaxLength = ptr(4000)
	sc.Properties["tags"].MaxItems = ptr(20)
	sc.Properties["entities"].MaxItems = ptr(20)
}

// filterArgs narrow a recall, list or forget.
type filterArgs struct {
	Kinds []string `json:"kinds,omitempty" jsonschema:"only these kinds: fact, preference, event, note, summary"`
	Tags  []string `json:"tags,omitempty" jsonschema:"only memories with any of these tags"`
	Since string   `json:"since,omitempty" jsonschema:"only memories from this time on (when they happened, else when stored): a date like 2026-03-02, an RFC 3339 time, or an age like 7d"`
	Until string   `json:"until,omitempty" jsonschema:"only memories up to this time, in the same forms as since"`
}

func (a filterArgs) filter(now time.Time) (Filter, error) {
	f := Filter{Kinds: a.Kinds, Tags: a.Tags}
	var err error
	if a.Since != "" {
		if f.Since, err = parseTime(a.Since, now); err != nil {
			return f, fmt.Errorf("since: %w", err)
		}
	}
	if a.Until != "" {
		if f.Until, err = parseTime(a.Until, now); err != nil {
			return f, fmt.Errorf("until: %w", err)
		}
		if len(a.Until) == len("2006-01-02") {
			f.Until = f.Until.Add(24*time.Hour - time.Millisecond) // the whole day
		}
	}
	return f, nil
}

func filterSchema(sc *jsonschema.Schema) {
	k := sc.Properties["kinds"].Items
	for _, v := range kinds {
		k.Enum = append(k.Enum, v)
	}
}

type recallArgs struct {
	Query string `json:"query" jsonschema:"what to remember, in words: a question or keywords, e.g. where does the user work"`
	filterArgs
	Limit            int      `json:"limit,omitempty" jsonschema:"most memories to return (default 8)"`
	MinScore         *float64 `json:"min_score,omitempty" jsonschema:"relevance gate 0..1 (default 0.2): weaker matches are left out"`
	IncludeSensitive bool     `json:"include_sensitive,omitempty" jsonschema:"also return sensitive memories (health, money, identity) the query does not name the topic of"`
}

func (s *Server) recall() mcpkit.Tool {
	return mcpkit.NewTool("memory_recall",
		"Recall what you know about the user that is relevant to a query, best first, as a compact list with ids to cite ([m12]) and scores. "+
			"Matches words (with stemming), tags, entity names and dates (\"march 2026\"), weighted by recency and importance; weak matches are left out. "+
			"An empty result means nothing relevant is remembered.",
		reads,
		func(ctx context.Context, req mcp.CallToolRequest, in recallArgs) (*mcp.CallToolResult, error) {
			f, err := in.filter(s.store.now())
			if err != nil {
				return nil, err
			}
			f.Sensitive = in.IncludeSensitive
			o := RecallOptions{Filter: f, Query: in.Query, Limit: cmp.Or(in.Limit, 8)}
			if in.MinScore != nil {
				o.MinScore = max(*in.MinScore, 1e-9)
			}
			r, err := s.store.Recall(ctx, o)
			if err != nil {
				return nil, err
			}
			return mcpkit.Structured(Pack(r), r), nil
		},
		mcpkit.Title("Recall"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			filterSchema(sc)
			mcpkit.SetInt(sc, "limit", 1, 50, 8)
			sc.Properties["query"].MinLength = ptr(1)
			sc.Properties["query"].MaxLength = ptr(2000)
			ms := sc.Properties["min_score"]
			ms.Types, ms.Type = nil, "number"
			ms.Minimum, ms.Maximum, ms.Default = ptr(0.0), ptr(1.0), json.RawMessage(fmt.Sprint(DefaultMinScore))
		}),
		mcpkit.Output[Recall](nil),
	)
}

// Pack renders a recall as the compact text a prompt holds.
func Pack(r *Recall) string {
	if len(r.Memories) == 0 {
		return fmt.Sprintf("No memories match %q.", oneLine(r.Query, 200))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s for %q (%s):\n", len(r.Memories), plural(len(r.Memories), "memory", "memories"), oneLine(r.Query, 200), r.Mode)
	for _, m := range r.Memories {
		b.WriteString(line(m, true))
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// line renders one memory on one line: id, kind, date, text, tags, score.
func line(m *Memory, score bool) string {
	date := m.Created
	if !m.Occurred.IsZero() {
		date = m.Occurred
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s · %s · %s", m.ID, m.Kind, date.Format(time.DateOnly), oneLine(m.Text, 500))
	for _, t := range m.Tags {
		b.WriteString(" #" + t)
	}
	if len(m.Entities) > 0 {
		b.WriteString(" (about " + strings.Join(m.Entities, ", ") + ")")
	}
	if m.Sensitivity == Sensitive {
		b.WriteString(" [sensitive]")
	}
	if score {
		fmt.Fprintf(&b, " (%.2f)", m.Score)
	}
	return b.String()
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type forgetArgs struct {
	IDs      []string `json:"ids,omitempty" jsonschema:"ids of memories to delete, e.g. m12; deleted at once"`
	Query    string   `json:"query,omitempty" jsonschema:"delete the memories a recall for this query returns; without confirm only a preview is shown"`
	Entities []string `json:"entities,omitempty" jsonschema:"delete these entities with their relations and the memories only about them"`
	filterArgs
	Confirm bool `json:"confirm,omitempty" jsonschema:"with query or filters: actually delete what the preview showed"`
}

func (a *forgetArgs) Validate() error {
	filtered := a.Query != "" || len(a.Kinds)+len(a.Tags) > 0 || a.Since != "" || a.Until != ""
	n := 0
	for _, given := range []bool{len(a.IDs) > 0, filtered, len(a.Entities) > 0} {
		if given {
			n++
		}
	}
	switch {
	case n == 0:
		return errors.New("say what to forget: ids, a query (with a preview first), or entities")
	case n > 1:
		return errors.New("give only one of ids, query/filters, or entities")
	case len(a.IDs) > 1000:
		return errors.New("at most 1000 ids at a time")
	}
	return nil
}

type forgetResult struct {
	Forgotten []string  `json:"forgotten"`
	Missing   []string  `json:"missing,omitempty"`
	Entities  []string  `json:"entities,omitempty"`
	Preview   bool      `json:"preview"`
	Matches   []*Memory `json:"matches,omitempty"`
}

// The most a forget by query deletes in one call: a preview longer than
// this is not one a person can check.
const maxForget = 200

func (s *Server) forget() mcpkit.Tool {
	return mcpkit.NewTool("memory_forget",
		"Delete memories: by id at once; by query or filters after a preview (call again with confirm: true to delete exactly what the preview listed); "+
			"or entities with their relations and the memories that are only about them. Deleted memories cannot be restored.",
		changes,
		func(ctx context.Context, req mcp.CallToolRequest, in forgetArgs) (*mcp.CallToolResult, error) {
			switch {
			case len(in.IDs) > 0:
				ids := make([]int64, len(in.IDs))
				for i, v := range in.IDs {
					id, err := parseID(v)
					if err != nil {
						return nil, err
					}
					ids[i] = id
				}
				done, missing, err := s.store.Forget(ctx, ids)
				if err != nil {
					return nil, err
				}
				text := fmt.Sprintf("Forgot %d %s", len(done), plural(len(done), "memory", "memories"))
				if len(done) > 0 {
					text += ": " + strings.Join(done, ", ")
				}
				if len(missing) > 0 {
					text += fmt.Sprintf(". No memory has the id %s (already forgotten?)", strings.Join(missing, ", "))
				}
				return mcpkit.Structured(text+".", forgetResult{Forgotten: orEmpty(done), Missing: missing}), nil
			case len(in.Entities) > 0:
				ents, mems, missing, err := s.store.ForgetEntities(ctx, in.Entities)
				if err != nil {
					return nil, err
				}
				text := fmt.Sprintf("Forgot %d %s and %d %s about only them", len(ents), plural(len(ents), "entity", "entities"), len(mems), plural(len(mems), "memory", "memories"))
				if len(ents) > 0 {
					text += " (" + strings.Join(ents, ", ") + ")"
				}
				if len(missing) > 0 {
					text += ". No entity is named " + strings.Join(missing, ", ")
				}
				return mcpkit.Structured(text+".", forgetResult{Forgotten: orEmpty(mems), Entities: ents, Missing: missing}), nil
			}
			f, err := in.filter(s.store.now())
			if err != nil {
				return nil, err
			}
			f.Sensitive = true
			ms, total, err := s.store.Matching(ctx, in.Query, f, maxForget)
			if err != nil {
				return nil, err
			}
			if len(ms) == 0 {
				return mcpkit.Structured("Nothing matches; nothing was deleted.", forgetResult{Forgotten: []string{}, Preview: !in.Confirm}), nil
			}
			if !in.Confirm {
				var b strings.Builder
				fmt.Fprintf(&b, "Preview: these %d %s would be deleted", len(ms), plural(len(ms), "memory", "memories"))
				if total > len(ms) {
					fmt.Fprintf(&b, " (of %d matching; at most %d per call)", total, maxForget)
				}
				b.WriteString(". Nothing was deleted yet; call memory_forget again with the same arguments and confirm: true, or with ids to delete only some.\n")
				for _, m := range ms {
					b.WriteString(line(m, false) + "\n")
				}
				return mcpkit.Structured(strings.TrimSuffix(b.String(), "\n"), forgetResult{Forgotten: []string{}, Preview: true, Matches: ms}), nil
			}
			ids := make([]int64, len(ms))
			for i, m := range ms {
				ids[i] = m.rowid
			}
			done, _, err := s.store.Forget(ctx, ids)
			if err != nil {
				return nil, err
			}
			return mcpkit.Structured(fmt.Sprintf("Forgot %d %s: %s.", len(done), plural(len(done), "memory", "memories"), strings.Join(done, ", ")),
				forgetResult{Forgotten: orEmpty(done)}), nil
		},
		mcpkit.Title("Forget"),
		mcpkit.InputSchema(filterSchema),
		mcpkit.Output[forgetResult](nil),
	)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// page is which part of a long list a call wants.
type page struct {
	Limit  int `json:"limit,omitempty" jsonschema:"how many per page (default 20)"`
	Offset int `json:"offset,omitempty" jsonschema:"how many to skip, for the next page"`
}

func pageSchema(sc *jsonschema.Schema) {
	mcpkit.SetInt(sc, "limit", 1, 200, 20)
	sc.Properties["offset"].Minimum = ptr(0.0)
}

// paged says how much a page leaves out.
type paged struct {
	Total      int `json:"total"`
	NextOffset int `json:"next_offset,omitempty"`
}

type listArgs struct {
	filterArgs
	Source string `json:"source,omitempty" jsonschema:"only memories from this source"`
	Sort   string `json:"sort,omitempty" jsonschema:"newest (default), oldest, importance, recalled (most recently recalled first) or updated"`
	page
}

type listResult struct {
	Memories []*Memory `json:"memories"`
	paged
}

func (s *Server) list() mcpkit.Tool {
	return mcpkit.NewTool("memory_list",
		"List stored memories a page at a time, newest first unless sort says otherwise, optionally filtered by kind, tag, time or source. "+
			"Sensitive memories are listed too. Use memory_recall to find memories about something.",
		reads,
		func(ctx context.Context, req mcp.CallToolRequest, in listArgs) (*mcp.CallToolResult, error) {
			f, err := in.filter(s.store.now())
			if err != nil {
				return nil, err
			}
			f.Source, f.Sensitive = in.Source, true
			limit := cmp.Or(in.Limit, 20)
			ms, total, err := s.store.List(ctx, ListOptions{Filter: f, Sort: in.Sort, Limit: limit, Offset: in.Offset})
			if err != nil {
				return nil, err
			}
			res := listResult{Memories: ms, paged: paged{Total: total}}
			if res.Memories == nil {
				res.Memories = []*Memory{}
			}
			var b strings.Builder
			switch {
			case total == 0:
				b.WriteString("No memories match.")
			case len(ms) == 0:
				fmt.Fprintf(&b, "No memories past offset %d; %d match in all.", in.Offset, total)
			default:
				fmt.Fprintf(&b, "Memories %d–%d of %d:\n", in.Offset+1, in.Offset+len(ms), total)
				for _, m := range ms {
					b.WriteString(line(m, false) + "\n")
				}
				if next := in.Offset + len(ms); next < total {
					res.NextOffset = next
					fmt.Fprintf(&b, "More: call again with offset %d.", next)
				}
			}
			return mcpkit.Structured(strings.TrimSuffix(b.String(), "\n"), res), nil
		},
		mcpkit.Title("List memories"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			filterSchema(sc)
			mcpkit.SetEnum(sc, "sort", "newest", "oldest", "importance", "recalled", "updated")
			pageSchema(sc)
		}),
		mcpkit.Output[listResult](nil),
	)
}

type updateArgs struct {
	ID          string    `json:"id" jsonschema:"the memory to change, e.g. m12"`
	Text        *string   `json:"text,omitempty" jsonschema:"new text"`
	Kind        *string   `json:"kind,omitempty" jsonschema:"new kind"`
	Tags        *[]string `json:"tags,omitempty" jsonschema:"replace all tags"`
	AddTags     []string  `json:"add_tags,omitempty" jsonschema:"tags to add"`
	RemoveTags  []string  `json:"remove_tags,omitempty" jsonschema:"tags to remove"`
	Importance  *float64  `json:"importance,omitempty" jsonschema:"new importance 0..1"`
	Sensitivity *string   `json:"sensitivity,omitempty" jsonschema:"normal or sensitive"`
	Entities    *[]string `json:"entities,omitempty" jsonschema:"replace the entities it is about"`
	OccurredAt  *string   `json:"occurred_at,omitempty" jsonschema:"when it happened: a date like 2026-03-02 or an RFC 3339 time"`
}

func (s *Server) update() mcpkit.Tool {
	return mcpkit.NewTool("memory_update",
		"Change a stored memory: its text (e.g. to correct it), kind, tags, importance, sensitivity, entities or date. Fields not given stay as they are.",
		changes,
		func(ctx context.Context, req mcp.CallToolRequest, in updateArgs) (*mcp.CallToolResult, error) {
			id, err := parseID(in.ID)
			if err != nil {
				return nil, err
			}
			c := Change{Text: in.Text, Kind: in.Kind, Tags: in.Tags, AddTags: in.AddTags, RemoveTags: in.RemoveTags,
				Importance: in.Importance, Sensitivity: in.Sensitivity, Entities: in.Entities}
			if in.OccurredAt != nil {
				t, err := parseTime(*in.OccurredAt, s.store.now())
				if err != nil {
					return nil, fmt.Errorf("occurred_at: %w", err)
				}
				c.Occurred = &t
			}
			m, err := s.store.Update(ctx, id, c)
			if errors.Is(err, errNotFound) {
				return nil, fmt.Errorf("no memory has the id %s; find ids with memory_recall or memory_list", formatID(id))
			}
			if err != nil {
				return nil, err
			}
			return mcpkit.Structured("Updated: "+line(m, false), m), nil
		},
		mcpkit.Title("Update memory"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) {
			for _, p := range []string{"text", "kind", "sensitivity", "occurred_at", "importance"} {
				sc.Properties[p].Types = nil
			}
			sc.Properties["text"].Type = "string"
			mcpkit.SetEnum(sc, "kind", kinds...)
			sc.Properties["kind"].Default = nil
			mcpkit.SetEnum(sc, "sensitivity", Normal, Sensitive)
			sc.Properties["sensitivity"].Default = nil
			sc.Properties["occurred_at"].Type = "string"
			imp := sc.Properties["importance"]
			imp.Type, imp.Minimum, imp.Maximum = "number", ptr(0.0), ptr(1.0)
		}),
		mcpkit.Output[Memory](nil),
	)
}

type linkArgs struct {
	Link
	Links  []Link `json:"links,omitempty" jsonschema:"several links at once, instead of from, relation and to"`
	Remove bool   `json:"remove,omitempty" jsonschema:"remove the links instead of adding them"`
}

func (a *linkArgs) Validate() error {
	one := a.From != "" || a.To != "" || a.Relation != ""
	switch {
	case one && len(a.Links) > 0:
		return errors.New("give either from, relation and to (one link) or links (several), not both")
	case !one && len(a.Links) == 0:
		return errors.New("give from, relation and to, e.g. from: Sarah Chen, relation: boss_of, to: user")
	case len(a.Links) > 1000:
		return errors.New("at most 1000 links at a time")
	}
	return nil
}

type linkResult struct {
	Results []LinkOutcome `json:"results"`
}

func (s *Server) link() mcpkit.Tool {
	return mcpkit.NewTool("memory_link",
		"Relate two entities (people, places, organizations, projects): from —relation→ to, e.g. Sarah Chen —boss_of→ user. "+
			"Entities are created as needed; attach memories to entities with memory_remember's entities field. remove: true deletes links.",
		adds,
		func(ctx context.Context, req mcp.CallToolRequest, in linkArgs) (*mcp.CallToolResult, error) {
			links := in.Links
			if len(links) == 0 {
				links = []Link{in.Link}
			}
			out, err := s.store.Link(ctx, links, in.Remove)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for _, o := range out {
				fmt.Fprintf(&b, "%s: %s\n", o.Status, o.Link)
			}
			return mcpkit.Structured(strings.TrimSuffix(b.String(), "\n"), linkResult{Results: out}), nil
		},
		mcpkit.Title("Link entities"),
		mcpkit.InputSchema(func(sc *jsonschema.Schema) { sc.Required = nil }),
		mcpkit.Output[linkResult](nil),
	)
}

type entitiesArgs struct {
	Names []string `json:"names,omitempty" jsonschema:"exact entity names to open"`
	Query string   `json:"query,omitempty" jsonschema:"find entities whose name or type contains this, or whose memories match it"`
	Type  string   `json:"type,omitempty" jsonschema:"only entities of this type, e.g. person"`
	page
}

type entitiesResult struct {
	Entities []*Entity `json:"entities"`
	paged
}

func (s *Server) entities() mcpkit.Tool {
	return mcpkit.NewTool("memory_entities",
		"Look up entities (people, places, organizations, things) with their types, the memories about them and their relations. "+
			"With no arguments, lists every entity a page at a time.",
		reads,
		func(ctx context.Context, req mcp.CallToolRequest, in entitiesArgs) (*mcp.CallToolResult, error) {
			limit := cmp.Or(in.Limit, 20)
			ents, total, err := s.store.Entities(ctx, EntityQuery{Names: in.Names, Query: in.Query, Type: in.Type, Limit: limit, Offset: in.Offset})
			if err != nil {
				return nil, err
			}
			res := entitiesResult{Entities: ents, paged: paged{Total: total}}
			if res.Entities == nil {
				res.Entities = []*Entity{}
			}
			var b strings.Builder
			if total == 0 {
				b.WriteString("No entities match.")
			}
			for _, e := range ents {
				b.WriteString(e.Name)
				if e.Type != "" {
					b.WriteString(" (" + e.Type + ")")
				}
				b.WriteString("\n")
				for _, o := range e.Observations {
					fmt.Fprintf(&b, "  [%s] %s\n", o.ID, oneLine(o.Text, 300))
				}
				for _, l := range e.Relations {
					b.WriteString("  " + l.String() + "\n")
				}
			}
			if next := in.Offset + len(ents); next < total && len(ents) > 0 {
				res.NextOffset = next
				fmt.Fprintf(&b, "%d of %d entities; call again with offset %d for more.", next, total, next)
			}
			return mcpkit.Structured(strings.TrimSuffix(b.String(), "\n"), res), nil
		},
		mcpkit.Title("Entities"),
		mcpkit.InputSchema(pageSchema),
		mcpkit.Output[entitiesResult](nil),
	)
}

type noArgs struct{}

func (s *Server) stats() mcpkit.Tool {
	return mcpkit.NewTool("memory_stats",
		"Count what memory holds: memories by kind, sensitive ones, entities, relations, the database's size and place, and whether embeddings re-rank recall.",
		reads,
		func(ctx context.Context, req mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, error) {
			st, err := s.store.Stats(ctx)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d memories", st.Memories)
			var parts []string
			for _, k := range kinds {
				if n := st.ByKind[k]; n > 0 {
					parts = append(parts, fmt.Sprintf("%d %s", n, k))
				}
			}
			if len(parts) > 0 {
				b.WriteString(" (" + strings.Join(parts, ", ") + ")")
			}
			fmt.Fprintf(&b, ", %d sensitive; %d entities, %d relations.\n", st.Sensitive, st.Entities, st.Relations)
			if st.Memories > 0 {
				fmt.Fprintf(&b, "Oldest %s, newest %s.\n", st.Oldest.Format(time.DateOnly), st.Newest.Format(time.DateOnly))
			}
			fmt.Fprintf(&b, "Database %s, %.1f MiB, schema %d.\nEmbeddings: %s", st.Path, float64(st.SizeBytes)/(1<<20), st.SchemaVersion, st.Embeddings)
			if st.Embeddings != "off" {
				fmt.Fprintf(&b, "; %d of %d memories embedded", st.Embedded, st.Memories)
			}
			return mcpkit.Structured(b.String()+".", st), nil
		},
		mcpkit.Title("Memory statistics"),
		mcpkit.Output[Stats](nil),
	)
}
