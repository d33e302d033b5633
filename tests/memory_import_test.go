package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/domo-agent/domo/tests/testenv"
)

// refEntity and refRelation are the official memory server's shapes, in
// its tools' arguments, its read_graph answer and its memory.jsonl.
type refEntity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

type refRelation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

type refGraph struct {
	Entities  []refEntity   `json:"entities"`
	Relations []refRelation `json:"relations"`
}

// importGraph is someone's knowledge graph as a model keeps it with the
// official server: people, places, work, a pet, plans. Observations hold
// what real ones do: accents, CJK, emoji, quotes of both kinds, newlines,
// tabs, backslashes, and near-identical but different facts. The first
// observation of each entity is created with it; the rest are added later
// with add_observations.
var importGraph = refGraph{
	Entities: []refEntity{
		{"default_user", "person", []string{
			`Prefers to be called "Sam"`,
			"Works remotely from Lisbon on Mondays and Fridays",
			"Allergic to peanuts; carries an EpiPen",
			"Favourite quote:\n\"Simplicity is prerequisite for reliability.\" — Edsger W. Dijkstra",
			"Uses tabs, not spaces\t(strongly held)",
			`Keeps notes in C:\Users\sam\notes.md on the work laptop`,
			"Member of the book club",
		}},
		{"Zoë Martín-O'Connor", "person", []string{
			"The user's sister; lives in Dublin",
			"Birthday: 14 March",
			"Speaks Irish and Spanish — «¡hola, qué tal!»",
			"Member of the book club",
		}},
		{"田中浩", "person", []string{
			"Colleague from the Osaka office",
			"Prefers email over Slack",
			"名前の読み方は「たなか ひろし」",
		}},
		{"Acme Robotics GmbH", "organization", []string{
			"The user's employer since 2021",
			"Headquartered in München",
			"Fiscal year ends in June",
			"Uses Go and Rust in production",
		}},
		{"Lisbon", "city", []string{
			"The user moved here in 2019",
			"Favourite café: Café «A Brasileira» in Chiado",
			"Tram 28 passes near the user's flat",
		}},
		{"Project Nightingale", "project", []string{
			"Internal codename for the hospital-robot pilot",
			"Deadline moved to 2026-09-30",
			"Deadline was originally 2026-06-30",
			`Status report template: "Done / Doing / Blocked"`,
		}},
		{"Biscuit", "pet", []string{
			"The user's dog, a beagle born in 2020",
			"Vet check-up every 6 months at Clínica Veterinária Estrela",
			"Eats grain-free food only",
			"Afraid of thunderstorms",
		}},
		{"Dr. Ana Sousa", "person", []string{
			"The user's GP",
			"Her clinic closes at 18:00 on Fridays",
		}},
		{"Marcus Webb", "person", []string{
			"The user's manager at Acme Robotics",
			"Expects the weekly report by Thursday 5 pm",
			"Ran the Berlin marathon in 3h41m",
			"Prefers meetings before 10:00",
		}},
		{"Berlin", "city", []string{
			"Marcus Webb lives in Prenzlauer Berg",
			"The user visits twice a year for the Acme offsite",
		}},
		{"Rust", "programming_language", []string{
			"The user is learning it in the evenings",
			`Reading "The Rust Programming Language", chapter 8`,
		}},
		{"Go", "programming_language", []string{
			"Main language at work",
			"The user's favourite package is net/http",
		}},
		{"Book club", "group", []string{
			"Meets on the first Tuesday of each month",
			"Currently reading 『ノルウェイの森』 by Haruki Murakami",
			"Next host: Zoë, at 19:30",
		}},
		{"Haruki Murakami", "person", []string{
			"Author; the user's favourite novelist",
			"The user owns a signed copy of \"Kafka on the Shore\"",
		}},
		{"Rocket League team 🚀", "group", []string{
			"Plays on Saturday nights",
			"Team chat uses the 🚀 emoji as a ready check",
		}},
		{"Dublin", "city", []string{
			"Zoë's home city",
			"The user flies there for Christmas 🎄",
		}},
		{"Trip to Kyoto 2026", "event", []string{
			"Planned for 3–17 April 2026",
			"Booked ryokan: 柊家 (Hiiragiya)",
			"Budget: €3,500 including flights",
		}},
		{"Kyoto", "city", []string{
			"Wants to see Fushimi Inari at dawn",
			"Temple list:\n- Kinkaku-ji\n- Ginkaku-ji\n- Kiyomizu-dera",
		}},
		{"Clínica Veterinária Estrela", "organization", []string{
			"Phone +351 21 000 0000; open Saturdays until 13:00",
			"Biscuit's vet there is Dr. João Pires",
		}},
		{"Maria Santos", "person", []string{
			"The user's mother",
			"Calls every Sunday at 20:00",
			"Loves gardening; grows 🍅 tomatoes and basil",
		}},
	},
	Relations: []refRelation{
		{"default_user", "Acme Robotics GmbH", "works_at"},
		{"Zoë Martín-O'Connor", "default_user", "sister_of"},
		{"default_user", "Lisbon", "lives_in"},
		{"Zoë Martín-O'Connor", "Dublin", "lives_in"},
		{"田中浩", "Acme Robotics GmbH", "works_at"},
		{"Marcus Webb", "default_user", "manages"},
		{"Marcus Webb", "Acme Robotics GmbH", "works_at"},
		{"Marcus Webb", "Berlin", "lives_in"},
		{"default_user", "Biscuit", "owns"},
		{"Biscuit", "Clínica Veterinária Estrela", "treated_at"},
		{"Dr. Ana Sousa", "default_user", "doctor_of"},
		{"default_user", "Rust", "learns"},
		{"default_user", "Go", "uses"},
		{"default_user", "Project Nightingale", "leads"},
		{"Acme Robotics GmbH", "Project Nightingale", "runs"},
		{"田中浩", "Project Nightingale", "contributes_to"},
		{"default_user", "Book club", "member_of"},
		{"Zoë Martín-O'Connor", "Book club", "member_of"},
		{"Book club", "Haruki Murakami", "reads"},
		{"default_user", "Rocket League team 🚀", "plays_in"},
		{"default_user", "Trip to Kyoto 2026", "plans"},
		{"Trip to Kyoto 2026", "Kyoto", "located_in"},
		{"Maria Santos", "default_user", "mother_of"},
		{"Maria Santos", "Zoë Martín-O'Connor", "mother_of"},
		{"default_user", "Haruki Murakami", "likes"},
		{"田中浩", "Marcus Webb", "works with"},
	},
}

