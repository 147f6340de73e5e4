package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// dialect renders grabsql's candidate query for SQLite and the indexes of
// migrations/00001_schema.sql: SQLite sorts nulls first in ascending order,
// and "nulls last" is the pair ((col IS NULL), col) that
// listed_origin_stop_after_success indexes.
var dialect = grabsql.Dialect{
	Placeholder:    func(n int) string { return "?" + strconv.Itoa(n) },
	IsDistinctFrom: "IS NOT",
	NullsFirst:     func(col string) string { return col },
	NullsLast:      func(col string) string { return "(" + col + " IS NULL), " + col },
	Lag:            "(lo.last_update - lo.last_successful)",
	Random:         "((random() & 9223372036854775807) / 9223372036854775808.0)",
	Time:           func(t time.Time) any { return micro(t) },
}

// markGrabbed upserts the grab marks of visit type ?1 in ?2, a JSON array
// of [url, time] pairs, never moving a mark back.
const markGrabbed = `INSERT INTO grab_mark (visit_type, url, scheduled_at)
SELECT ?1, value ->> 0, value ->> 1 FROM json_each(?2) WHERE true
ON CONFLICT (visit_type, url) DO UPDATE SET scheduled_at = max(scheduled_at, excluded.scheduled_at)`

// Folding: oldMarks reads the marks of visit type ?1 older than ?2, at most
// ?3 of them; foldStats and foldListed move one (?1 url, ?2 visit type, ?3
// time) into visit_stats and the stats copy of its listed rows, and
// dropMark deletes it.
const (
	oldMarks  = `SELECT url, scheduled_at FROM grab_mark WHERE visit_type = ?1 AND scheduled_at < ?2 ORDER BY scheduled_at LIMIT ?3`
	foldStats = `INSERT INTO visit_stats (url, visit_type, last_scheduled) VALUES (?1, ?2, ?3)
ON CONFLICT (url, visit_type) DO UPDATE SET last_scheduled = max(COALESCE(last_scheduled, excluded.last_scheduled), excluded.last_scheduled)`
	foldListed = `UPDATE listed_origin SET last_scheduled = max(COALESCE(last_scheduled, ?3), ?3) WHERE url = ?1 AND visit_type = ?2`
	dropMark   = `DELETE FROM grab_mark WHERE url = ?1 AND visit_type = ?2`
)

// raiseQueuePosition raises a visit type's queue position, never lowering it.
const raiseQueuePosition = `INSERT INTO queue_position (visit_type, position) VALUES (?1, ?2)
ON CONFLICT (visit_type) DO UPDATE SET position = max(position, excluded.position)`

// GrabNextVisits returns the true top p.Count eligible origins of the
// policy, one per (url, visit_type), and (unless p.DryRun) marks them
// scheduled at p.Now, all in one write transaction: the single writer
// connection and BEGIN IMMEDIATE serialize grabs, so concurrent callers
// never receive the same origin.
func (s *Store) GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error) {
	p, cooldowns, err := p.Resolve(s.opts.Now)
	if err != nil {
		return nil, err
	}
	var out []revisit.ListedOrigin
	err = s.write(ctx, "grab next visits of "+p.VisitType, func(tx *sql.Tx) error {
		picked, err := s.grab(ctx, tx, p, cooldowns)
		out = make([]revisit.ListedOrigin, len(picked))
		for i, c := range picked {
			out[i] = c.Origin
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// grab selects the top p.Count eligible origins of p (resolved) and, unless
// p.DryRun, marks them scheduled, inside the write transaction tx.
func (s *Store) grab(ctx context.Context, tx *sql.Tx, p revisit.GrabParams, cooldowns revisit.Cooldowns) ([]grabsql.Candidate, error) {
	params := grabsql.Params{VisitType: p.VisitType, Policy: p.Policy, Now: p.Now, Disabled: p.Disabled,
		Cooldowns: cooldowns, Sample: p.Sample}
	if err := resolveLister(ctx, tx, p, &params); err != nil {
		return nil, err
	}
	q, err := dialect.Build(params)
	if err != nil {
		return nil, err
	}
	st, err := s.stmt(ctx, tx, q.SQL)
	if err != nil {
		return nil, err
	}
	picked, err := grabsql.Pick(p.Count, func(limit int) ([]grabsql.Candidate, error) {
		args := append(q.Args[:len(q.Args):len(q.Args)], limit)
		return scanCandidates(st.QueryContext(ctx, args...))
	})
	if err != nil || p.DryRun || len(picked) == 0 {
		return picked, err
	}
	return picked, s.mark(ctx, tx, p, picked)
}

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

// mark records that the picked origins are scheduled at p.Now in their
// grab marks, and raises the queue position for
// origins_without_last_update.
func (s *Store) mark(ctx context.Context, tx *sql.Tx, p revisit.GrabParams, picked []grabsql.Candidate) error {
	marks := make([][2]any, len(picked))
	for i, c := range picked {
		marks[i] = [2]any{c.Origin.URL, micro(grabsql.Mark(c, p.Now))}
	}
	st, err := s.stmt(ctx, tx, markGrabbed)
	if err != nil {
		return err
	}
	if _, err := st.ExecContext(ctx, p.VisitType, jsonArray(marks)); err != nil {
		return err
	}
	if p.Policy != revisit.OriginsWithoutLastUpdate {
		return nil
	}
	pos, ok := grabsql.MaxQueuePosition(picked)
	if !ok {
		return nil
	}
	_, err = tx.ExecContext(ctx, raiseQueuePosition, p.VisitType, pos)
	return err
}

// GrabMarksFold folds the visit type's grab marks older than before, at
// most limit of them, into visit_stats and listed_origin.
func (s *Store) GrabMarksFold(ctx context.Context, visitType string, before time.Time, limit int) (int, error) {
	type mark struct {
		url       string
		scheduled int64
	}
	var n int
	err := s.write(ctx, "fold "+visitType+" grab marks", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, oldMarks, visitType, micro(before), limit)
		if err != nil {
			return err
		}
		var marks []mark
		for rows.Next() {
			var m mark
			if err := rows.Scan(&m.url, &m.scheduled); err != nil {
				rows.Close()
				return err
			}
			marks = append(marks, m)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, q := range []string{foldStats, foldListed, dropMark} {
			st, err := s.stmt(ctx, tx, q)
			if err != nil {
				return err
			}
			for _, m := range marks {
				args := []any{m.url, visitType, m.scheduled}
				if q == dropMark {
					args = args[:2]
				}
				if _, err := st.ExecContext(ctx, args...); err != nil {
					return err
				}
			}
		}
		n = len(marks)
		return nil
	})
	return n, err
}
