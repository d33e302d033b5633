package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/domo-agent/domo/servers/internal/mcpkit/mcpkittest"

	"github.com/mark3labs/mcp-go/client"
)

// The recall-quality table: memories about one user, and questions with the
// memories they should recall first. Every question is asked of BM25 alone
// and of BM25 re-ranked by a fake embeddings server; paraphrases that share
// no word with what they ask for are only expected to work with embeddings.

// qualitySeed is one memory of the table; key names it in the questions.
type qualitySeed struct {
	key        string
	kind       string
	text       string
	tags       []string
	entities   []string
	occurred   string // a date, 2006-01-02
	importance float64
}

var qualitySeeds = []qualitySeed{
	// Work.
	{key: "boss", text: "The user's manager is Sarah Chen, who leads the platform engineering team at Northwind.", tags: []string{"work"}, entities: []string{"Sarah Chen", "Northwind"}},
	{key: "job", text: "The user works at Northwind Logistics as a senior backend engineer, mostly writing Go.", tags: []string{"work"}, entities: []string{"Northwind"}},
	{key: "promotion", kind: "event", text: "The user was promoted to senior engineer.", tags: []string{"work"}, occurred: "2025-01-15"},
	{key: "billing", kind: "event", text: "The user's team shipped the new billing system at Northwind.", tags: []string{"work"}, occurred: "2024-03-15"},
	{key: "migration", kind: "note", text: "The user is leading the migration of the order service from Python to Go, due in the third quarter.", tags: []string{"work"}},
	{key: "tom", text: "Tom Okafor sits next to the user at the office and often brings homemade kimchi.", tags: []string{"work"}, entities: []string{"Tom Okafor"}},
	{key: "priya", text: "Priya Natarajan from the data team helped the user debug the billing pipeline.", tags: []string{"work"}, entities: []string{"Priya Natarajan"}},
	{key: "lunch", kind: "event", text: "The user had lunch with Priya Natarajan to discuss moving to the data team.", tags: []string{"work"}, entities: []string{"Priya Natarajan"}, occurred: "2025-03-04"},
	{key: "sarahbook", text: "Sarah Chen recommended Designing Data-Intensive Applications to the user before the architecture review.", tags: []string{"books", "work"}, entities: []string{"Sarah Chen"}},
	{key: "meetings", kind: "preference", text: "The user prefers meetings before 4 pm Central European Time.", tags: []string{"work"}},
	{key: "commute", text: "The user cycles to the office, about twenty minutes each way.", tags: []string{"commute"}},
	{key: "salary", text: "The user's salary is 95,000 euros a year.", tags: []string{"work"}},
	// Family and home.
	{key: "wife", text: "The user's wife is Anna; they married in June 2016 in Porto.", tags: []string{"family"}, entities: []string{"Anna", "Porto"}, occurred: "2016-06-18", importance: 0.8},
	{key: "annajob", text: "Anna works as an architect at a small firm in Amsterdam.", tags: []string{"family"}, entities: []string{"Anna", "Amsterdam"}},
	{key: "daughter", text: "The user's daughter Mia was born on 2019-04-02.", tags: []string{"family"}, entities: []string{"Mia"}, occurred: "2019-04-02", importance: 0.8},
	{key: "swimming", kind: "event", text: "Mia started swimming lessons on Saturday mornings at the Westside pool.", tags: []string{"family"}, entities: []string{"Mia"}, occurred: "2024-09-07"},
	{key: "son", text: "The user's son Leo is seven and obsessed with dinosaurs.", tags: []string{"family"}, entities: []string{"Leo"}, importance: 0.8},
	{key: "party", kind: "summary", text: "Conversation summary: the user planned Leo's eighth birthday party with a dinosaur theme and a cake from Bakkerij Jansen.", tags: []string{"family"}, entities: []string{"Leo"}, occurred: "2024-11-02"},
	{key: "parents", text: "The user's parents, Maria and José, live in Valencia and visit every Christmas.", tags: []string{"family"}, entities: []string{"Valencia"}},
	{key: "sister", text: "The user's sister Elena is a paediatric nurse in Madrid.", tags: []string{"family"}, entities: []string{"Elena", "Madrid"}},
	{key: "dog", text: "The family dog is a beagle named Biscuit.", tags: []string{"family"}, entities: []string{"Biscuit"}},
	{key: "home", text: "The user lives in a terraced house in Utrecht with a small garden.", tags: []string{"home"}, entities: []string{"Utrecht"}},
	{key: "mortgage", kind: "event", text: "The user and Anna took out a mortgage on the Utrecht house.", tags: []string{"home"}, occurred: "2021-05-20"},
	{key: "car", text: "The user drives a grey 2018 Toyota Corolla.", entities: []string{"Toyota"}},
	// Health: sensitive, guessed from the words "allergic" and "anxiety".
	{key: "allergy", text: "The user has a severe peanut allergy and is also allergic to penicillin.", tags: []string{"health"}, importance: 0.9},
	{key: "medication", text: "The user takes sertraline for anxiety, prescribed by Dr. Patel.", tags: []string{"health"}, entities: []string{"Dr. Patel"}},
	{key: "gp", text: "The user's GP is Dr. Patel at the Elm Street practice.", entities: []string{"Dr. Patel"}},
	{key: "dentist", kind: "event", text: "The user has a dentist appointment with Dr. Ruiz at 9:00.", entities: []string{"Dr. Ruiz"}, occurred: "2025-06-10"},
	// Preferences and hobbies.
	{key: "coffee", kind: "preference", text: "The user drinks coffee as an oat milk flat white and avoids dairy.", tags: []string{"food"}},
	{key: "vegetarian", kind: "preference", text: "The user is vegetarian and loves spicy Thai food.", tags: []string{"food"}},
	{key: "cilantro", kind: "preference", text: "The user dislikes cilantro.", tags: []string{"food"}},
	{key: "band", text: "The user plays bass guitar in a garage band called The Late Commits.", tags: []string{"hobby", "music"}},
	{key: "chess", text: "The user plays chess online most evenings and is rated about 1600.", tags: []string{"hobby"}},
	{key: "runhabit", text: "The user goes running three mornings a week along the Vecht river.", tags: []string{"hobby", "running"}},
	{key: "marathon", kind: "event", text: "The user ran the Berlin half marathon in 1:52.", tags: []string{"running"}, entities: []string{"Berlin"}, occurred: "2024-04-07"},
	{key: "reading", text: "The user is reading The Three-Body Problem by Liu Cixin.", tags: []string{"books"}, entities: []string{"Liu Cixin"}},
	{key: "garden", kind: "preference", text: "The user grows tomatoes and basil in the back garden every summer.", tags: []string{"hobby"}},
	{key: "dutch", text: "The user is learning Dutch and takes a class every Tuesday evening.", tags: []string{"learning"}},
	// Travel.
	{key: "japan", kind: "event", text: "The user travelled to Kyoto and Osaka with Anna for the cherry blossoms.", tags: []string{"travel"}, entities: []string{"Kyoto", "Osaka", "Anna"}, occurred: "2025-03-28", importance: 0.7},
	{key: "lisbon", kind: "event", text: "The user spent a week in Lisbon for a Go conference.", tags: []string{"travel", "work"}, entities: []string{"Lisbon"}, occurred: "2023-08-12"},
	{key: "camping", kind: "event", text: "The family plans a camping trip to the Ardennes.", tags: []string{"family", "travel"}, entities: []string{"Ardennes"}, occurred: "2025-07-19"},
}

