package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Memory is one stored memory.
type Memory struct {
	ID          string    `json:"id"`
	Text        string    `json:"text"`
	Kind        string    `json:"kind"`
	Tags        []string  `json:"tags,omitempty"`
	Importance  float64   `json:"importance"`
	Sensitivity string    `json:"sensitivity"`
	Source      string    `json:"source,omitempty"`
	Entities    []string  `json:"entities,omitempty"`
	Created     time.Time `json:"created"`
	Updated     time.Time `json:"updated"`
	Occurred    time.Time `json:"occurred,omitzero"`
	Recalled    time.Time `json:"recalled,omitzero"`
	Score       float64   `json:"score,omitempty"`

	rowid int64
}

// NewMemory is what memory_remember stores; zero fields take defaults.
type NewMemory struct {
	Text        string
	Kind        string
	Tags        []string
	Importance  *float64 // nil means the default, 0.5
	Sensitivity string   // "" means guessed from the text
	Source      string
	Entities    []string
	Occurred    time.Time
}

// Outcome says what Remember did with one memory.
type Outcome struct {
	ID     string `json:"id"`
	Status string `json:"status" jsonschema:"created, updated (a near-duplicate was merged into an existing memory) or unchanged"`
	// Merged is the text of the memory it was merged into, before the merge.
	Merged string `json:"merged,omitempty"`
}

// Near-duplicates: at or above this overlap of content words, a new memory
// updates the existing one instead of adding a copy.
const nearDuplicate = 0.8

// prepare validates m and fills in its defaults.
func (m *NewMemory) prepare() error {
	m.Text = strings.TrimSpace(m.Text)
	if m.Text == "" {
		return errEmptyText
	}
	if n := len([]rune(m.Text)); n > 4000 {
		return fmt.Errorf("text has %d characters; a memory holds at most 4000: store the gist, or several memories", n)
	}
	if err := checkSecrets(m.Text); err != nil {
		return err
	}
	if m.Kind == "" {
		m.Kind = "fact"
	}
	if !slices.Contains(kinds, m.Kind) {
		return fmt.Errorf("kind %q is not one of %s", m.Kind, strings.Join(kinds, ", "))
	}
	tags, err := normalizeTags(m.Tags)
	if err != nil {
		return err
	}
	m.Tags = tags
	if m.Importance == nil {
		half := 0.5
		m.Importance = &half
	}
	if v := *m.Importance; v < 0 || v > 1 || math.IsNaN(v) {
		return fmt.Errorf("importance %v is outside 0..1", v)
	}
	switch m.Sensitivity {
	case "":
		m.Sensitivity = guessSensitivity(m.Text, m.Tags)
	case Normal, Sensitive:
	default:
		return fmt.Errorf("sensitivity %q: use normal or sensitive", m.Sensitivity)
	}
	ents, err := normalizeEntities(m.Entities)
	if err != nil {
		return err
	}
	m.Entities = ents
	return nil
}

