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
	err := s.write(ctx, func(tx *sql.Tx) error {
		now := s.millis()
		for i, m := range ms {
			o, err := s.rememberOne(ctx, tx, m, now)
			if err != nil {
				return err
			}
			out[i] = o
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.embedLater()
	return out, nil
}

func (s *Store) rememberOne(ctx context.Context, tx *sql.Tx, m NewMemory, now int64) (Outcome, error) {
	fp := fingerprint(m.Text)
	sh := shingles(m.Text)
	dup, err := findDuplicate(ctx, tx, m.Text, fp, sh)
	if err != nil {
		return Outcome{}, err
	}
	if dup != nil {
		return s.merge(ctx, tx, dup, m, fp, sh, now)
	}
	var occurred any
	if !m.Occurred.IsZero() {
		occurred = m.Occurred.UnixMilli()
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO memories(text, kind, tags, source, importance, sensitivity, created, updated, occurred, fingerprint)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.Text, m.Kind, strings.Join(m.Tags, " "), m.Source, *m.Importance, m.Sensitivity, now, now, occurred, fp)
	if err != nil {
		return Outcome{}, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Outcome{}, err
	}
	if err := insertShingles(ctx, tx, id, sh); err != nil {
		return Outcome{}, err
	}
	if err := linkEntities(ctx, tx, id, m.Entities, now); err != nil {
		return Outcome{}, err
	}
	if err := indexMemory(ctx, tx, id, false); err != nil {
		return Outcome{}, err
	}
	return Outcome{ID: formatID(id), Status: "created"}, nil
}

// findDuplicate returns the stored memory m.Text nearly duplicates, if any:
// first by fingerprint, then among memories sharing a min-hash.
func findDuplicate(ctx context.Context, tx *sql.Tx, text, fp string, sh []int64) (*Memory, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM memories WHERE fingerprint = ? ORDER BY id LIMIT 1`, fp).Scan(&id)
	if err == nil {
		return loadMemory(ctx, tx, id)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if len(sh) == 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT m.id, m.text FROM shingles s JOIN memories m ON m.id = s.memory_id
		WHERE s.hash IN (?, ?, ?, ?) LIMIT 64`, sh[0], sh[1], sh[2], sh[3])
	if err != nil {
		return nil, err
	}
	best, bestID := 0.0, int64(0)
	for rows.Next() {
		var cid int64
		var ctext string
		if err := rows.Scan(&cid, &ctext); err != nil {
			rows.Close()
			return nil, err
		}
		if j := jaccard(text, ctext); j >= nearDuplicate && (j > best || j == best && cid < bestID) {
			best, bestID = j, cid
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if bestID == 0 {
		return nil, nil
	}
	return loadMemory(ctx, tx, bestID)
}

// merge folds m into the stored near-duplicate old.
func (s *Store) merge(ctx context.Context, tx *sql.Tx, old *Memory, m NewMemory, fp string, sh []int64, now int64) (Outcome, error) {
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
	if old.Text != m.Text {
		if _, err := tx.ExecContext(ctx, `DELETE FROM shingles WHERE memory_id = ?`, old.rowid); err != nil {
			return Outcome{}, err
		}
		if err := insertShingles(ctx, tx, old.rowid, sh); err != nil {
			return Outcome{}, err
		}
	}
	if err := linkEntities(ctx, tx, old.rowid, newEntities, now); err != nil {
		return Outcome{}, err
	}
	if err := indexMemory(ctx, tx, old.rowid, true); err != nil {
		return Outcome{}, err
	}
	return Outcome{ID: old.ID, Status: "updated", Merged: old.Text}, nil
}

func insertShingles(ctx context.Context, tx *sql.Tx, id int64, sh []int64) error {
	for _, h := range sh {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO shingles(hash, memory_id) VALUES(?, ?)`, h, id); err != nil {
			return err
		}
	}
	return nil
}

// linkEntities links memory id to entities by name, creating those that do
// not exist yet.
func linkEntities(ctx context.Context, tx *sql.Tx, id int64, names []string, now int64) error {
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
func ensureEntity(ctx context.Context, tx *sql.Tx, name, typ string, now int64) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO entities(name, type, created, updated) VALUES(?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET type = CASE WHEN entities.type = '' THEN excluded.type ELSE entities.type END
		RETURNING id`, name, typ, now, now).Scan(&id)
	return id, err
}

// indexMemory (re)writes a memory's row in the full-text index from the
// stored memory, its entities and the date it happened. The index holds
// stems computed here rather than by an FTS5 tokenizer, so that queries,
// term statistics and coverage scoring all use one stemmer.
func indexMemory(ctx context.Context, tx *sql.Tx, id int64, replace bool) error {
	if replace {
		if _, err := tx.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, id); err != nil {
			return err
		}
	}
	var (
		text, tags string
		entities   sql.NullString
		occurred   sql.NullInt64
	)
	err := tx.QueryRowContext(ctx, `SELECT m.text, m.tags, m.occurred,
			(SELECT group_concat(e.name, ' ; ') FROM memory_entities me JOIN entities e ON e.id = me.entity_id WHERE me.memory_id = m.id)
		FROM memories m WHERE m.id = ?`, id).Scan(&text, &tags, &occurred, &entities)
	if err != nil {
		return err
	}
	dates := ""
	if occurred.Valid {
		dates = dateWords(time.UnixMilli(occurred.Int64))
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO memories_fts(rowid, text, tags, entities, dates) VALUES(?, ?, ?, ?, ?)`,
		id, stemmed(text), stemmed(tags), stemmed(entities.String), dates)
	return err
}