// qualityQuestion is one row of the table.
type qualityQuestion struct {
	name  string
	query string
	// want are the memories that must be recalled first, in any order;
	// none means the query must recall nothing.
	want []string
	// absent must not be recalled at all.
	absent           []string
	includeSensitive bool
	// embeddingsOnly marks paraphrases that share no telling word with the
	// memory they ask for: BM25 alone is expected to miss them.
	embeddingsOnly bool
}

var qualityQuestions = []qualityQuestion{
	// The question's own words.
	{name: "manager by title", query: "who is my manager", want: []string{"boss"}},
	{name: "workplace", query: "where do I work", want: []string{"job"}},
	{name: "appointment", query: "when is my dentist appointment", want: []string{"dentist"}},
	{name: "parents' town", query: "where do my parents live", want: []string{"parents"}},
	{name: "coffee order", query: "how do I take my coffee", want: []string{"coffee"}},

	// Inflections, through the snowball stemmer.
	{name: "running finds ran by its tag", query: "when did I run a marathon", want: []string{"marathon"}},
	{name: "running habit", query: "how often do I go running", want: []string{"runhabit"}},
	{name: "books and reading", query: "which books is the user reading", want: []string{"reading"}},
	{name: "dinosaur and dinosaurs", query: "Leo's dinosaur birthday party", want: []string{"party"}},

	// Names.
	{name: "full name", query: "who is Tom Okafor", want: []string{"tom"}},
	{name: "first name in two memories", query: "tell me about Priya", want: []string{"priya", "lunch"}},
	{name: "full name in two memories", query: "Sarah Chen", want: []string{"boss", "sarahbook"}},
	{name: "relative by name", query: "what does Elena do", want: []string{"sister"}},

	// Dates: the index holds the month, year and ISO date of occurred_at.
	{name: "month and year", query: "what happened in March 2025", want: []string{"japan", "lunch"}},
	{name: "month of another year", query: "what happened in March 2024", want: []string{"billing"}},
	{name: "year alone", query: "what did I do in 2023", want: []string{"lisbon"}},
	{name: "ISO date", query: "2024-04-07", want: []string{"marathon"}},

	// Nothing relevant: the relevance gate leaves everything out.
	{name: "general knowledge", query: "what is the capital of France"},
	{name: "weather", query: "what's the weather forecast for tomorrow"},
	{name: "one incidental number", query: "who won the 2018 World Cup"},

	// Sensitive memories: only when the query names their topic.
	{name: "allergic names the topic", query: "am I allergic to anything", want: []string{"allergy"}},
	{name: "allergies names the topic", query: "do I have any allergies", want: []string{"allergy"}},
	{name: "health names the topic", query: "any health issues I should know about", want: []string{"allergy", "medication"}},
	{name: "doctor's name does not", query: "who is Dr Patel", want: []string{"gp"}, absent: []string{"medication"}},
	{name: "another topic's word does not", query: "does Dr Patel know my salary", want: []string{"gp", "salary"}, absent: []string{"medication"}},
	{name: "salary names the topic", query: "what is my salary", want: []string{"salary"}},
	{name: "earnings do not", query: "how much do I earn", absent: []string{"salary"}},
	{name: "include_sensitive", query: "how much do I earn", includeSensitive: true, want: []string{"salary"}, embeddingsOnly: true},

	// Paraphrases: all but one share no telling word with their memory.
	{name: "supervisor means manager", query: "who is my supervisor", want: []string{"boss"}, embeddingsOnly: true},
	{name: "vehicle means car", query: "what vehicle do I own", want: []string{"car"}, embeddingsOnly: true},
	{name: "anniversary means married", query: "when is our wedding anniversary", want: []string{"wife"}, embeddingsOnly: true},
	{name: "mom and dad mean parents", query: "where are my mom and dad from", want: []string{"parents"}, embeddingsOnly: true},
	{name: "pet means dog", query: "what pet do we have", want: []string{"dog"}, embeddingsOnly: true},
	{name: "meat means vegetarian", query: "does the user eat meat", want: []string{"vegetarian"}, embeddingsOnly: true},
	{name: "birthday means born", query: "when is Mia's birthday", want: []string{"daughter"}},
	{name: "country means its cities", query: "tell me about the Japan trip", want: []string{"japan"}, embeddingsOnly: true},
	{name: "instrument means guitar", query: "what instrument do I play", want: []string{"band"}, embeddingsOnly: true},
}