func normalizeEntities(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.Join(strings.Fields(n), " ")
		if n == "" {
			continue
		}
		if len([]rune(n)) > 200 {
			return nil, fmt.Errorf("entity name %q… is longer than 200 characters", string([]rune(n)[:40]))
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, n) }) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Remember stores memories in one transaction. A memory that nearly
// duplicates one already stored (or one earlier in the same batch) updates
// it instead: the newer text wins, tags and entities are merged, and the
// importance is the higher of the two.
func (s *Store) Remember(ctx context.Context, ms []NewMemory) ([]Outcome, error) {
	for i := range ms {
		if err := ms[i].prepare(); err != nil {
			if len(ms) > 1 {
				return nil, fmt.Errorf("memories[%d]: %w", i, err)
			}
			return nil, err
		}
	}
	out := make([]Outcome, len(ms))
	err := s.write(ctx, func(tx *txn) error {
		now := s.millis()
		// First every lookup, then every write: FTS5 flushes pending
		// writes into a new segment before each query, so interleaving
		// them would leave a segment per memory.
		dups := make([]int64, len(ms))
		fps := make([]string, len(ms))
		terms := make([][]string, len(ms))
		sameAs := make([]int, len(ms)) // index of an earlier memory in the batch it duplicates, or -1
		byFP := map[string]int{}
		for i, m := range ms {
			fps[i], terms[i], sameAs[i] = fingerprint(m.Text), termSet(m.Text), -1
			if j, ok := byFP[fps[i]]; ok {
				sameAs[i] = j
				continue
			}
			byFP[fps[i]] = i
			for j := i - 1; j >= 0 && j >= i-64; j-- {
				if nearDup(m.Text, ms[j].Text, terms[i], terms[j]) {
					sameAs[i] = j
					break
				}
			}
			if sameAs[i] >= 0 {
				continue
			}
			id, err := s.findDuplicate(ctx, tx, m.Text, fps[i], terms[i])
			if err != nil {
				return err
			}
			dups[i] = id
		}
		ids := make([]int64, len(ms))
		for i, m := range ms {
			dup := dups[i]
			if j := sameAs[i]; j >= 0 {
				dup = ids[j]
			}
			var err error
			if dup != 0 {
				old, err := loadMemory(ctx, tx, dup)
				if err != nil {
					return err
				}
				out[i], err = s.merge(ctx, tx, old, m, fps[i], now)
				if err != nil {
					return err
				}
				ids[i] = dup
				continue
			}
			out[i], ids[i], err = s.insert(ctx, tx, m, fps[i], now)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.embedLater()
	return out, nil
}

// insert stores a new memory.
func (s *Store) insert(ctx context.Context, tx *txn, m NewMemory, fp string, now int64) (Outcome, int64, error) {
	var occurred any
	if !m.Occurred.IsZero() {
		occurred = m.Occurred.UnixMilli()
	}
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO memories(text, kind, tags, source, importance, sensitivity, created, updated, occurred, fingerprint)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		m.Text, m.Kind, strings.Join(m.Tags, " "), m.Source, *m.Importance, m.Sensitivity, now, now, occurred, fp).Scan(&id)
	if err != nil {
		return Outcome{}, 0, err
	}
	if err := linkEntities(ctx, tx, id, m.Entities, now); err != nil {
		return Outcome{}, 0, err
	}
	if err := insertIndex(ctx, tx, id, m.Text, m.Tags, m.Entities, m.Occurred); err != nil {
		return Outcome{}, 0, err
	}
	tx.added = append(tx.added, indexTerms(m.Text, m.Tags, m.Entities))
	return Outcome{ID: formatID(id), Status: "created"}, id, nil
}

// findDuplicate returns the stored memory whose terms overlap terms by at
// least nearDuplicate, if any: first by fingerprint, then among memories
// holding one of the k+1 rarest terms, where k = ⌊|terms|/5⌋ is how many
// of them a memory that overlaps by 80% can miss. The search reads at most
// 16 memories, oldest first; when the rarest terms are common words a
// near-duplicate can be missed, and the memory is added as new.
func (s *Store) findDuplicate(ctx context.Context, tx *txn, text, fp string, terms []string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM memories WHERE fingerprint = ? ORDER BY id LIMIT 1`, fp).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	if len(terms) == 0 {
		return 0, nil
	}
	df, _, err := s.vocab.stats(ctx, s.db, terms)
	if err != nil {
		return 0, err
	}
	byRarity := slices.Clone(terms)
	slices.SortStableFunc(byRarity, func(a, b string) int { return df[a] - df[b] })
	var or []string
	for _, t := range byRarity[:len(terms)/5+1] {
		or = append(or, `"`+t+`"`)
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.id, m.text FROM memories_fts f JOIN memories m ON m.id = f.rowid
		WHERE memories_fts MATCH ? LIMIT 16`, "text : ("+strings.Join(or, " OR ")+")")
	if err != nil {
		return 0, err
	}
	best, bestID := 0.0, int64(0)
	for rows.Next() {
		var cid int64
		var ctext string
		if err := rows.Scan(&cid, &ctext); err != nil {
			rows.Close()
			return 0, err
		}
		if j := jaccard(terms, termSet(ctext)); j >= nearDuplicate && !differsInSpecifics(text, ctext, terms, termSet(ctext)) && (j > best || j == best && cid < bestID) {
			best, bestID = j, cid
		}
	}
	rows.Close()
	return bestID, rows.Err()
}

// nearDup reports whether two texts say the same thing: their terms
// overlap by nearDuplicate and they differ in no number or name.
func nearDup(a, b string, ta, tb []string) bool {
	return jaccard(ta, tb) >= nearDuplicate && !differsInSpecifics(a, b, ta, tb)
}

// differsInSpecifics reports whether the terms only one of two texts has
// include a number or a name ("in Lisbon" against "in Osaka", "7 times"
// against "15 times"): such texts state different facts, however much
// else they share.
func differsInSpecifics(a, b string, ta, tb []string) bool {
	specific := func(text string) map[string]bool {
		out := map[string]bool{}
		for i, w := range strings.Fields(text) {
			ws := words(w)
			if len(ws) == 0 {
				continue
			}
			r := []rune(strings.TrimLeft(w, "\"'([{"))
			name := i > 0 && len(r) > 0 && unicode.IsUpper(r[0])
			for _, x := range ws {
				if name || strings.ContainsAny(x, "0123456789") {
					out[stem(x)] = true
				}
			}
		}
		return out
	}
	sa, sb := specific(a), specific(b)
	for _, t := range ta {
		if _, ok := slices.BinarySearch(tb, t); !ok && (sa[t] || sb[t]) {
			return true
		}
	}
	for _, t := range tb {
		if _, ok := slices.BinarySearch(ta, t); !ok && (sa[t] || sb[t]) {
			return true
		}
	}
	return false
}

// merge folds m into the stored near-duplicate old.
func (s *Store) merge(ctx context.Context, tx *txn, old *Memory, m NewMemory, fp string, now int64) (Outcome, error) {
	tags := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(old.Tags), m.Tags...))))
	importance := max(old.Importance, *m.Importance)
	sensitivity := old.Sensitivity
	if m.Sensitivity == Sensitive {
		sensitivity = Sensitive
	}
	newEntities := slices.DeleteFunc(slices.Clone(m.Entities), func(n string) bool {
		return slices.ContainsFunc(old.Entities, func(o string) bool { return strings.EqualFold(o, n) })
	})
	same := old.Text == m.Text && slices.Equal(tags, old.Tags) && importance == old.Importance &&
		sensitivity == old.Sensitivity && len(newEntities) == 0 && (m.Occurred.IsZero() || m.Occurred.Equal(old.Occurred))
	if same {
		return Outcome{ID: old.ID, Status: "unchanged"}, nil
	}
	occurred := any(nil)
	if !m.Occurred.IsZero() {
		occurred = m.Occurred.UnixMilli()
	} else if !old.Occurred.IsZero() {
		occurred = old.Occurred.UnixMilli()
	}
	source := old.Source
	if m.Source != "" {
		source = m.Source
	}
	_, err := tx.ExecContext(ctx, `UPDATE memories SET text = ?, kind = ?, tags = ?, source = ?, importance = ?, sensitivity = ?,
		updated = ?, occurred = ?, fingerprint = ?, embedded = CASE WHEN text = ? THEN embedded ELSE 0 END WHERE id = ?`,
		m.Text, m.Kind, strings.Join(tags, " "), source, importance, sensitivity, now, occurred, fp, m.Text, old.rowid)
	if err != nil {
		return Outcome{}, err
	}
	if err := linkEntities(ctx, tx, old.rowid, newEntities, now); err != nil {
		return Outcome{}, err
	}
	if err := indexMemory(ctx, tx, old.rowid, true); err != nil {
		return Outcome{}, err
	}
	return Outcome{ID: old.ID, Status: "updated", Merged: old.Text}, nil
}

