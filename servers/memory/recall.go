package memory

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// RecallOptions shape one recall.
type RecallOptions struct {
	Filter
	Query string
	Limit int
	// MinScore is the relevance gate (0..1); 0 means DefaultMinScore.
	MinScore float64
}

// DefaultMinScore is the relevance gate: weaker matches are not recalled.
const DefaultMinScore = 0.2

// Recall is what a recall found.
type Recall struct {
	Query    string    `json:"query"`
	Mode     string    `json:"mode" jsonschema:"bm25, or hybrid when embeddings re-ranked the candidates"`
	Memories []*Memory `json:"memories"`
	// Candidates is how many memories matched before the relevance gate.
	Candidates int `json:"candidates"`
}

// How candidates are gathered and scores combined. Lexical relevance is
// mostly term coverage weighted by rarity (absolute, so the gate means the
// same in every database) and partly BM25 relative to the best candidate.
const (
	ftsCandidates    = 200
	vectorCandidates = 50
	halfLifeDays     = 180.0
)

// queryTerm is one distinct content word of a query.
type queryTerm struct {
	stem string
	idf  float64
}

// Recall finds the memories most relevant to o.Query and records that they
// were recalled.
func (s *Store) Recall(ctx context.Context, o RecallOptions) (*Recall, error) {
	return s.recall(ctx, o, true)
}

func (s *Store) recall(ctx context.Context, o RecallOptions, mark bool) (*Recall, error) {
	f, err := o.Filter.validate()
	if err != nil {
		return nil, err
	}
	minScore := o.MinScore
	if minScore == 0 {
		minScore = DefaultMinScore
	}
	out := &Recall{Query: o.Query, Mode: "bm25", Memories: []*Memory{}}
	qwords := contentWords(o.Query)
	// Sensitive memories are gated below, per memory, not by the SQL filter.
	askedSensitive := f.Sensitive
	f.Sensitive = true
	terms, err := s.queryTerms(ctx, qwords)
	if err != nil {
		return nil, err
	}
	cands, err := s.ftsCandidates(ctx, terms, f)
	if err != nil {
		return nil, err
	}
	var sims map[int64]float64
	if s.embed != nil && strings.TrimSpace(o.Query) != "" {
		var found []*candidate
		sims, found, err = s.vectorCandidates(ctx, o.Query, f, cands)
		if err != nil {
			return nil, err
		}
		for _, c := range found {
			c.lexical = 0.7 * coverage(terms, c.m)
		}
		cands = append(cands, found...)
		if sims != nil {
			out.Mode = "hybrid"
		}
	}
	out.Candidates = len(cands)
	now := s.now()
	asks := map[string]bool{}
	for _, w := range qwords {
		asks[w] = true
		asks[stem(w)] = true
	}
	for _, c := range cands {
		if c.m.Sensitivity == Sensitive && !askedSensitive && !asksFor(asks, c.m) {
			continue
		}
		rel := c.lexical
		if sims != nil {
			rel = 0.55*c.lexical + 0.45*semantic(sims[c.m.rowid])
		}
		age := now.Sub(c.m.Updated).Hours() / 24
		recency := math.Pow(0.5, max(age, 0)/halfLifeDays)
		c.m.Score = round3(rel * (0.7 + 0.2*recency + 0.1*c.m.Importance))
		if c.m.Score >= minScore {
			out.Memories = append(out.Memories, c.m)
		}
	}
	slices.SortStableFunc(out.Memories, func(a, b *Memory) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return int(b.rowid - a.rowid)
	})
	if len(out.Memories) > o.Limit {
		out.Memories = out.Memories[:o.Limit]
	}
	if !mark {
		return out, nil
	}
	return out, s.markRecalled(ctx, out.Memories)
}

// asksFor reports whether the query names one of a sensitive memory's
// topics: one of its tags, or a sensitive word it contains.
func asksFor(asks map[string]bool, m *Memory) bool {
	for _, t := range m.Tags {
		if asks[t] {
			return true
		}
	}
	for w := range asks {
		if sensitiveWords[w] {
			return true
		}
	}
	return false
}