// TestMemoryImportFromReferenceServer builds a knowledge graph with the
// official @modelcontextprotocol/server-memory over stdio, then imports
// the memory.jsonl it wrote into domo-memory, twice, and checks that every
// entity with its type, every observation as a memory about its entity and
// every relation arrived, once.
func TestMemoryImportFromReferenceServer(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "memory.jsonl")
	ref := stdioClient(t, testenv.PeerServer(t, "server-memory"), []string{"MEMORY_FILE_PATH=" + file},
		client.WithProtocolVersion(mcp.ProtocolVersion20251125))

	var first []refEntity
	var later []map[string]any
	for _, e := range importGraph.Entities {
		first = append(first, refEntity{e.Name, e.EntityType, e.Observations[:1]})
		later = append(later, map[string]any{"entityName": e.Name, "contents": e.Observations[1:]})
	}
	var created struct{ Entities []refEntity }
	structured(t, callOK(t, ref, "create_entities", map[string]any{"entities": first}), &created)
	if len(created.Entities) != len(first) {
		t.Fatalf("the reference server created %d of %d entities", len(created.Entities), len(first))
	}
	half := len(importGraph.Relations) / 2
	for _, rels := range [][]refRelation{importGraph.Relations[:half], importGraph.Relations[half:]} {
		callOK(t, ref, "create_relations", map[string]any{"relations": rels})
	}
	callOK(t, ref, "add_observations", map[string]any{"observations": later})

	// What the reference server holds is what it was given.
	var graph refGraph
	structured(t, callOK(t, ref, "read_graph", map[string]any{}), &graph)
	if !sameGraph(graph, importGraph) {
		t.Fatalf("the reference server's read_graph differs from what it was given:\n%+v", graph)
	}
	onDisk, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the reference server wrote no memory file: %v", err)
	}
	if lines := strings.Count(string(onDisk), "\n") + 1; lines != len(graph.Entities)+len(graph.Relations) {
		t.Fatalf("memory.jsonl has %d lines, want one per entity and relation (%d)", lines, len(graph.Entities)+len(graph.Relations))
	}

	home := filepath.Join(dir, "home")
	domo := stdioClient(t, []string{testenv.Binary(t, "domo-memory"), "--db", filepath.Join(dir, "m.db")}, []string{
		"HOME=" + home,
		"XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
	})
	want := expectedImport(graph)
	for round := 1; round <= 2; round++ {
		var res struct {
			Entities          int `json:"entities"`
			Observations      int `json:"observations"`
			MemoriesCreated   int `json:"memories_created"`
			MemoriesUnchanged int `json:"memories_unchanged"`
			Relations         int `json:"relations"`
			RelationsNew      int `json:"relations_new"`
		}
		structured(t, callOK(t, domo, "memory_import", map[string]any{"path": file}), &res)
		newMemories, newRelations := len(want.memories), len(graph.Relations)
		if round == 2 {
			newMemories, newRelations = 0, 0
		}
		if res.Entities != len(graph.Entities) || res.Observations != want.observations || res.MemoriesCreated != newMemories ||
			res.MemoriesCreated+res.MemoriesUnchanged != want.observations || res.Relations != len(graph.Relations) || res.RelationsNew != newRelations {
			t.Errorf("import %d = %+v; want %d entities, %d observations (%d new memories), %d relations (%d new)",
				round, res, len(graph.Entities), want.observations, newMemories, len(graph.Relations), newRelations)
		}
		t.Run(fmt.Sprintf("after import %d", round), func(t *testing.T) {
			checkImported(t, domo, want)
		})
	}
}

