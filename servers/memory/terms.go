package memory

import (
	"context"
	"database/sql"
	"log/slog"
	"slices"
	"sync"

	"github.com/kljensen/snowball/english"
)

// stems caches the stem of every word seen: stemming is the costliest part
// of scoring, and a person's memories reuse a small vocabulary.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

// stem reduces a lowercase word to its English stem ("running" → "run").
func stem(w string) string {
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	stems.Lock()
	if len(stems.m) >= 1<<18 {
		clear(stems.m)
	}
	stems.m[w] = s
	stems.Unlock()
	return s
}

// stemmed is the text as the full-text index holds it: its words' stems.
func stemmed(s string) string {
	ws := words(s)
	n := 0
	for i, w := range ws {
		ws[i] = stem(w)
		n += len(ws[i]) + 1
	}
	b := make([]byte, 0, n)
	for i, w := range ws {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, w...)
	}
	return string(b)
}

// termSet is the distinct stems of the content words of s.
func termSet(s string) []string {
	ws := contentWords(s)
	for i, w := range ws {
		ws[i] = stem(w)
	}
	slices.Sort(ws)
	return slices.Compact(ws)
}

// vocabulary knows how many memories hold each stem, for weighting query
// terms by rarity and for choosing the rarest words to search by. It is
// loaded from the index once and kept up to date with this process's own
// writes; other processes' writes make it a little stale, which changes
// weights slightly and never what is found.
type vocabulary struct {
	mu     sync.Mutex
	df     map[string]int
	n      int // memories when loaded, plus those added since
	loaded bool
}

// load reads every term's document count from the index, once.
func (v *vocabulary) load(ctx context.Context, db *sql.DB) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.loaded {
		return nil
	}
	df := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT term, doc FROM memories_vocab`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var d int
		if err := rows.Scan(&t, &d); err != nil {
			return err
		}
		df[t] = d
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM memories`).Scan(&n); err != nil {
		return err
	}
	v.df, v.n, v.loaded = df, n, true
	return nil
}

// warm loads the vocabulary in the background so the first call does not
// wait for it.
func (v *vocabulary) warm(db *sql.DB) {
	go func() {
		if err := v.load(context.Background(), db); err != nil {
			slog.Debug("loading the term statistics", "err", err)
		}
	}()
}

// added counts a new memory's terms.
func (v *vocabulary) added(terms []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.loaded {
		return
	}
	v.n++
	for _, t := range terms {
		v.df[t]++
	}
}

// stats returns the document count of each term and the number of
// memories.
func (v *vocabulary) stats(ctx context.Context, db *sql.DB, terms []string) (map[string]int, int, error) {
	if err := v.load(ctx, db); err != nil {
		return nil, 0, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]int, len(terms))
	for _, t := range terms {
		out[t] = v.df[t]
	}
	return out, v.n, nil
}

// indexTerms are the distinct stems a memory adds to the index.
func indexTerms(text string, tags, entities []string) []string {
	ws := words(text)
	for _, t := range tags {
		ws = append(ws, words(t)...)
	}
	for _, e := range entities {
		ws = append(ws, words(e)...)
	}
	for i, w := range ws {
		ws[i] = stem(w)
	}
	slices.Sort(ws)
	return slices.Compact(ws)
}
