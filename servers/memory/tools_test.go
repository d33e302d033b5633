package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"
)

func TestRememberValidation(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"nothing", map[string]any{}, "text is empty"},
		{"blank text", map[string]any{"text": "   "}, "text is empty"},
		{"bad kind", map[string]any{"text": "x y", "kind": "secret"}, "kind"},
		{"importance too high", map[string]any{"text": "x y", "importance": 3}, "importance"},
		{"unknown field", map[string]any{"text": "x y", "colour": "red"}, "colour"},
		{"both forms", map[string]any{"text": "a b", "memories": []any{map[string]any{"text": "c d"}}}, "not both"},
		{"bad tag", map[string]any{"text": "x y", "tags": []string{"a;b"}}, "tag"},
		{"bad date", map[string]any{"text": "x y", "occurred_at": "last tuesday"}, "occurred_at"},
		{"api key", map[string]any{"text": "my OpenAI key is sk-abcdefghijklmnopqrstuvwx"}, "credentials"},
		{"password", map[string]any{"text": "The wifi password is hunter22"}, "credentials"},
		{"private key", map[string]any{"text": "-----BEGIN OPENSSH PRIVATE KEY----- abc"}, "credentials"},
		{"card", map[string]any{"text": "card 4111 1111 1111 1111"}, "credentials"},
		{"batch item", map[string]any{"memories": []any{map[string]any{"text": "fine one"}, map[string]any{"text": "bad", "kind": "nope"}}}, "memories/1/kind"},
		{"too long", map[string]any{"text": strings.Repeat("word ", 1000)}, "maxLength"},
		{"batch secret", map[string]any{"memories": []any{map[string]any{"text": "fine one"}, map[string]any{"text": "token ghp_abcdefghijklmnopqrstuvwxyz0123"}}}, "memories[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := mcpkittest.CallText(t, c, "memory_remember", tc.args)
			if !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("remember %v = %q (error %v), want an error mentioning %q", tc.args, text, isErr, tc.want)
			}
		})
	}
	// A failed batch stores nothing.
	if l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{}); l.Total != 0 {
		t.Errorf("after failed calls, %d memories are stored", l.Total)
	}
}

func TestNearDuplicatesUpdate(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	first := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "The user prefers dark mode in all editors.", "tags": []string{"tools"}})
	for _, tc := range []struct {
		text, status string
	}{
		{"The user prefers dark mode in all editors.", "unchanged"},
		{"the user PREFERS dark-mode, in all editors!", "updated"},
		{"User prefers dark mode in editors", "updated"},
		{"The user prefers light mode in all editors.", "created"},
	} {
		out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": tc.text})
		if got := out.Results[0]; got.Status != tc.status || (tc.status != "created") != (got.ID == first.Results[0].ID) {
			t.Errorf("remember %q = %+v, want %s (first was %s)", tc.text, got, tc.status, first.Results[0].ID)
		}
	}
	// Long sentences that differ in a name or a number are different facts.
	base := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "Ravi recommended a small Portuguese restaurant in Lisbon that serves grilled sardines every summer evening."})
	for _, text := range []string{
		"Ravi recommended a small Portuguese restaurant in Osaka that serves grilled sardines every summer evening.",
		"Ravi recommended a small Portuguese restaurant in Lisbon that serves grilled sardines every summer evening since 2019.",
	} {
		if out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": text}); out.Results[0].Status != "created" || out.Results[0].ID == base.Results[0].ID {
			t.Errorf("remember %q = %+v, want a new memory", text, out.Results[0])
		}
	}
	if out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "Ravi recommended a small Portuguese restaurant in Lisbon which serves grilled sardines every summer evening."}); out.Results[0].ID != base.Results[0].ID {
		t.Errorf("a reworded sentence = %+v, want an update of %s", out.Results[0], base.Results[0].ID)
	}
	// Duplicates inside one batch merge too, and a merge keeps tags.
	out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"memories": []any{
		map[string]any{"text": "Mia's school starts at 8:15 every weekday", "tags": []string{"family"}},
		map[string]any{"text": "Mia's school starts at 8:15 every weekday.", "tags": []string{"school"}},
	}})
	if out.Results[0].ID != out.Results[1].ID || out.Results[1].Status != "updated" {
		t.Errorf("batch duplicates = %+v", out.Results)
	}
	l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{"tags": []string{"school"}})
	if l.Total != 1 || strings.Join(l.Memories[0].Tags, ",") != "family,school" {
		t.Errorf("merged memory = %+v", l.Memories)
	}
	if l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{}); l.Total != 6 {
		t.Errorf("%d memories stored, want 6", l.Total)
	}
}

