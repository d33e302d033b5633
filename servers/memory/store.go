// Package memory is domo-memory: long-term memory in one SQLite file.
// Memories are short texts with a kind, tags, importance and sensitivity;
// entities and relations between them hold what a knowledge graph holds.
// Recall is deterministic: FTS5 candidates ranked by BM25, term coverage,
// recency and importance, optionally re-ranked by embeddings kept in vec1.
// It must not import host code or another server.
package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"
	"github.com/ncruces/go-sqlite3/ext/vec1"
)

// Store is one memory database. It is safe for concurrent use, and several
// processes may share the file: every write is one immediate transaction.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time

	vocab vocabulary
	reads stmtCache

	embed   *embedder // nil without an embeddings endpoint
	embedMu sync.Mutex
	stop    context.CancelFunc
}

// migrations are applied in order; user_version records how many ran.
// Never edit one that has shipped: append a new one.
var migrations = []string{
	`CREATE TABLE memories(
		id           INTEGER PRIMARY KEY AUTOINCREMENT,
		text         TEXT NOT NULL,
		kind         TEXT NOT NULL,
		tags         TEXT NOT NULL DEFAULT '',
		source       TEXT NOT NULL DEFAULT '',
		importance   REAL NOT NULL DEFAULT 0.5,
		sensitivity  TEXT NOT NULL DEFAULT 'normal',
		created      INTEGER NOT NULL,
		updated      INTEGER NOT NULL,
		occurred     INTEGER,
		recalled     INTEGER,
		recall_count INTEGER NOT NULL DEFAULT 0,
		fingerprint  TEXT NOT NULL,
		embedded     INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX memories_fingerprint ON memories(fingerprint);
	CREATE INDEX memories_created ON memories(created);
	CREATE TABLE entities(
		id      INTEGER PRIMARY KEY AUTOINCREMENT,
		name    TEXT NOT NULL UNIQUE COLLATE NOCASE,
		type    TEXT NOT NULL DEFAULT '',
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL
	);
	CREATE TABLE memory_entities(
		memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
		entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
		PRIMARY KEY(memory_id, entity_id)
	) WITHOUT ROWID;
	CREATE INDEX memory_entities_entity ON memory_entities(entity_id);
	CREATE TABLE relations(
		from_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
		type    TEXT NOT NULL,
		to_id   INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
		created INTEGER NOT NULL,
		PRIMARY KEY(from_id, type, to_id)
	) WITHOUT ROWID;
	CREATE INDEX relations_to ON relations(to_id);
	CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
	CREATE VIRTUAL TABLE memories_fts USING fts5(
		text, tags, entities, dates,
		content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2'
	);
	CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, row);`,
}

// DefaultPath is where the database lives unless told otherwise:
// $DOMO_MEMORY_DB, else $XDG_DATA_HOME/domo/memory.db.
func DefaultPath() (string, error) {
	if p := os.Getenv("DOMO_MEMORY_DB"); p != "" {
		return p, nil
	}
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the memory database: %w; give --db", err)
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "domo", "memory.db"), nil
}

// Open opens (creating if needed) the database at path and brings its
// schema up to date. With emb, memories are also embedded, in the
// background, and recall re-ranks by meaning.
func Open(ctx context.Context, path string, emb *Embeddings) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the memory database's directory: %w", err)
	}
	// busy_timeout comes first: once any _pragma is given the driver sets
	// none itself, and the pragmas after it may already wait on a lock.
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(20000)&_pragma=journal_mode(wal)&_pragma=synchronous(normal)" +
		"&_pragma=foreign_keys(on)&_txlock=immediate"
	db, err := driver.Open(dsn, func(c *sqlite3.Conn) error {
		if err := fts5.Register(c); err != nil {
			return err
		}
		return vec1.Register(c)
	})
	if err != nil {
		return nil, fmt.Errorf("open memory database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("memory database %s: %w", path, err)
	}
	_ = os.Chmod(path, 0o600)
	s.vocab.warm(db)
	if emb != nil && emb.URL != "" {
		s.embed = newEmbedder(*emb)
		bg, stop := context.WithCancel(context.Background())
		s.stop = stop
		go s.runEmbedder(bg)
	}
	return s, nil
}

// Close stops the background embedder and closes the database.
func (s *Store) Close() error {
	if s.stop != nil {
		s.stop()
	}
	return s.db.Close()
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(tx *txn) error {
		var v int
		if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this domo-memory knows (%d); upgrade domo-memory", v, len(migrations))
		}
		for i := v; i < len(migrations); i++ {
			// Several statements: run unprepared.
			if _, err := tx.Tx.ExecContext(ctx, migrations[i]); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if v != len(migrations) {
			_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations)))
			return err
		}
		return nil
	})
}

// write runs f in one immediate transaction, so a read-check-write inside
// f cannot interleave with another process's. Busy errors that outlast the
// busy timeout are retried a few times before giving up.
func (s *Store) write(ctx context.Context, f func(tx *txn) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = s.writeOnce(ctx, f)
		if !isBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the memory database stayed locked by another process: %w", err)
}

func (s *Store) writeOnce(ctx context.Context, f func(tx *txn) error) error {
	sqltx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	tx := newTxn(sqltx)
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.flushIndex(ctx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, terms := range tx.added {
		s.vocab.added(terms)
	}
	return nil
}

func isBusy(err error) bool {
	var e *sqlite3.Error
	if errors.As(err, &e) {
		return e.Code() == sqlite3.BUSY || e.Code() == sqlite3.LOCKED
	}
	return err != nil && strings.Contains(err.Error(), "database is locked")
}

func (s *Store) millis() int64 { return s.now().UnixMilli() }

// setting reads one value of the settings table; "" when unset.
func setting(ctx context.Context, q querier, key string) (string, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func setSetting(ctx context.Context, tx *txn, key, value string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// querier is what reads need: a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}