func TestQualityRecall(t *testing.T) {
	for _, mode := range []string{"bm25", "hybrid"} {
		t.Run(mode, func(t *testing.T) {
			var emb *Embeddings
			if mode == "hybrid" {
				emb = fakeEmbeddings(t, fakeEmbeddingsHandler)
			}
			c, ids := seedQuality(t, emb)
			var hits, paraphrases, paraphraseHits int
			for _, q := range qualityQuestions {
				t.Run(q.name, func(t *testing.T) {
					r := recallQuality(t, c, q)
					if r.Mode != mode {
						t.Errorf("%q: mode = %s, want %s", q.query, r.Mode, mode)
					}
					problem := q.check(r, ids)
					if q.embeddingsOnly {
						paraphrases++
					}
					switch {
					case problem == "":
						hits++
						if q.embeddingsOnly {
							paraphraseHits++
						}
						if q.embeddingsOnly && mode == "bm25" {
							t.Logf("%q: answered without embeddings; embeddingsOnly is not needed", q.query)
						}
					case q.embeddingsOnly && mode == "bm25":
						t.Logf("%q: missed without embeddings, as expected: %s", q.query, problem)
					default:
						t.Errorf("%q: %s", q.query, problem)
					}
				})
			}
			n := len(qualityQuestions)
			t.Logf("%s: %d of %d questions answered: %d of %d by their words, %d of %d paraphrases",
				mode, hits, n, hits-paraphraseHits, n-paraphrases, paraphraseHits, paraphrases)
		})
	}
}

