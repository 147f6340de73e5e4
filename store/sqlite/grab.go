package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// dialect renders grabsql's candidate query for SQLite and the indexes of
// migrations/00001_schema.sql: SQLite sorts nulls first in ascending order,
// and "nulls last" is the pair ((col IS NULL), col) that
// listed_origin_stop_after_success indexes. Marked rows are left out.
// Times are stored in microseconds, and so is the lag.
var dialect = grabsql.Dialect{
	Placeholder:    func(n int) string { return "?" + strconv.Itoa(n) },
	IsDistinctFrom: "IS NOT",
	NullsFirst:     func(col string) string { return col },
	NullsLastPair:  true,
	Lag:            "(last_update - last_successful)",
	LagValue:       func(d time.Duration) any { return d.Microseconds() },
	Random:         "((random() & 9223372036854775807) / 9223372036854775808.0)",
	Time:           func(t time.Time) any { return micro(t) },
	Exclude:        "id NOT IN (SELECT id FROM listed_origin_mark)",
	RowColumns:     rowColumns,
}

// markRows marks the listed rows of picked origins that no other lister
// lists, from what the candidate query read: ?1 now, ?2 the visit type, ?3
// a JSON array of [id, url, last_visit] (docs/store.md, "Pending marks
// (SQLite)").
const markRows = `INSERT INTO listed_origin_mark (id, url, visit_type, last_scheduled, last_visit)
SELECT value->>0, value->>1, ?2, ?1, value->>2 FROM json_each(?3) WHERE true
ON CONFLICT (id) DO UPDATE SET last_scheduled = max(last_scheduled, excluded.last_scheduled)`

// setMarks marks every listed row of picked origins that several listers
// list, found by URL: ?1 now, ?2 the visit type, ?3 a JSON array of their
// URLs.
const setMarks = `INSERT INTO listed_origin_mark (id, url, visit_type, last_scheduled, last_visit)
SELECT id, url, visit_type, ?1, last_visit FROM listed_origin
WHERE visit_type = ?2 AND url IN (SELECT value FROM json_each(?3))
ON CONFLICT (id) DO UPDATE SET last_scheduled = max(last_scheduled, excluded.last_scheduled)`

// raiseQueuePosition raises a visit type's queue position, never lowering it.
const raiseQueuePosition = `INSERT INTO queue_position (visit_type, position) VALUES (?1, ?2)
ON CONFLICT (visit_type) DO UPDATE SET position = max(position, excluded.position)`

