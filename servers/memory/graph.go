package memory

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Link is one relation between two entities: From —Relation→ To.
type Link struct {
	From     string `json:"from" jsonschema:"the entity the relation starts from, e.g. Sarah Chen"`
	Relation string `json:"relation" jsonschema:"the relation in active voice, e.g. boss_of"`
	To       string `json:"to" jsonschema:"the entity it points to, e.g. user"`
	FromType string `json:"from_type,omitempty" jsonschema:"the kind of entity from is (person, organization, place, project...), recorded if it has none"`
	ToType   string `json:"to_type,omitempty" jsonschema:"the kind of entity to is"`
}

func (l *Link) normalize() error {
	var err error
	for _, f := range []*string{&l.From, &l.To, &l.Relation, &l.FromType, &l.ToType} {
		*f = strings.Join(strings.Fields(*f), " ")
	}
	switch {
	case l.From == "" || l.To == "":
		err = errors.New("a link needs both from and to entity names")
	case l.Relation == "":
		err = errors.New("a link needs a relation, e.g. works_at")
	case len(l.From) > 200 || len(l.To) > 200 || len(l.Relation) > 100 || len(l.FromType) > 100 || len(l.ToType) > 100:
		err = errors.New("entity names are at most 200 characters, relations and types at most 100")
	}
	return err
}

// String renders the link as people read it.
func (l Link) String() string { return l.From + " —" + l.Relation + "→ " + l.To }

// LinkOutcome says what happened to one link.
type LinkOutcome struct {
	Link   string `json:"link"`
	Status string `json:"status" jsonschema:"linked, exists, removed or absent"`
}