// TestQualityFallback checks that recall with an embeddings endpoint that
// fails, or stops answering, is BM25's, without an error.
func TestQualityFallback(t *testing.T) {
	bm25, _ := seedQuality(t, nil)
	down := func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "model not loaded", http.StatusInternalServerError)
	}
	failing, _ := seedQuality(t, fakeEmbeddings(t, down))

	srv := httptest.NewServer(http.HandlerFunc(fakeEmbeddingsHandler))
	t.Cleanup(srv.Close)
	gone, _ := seedQuality(t, &Embeddings{URL: srv.URL + "/v1", Model: "fake"})
	if r := recallQuality(t, gone, qualityQuestions[0]); r.Mode != "hybrid" {
		t.Fatalf("before the endpoint closed: mode = %s, want hybrid", r.Mode)
	}
	srv.Close()

	for _, tc := range []struct {
		name string
		c    *client.Client
	}{
		{"endpoint fails", failing},
		{"endpoint closed", gone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, q := range qualityQuestions {
				want := recallQuality(t, bm25, q)
				got := recallQuality(t, tc.c, q)
				if got.Mode != "bm25" {
					t.Errorf("%q: mode = %s, want bm25", q.query, got.Mode)
				}
				if g, w := scored(got), scored(want); !slices.Equal(g, w) {
					t.Errorf("%q: recalled %v, BM25 alone recalls %v", q.query, g, w)
				}
			}
		})
	}
}