// importWant is what domo-memory should hold after importing a graph.
type importWant struct {
	types        map[string]string   // entity name -> type
	observations int                 // in the graph, counting repeats
	memories     map[string][]string // distinct observation text -> entities it is about, sorted
	byEntity     map[string][]string // entity name -> its observations, sorted
	relations    []string            // "from —type→ to", sorted
}

func expectedImport(g refGraph) importWant {
	w := importWant{types: map[string]string{}, memories: map[string][]string{}, byEntity: map[string][]string{}}
	for _, e := range g.Entities {
		w.types[e.Name] = e.EntityType
		for _, o := range e.Observations {
			w.observations++
			w.memories[o] = append(w.memories[o], e.Name)
			w.byEntity[e.Name] = append(w.byEntity[e.Name], o)
		}
		slices.Sort(w.byEntity[e.Name])
	}
	for _, ents := range w.memories {
		slices.Sort(ents)
	}
	for _, r := range g.Relations {
		w.relations = append(w.relations, r.From+" —"+r.RelationType+"→ "+r.To)
	}
	slices.Sort(w.relations)
	return w
}

// checkImported compares what domo-memory says it holds, through
// memory_stats, memory_entities, memory_list and memory_recall, with want.
func checkImported(t *testing.T, c *client.Client, want importWant) {
	var stats struct{ Memories, Entities, Relations int }
	structured(t, callOK(t, c, "memory_stats", map[string]any{}), &stats)
	if stats.Memories != len(want.memories) || stats.Entities != len(want.types) || stats.Relations != len(want.relations) {
		t.Errorf("memory_stats = %+v; want %d memories, %d entities, %d relations", stats, len(want.memories), len(want.types), len(want.relations))
	}

	var ents struct {
		Entities []struct {
			Name, Type   string
			Observations []struct{ ID, Text string }
			Relations    []struct{ From, Relation, To string }
		}
		Total int
	}
	structured(t, callOK(t, c, "memory_entities", map[string]any{"limit": 200}), &ents)
	if ents.Total != len(want.types) || len(ents.Entities) != len(want.types) {
		t.Errorf("memory_entities lists %d entities (total %d), want %d", len(ents.Entities), ents.Total, len(want.types))
	}
	relations := map[string]bool{}
	for _, e := range ents.Entities {
		typ, ok := want.types[e.Name]
		if !ok {
			t.Errorf("entity %q was not in the graph", e.Name)
			continue
		}
		if e.Type != typ {
			t.Errorf("entity %q has type %q, want %q", e.Name, e.Type, typ)
		}
		var obs []string
		for _, o := range e.Observations {
			obs = append(obs, o.Text)
		}
		slices.Sort(obs)
		if !slices.Equal(obs, want.byEntity[e.Name]) {
			t.Errorf("entity %q has the memories\n  %q\nwant its observations\n  %q", e.Name, obs, want.byEntity[e.Name])
		}
		for _, r := range e.Relations {
			relations[r.From+" —"+r.Relation+"→ "+r.To] = true
		}
	}
	if got := slices.Sorted(maps.Keys(relations)); !slices.Equal(got, want.relations) {
		t.Errorf("relations:\n  %q\nwant\n  %q", got, want.relations)
	}

	var list struct {
		Memories []struct {
			ID, Text, Kind string
			Entities       []string
		}
		Total int
	}
	structured(t, callOK(t, c, "memory_list", map[string]any{"limit": 200, "sort": "oldest"}), &list)
	if list.Total != len(want.memories) || len(list.Memories) != len(want.memories) {
		t.Errorf("memory_list lists %d memories (total %d), want one per distinct observation, %d", len(list.Memories), list.Total, len(want.memories))
	}
	seen := map[string]bool{}
	for _, m := range list.Memories {
		about, ok := want.memories[m.Text]
		switch {
		case !ok:
			t.Errorf("memory %s %q is no observation of the graph", m.ID, m.Text)
			continue
		case seen[m.Text]:
			t.Errorf("memory %s %q is stored twice", m.ID, m.Text)
		}
		seen[m.Text] = true
		ents := slices.Sorted(slices.Values(m.Entities))
		if m.Kind != "fact" || !slices.Equal(ents, about) {
			t.Errorf("memory %s %q is a %s about %q; want a fact about %q", m.ID, m.Text, m.Kind, ents, about)
		}
	}

	// Each observation is found by recalling its own words, quotes,
	// newlines and all.
	type recalled struct {
		ID, Text string
		Entities []string
	}
	for text, about := range want.memories {
		var rec struct{ Memories []recalled }
		structured(t, callOK(t, c, "memory_recall", map[string]any{"query": text, "limit": 50, "include_sensitive": true}), &rec)
		found := slices.ContainsFunc(rec.Memories, func(m recalled) bool {
			return m.Text == text && slices.Equal(slices.Sorted(slices.Values(m.Entities)), about)
		})
		if !found {
			t.Errorf("memory_recall %q does not return that observation about %q; it returned %+v", text, about, rec.Memories)
		}
	}
}

