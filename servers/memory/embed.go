package memory

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Embeddings is an OpenAI-compatible /v1/embeddings endpoint (Ollama, LM
// Studio, llama.cpp, vLLM, LocalAI). When it does not answer, recall falls
// back to BM25 without saying so to the model; the log says it once.
type Embeddings struct {
	// URL is the API base, e.g. http://127.0.0.1:11434/v1.
	URL   string
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	Client *http.Client
}

type embedder struct {
	cfg Embeddings

	mu        sync.Mutex
	downUntil time.Time
	warned    bool

	kick chan struct{}
}

// A failed endpoint is not asked again for this long, so recall does not
// pay a timeout on every query while the embedding server is down.
const embedRetryAfter = 30 * time.Second

func newEmbedder(cfg Embeddings) *embedder {
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	cfg.URL = strings.TrimSuffix(cfg.URL, "/")
	return &embedder{cfg: cfg, kick: make(chan struct{}, 1)}
}

func (e *embedder) available() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().After(e.downUntil)
}

func (e *embedder) failed(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.downUntil = time.Now().Add(embedRetryAfter)
	if !e.warned {
		slog.Warn("embeddings endpoint failed; recall uses BM25 alone until it answers", "url", e.cfg.URL, "err", err)
		e.warned = true
	}
}

func (e *embedder) succeeded() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.warned {
		slog.Info("embeddings endpoint answers again", "url", e.cfg.URL)
	}
	e.warned = false
	e.downUntil = time.Time{}
}

// embed returns one unit-length vector per input.
func (e *embedder) embed(ctx context.Context, inputs []string, timeout time.Duration) ([][]float32, error) {
	if !e.available() {
		return nil, errors.New("embeddings endpoint is down")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vs, err := e.request(ctx, inputs)
	if err != nil {
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			e.failed(err)
		}
		return nil, err
	}
	e.succeeded()
	return vs, nil
}

func (e *embedder) request(ctx context.Context, inputs []string) ([][]float32, error) {
	body, _ := json.Marshal(map[string]any{"model": e.cfg.Model, "input": inputs})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings: %s: %s", resp.Status, strings.TrimSpace(string(b[:min(len(b), 200)])))
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("embeddings: bad response: %w", err)
	}
	if len(out.Data) != len(inputs) {
		return nil, fmt.Errorf("embeddings: %d vectors for %d inputs", len(out.Data), len(inputs))
	}
	vs := make([][]float32, len(inputs))
	dim := -1
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(inputs) || vs[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: bad index %d", d.Index)
		}
		if dim >= 0 && len(d.Embedding) != dim || len(d.Embedding) == 0 {
			return nil, errors.New("embeddings: vectors of different sizes")
		}
		dim = len(d.Embedding)
		vs[d.Index] = normalize(d.Embedding)
	}
	return vs, nil
}

func normalize(v []float64) []float32 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		if n > 0 {
			out[i] = float32(x / n)
		}
	}
	return out
}

