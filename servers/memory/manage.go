package memory

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"
)

// Forget deletes memories by id and reports which existed. Ids that do not
// exist are returned in missing, not treated as an error.
func (s *Store) Forget(ctx context.Context, ids []int64) (forgotten, missing []string, err error) {
	err = s.write(ctx, func(tx *txn) error {
		forgotten, missing = nil, nil
		for _, id := range ids {
			ok, err := deleteMemory(ctx, tx, id)
			if err != nil {
				return err
			}
			if ok {
				forgotten = append(forgotten, formatID(id))
			} else {
				missing = append(missing, formatID(id))
			}
		}
		return nil
	})
	return forgotten, missing, err
}

func deleteMemory(ctx context.Context, tx *txn, id int64) (bool, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	tx.unindex(id)
	if err := deleteVector(ctx, tx, id); err != nil {
		return false, err
	}
	return true, nil
}

func deleteVector(ctx context.Context, tx *txn, id int64) error {
	var exists int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'memory_vec'`).Scan(&exists); err != nil || exists == 0 {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM memory_vec WHERE rowid = ?`, id)
	return err
}

// Change is an edit of one memory; nil fields stay as they are.
type Change struct {
	Text        *string
	Kind        *string
	Tags        *[]string
	AddTags     []string
	RemoveTags  []string
	Importance  *float64
	Sensitivity *string
	Entities    *[]string
	Occurred    *time.Time
}

// Update edits memory id and returns it as it now is.
func (s *Store) Update(ctx context.Context, id int64, c Change) (*Memory, error) {
	var out *Memory
	err := s.write(ctx, func(tx *txn) error {
		m, err := loadMemory(ctx, tx, id)
		if err != nil {
			return err
		}
		nm := NewMemory{Text: m.Text, Kind: m.Kind, Tags: m.Tags, Importance: &m.Importance, Sensitivity: m.Sensitivity, Source: m.Source, Entities: m.Entities, Occurred: m.Occurred}
		if c.Text != nil {
			nm.Text = *c.Text
		}
		if c.Kind != nil {
			nm.Kind = *c.Kind
		}
		if c.Tags != nil {
			nm.Tags = *c.Tags
		}
		nm.Tags = append(slices.Clone(nm.Tags), c.AddTags...)
		if len(c.RemoveTags) > 0 {
			rm, err := normalizeTags(c.RemoveTags)
			if err != nil {
				return err
			}
			nm.Tags = slices.DeleteFunc(nm.Tags, func(t string) bool { return slices.Contains(rm, t) })
		}
		if c.Importance != nil {
			nm.Importance = c.Importance
		}
		if c.Sensitivity != nil {
			nm.Sensitivity = *c.Sensitivity
		}
		if c.Entities != nil {
			nm.Entities = *c.Entities
		}
		if c.Occurred != nil {
			nm.Occurred = *c.Occurred
		}
		if err := nm.prepare(); err != nil {
			return err
		}
		var occurred any
		if !nm.Occurred.IsZero() {
			occurred = nm.Occurred.UnixMilli()
		}
		now := s.millis()
		_, err = tx.ExecContext(ctx, `UPDATE memories SET text = ?, kind = ?, tags = ?, importance = ?, sensitivity = ?, occurred = ?,
			updated = ?, fingerprint = ?, embedded = CASE WHEN text = ? THEN embedded ELSE 0 END WHERE id = ?`,
			nm.Text, nm.Kind, strings.Join(nm.Tags, " "), *nm.Importance, nm.Sensitivity, occurred, now, fingerprint(nm.Text), nm.Text, id)
		if err != nil {
			return err
		}
		if c.Entities != nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM memory_entities WHERE memory_id = ?`, id); err != nil {
				return err
			}
			if err := linkEntities(ctx, tx, id, nm.Entities, now); err != nil {
				return err
			}
		}
		if err := indexMemory(ctx, tx, id, true); err != nil {
			return err
		}
		out, err = loadMemory(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.embedLater()
	return out, nil
}

// Stats describe the database.
type Stats struct {
	Path          string         `json:"path"`
	SizeBytes     int64          `json:"size_bytes"`
	Memories      int            `json:"memories"`
	ByKind        map[string]int `json:"by_kind"`
	Sensitive     int            `json:"sensitive"`
	Entities      int            `json:"entities"`
	Relations     int            `json:"relations"`
	Oldest        time.Time      `json:"oldest,omitzero"`
	Newest        time.Time      `json:"newest,omitzero"`
	Embeddings    string         `json:"embeddings" jsonschema:"off, or the model whose vectors re-rank recall"`
	Embedded      int            `json:"embedded"`
	SchemaVersion int            `json:"schema_version"`
}

// Stats counts what the database holds.
func (s *Store) Stats(ctx context.Context) (*Stats, error) {
	st := &Stats{Path: s.path, ByKind: map[string]int{}, Embeddings: "off"}
	rows, err := s.db.QueryContext(ctx, `SELECT kind, count(*), sum(sensitivity = 'sensitive'), sum(embedded), min(created), max(created) FROM memories GROUP BY kind`)
	if err != nil {
		return nil, err
	}
	var oldest, newest int64
	for rows.Next() {
		var kind string
		var n, sens, emb int
		var lo, hi int64
		if err := rows.Scan(&kind, &n, &sens, &emb, &lo, &hi); err != nil {
			rows.Close()
			return nil, err
		}
		st.ByKind[kind] = n
		st.Memories += n
		st.Sensitive += sens
		st.Embedded += emb
		if oldest == 0 || lo < oldest {
			oldest = lo
		}
		newest = max(newest, hi)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if st.Memories > 0 {
		st.Oldest, st.Newest = time.UnixMilli(oldest), time.UnixMilli(newest)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM relations), (SELECT user_version FROM pragma_user_version)`).Scan(&st.Entities, &st.Relations, &st.SchemaVersion); err != nil {
		return nil, err
	}
	if s.embed != nil {
		st.Embeddings = s.embed.cfg.Model + " at " + s.embed.cfg.URL
		if !s.embed.available() {
			st.Embeddings += " (not answering; recall uses BM25 alone)"
		}
	}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.path + suffix); err == nil {
			st.SizeBytes += fi.Size()
		}
	}
	return st, nil
}

// Matching returns every memory a forget-by-query would delete: the recall
// candidates that pass the gate, or, with no query, everything the filter
// matches. It does not mark them recalled.
func (s *Store) Matching(ctx context.Context, query string, f Filter, limit int) ([]*Memory, int, error) {
	if strings.TrimSpace(query) == "" {
		return s.List(ctx, ListOptions{Filter: f, Limit: limit})
	}
	r, err := s.recall(ctx, RecallOptions{Filter: f, Query: query, Limit: limit}, false)
	if err != nil {
		return nil, 0, err
	}
	return r.Memories, len(r.Memories), nil
}
