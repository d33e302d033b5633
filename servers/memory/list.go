package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Filter narrows which memories a list, recall or forget considers. Zero
// fields do not filter.
type Filter struct {
	Kinds  []string
	Tags   []string // a memory matches when it has any of them
	Since  time.Time
	Until  time.Time
	Source string
	// Sensitive includes sensitive memories.
	Sensitive bool
}

func (f Filter) validate() (Filter, error) {
	for _, k := range f.Kinds {
		if !slices.Contains(kinds, k) {
			return f, fmt.Errorf("kind %q is not one of %s", k, strings.Join(kinds, ", "))
		}
	}
	tags, err := normalizeTags(f.Tags)
	if err != nil {
		return f, err
	}
	f.Tags = tags
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		return f, fmt.Errorf("until (%s) is before since (%s)", f.Until.Format(time.DateOnly), f.Since.Format(time.DateOnly))
	}
	return f, nil
}

// where renders the filter as SQL conditions on the memories table m.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	if len(f.Kinds) > 0 {
		conds = append(conds, "m.kind IN ("+placeholders(len(f.Kinds))+")")
		for _, k := range f.Kinds {
			args = append(args, k)
		}
	}
	if len(f.Tags) > 0 {
		var or []string
		for _, t := range f.Tags {
			or = append(or, "(' ' || m.tags || ' ') LIKE ?")
			args = append(args, "% "+escapeLike(t)+" %")
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	if !f.Since.IsZero() {
		conds = append(conds, "COALESCE(m.occurred, m.created) >= ?")
		args = append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "COALESCE(m.occurred, m.created) <= ?")
		args = append(args, f.Until.UnixMilli())
	}
	if f.Source != "" {
		conds = append(conds, "m.source = ?")
		args = append(args, f.Source)
	}
	if !f.Sensitive {
		conds = append(conds, "m.sensitivity <> 'sensitive'")
	}
	if len(conds) == 0 {
		return "1", nil
	}
	return strings.Join(conds, " AND "), args
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

const memoryColumns = `m.id, m.text, m.kind, m.tags, m.importance, m.sensitivity, m.source, m.created, m.updated, m.occurred, m.recalled`

func scanMemory(row interface{ Scan(...any) error }) (*Memory, error) {
	var (
		m                  Memory
		tags               string
		created, updated   int64
		occurred, recalled sql.NullInt64
	)
	if err := row.Scan(&m.rowid, &m.Text, &m.Kind, &tags, &m.Importance, &m.Sensitivity, &m.Source, &created, &updated, &occurred, &recalled); err != nil {
		return nil, err
	}
	fillMemory(&m, tags, created, updated, occurred, recalled)
	return &m, nil
}

// fillMemory sets the fields of m that are not stored as they are.
func fillMemory(m *Memory, tags string, created, updated int64, occurred, recalled sql.NullInt64) {
	m.ID = formatID(m.rowid)
	m.Tags = splitTags(tags)
	m.Created, m.Updated = time.UnixMilli(created), time.UnixMilli(updated)
	if occurred.Valid {
		m.Occurred = time.UnixMilli(occurred.Int64)
	}
	if recalled.Valid {
		m.Recalled = time.UnixMilli(recalled.Int64)
	}
}

// errNotFound is wrapped by lookups of an id that does not exist.
var errNotFound = errors.New("not found")

func loadMemory(ctx context.Context, q querier, id int64) (*Memory, error) {
	m, err := scanMemory(q.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("memory %s: %w", formatID(id), errNotFound)
	}
	if err != nil {
		return nil, err
	}
	ms := []*Memory{m}
	return m, loadEntityNames(ctx, q, ms)
}

// loadEntityNames fills in the entities of each memory.
func loadEntityNames(ctx context.Context, q querier, ms []*Memory) error {
	if len(ms) == 0 {
		return nil
	}
	byID := make(map[int64]*Memory, len(ms))
	args := make([]any, 0, len(ms))
	for _, m := range ms {
		byID[m.rowid] = m
		args = append(args, m.rowid)
	}
	rows, err := q.QueryContext(ctx, `SELECT me.memory_id, e.name FROM memory_entities me JOIN entities e ON e.id = me.entity_id
		WHERE me.memory_id IN (`+placeholders(len(args))+`) ORDER BY e.name`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		byID[id].Entities = append(byID[id].Entities, name)
	}
	return rows.Err()
}

// ListOptions page through memories.
type ListOptions struct {
	Filter
	// Sort is newest (default), oldest, importance or recalled.
	Sort   string
	Limit  int
	Offset int
}

// List returns a page of memories and how many match in all.
func (s *Store) List(ctx context.Context, o ListOptions) ([]*Memory, int, error) {
	f, err := o.Filter.validate()
	if err != nil {
		return nil, 0, err
	}
	order := map[string]string{
		"":           "m.created DESC, m.id DESC",
		"newest":     "m.created DESC, m.id DESC",
		"oldest":     "m.created, m.id",
		"importance": "m.importance DESC, m.created DESC, m.id DESC",
		"recalled":   "m.recalled DESC NULLS LAST, m.id DESC",
		"updated":    "m.updated DESC, m.id DESC",
	}[o.Sort]
	if order == "" {
		return nil, 0, fmt.Errorf("sort %q: use newest, oldest, importance, recalled or updated", o.Sort)
	}
	where, args := f.where()
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories m WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE `+where+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, o.Limit, o.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	ms, err := scanAll(rows)
	if err != nil {
		return nil, 0, err
	}
	return ms, total, loadEntityNames(ctx, s.db, ms)
}

func scanAll(rows *sql.Rows) ([]*Memory, error) {
	defer rows.Close()
	var ms []*Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, rows.Err()
}