// blob is a vector in vec1's format: float32s in machine byte order, which
// is little-endian on every platform Domo runs on.
func blob(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// embedLater wakes the background embedder, if any.
func (s *Store) embedLater() {
	if s.embed == nil {
		return
	}
	select {
	case s.embed.kick <- struct{}{}:
	default:
	}
}

// runEmbedder embeds memories that have no vector yet, whenever woken,
// until ctx ends.
func (s *Store) runEmbedder(ctx context.Context) {
	for {
		if _, err := s.embedPending(ctx, -1); err != nil && ctx.Err() == nil {
			slog.Debug("embedding pending memories", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.embed.kick:
		case <-time.After(embedRetryAfter):
		}
	}
}

// embedPending embeds up to max memories that have no vector (all when max
// is negative) and reports how many are left.
func (s *Store) embedPending(ctx context.Context, max int) (int, error) {
	s.embedMu.Lock()
	defer s.embedMu.Unlock()
	done := 0
	for max < 0 || done < max {
		rows, err := s.db.QueryContext(ctx, `SELECT id, text FROM memories WHERE embedded = 0 ORDER BY id LIMIT 64`)
		if err != nil {
			return 0, err
		}
		var ids []int64
		var texts []string
		for rows.Next() {
			var id int64
			var t string
			if err := rows.Scan(&id, &t); err != nil {
				rows.Close()
				return 0, err
			}
			ids, texts = append(ids, id), append(texts, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
		if len(ids) == 0 {
			return 0, nil
		}
		vs, err := s.embed.embed(ctx, texts, 30*time.Second)
		if err != nil {
			return len(ids), err
		}
		if err := s.storeVectors(ctx, ids, texts, vs); err != nil {
			return len(ids), err
		}
		done += len(ids)
	}
	var left int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE embedded = 0`).Scan(&left)
	return left, err
}

// storeVectors saves vectors for memories whose text is still what was
// embedded. A model whose vectors have another size replaces the index.
func (s *Store) storeVectors(ctx context.Context, ids []int64, texts []string, vs [][]float32) error {
	dim := strconv.Itoa(len(vs[0]))
	return s.write(ctx, func(tx *txn) error {
		model, err := setting(ctx, tx, "embeddings_model")
		if err != nil {
			return err
		}
		size, err := setting(ctx, tx, "embeddings_dim")
		if err != nil {
			return err
		}
		if model != s.embed.cfg.Model || size != dim {
			if model != "" {
				slog.Info("embedding model changed; re-embedding every memory", "was", model+"/"+size, "now", s.embed.cfg.Model+"/"+dim)
			}
			for _, q := range []string{`DROP TABLE IF EXISTS memory_vec`, `CREATE VIRTUAL TABLE memory_vec USING vec1`, `UPDATE memories SET embedded = 0 WHERE embedded = 1`} {
				if _, err := tx.Tx.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			if err := setSetting(ctx, tx, "embeddings_model", s.embed.cfg.Model); err != nil {
				return err
			}
			if err := setSetting(ctx, tx, "embeddings_dim", dim); err != nil {
				return err
			}
		}
		for i, id := range ids {
			res, err := tx.ExecContext(ctx, `UPDATE memories SET embedded = 1 WHERE id = ? AND text = ?`, id, texts[i])
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue // changed or forgotten meanwhile
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM memory_vec WHERE rowid = ?`, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO memory_vec(rowid, vector) VALUES(?, ?)`, id, blob(vs[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

// vectorCandidates embeds the query and returns the cosine similarity of
// every candidate and of its nearest memories, and those of the nearest
// that were not candidates yet (found by meaning alone). It returns nil,
// and recall stays BM25 alone, when the endpoint does not answer or no
// memory has a vector of this model yet.
func (s *Store) vectorCandidates(ctx context.Context, query string, f Filter, cands []*Memory) (map[int64]float64, []*Memory, error) {
	if !s.embed.available() {
		return nil, nil, nil
	}
	// Memories written moments ago take part, as long as few are waiting.
	if _, err := s.embedPending(ctx, 256); err != nil {
		return nil, nil, nil
	}
	model, err := setting(ctx, s.db, "embeddings_model")
	if err != nil || model != s.embed.cfg.Model {
		return nil, nil, err
	}
	vs, err := s.embed.embed(ctx, []string{query}, 2*time.Second)
	if err != nil {
		return nil, nil, nil
	}
	q := blob(vs[0])
	sims := map[int64]float64{}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid FROM memory_vec(?) LIMIT ?`, q, vectorCandidates)
	if err != nil {
		slog.Debug("vector search", "err", err)
		return nil, nil, nil
	}
	var near []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, nil, err
		}
		near = append(near, id)
	}
	rows.Close()
	have := map[int64]bool{}
	for _, c := range cands {
		have[c.rowid] = true
	}
	ids := make([]any, 0, len(cands)+len(near))
	for _, c := range cands {
		ids = append(ids, c.rowid)
	}
	var extra []any
	var found []*Memory
	for _, id := range near {
		if !have[id] {
			ids = append(ids, id)
			extra = append(extra, id)
		}
	}
	if len(ids) == 0 {
		return sims, nil, nil
	}
	rows, err = s.db.QueryContext(ctx, `SELECT rowid, vec1_cos_distance(vector, ?) FROM memory_vec WHERE rowid IN (`+placeholders(len(ids))+`)`,
		append([]any{q}, ids...)...)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var id int64
		var d float64
		if err := rows.Scan(&id, &d); err != nil {
			rows.Close()
			return nil, nil, err
		}
		sims[id] = 1 - d
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(extra) > 0 {
		where, args := f.where()
		rows, err := s.db.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories m WHERE m.id IN (`+placeholders(len(extra))+`) AND `+where,
			append(extra, args...)...)
		if err != nil {
			return nil, nil, err
		}
		ms, err := scanAll(rows)
		if err != nil {
			return nil, nil, err
		}
		if err := loadEntityNames(ctx, s.db, ms); err != nil {
			return nil, nil, err
		}
		found = ms
	}
	return sims, found, nil
}