// TestHostileQueries sends what breaks naive FTS5 MATCH strings: none may
// cause an error, and real matches are still found.
func TestHostileQueries(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "The user's cat is called NEAR, a grey tabby."})
	for _, q := range []string{
		`"`, `""`, `'`, `*`, `cat*`, `^cat`, `cat AND`, `OR OR OR`, `NOT cat`, `NEAR(cat tabby)`, `cat:tabby`,
		`text:cat`, `{text tags}: cat`, `(cat`, `cat)`, `-cat`, `+cat`, `cat -- comment`, `'; DROP TABLE memories; --`,
		`\x00`, "cat\x00tabby", `%`, `_`, `🐈 cat`, `ＣＡＴ`, `cat` + strings.Repeat(" AND cat", 200), strings.Repeat("(", 1000),
		`NEAR`, `what is NEAR?`, `é`, `ß`,
	} {
		text, isErr := mcpkittest.CallText(t, c, "memory_recall", map[string]any{"query": q})
		if isErr {
			t.Errorf("recall %q: error %s", q, text)
		}
	}
	for _, q := range []string{`cat*`, `NEAR(cat tabby)`, `"grey tabby"`, `cat:tabby`, `CAT?!`} {
		r := mcpkittest.Structured[Recall](t, c, "memory_recall", map[string]any{"query": q})
		if len(r.Memories) != 1 {
			t.Errorf("recall %q found %d memories, want the cat", q, len(r.Memories))
		}
	}
	if l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{}); l.Total != 1 {
		t.Errorf("after the hostile queries %d memories are listed, want 1", l.Total)
	}
	if _, isErr := mcpkittest.CallText(t, c, "memory_recall", map[string]any{"query": ""}); !isErr {
		t.Error("an empty query is not an error")
	}
	if _, isErr := mcpkittest.CallText(t, c, "memory_recall", map[string]any{"query": "cat", "limit": 0.5}); !isErr {
		t.Error("a fractional limit is not an error")
	}
	if _, isErr := mcpkittest.CallText(t, c, "memory_recall", map[string]any{"query": "cat", "since": "yesterday-ish"}); !isErr {
		t.Error("a bad since is not an error")
	}
}

func TestRecallFiltersAndGate(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"memories": []any{
		map[string]any{"text": "The user ran the Lisbon half marathon.", "kind": "event", "occurred_at": "2025-03-09", "tags": []string{"running"}},
		map[string]any{"text": "The user prefers trail running to road running.", "kind": "preference"},
		map[string]any{"text": "The user was diagnosed with asthma after a running injury.", "tags": []string{"health"}},
	}})
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string // texts' first words, best first
	}{
		{"plain", map[string]any{"query": "running"}, []string{"The user prefers", "The user ran"}},
		{"kind", map[string]any{"query": "running", "kinds": []string{"event"}}, []string{"The user ran"}},
		{"month and year", map[string]any{"query": "what did I do in March 2025"}, []string{"The user ran"}},
		{"since", map[string]any{"query": "running", "since": "2025-06-01"}, []string{"The user prefers"}},
		{"until", map[string]any{"query": "running", "until": "2025-03-09"}, []string{"The user ran"}},
		{"sensitive asked", map[string]any{"query": "health and running"}, []string{"The user was"}},
		{"sensitive included", map[string]any{"query": "running injury", "include_sensitive": true}, []string{"The user was"}},
		{"gate", map[string]any{"query": "capital of France"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mcpkittest.Structured[Recall](t, c, "memory_recall", tc.args)
			var got []string
			for _, m := range r.Memories {
				got = append(got, strings.Join(strings.Fields(m.Text)[:3], " "))
			}
			if len(tc.want) > 0 && (len(got) < len(tc.want) || strings.Join(got[:len(tc.want)], "|") != strings.Join(tc.want, "|")) || len(tc.want) == 0 && len(got) > 0 {
				t.Errorf("recall %v = %q, want %q first", tc.args, got, tc.want)
			}
			for _, m := range r.Memories {
				if m.Sensitivity == Sensitive && tc.name != "sensitive asked" && tc.name != "sensitive included" {
					t.Errorf("sensitive memory recalled for %v: %s", tc.args, m.Text)
				}
			}
		})
	}
}