// GrabNextVisits returns the true top p.Count eligible origins of the
// policy, one per (url, visit_type), and (unless p.DryRun) marks them
// scheduled at p.Now, all in one write transaction: the single writer
// connection and BEGIN IMMEDIATE serialize grabs, so concurrent callers
// never receive the same origin.
func (s *Store) GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error) {
	p, cooldowns, err := p.Resolve(s.opts.Clock)
	if err != nil {
		return nil, err
	}
	var (
		picked []candidate
		w      walked
	)
	err = s.write(ctx, "grab next visits of "+p.VisitType, func(tx *sql.Tx) error {
		picked, w, err = s.grab(ctx, tx, p, cooldowns)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.recordWalk(p, w, picked)
	out := make([]revisit.ListedOrigin, len(picked))
	for i, c := range picked {
		out[i] = c.Origin
	}
	return out, nil
}

// walked is how a grab walked its policy's order: its candidate query's
// parameters, the write token it read, and whether it folded marks back
// (then the next grab starts from the head).
type walked struct {
	params grabsql.Params
	token  writeToken
	folded bool
}

// recordWalk records where the walk of a committed grab of p stopped
// (grabsql.Record); one that folded marks ends it.
func (s *Store) recordWalk(p revisit.GrabParams, w walked, picked []candidate) {
	if w.folded {
		picked = nil
	}
	grabsql.Record(&s.walks, dialect, p, w.params, picked, w.token)
}

// grab selects the top p.Count eligible origins of p (resolved) and, unless
// p.DryRun, marks them scheduled, inside the write transaction tx. The
// marks that p's cooldowns would let through are folded first, so that the
// candidate query, which leaves marked origins out, stays exact. Unless it
// is a dry run, or folded marks, it resumes the walk of the previous grab
// of the same parameters when no write came since (grabsql.Walks); once tx
// commits, the caller records where this one stopped (recordWalk).
func (s *Store) grab(ctx context.Context, tx *sql.Tx, p revisit.GrabParams, cooldowns revisit.Cooldowns) ([]candidate, walked, error) {
	w := walked{params: grabsql.Params{VisitType: p.VisitType, Policy: p.Policy, Now: p.Now, Disabled: p.Disabled,
		Cooldowns: cooldowns, Sample: p.Sample}}
	if err := resolveLister(ctx, tx, p, &w.params); err != nil {
		return nil, w, err
	}
	released, args := releasedMarks(p.VisitType, p.Now, cooldowns)
	folded, err := s.foldMarks(ctx, tx, released, args...)
	if err != nil {
		return nil, w, err
	}
	if w.folded = folded > 0; !p.DryRun && !w.folded {
		if w.token, err = s.writeTokenOf(ctx, tx); err != nil {
			return nil, w, err
		}
		if w.params.After, err = s.resumable(ctx, tx, p, w.params, w.token); err != nil {
			return nil, w, err
		}
	}
	q, err := dialect.Build(w.params)
	if err != nil {
		return nil, w, err
	}
	st, err := s.stmt(ctx, tx, q.SQL)
	if err != nil {
		return nil, w, err
	}
	picked, err := grabsql.Pick(p.Count, p.EveryListedRow, func(limit int) ([]candidate, error) {
		args := append(q.Args[:len(q.Args):len(q.Args)], limit)
		return scanCandidates(st.QueryContext(ctx, args...))
	})
	if err != nil || p.DryRun || len(picked) == 0 {
		return picked, w, err
	}
	return picked, w, s.mark(ctx, tx, p, picked)
}

// resumable returns where the previous grab of the parameters of p, its
// candidate query rendered from params, stopped (grabsql.Walks), if it may
// resume there with token as its write token: no write came since, and no
// cooldown ended meanwhile (grabsql.Dialect.Flips); nil otherwise.
func (s *Store) resumable(ctx context.Context, tx *sql.Tx, p revisit.GrabParams, params grabsql.Params, token writeToken) (grabsql.Key, error) {
	walk, ok := s.walks.Find(p, params)
	if !ok || walk.Writes != token || !walk.Holds(params) {
		return nil, nil
	}
	q, ok := dialect.Flips(params, walk.At)
	if !ok {
		return s.walks.Resume(walk), nil
	}
	var flipped bool
	if err := tx.QueryRowContext(ctx, q.SQL, q.Args...).Scan(&flipped); err != nil || flipped {
		return nil, err
	}
	return s.walks.Resume(walk), nil
}

// GrabsResumed counts the grabs that resumed the walk of the grab before
// them (store.GrabWalker).
func (s *Store) GrabsResumed() int64 { return s.walks.Resumed() }

// resolveLister fills the lister filter of params from p: by id, or by name
// and instance name; ErrNotFound if the lister does not exist.
func resolveLister(ctx context.Context, tx *sql.Tx, p revisit.GrabParams, params *grabsql.Params) error {
	var (
		row  *sql.Row
		name string
	)
	switch {
	case p.ListerID != nil:
		name = p.ListerID.String()
		row = tx.QueryRowContext(ctx, "SELECT id, last_listing_finished_at FROM lister WHERE id = ?", *p.ListerID)
	case p.ListerName != "":
		name = strconv.Quote(p.ListerName) + " (instance " + strconv.Quote(p.ListerInstanceName) + ")"
		row = tx.QueryRowContext(ctx, "SELECT id, last_listing_finished_at FROM lister WHERE name = ? AND instance_name = ?",
			p.ListerName, p.ListerInstanceName)
	default:
		return nil
	}
	var id string
	if err := row.Scan(&id, timePtrCol{&params.ListingFinishedAt}); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("lister %s not found", name)
		}
		return err
	}
	params.ListerID = id
	return nil
}

// mark marks the picked origins' listed rows (the picked row itself, or
// every lister's row of a shared origin) and raises the queue position for
// origins_without_last_update.
func (s *Store) mark(ctx context.Context, tx *sql.Tx, p revisit.GrabParams, picked []candidate) error {
	var (
		own    []candidate
		shared []string
	)
	for _, c := range picked {
		if c.shared {
			shared = append(shared, c.Origin.URL)
		} else {
			own = append(own, c)
		}
	}
	// In id order, the inserts walk listed_origin_mark's b-tree from one
	// leaf to the next instead of seeking a random leaf each: the mark of
	// 1000 picks takes a fifth to a third less time (docs/performance.md,
	// P6).
	slices.SortFunc(own, func(a, b candidate) int { return cmp.Compare(a.ID, b.ID) })
	rows := make([][3]any, len(own))
	for i, c := range own {
		rows[i] = [3]any{c.ID, c.Origin.URL, c.lastVisit}
	}
	for _, m := range []struct {
		query string
		rows  string
		n     int
	}{{markRows, jsonArray(rows), len(rows)}, {setMarks, jsonArray(shared), len(shared)}} {
		if m.n == 0 {
			continue
		}
		st, err := s.stmt(ctx, tx, m.query)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, micro(p.Now), p.VisitType, m.rows); err != nil {
			return err
		}
	}
	if p.Policy != revisit.OriginsWithoutLastUpdate {
		return nil
	}
	pos, ok := grabsql.QueuePositionOf(picked)
	if !ok {
		return nil
	}
	_, err := tx.ExecContext(ctx, raiseQueuePosition, p.VisitType, pos)
	return err
}