// semantic maps a cosine similarity onto 0..1: unrelated texts score
// around 0.2 with common embedding models, paraphrases above 0.7.
func semantic(sim float64) float64 {
	return min(max((sim-0.25)/0.6, 0), 1)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// queryTerms stems the query's content words and weighs each by rarity.
// Terms in more than a third of a large database are dropped when rarer
// terms remain: they cost the most to rank and tell the least.
func (s *Store) queryTerms(ctx context.Context, qwords []string) ([]queryTerm, error) {
	var stems []string
	for _, w := range qwords {
		st := stem(w)
		if !slices.Contains(stems, st) {
			stems = append(stems, st)
		}
	}
	if len(stems) == 0 {
		return nil, nil
	}
	if len(stems) > 32 {
		stems = stems[:32]
	}
	n, err := s.count(ctx)
	if err != nil {
		return nil, err
	}
	args := make([]any, len(stems))
	for i, st := range stems {
		args[i] = st
	}
	df := map[string]int{}
	rows, err := s.db.QueryContext(ctx, `SELECT term, doc FROM memories_vocab WHERE term IN (`+placeholders(len(args))+`)`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t string
		var d int
		if err := rows.Scan(&t, &d); err != nil {
			rows.Close()
			return nil, err
		}
		df[t] = d
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	terms := make([]queryTerm, 0, len(stems))
	for _, st := range stems {
		d := df[st]
		idf := math.Log(1 + (float64(n)-float64(d)+0.5)/(float64(d)+0.5))
		terms = append(terms, queryTerm{stem: st, idf: idf})
	}
	if n >= 1000 {
		rare := slices.DeleteFunc(slices.Clone(terms), func(t queryTerm) bool { return df[t.stem]*3 > n })
		if len(rare) > 0 && len(rare) < len(terms) {
			// Keep their weight in coverage, but do not search by them.
			for i := range terms {
				if df[terms[i].stem]*3 > n {
					terms[i].stem = "-" + terms[i].stem
				}
			}
		}
	}
	return terms, nil
}

type candidate struct {
	m       *Memory
	lexical float64
}

// ftsCandidates are the memories matching any searched term, best BM25
// first, each with its lexical relevance.
func (s *Store) ftsCandidates(ctx context.Context, terms []queryTerm, f Filter) ([]*candidate, error) {
	var search []string
	for _, t := range terms {
		if !strings.HasPrefix(t.stem, "-") {
			search = append(search, `"`+t.stem+`"`)
		}
	}
	if len(search) == 0 {
		return nil, nil
	}
	where, args := f.where()
	// Column weights: text, tags, entities, dates.
	q := `SELECT ` + memoryColumns + `, c.r FROM (
			SELECT rowid, bm25(memories_fts, 1.0, 0.6, 1.2, 0.8) AS r FROM memories_fts
			WHERE memories_fts MATCH ? ORDER BY r LIMIT ?
		) c JOIN memories m ON m.id = c.rowid WHERE ` + where + ` ORDER BY c.r`
	limit := ftsCandidates
	if len(f.Kinds)+len(f.Tags) > 0 || !f.Since.IsZero() || !f.Until.IsZero() || f.Source != "" {
		limit = -1 // a narrow filter may reject the best matches
	}
	rows, err := s.db.QueryContext(ctx, q, append([]any{strings.Join(search, " OR "), limit}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("full-text search: %w", err)
	}
	defer rows.Close()
	var out []*candidate
	best := 0.0
	for rows.Next() {
		var (
			m                  Memory
			tags               string
			created, updated   int64
			occurred, recalled sql.NullInt64
			r                  float64
		)
		if err := rows.Scan(&m.rowid, &m.Text, &m.Kind, &tags, &m.Importance, &m.Sensitivity, &m.Source, &created, &updated, &occurred, &recalled, &r); err != nil {
			return nil, err
		}
		fillMemory(&m, tags, created, updated, occurred, recalled)
		x := -r
		if x > best {
			best = x
		}
		out = append(out, &candidate{m: &m, lexical: x})
		if len(out) >= ftsCandidates {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := loadEntityNames(ctx, s.db, memoriesOf(out)); err != nil {
		return nil, err
	}
	for _, c := range out {
		rel := 0.0
		if best > 0 {
			rel = c.lexical / best
		}
		c.lexical = 0.7*coverage(terms, c.m) + 0.3*rel
	}
	return out, nil
}

func memoriesOf(cs []*candidate) []*Memory {
	ms := make([]*Memory, len(cs))
	for i, c := range cs {
		ms[i] = c.m
	}
	return ms
}

// coverage is the share of the query's rarity-weighted terms that the
// memory contains, in its text, tags, entities or date.
func coverage(terms []queryTerm, m *Memory) float64 {
	have := map[string]bool{}
	add := func(s string) {
		for _, w := range words(s) {
			have[stem(w)] = true
		}
	}
	add(m.Text)
	add(strings.Join(m.Tags, " "))
	add(strings.Join(m.Entities, " "))
	if !m.Occurred.IsZero() {
		add(dateWords(m.Occurred))
	}
	var got, all float64
	for _, t := range terms {
		all += t.idf
		if have[strings.TrimPrefix(t.stem, "-")] {
			got += t.idf
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

// markRecalled records when memories were last recalled.
func (s *Store) markRecalled(ctx context.Context, ms []*Memory) error {
	if len(ms) == 0 {
		return nil
	}
	now := s.millis()
	args := []any{now}
	for _, m := range ms {
		args = append(args, m.rowid)
		m.Recalled = time.UnixMilli(now)
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE memories SET recalled = ?, recall_count = recall_count + 1 WHERE id IN (`+placeholders(len(ms))+`)`, args...)
		return err
	})
}

func (s *Store) count(ctx context.Context) (int, error) {
	var n int
	// The sequence is an upper bound that costs nothing to read; the
	// weights it feeds need no exact count.
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0)`).Scan(&n)
	return n, err
}