func TestForgetPreviewThenConfirm(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"memories": []any{
		map[string]any{"text": "The user's old address was 12 Elm Street."},
		map[string]any{"text": "The user moved from Elm Street to Oak Avenue."},
		map[string]any{"text": "The user likes oak furniture."},
	}})
	p := mcpkittest.Structured[forgetResult](t, c, "memory_forget", map[string]any{"query": "Elm Street"})
	if !p.Preview || len(p.Matches) != 2 || len(p.Forgotten) != 0 {
		t.Fatalf("preview = %+v", p)
	}
	if l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{}); l.Total != 3 {
		t.Fatalf("the preview deleted something: %d left", l.Total)
	}
	done := mcpkittest.Structured[forgetResult](t, c, "memory_forget", map[string]any{"query": "Elm Street", "confirm": true})
	if len(done.Forgotten) != 2 {
		t.Fatalf("confirm = %+v", done)
	}
	byID := mcpkittest.Structured[forgetResult](t, c, "memory_forget", map[string]any{"ids": []string{out.Results[2].ID, "m999"}})
	if len(byID.Forgotten) != 1 || len(byID.Missing) != 1 {
		t.Errorf("forget by id = %+v", byID)
	}
	if l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{}); l.Total != 0 {
		t.Errorf("%d memories left", l.Total)
	}
	if r := mcpkittest.Structured[Recall](t, c, "memory_recall", map[string]any{"query": "Elm Street"}); len(r.Memories) != 0 {
		t.Errorf("forgotten memories are still recalled: %+v", r.Memories)
	}
	for _, args := range []map[string]any{{}, {"ids": []string{"x12"}}, {"ids": []string{"m1"}, "query": "a"}} {
		if text, isErr := mcpkittest.CallText(t, c, "memory_forget", args); !isErr {
			t.Errorf("forget %v = %q, want an error", args, text)
		}
	}
}

func TestUpdateListStats(t *testing.T) {
	s := openStore(t, nil)
	c := newClient(t, s)
	out := mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "The user drives a blue Volvo.", "tags": []string{"car"}})
	id := out.Results[0].ID
	m := mcpkittest.Structured[Memory](t, c, "memory_update", map[string]any{"id": id, "text": "The user drives a red Tesla.", "add_tags": []string{"ev"}, "importance": 0})
	if m.Text != "The user drives a red Tesla." || strings.Join(m.Tags, ",") != "car,ev" || m.Importance != 0 {
		t.Errorf("updated = %+v", m)
	}
	if r := mcpkittest.Structured[Recall](t, c, "memory_recall", map[string]any{"query": "Volvo"}); len(r.Memories) != 0 {
		t.Errorf("the old text is still indexed: %+v", r.Memories)
	}
	if r := mcpkittest.Structured[Recall](t, c, "memory_recall", map[string]any{"query": "tesla", "min_score": 0.01}); len(r.Memories) != 1 {
		t.Errorf("the new text is not indexed: %+v", r)
	}
	if text, isErr := mcpkittest.CallText(t, c, "memory_update", map[string]any{"id": "m404", "text": "x y"}); !isErr || !strings.Contains(text, "no memory has the id m404") {
		t.Errorf("update of a missing id = %q", text)
	}
	for i := range 25 {
		mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "Numbered note about topic " + strings.Repeat("x", i+1), "kind": "note"})
	}
	l := mcpkittest.Structured[listResult](t, c, "memory_list", map[string]any{"kinds": []string{"note"}, "limit": 10, "offset": 20})
	if l.Total != 25 || len(l.Memories) != 5 || l.NextOffset != 0 {
		t.Errorf("page 3 = total %d, %d memories, next %d", l.Total, len(l.Memories), l.NextOffset)
	}
	st := mcpkittest.Structured[Stats](t, c, "memory_stats", map[string]any{})
	if st.Memories != 26 || st.ByKind["note"] != 25 || st.SchemaVersion != len(migrations) || st.Path != s.Path() {
		t.Errorf("stats = %+v", st)
	}
}