// seedQuality stores the table's memories and returns a client of the
// store and the id of each memory by key.
func seedQuality(t *testing.T, emb *Embeddings) (*client.Client, map[string]string) {
	t.Helper()
	ctx := context.Background()
	s := openStore(t, emb)
	// Load the term statistics before writing, so the background warm-up
	// cannot miss the first memories' terms.
	if err := s.vocab.load(ctx, s.db); err != nil {
		t.Fatal(err)
	}
	ms := make([]NewMemory, len(qualitySeeds))
	for i, m := range qualitySeeds {
		ms[i] = NewMemory{Text: m.text, Kind: m.kind, Tags: m.tags, Entities: m.entities}
		if m.importance != 0 {
			ms[i].Importance = &m.importance
		}
		if m.occurred != "" {
			d, err := time.Parse(time.DateOnly, m.occurred)
			if err != nil {
				t.Fatal(err)
			}
			ms[i].Occurred = d.Add(12 * time.Hour) // the same day in every time zone
		}
	}
	out, err := s.Remember(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i, o := range out {
		if o.Status != "created" {
			t.Fatalf("%s: %s, not created: the seeds must not be near-duplicates", qualitySeeds[i].key, o.Status)
		}
		ids[qualitySeeds[i].key] = o.ID
	}
	return newClient(t, s), ids
}

func recallQuality(t *testing.T, c *client.Client, q qualityQuestion) Recall {
	t.Helper()
	args := map[string]any{"query": q.query}
	if q.includeSensitive {
		args["include_sensitive"] = true
	}
	return mcpkittest.Structured[Recall](t, c, "memory_recall", args)
}

// check says what is wrong with a recall for q, or "" when nothing is.
func (q qualityQuestion) check(r Recall, ids map[string]string) string {
	keys := map[string]string{}
	for k, id := range ids {
		keys[id] = k
	}
	var got []string
	for _, m := range r.Memories {
		got = append(got, keys[m.ID])
	}
	var problems []string
	if len(q.want) == 0 && len(got) > 0 {
		problems = append(problems, "want nothing")
	}
	if len(got) < len(q.want) || !sameSet(got[:len(q.want)], q.want) {
		problems = append(problems, fmt.Sprintf("want %v first", q.want))
	}
	for _, k := range q.absent {
		if slices.Contains(got, k) {
			problems = append(problems, fmt.Sprintf("want no %s", k))
		}
	}
	if len(problems) == 0 {
		return ""
	}
	var top []string
	for i, m := range r.Memories[:min(len(r.Memories), 3)] {
		top = append(top, fmt.Sprintf("%s=%s %.3f", got[i], m.ID, m.Score))
	}
	return fmt.Sprintf("%s; got [%s] of %d candidates", strings.Join(problems, ", "), strings.Join(top, ", "), r.Candidates)
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// scored lists a recall's memories with their scores.
func scored(r Recall) []string {
	out := make([]string, len(r.Memories))
	for i, m := range r.Memories {
		out[i] = fmt.Sprintf("%s %.3f", m.ID, m.Score)
	}
	return out
}

// fakeEmbeddings serves an OpenAI-compatible embeddings endpoint for the
// test's duration.
func fakeEmbeddings(t *testing.T, h http.HandlerFunc) *Embeddings {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Embeddings{URL: srv.URL + "/v1", Model: "fake"}
}

func fakeEmbeddingsHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "fake" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	type datum struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	out := struct {
		Data []datum `json:"data"`
	}{}
	for i, in := range req.Input {
		out.Data = append(out.Data, datum{i, fakeEmbedding(in)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// fakeEmbedding is a set of concepts: each concept has a dimension of its
// own, so paraphrases are close, and other words share hashed ones.
// Concepts weigh more than other words, as a sentence's topic dominates its
// vector in a real model; the user's pronouns count as one word, as "I" in
// a question means the user of a memory. A paraphrase scores a cosine of
// about 0.6 to 0.9, unrelated texts mostly below 0.3, in line with what
// semantic expects.
func fakeEmbedding(text string) []float64 {
	v := make([]float64, len(fakeConceptNames)+fakeWordDims)
	for _, w := range words(text) {
		if c, ok := fakeConcepts[w]; ok {
			v[slices.Index(fakeConceptNames, c)] = 1
			continue
		}
		switch w {
		case "i", "me", "my", "mine", "myself":
			w = "user"
		}
		if stopwords[w] && w != "user" {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(stem(w)))
		v[len(fakeConceptNames)+int(h.Sum32()%fakeWordDims)] = 0.3
	}
	return v
}

// fakeWordDims is enough dimensions that unrelated words seldom share one.
const fakeWordDims = 256

var fakeConceptNames, fakeConcepts = func() ([]string, map[string]string) {
	var names []string
	m := map[string]string{}
	for _, line := range []string{
		"boss: boss manager supervisor leads",
		"job: job work works working office occupation profession career employer",
		"car: car vehicle auto automobile drive drives driving toyota corolla",
		"spouse: wife husband spouse partner",
		"wedding: married marry wedding anniversary marriage",
		"birth: born birthday birth",
		"child: daughter son kid kids child children",
		"parent: parents parent mom mum mother dad father",
		"pet: pet pets dog dogs beagle cat puppy",
		"japan: japan japanese kyoto osaka tokyo",
		"travel: trip travel travelled traveled vacation holiday journey",
		"meat: meat vegetarian vegan",
		"food: food cuisine eat eating meal dish",
		"music: music instrument guitar bass band piano",
		"run: run ran running runs jog jogging marathon race",
		"allergy: allergy allergies allergic",
		"money: salary earn earns income pay paid euros",
		"home: home house live lives living apartment",
		"book: book books novel reading read",
		"doctor: doctor physician gp dr",
		"coffee: coffee latte espresso cappuccino",
	} {
		concept, ws, _ := strings.Cut(line, ":")
		names = append(names, concept)
		for _, w := range strings.Fields(ws) {
			m[w] = concept
		}
	}
	return names, m
}()
