package memory

import (
	"context"
	"encoding/json"
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
	df   int
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
	ms, err := s.ftsCandidates(ctx, terms, f)
	if err != nil {
		return nil, err
	}
	var sims map[int64]float64
	if s.embed != nil && strings.TrimSpace(o.Query) != "" {
		var found []*Memory
		sims, found, err = s.vectorCandidates(ctx, o.Query, f, ms)
		if err != nil {
			return nil, err
		}
		ms = append(ms, found...)
		if sims != nil {
			out.Mode = "hybrid"
		}
	}
	cands := score(terms, ms)
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
		// Ranking uses BM25 relative to the best candidate; the gate does
		// not, since the best candidate is "best" even when it is poor.
		rel, gate := c.lexical(), c.lexicalGate()
		if sims != nil {
			sem := semantic(sims[c.m.rowid])
			// A paraphrase shares no word but can be the answer.
			rel = max(0.55*rel+0.45*sem, 0.7*sem)
			gate = max(0.55*gate+0.45*sem, 0.7*sem)
		}
		age := now.Sub(c.m.Updated).Hours() / 24
		recency := math.Pow(0.5, max(age, 0)/halfLifeDays)
		weight := 0.7 + 0.2*recency + 0.1*c.m.Importance
		c.m.Score = round3(rel * weight)
		if gate*weight >= minScore {
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
		if asks[t] || asks[stem(t)] {
			return true
		}
	}
	for _, w := range words(m.Text) {
		if sensitiveWords[w] && (asks[w] || asks[stem(w)]) {
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

// queryTerms stems the query's distinct content words (at most 16) and
// weighs each by rarity (BM25's idf).
func (s *Store) queryTerms(ctx context.Context, qwords []string) ([]queryTerm, error) {
	var stems []string
	for _, w := range qwords {
		st := stem(w)
		if !slices.Contains(stems, st) {
			stems = append(stems, st)
		}
	}
	if len(stems) > 16 {
		stems = stems[:16]
	}
	if len(stems) == 0 {
		return nil, nil
	}
	df, n, err := s.vocab.stats(ctx, s.db, stems)
	if err != nil {
		return nil, err
	}
	terms := make([]queryTerm, 0, len(stems))
	for _, st := range stems {
		d := min(df[st], n)
		idf := math.Log(1 + (float64(n)-float64(d)+0.5)/(float64(d)+0.5))
		terms = append(terms, queryTerm{stem: st, df: d, idf: idf})
	}
	return terms, nil
}

// candidate is a memory with its lexical match: coverage is the share of
// the query's rarity-weighted terms it holds (absolute, so the relevance
// gate means the same in every database), bm25 its BM25 relative to the
// best candidate.
type candidate struct {
	m              *Memory
	coverage, bm25 float64
}

func (c *candidate) lexical() float64     { return 0.7*c.coverage + 0.3*c.bm25 }
func (c *candidate) lexicalGate() float64 { return 0.7*c.coverage + 0.3*c.coverage*c.bm25 }

// How many rows each candidate search reads at most. Ranking every match
// of a common word costs time in proportion to its matches (FTS5's own
// bm25() does exactly that); these searches read the newest matches only,
// so a recall costs about the same in a database of any size.
const (
	allTermsRows  = 80  // memories holding every term
	rareTermsRows = 120 // memories holding one of the rarest terms
	anyTermRows   = 60  // when those find too little: memories holding any term
	rareBudget    = 3000
)

// ftsCandidates finds the memories that match the query's terms: those
// with all of them, those with one of the rarest, and, when that is not
// enough, those with any; then scores each by term coverage and BM25.
func (s *Store) ftsCandidates(ctx context.Context, terms []queryTerm, f Filter) ([]*Memory, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	scale := 1
	if len(f.Kinds)+len(f.Tags) > 0 || !f.Since.IsZero() || !f.Until.IsZero() || f.Source != "" {
		scale = 8 // a narrow filter rejects many matches
	}
	byRarity := slices.Clone(terms)
	slices.SortStableFunc(byRarity, func(a, b queryTerm) int { return a.df - b.df })
	quoted := func(ts []queryTerm, op string) string {
		q := make([]string, len(ts))
		for i, t := range ts {
			q[i] = `"` + t.stem + `"`
		}
		return strings.Join(q, op)
	}
	seen := map[int64]bool{}
	var ids []int64
	search := func(match string, limit int) error {
		st, err := s.reads.stmt(ctx, s.db, `SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT ?`)
		if err != nil {
			return err
		}
		rows, err := st.QueryContext(ctx, match, limit*scale)
		if err != nil {
			return fmt.Errorf("full-text search: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return rows.Err()
	}
	if len(terms) > 1 {
		if err := search(quoted(terms, " AND "), allTermsRows); err != nil {
			return nil, err
		}
	}
	rare, budget := 1, byRarity[0].df
	for rare < len(byRarity) && budget+byRarity[rare].df <= rareBudget {
		budget += byRarity[rare].df
		rare++
	}
	if err := search(quoted(byRarity[:rare], " OR "), rareTermsRows); err != nil {
		return nil, err
	}
	if len(ids) < 50 && rare < len(byRarity) {
		if err := search(quoted(byRarity, " OR "), anyTermRows); err != nil {
			return nil, err
		}
	}
	return s.loadMemories(ctx, ids, f)
}

// loadMemories loads the memories with the given ids that pass the
// filter, with their entities.
func (s *Store) loadMemories(ctx context.Context, ids []int64, f Filter) ([]*Memory, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(ids)
	where, args := f.where()
	st, err := s.reads.stmt(ctx, s.db, `SELECT `+memoryColumns+` FROM memories m WHERE m.id IN (SELECT value FROM json_each(?)) AND `+where)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, append([]any{string(list)}, args...)...)
	if err != nil {
		return nil, err
	}
	ms, err := scanAll(rows)
	if err != nil {
		return nil, err
	}
	return ms, loadEntityNames(ctx, s.db, ms)
}

// BM25's parameters, as FTS5 and most engines use them, and the weight of
// each part of a memory.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

var fieldWeights = struct{ text, tags, entities, dates float64 }{1.0, 0.6, 1.2, 0.8}

// score measures each memory's lexical match with the query.
func score(terms []queryTerm, ms []*Memory) []*candidate {
	out := make([]*candidate, len(ms))
	bm := make([]float64, len(ms))
	lens := make([]int, len(ms))
	tfs := make([]map[string]float64, len(ms))
	total := 0
	for i, m := range ms {
		tf := map[string]float64{}
		add := func(s string, w float64) int {
			ws := words(s)
			for _, x := range ws {
				tf[stem(x)] += w
			}
			return len(ws)
		}
		lens[i] = add(m.Text, fieldWeights.text)
		add(strings.Join(m.Tags, " "), fieldWeights.tags)
		add(strings.Join(m.Entities, " "), fieldWeights.entities)
		if !m.Occurred.IsZero() {
			add(dateWords(m.Occurred), fieldWeights.dates)
		}
		tfs[i] = tf
		total += lens[i]
	}
	avg := 1.0
	if len(ms) > 0 && total > 0 {
		avg = float64(total) / float64(len(ms))
	}
	best := 0.0
	var all float64
	for _, t := range terms {
		all += t.idf
	}
	for i, m := range ms {
		var got float64
		for _, t := range terms {
			tf := tfs[i][t.stem]
			if tf == 0 {
				continue
			}
			got += t.idf
			bm[i] += t.idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(lens[i])/avg))
		}
		best = max(best, bm[i])
		out[i] = &candidate{m: m}
		if all > 0 {
			out[i].coverage = got / all
		}
	}
	for i := range out {
		if best > 0 {
			out[i].bm25 = bm[i] / best
		}
	}
	return out
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
	return s.write(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE memories SET recalled = ?, recall_count = recall_count + 1 WHERE id IN (`+placeholders(len(ms))+`)`, args...)
		return err
	})
}