func TestGraph(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	mcpkittest.Structured[rememberResult](t, c, "memory_remember", map[string]any{"text": "Sarah Chen runs the platform team.", "entities": []string{"Sarah Chen"}})
	l := mcpkittest.Structured[linkResult](t, c, "memory_link", map[string]any{"from": "Sarah Chen", "relation": "boss_of", "to": "user", "from_type": "person"})
	if l.Results[0].Status != "linked" {
		t.Errorf("link = %+v", l)
	}
	if l := mcpkittest.Structured[linkResult](t, c, "memory_link", map[string]any{"from": "sarah  chen", "relation": "boss_of", "to": "user"}); l.Results[0].Status != "exists" {
		t.Errorf("relinking, names compared without case = %+v", l)
	}
	e := mcpkittest.Structured[entitiesResult](t, c, "memory_entities", map[string]any{"names": []string{"Sarah Chen"}})
	if len(e.Entities) != 1 || e.Entities[0].Type != "person" || len(e.Entities[0].Observations) != 1 || len(e.Entities[0].Relations) != 1 {
		t.Fatalf("entity = %+v", e)
	}
	if e := mcpkittest.Structured[entitiesResult](t, c, "memory_entities", map[string]any{"query": "platform"}); len(e.Entities) != 1 {
		t.Errorf("search by what memories say = %+v", e)
	}
	if r := mcpkittest.Structured[Recall](t, c, "memory_recall", map[string]any{"query": "who is Sarah"}); len(r.Memories) != 1 {
		t.Errorf("recall by entity name = %+v", r)
	}
	f := mcpkittest.Structured[forgetResult](t, c, "memory_forget", map[string]any{"entities": []string{"Sarah Chen", "Nobody"}})
	if len(f.Entities) != 1 || len(f.Forgotten) != 1 || len(f.Missing) != 1 {
		t.Errorf("forget entity = %+v", f)
	}
	if e := mcpkittest.Structured[entitiesResult](t, c, "memory_entities", map[string]any{}); e.Total != 1 || e.Entities[0].Name != "user" || len(e.Entities[0].Relations) != 0 {
		t.Errorf("after forgetting Sarah: %+v", e)
	}
	for _, args := range []map[string]any{{}, {"from": "a", "to": "b"}, {"from": "a", "relation": "r", "to": "b", "links": []any{map[string]any{"from": "x", "relation": "y", "to": "z"}}}} {
		if text, isErr := mcpkittest.CallText(t, c, "memory_link", args); !isErr {
			t.Errorf("link %v = %q, want an error", args, text)
		}
	}
}

func TestImportValidation(t *testing.T) {
	c := newClient(t, openStore(t, nil))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"entity","name":"A","entityType":"x","observations":["o"]}`+"\nnot json\n"), 0o600)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "path"},
		{map[string]any{"path": filepath.Join(dir, "missing.jsonl")}, "cannot open"},
		{map[string]any{"path": dir}, "not a regular file"},
		{map[string]any{"path": bad}, "line 2 is not JSON"},
		{map[string]any{"content": `{"type":"widget"}`}, "neither entity nor relation"},
	} {
		text, isErr := mcpkittest.CallText(t, c, "memory_import", tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("import %v = %q, want an error mentioning %q", tc.args, text, tc.want)
		}
	}
	// A failed import leaves nothing behind.
	if e := mcpkittest.Structured[entitiesResult](t, c, "memory_entities", map[string]any{}); e.Total != 0 {
		t.Errorf("a failed import left %d entities", e.Total)
	}
	r := mcpkittest.Structured[ImportResult](t, c, "memory_import", map[string]any{"content": `{"type":"entity","name":"Ada","entityType":"person","observations":["Writes compilers","Lives in London"]}
{"type":"relation","from":"Ada","to":"user","relationType":"friend_of"}`})
	if r.Entities != 1 || r.MemoriesCreated != 2 || r.RelationsNew != 1 {
		t.Errorf("import = %+v", r)
	}
	again := mcpkittest.Structured[ImportResult](t, c, "memory_import", map[string]any{"content": `{"type":"entity","name":"Ada","entityType":"person","observations":["Writes compilers","Lives in London"]}`})
	if again.MemoriesCreated != 0 || again.MemoriesUnchanged != 2 {
		t.Errorf("import again = %+v", again)
	}
}

// TestReopen checks that memories survive the process, and that a
// database from a newer domo-memory is refused, not damaged.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	ctx := context.Background()
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remember(ctx, []NewMemory{{Text: "The user's favourite colour is teal."}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Recall(ctx, RecallOptions{Query: "favourite colour", Limit: 5})
	if err != nil || len(r.Memories) != 1 {
		t.Fatalf("after reopening: %+v, %v", r, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("database mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if _, err := s.db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(ctx, path, nil); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("opening a newer schema: %v", err)
	}
}