// sameGraph reports whether a and b hold the same entities (with their
// observations in order) and relations, in any order of entities and
// relations.
func sameGraph(a, b refGraph) bool {
	key := func(e refEntity) string { return e.Name }
	ea := slices.SortedFunc(slices.Values(a.Entities), func(x, y refEntity) int { return strings.Compare(key(x), key(y)) })
	eb := slices.SortedFunc(slices.Values(b.Entities), func(x, y refEntity) int { return strings.Compare(key(x), key(y)) })
	if !slices.EqualFunc(ea, eb, func(x, y refEntity) bool {
		return x.Name == y.Name && x.EntityType == y.EntityType && slices.Equal(x.Observations, y.Observations)
	}) {
		return false
	}
	rel := func(r refRelation) string { return r.From + "\x00" + r.RelationType + "\x00" + r.To }
	ra, rb := make([]string, 0, len(a.Relations)), make([]string, 0, len(b.Relations))
	for _, r := range a.Relations {
		ra = append(ra, rel(r))
	}
	for _, r := range b.Relations {
		rb = append(rb, rel(r))
	}
	slices.Sort(ra)
	slices.Sort(rb)
	return slices.Equal(ra, rb)
}

// stdioClient starts argv as an MCP server over stdio, with env added to
// the test's environment, and initializes a client for it.
func stdioClient(t *testing.T, argv, env []string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c := client.NewClient(transport.NewStdioWithOptions(argv[0], env, argv[1:]), opts...)
	// The server lives as long as the context Start gets.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start %s: %v", strings.Join(argv, " "), err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "domo-tests", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		var stderr []byte
		if r, ok := client.GetStderr(c); ok {
			stderr, _ = io.ReadAll(r)
		}
		t.Fatalf("initialize %s: %v\nstderr:\n%s", strings.Join(argv, " "), err, stderr)
	}
	return c
}

// callOK calls a tool and fails the test on a protocol error or an
// isError result.
func callOK(t *testing.T, c *client.Client, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := callResult(c, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatalf("no structured content in %s", resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("decode the structured content %.500s: %v", b, err)
	}
}