// linkEntities links memory id to entities by name, creating those that do
// not exist yet.
func linkEntities(ctx context.Context, tx *txn, id int64, names []string, now int64) error {
	for _, n := range names {
		eid, err := ensureEntity(ctx, tx, n, "", now)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memory_entities(memory_id, entity_id) VALUES(?, ?)`, id, eid); err != nil {
			return err
		}
	}
	return nil
}

// ensureEntity returns the id of the entity named name, creating it. A type
// given for an entity that has none is recorded.
func ensureEntity(ctx context.Context, tx *txn, name, typ string, now int64) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO entities(name, type, created, updated) VALUES(?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET type = CASE WHEN entities.type = '' THEN excluded.type ELSE entities.type END
		RETURNING id`, name, typ, now, now).Scan(&id)
	return id, err
}

// indexMemory queues a stored memory's row in the full-text index for
// rewriting at the end of the transaction.
func indexMemory(ctx context.Context, tx *txn, id int64, replace bool) error {
	m, err := loadMemory(ctx, tx, id)
	if err != nil {
		return err
	}
	return insertIndex(ctx, tx, id, m.Text, m.Tags, m.Entities, m.Occurred)
}

// insertIndex queues a memory's row in the full-text index: its text,
// tags, entities and the date it happened. The index holds stems computed
// here rather than by an FTS5 tokenizer, so that queries, term statistics
// and scoring all use one stemmer.
func insertIndex(_ context.Context, tx *txn, id int64, text string, tags, entities []string, occurred time.Time) error {
	dates := ""
	if !occurred.IsZero() {
		dates = dateWords(occurred)
	}
	tx.index(id, ftsRow{stemmed(text), stemmed(strings.Join(tags, " ")), stemmed(strings.Join(entities, " ; ")), dates})
	return nil
}
