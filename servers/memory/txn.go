package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
)

// txn is a write transaction that prepares each statement once: a batch
// of a thousand memories runs the same few statements thousands of times.
type txn struct {
	*sql.Tx
	stmts map[string]*sql.Stmt

	// Full-text index changes wait for the end of the transaction and go
	// in with one statement each: FTS5 writes its pending changes to a new
	// segment at every statement that changes it, and a segment per
	// memory makes every later query slow.
	fts      map[int64]*ftsRow // rows to (re)write; nil: remove only
	ftsOrder []int64

	// added holds the index terms of each new memory, counted in the
	// term statistics once the transaction commits.
	added [][]string
}

// ftsRow is a memory as the full-text index holds it.
type ftsRow struct{ Text, Tags, Entities, Dates string }

func newTxn(tx *sql.Tx) *txn {
	return &txn{Tx: tx, stmts: map[string]*sql.Stmt{}, fts: map[int64]*ftsRow{}}
}

// index queues memory id's row for the index, replacing what it had.
func (t *txn) index(id int64, r ftsRow) {
	if _, ok := t.fts[id]; !ok {
		t.ftsOrder = append(t.ftsOrder, id)
	}
	t.fts[id] = &r
}

// unindex queues the removal of memory id from the index.
func (t *txn) unindex(id int64) {
	if _, ok := t.fts[id]; !ok {
		t.ftsOrder = append(t.ftsOrder, id)
	}
	t.fts[id] = nil
}

// flushIndex applies the queued index changes: one delete of every row
// that changes, then one insert of every new row.
func (t *txn) flushIndex(ctx context.Context) error {
	if len(t.ftsOrder) == 0 {
		return nil
	}
	var rows []map[string]any
	for _, id := range t.ftsOrder {
		if r := t.fts[id]; r != nil {
			rows = append(rows, map[string]any{"id": id, "text": r.Text, "tags": r.Tags, "entities": r.Entities, "dates": r.Dates})
		}
	}
	ids, _ := json.Marshal(t.ftsOrder)
	// Deleting a row that is not in a contentless index is harmless.
	if _, err := t.Tx.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid IN (SELECT value FROM json_each(?))`, string(ids)); err != nil {
		return fmt.Errorf("full-text index: %w", err)
	}
	if len(rows) > 0 {
		b, err := json.Marshal(rows)
		if err != nil {
			return err
		}
		if _, err := t.Tx.ExecContext(ctx, `INSERT INTO memories_fts(rowid, text, tags, entities, dates)
			SELECT value ->> 'id', value ->> 'text', value ->> 'tags', value ->> 'entities', value ->> 'dates' FROM json_each(?)`, string(b)); err != nil {
			return fmt.Errorf("full-text index: %w", err)
		}
	}
	t.fts, t.ftsOrder = map[int64]*ftsRow{}, nil
	return nil
}

func (t *txn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := t.stmts[q]; ok {
		return st, nil
	}
	st, err := t.Tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	t.stmts[q] = st
	return st, nil
}

// ExecContext runs q as a prepared statement of the transaction.
func (t *txn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryContext runs q as a prepared statement of the transaction.
func (t *txn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs q as a prepared statement of the transaction.
func (t *txn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := t.stmt(ctx, q)
	if err != nil {
		// Let the Row carry the error, as database/sql does.
		return t.Tx.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// stmtCache caches the prepared statements of the read paths, which run on
// every recall. Queries built for one call (IN lists) are not cached
// beyond a bound.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (r *stmtCache) stmt(ctx context.Context, db *sql.DB, q string) (*sql.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stmts[q]; ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if r.stmts == nil {
		r.stmts = map[string]*sql.Stmt{}
	}
	if len(r.stmts) < 128 {
		r.stmts[q] = st
	}
	return st, nil
}