// Link adds relations (or removes them with remove), creating entities as
// needed.
func (s *Store) Link(ctx context.Context, links []Link, remove bool) ([]LinkOutcome, error) {
	for i := range links {
		if err := links[i].normalize(); err != nil {
			if len(links) > 1 {
				return nil, fmt.Errorf("links[%d]: %w", i, err)
			}
			return nil, err
		}
	}
	out := make([]LinkOutcome, len(links))
	err := s.write(ctx, func(tx *txn) error {
		now := s.millis()
		for i, l := range links {
			out[i].Link = l.String()
			if remove {
				res, err := tx.ExecContext(ctx, `DELETE FROM relations WHERE type = ?
					AND from_id = (SELECT id FROM entities WHERE name = ?) AND to_id = (SELECT id FROM entities WHERE name = ?)`, l.Relation, l.From, l.To)
				if err != nil {
					return err
				}
				out[i].Status = "absent"
				if n, _ := res.RowsAffected(); n > 0 {
					out[i].Status = "removed"
				}
				continue
			}
			from, err := ensureEntity(ctx, tx, l.From, l.FromType, now)
			if err != nil {
				return err
			}
			to, err := ensureEntity(ctx, tx, l.To, l.ToType, now)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO relations(from_id, type, to_id, created) VALUES(?, ?, ?, ?)`, from, l.Relation, to, now)
			if err != nil {
				return err
			}
			out[i].Status = "exists"
			if n, _ := res.RowsAffected(); n > 0 {
				out[i].Status = "linked"
			}
		}
		return nil
	})
	return out, err
}

// Entity is an entity with what memory holds about it.
type Entity struct {
	Name         string        `json:"name"`
	Type         string        `json:"type,omitempty"`
	Observations []Observation `json:"observations"`
	Relations    []Link        `json:"relations"`
}

// Observation is a memory linked to an entity.
type Observation struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// EntityQuery selects entities: by exact names, by a query matching names,
// types and what their memories say, by type, or all of them.
type EntityQuery struct {
	Names  []string
	Query  string
	Type   string
	Limit  int
	Offset int
}

// Entities returns a page of entities with their memories and relations,
// and how many match in all.
func (s *Store) Entities(ctx context.Context, q EntityQuery) ([]*Entity, int, error) {
	var conds []string
	var args []any
	if len(q.Names) > 0 {
		conds = append(conds, "e.name IN ("+placeholders(len(q.Names))+")")
		for _, n := range q.Names {
			args = append(args, strings.Join(strings.Fields(n), " "))
		}
	}
	if t := strings.TrimSpace(q.Type); t != "" {
		conds = append(conds, "e.type = ? COLLATE NOCASE")
		args = append(args, t)
	}
	if qs := strings.TrimSpace(q.Query); qs != "" {
		or := []string{"e.name LIKE ? ESCAPE '\\'", "e.type LIKE ? ESCAPE '\\'"}
		like := "%" + escapeLike(qs) + "%"
		args = append(args, like, like)
		terms, err := s.queryTerms(ctx, contentWords(qs))
		if err != nil {
			return nil, 0, err
		}
		var search []string
		for _, t := range terms {
			search = append(search, `"`+t.stem+`"`)
		}
		if len(search) > 0 {
			or = append(or, `e.id IN (SELECT me.entity_id FROM memory_entities me WHERE me.memory_id IN
				(SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT 500))`)
			args = append(args, strings.Join(search, " OR "))
		}
		conds = append(conds, "("+strings.Join(or, " OR ")+")")
	}
	where := "1"
	if len(conds) > 0 {
		where = strings.Join(conds, " AND ")
	}
	var total int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM entities e WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT e.id, e.name, e.type FROM entities e WHERE `+where+` ORDER BY e.name LIMIT ? OFFSET ?`,
		append(args, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	var ents []*Entity
	var ids []any
	byID := map[int64]*Entity{}
	for rows.Next() {
		var id int64
		e := &Entity{Observations: []Observation{}, Relations: []Link{}}
		if err := rows.Scan(&id, &e.Name, &e.Type); err != nil {
			rows.Close()
			return nil, 0, err
		}
		ents = append(ents, e)
		ids = append(ids, id)
		byID[id] = e
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ents) == 0 {
		return ents, total, err
	}
	in := placeholders(len(ids))
	rows, err = s.db.QueryContext(ctx, `SELECT me.entity_id, m.id, m.text FROM memory_entities me JOIN memories m ON m.id = me.memory_id
		WHERE me.entity_id IN (`+in+`) ORDER BY m.id`, ids...)
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var eid, mid int64
		var text string
		if err := rows.Scan(&eid, &mid, &text); err != nil {
			rows.Close()
			return nil, 0, err
		}
		byID[eid].Observations = append(byID[eid].Observations, Observation{ID: formatID(mid), Text: text})
	}
	rows.Close()
	rows, err = s.db.QueryContext(ctx, `SELECT r.from_id, r.to_id, f.name, r.type, t.name FROM relations r
		JOIN entities f ON f.id = r.from_id JOIN entities t ON t.id = r.to_id
		WHERE r.from_id IN (`+in+`) OR r.to_id IN (`+in+`) ORDER BY f.name, r.type, t.name`, append(ids, ids...)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var fid, tid int64
		var l Link
		if err := rows.Scan(&fid, &tid, &l.From, &l.Relation, &l.To); err != nil {
			return nil, 0, err
		}
		if e := byID[fid]; e != nil {
			e.Relations = append(e.Relations, l)
		}
		if e := byID[tid]; e != nil && tid != fid {
			e.Relations = append(e.Relations, l)
		}
	}
	return ents, total, rows.Err()
}

// ForgetEntities deletes entities by name with their relations, and the
// memories that were about them alone. It reports the entities found and
// the memories deleted.
func (s *Store) ForgetEntities(ctx context.Context, names []string) (entities, memories []string, missing []string, err error) {
	err = s.write(ctx, func(tx *txn) error {
		entities, memories, missing = nil, nil, nil
		for _, n := range names {
			n = strings.Join(strings.Fields(n), " ")
			var id int64
			var name string
			err := tx.QueryRowContext(ctx, `SELECT id, name FROM entities WHERE name = ?`, n).Scan(&id, &name)
			if errors.Is(err, sql.ErrNoRows) {
				missing = append(missing, n)
				continue
			}
			if err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `SELECT memory_id FROM memory_entities me WHERE entity_id = ?
				AND NOT EXISTS (SELECT 1 FROM memory_entities o WHERE o.memory_id = me.memory_id AND o.entity_id <> ?)`, id, id)
			if err != nil {
				return err
			}
			var mids []int64
			for rows.Next() {
				var mid int64
				if err := rows.Scan(&mid); err != nil {
					rows.Close()
					return err
				}
				mids = append(mids, mid)
			}
			rows.Close()
			for _, mid := range mids {
				if _, err := deleteMemory(ctx, tx, mid); err != nil {
					return err
				}
				memories = append(memories, formatID(mid))
			}
			// Memories shared with other entities stay, and their index
			// entries must stop naming this one.
			shared, err := tx.QueryContext(ctx, `SELECT memory_id FROM memory_entities WHERE entity_id = ?`, id)
			if err != nil {
				return err
			}
			var others []int64
			for shared.Next() {
				var mid int64
				if err := shared.Scan(&mid); err != nil {
					shared.Close()
					return err
				}
				others = append(others, mid)
			}
			shared.Close()
			if _, err := tx.ExecContext(ctx, `DELETE FROM entities WHERE id = ?`, id); err != nil {
				return err
			}
			for _, mid := range others {
				if err := indexMemory(ctx, tx, mid, true); err != nil {
					return err
				}
			}
			entities = append(entities, name)
		}
		return nil
	})
	return entities, memories, missing, err
}

// ImportResult counts what an import brought in.
type ImportResult struct {
	Entities          int `json:"entities"`
	Observations      int `json:"observations"`
	MemoriesCreated   int `json:"memories_created"`
	MemoriesUnchanged int `json:"memories_unchanged"`
	Relations         int `json:"relations"`
	RelationsNew      int `json:"relations_new"`
}

// graphLine is one line of the official memory server's memory.jsonl.
type graphLine struct {
	Type         string   `json:"type"`
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
	From         string   `json:"from"`
	To           string   `json:"to"`
	RelationType string   `json:"relationType"`
}

// Import reads a knowledge graph in the official memory server's JSONL
// format: entities become entities, each observation a memory about its
// entity, relations relations. Observations are kept word for word: only
// an identical observation already stored is reused, so importing the same
// file twice changes nothing.
func (s *Store) Import(ctx context.Context, r io.Reader, source string) (*ImportResult, error) {
	var ents, rels []graphLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var g graphLine
		if err := json.Unmarshal([]byte(line), &g); err != nil {
			return nil, fmt.Errorf("line %d is not JSON: %v; expected the memory.jsonl of @modelcontextprotocol/server-memory", n, err)
		}
		switch g.Type {
		case "entity":
			if strings.TrimSpace(g.Name) == "" {
				return nil, fmt.Errorf("line %d: an entity without a name", n)
			}
			ents = append(ents, g)
		case "relation":
			rels = append(rels, g)
		default:
			return nil, fmt.Errorf("line %d: type %q is neither entity nor relation", n, g.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the graph: %w", err)
	}
	var links []Link
	for i, g := range rels {
		l := Link{From: g.From, Relation: g.RelationType, To: g.To}
		if err := l.normalize(); err != nil {
			return nil, fmt.Errorf("relation %d: %w", i+1, err)
		}
		links = append(links, l)
	}
	res := &ImportResult{Entities: len(ents), Relations: len(links)}
	err := s.write(ctx, func(tx *txn) error {
		*res = ImportResult{Entities: len(ents), Relations: len(links)}
		now := s.millis()
		for _, g := range ents {
			name := strings.Join(strings.Fields(g.Name), " ")
			typ := strings.Join(strings.Fields(g.EntityType), " ")
			eid, err := ensureEntity(ctx, tx, name, typ, now)
			if err != nil {
				return err
			}
			for _, obs := range g.Observations {
				res.Observations++
				created, err := s.importObservation(ctx, tx, eid, name, obs, source, now)
				if err != nil {
					return fmt.Errorf("entity %q: %w", name, err)
				}
				if created {
					res.MemoriesCreated++
				} else {
					res.MemoriesUnchanged++
				}
			}
		}
		for _, l := range links {
			from, err := ensureEntity(ctx, tx, l.From, "", now)
			if err != nil {
				return err
			}
			to, err := ensureEntity(ctx, tx, l.To, "", now)
			if err != nil {
				return err
			}
			r, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO relations(from_id, type, to_id, created) VALUES(?, ?, ?, ?)`, from, l.Relation, to, now)
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n > 0 {
				res.RelationsNew++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.embedLater()
	return res, nil
}

// importObservation stores one observation as a memory about entity eid,
// reusing a memory with the same text.
func (s *Store) importObservation(ctx context.Context, tx *txn, eid int64, entity, text, source string, now int64) (bool, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return false, nil
	}
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM memories WHERE fingerprint = ? AND text = ? LIMIT 1`, fingerprint(text), text).Scan(&id)
	created := false
	switch {
	case errors.Is(err, sql.ErrNoRows):
		half := 0.5
		m := NewMemory{Text: text, Kind: "fact", Source: source, Importance: &half, Sensitivity: guessSensitivity(text, nil)}
		// An imported observation is kept even when it holds what memory
		// would not accept from a model (the user already stored it), but
		// one that holds a credential is kept out of prompts.
		if checkSecrets(text) != nil {
			m.Sensitivity = Sensitive
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO memories(text, kind, tags, source, importance, sensitivity, created, updated, fingerprint)
			VALUES(?, ?, '', ?, ?, ?, ?, ?, ?)`, text, m.Kind, source, *m.Importance, m.Sensitivity, now, now, fingerprint(text))
		if err != nil {
			return false, err
		}
		if id, err = res.LastInsertId(); err != nil {
			return false, err
		}
		tx.added = append(tx.added, indexTerms(text, nil, []string{entity}))
		created = true
	case err != nil:
		return false, err
	}
	r, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO memory_entities(memory_id, entity_id) VALUES(?, ?)`, id, eid)
	if err != nil {
		return false, err
	}
	if n, _ := r.RowsAffected(); n > 0 || created {
		if err := indexMemory(ctx, tx, id, !created); err != nil {
			return false, err
		}
	}
	return created, nil
}
