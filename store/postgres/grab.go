package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// dialect renders grab queries for PostgreSQL.
var dialect = grabsql.Dialect{
	Placeholder:    func(n int) string { return fmt.Sprintf("$%d", n) },
	IsDistinctFrom: "IS DISTINCT FROM",
	NullsFirst:     func(col string) string { return col + " NULLS FIRST" },
	NullsLast:      func(col string) string { return col + " NULLS LAST" },
	Lag:            "(lo.last_update - lo.last_successful)",
	Random:         "random()",
	Time:           func(t time.Time) any { return t },
}

// GrabNextVisits selects the top eligible origins of a policy and marks them
// scheduled, in one transaction that holds the visit type's grab lock.
func (s *Store) GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error) {
	p, cooldowns, err := p.Resolve(s.opts.Now)
	if err != nil {
		return nil, err
	}
	var picked []grabsql.Candidate
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// A mark lost in a database crash only offers its origins again,
		// which the orchestrator tolerates anyway: skip the commit's fsync.
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		picked, err = s.grab(ctx, tx, p, cooldowns)
		return err
	})
	if err != nil {
		return nil, translate(wrap(err, "grab %d %s visits (%s)", p.Count, p.VisitType, p.Policy))
	}
	origins := make([]revisit.ListedOrigin, len(picked))
	for i, c := range picked {
		origins[i] = c.Origin
	}
	return origins, nil
}

// grab takes the visit type's grab lock, selects the top p.Count eligible
// origins of p (resolved) and, unless p.DryRun, marks them scheduled.
func (s *Store) grab(ctx context.Context, tx pgx.Tx, p revisit.GrabParams, cooldowns revisit.Cooldowns) ([]grabsql.Candidate, error) {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "revisit.grab:"+p.VisitType); err != nil {
		return nil, err
	}
	q, err := s.grabQuery(ctx, tx, p, p.Now, cooldowns)
	if err != nil {
		return nil, err
	}
	picked, err := grabsql.Pick(p.Count, func(limit int) ([]grabsql.Candidate, error) {
		rows, _ := tx.Query(ctx, q.SQL, append(q.Args, limit)...)
		return pgx.CollectRows(rows, scanCandidate)
	})
	if err != nil || p.DryRun || len(picked) == 0 {
		return picked, err
	}
	return picked, markScheduled(ctx, tx, p, p.Now, picked)
}

// grabQuery resolves the lister filter and renders the candidate query.
func (s *Store) grabQuery(ctx context.Context, tx pgx.Tx, p revisit.GrabParams, now time.Time, c revisit.Cooldowns) (grabsql.Query, error) {
	gp := grabsql.Params{VisitType: p.VisitType, Policy: p.Policy, Now: now, Disabled: p.Disabled,
		Cooldowns: c, Sample: p.Sample}
	if p.ListerID != nil || p.ListerName != "" {
		var (
			id       uuid.UUID
			finished *time.Time
		)
		err := tx.QueryRow(ctx, `SELECT id, last_listing_finished_at FROM lister
			WHERE CASE WHEN $1::uuid IS NOT NULL THEN id = $1 ELSE name = $2 AND instance_name = $3 END`,
			p.ListerID, p.ListerName, p.ListerInstanceName).Scan(&id, &finished)
		if err == pgx.ErrNoRows {
			return grabsql.Query{}, revisit.Errorf(revisit.CodeNotFound, "lister %s not found", listerLabel(p))
		}
		if err != nil {
			return grabsql.Query{}, err
		}
		gp.ListerID, gp.ListingFinishedAt = id, finished
	}
	return dialect.Build(gp)
}

func listerLabel(p revisit.GrabParams) string {
	if p.ListerID != nil {
		return p.ListerID.String()
	}
	return p.ListerName + "/" + p.ListerInstanceName
}

// markScheduled sets last_scheduled = max(existing, now) on the picked
// origins by upserting their grab marks, and for origins_without_last_update
// raises the queue position, all in one round trip.
func markScheduled(ctx context.Context, tx pgx.Tx, p revisit.GrabParams, now time.Time, picked []grabsql.Candidate) error {
	urls := make([]string, len(picked))
	marks := make([]time.Time, len(picked))
	for i, c := range picked {
		urls[i], marks[i] = c.Origin.URL, grabsql.Mark(c, now)
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO grab_mark AS m (visit_type, url, scheduled_at)
		SELECT $2, url, at FROM unnest($1::text[], $3::timestamptz[]) AS u(url, at)
		ON CONFLICT (visit_type, url) DO UPDATE SET scheduled_at = GREATEST(m.scheduled_at, EXCLUDED.scheduled_at)`,
		urls, p.VisitType, marks)
	if pos, ok := grabsql.MaxQueuePosition(picked); ok && p.Policy == revisit.OriginsWithoutLastUpdate {
		b.Queue(`INSERT INTO queue_position AS qp (visit_type, position) VALUES ($1, $2)
			ON CONFLICT (visit_type) DO UPDATE SET position = GREATEST(qp.position, EXCLUDED.position)`, p.VisitType, pos)
	}
	return tx.SendBatch(ctx, b).Close()
}

// GrabMarksFold folds the visit type's grab marks older than before, at
// most limit of them, into visit_stats and listed_origin.
func (s *Store) GrabMarksFold(ctx context.Context, visitType string, before time.Time, limit int) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `
		WITH m AS (
			DELETE FROM grab_mark WHERE (visit_type, url) IN (
				SELECT visit_type, url FROM grab_mark WHERE visit_type = $1 AND scheduled_at < $2
				ORDER BY scheduled_at LIMIT $3 FOR UPDATE SKIP LOCKED)
			RETURNING url, visit_type, scheduled_at),
		up AS (
			INSERT INTO visit_stats AS vs (url, visit_type, last_scheduled)
			SELECT url, visit_type, scheduled_at FROM m
			ON CONFLICT (url, visit_type) DO UPDATE SET last_scheduled = GREATEST(vs.last_scheduled, EXCLUDED.last_scheduled)
			RETURNING url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled, next_visit_queue_position),
		synced AS (`+syncListedOrigins+` RETURNING 1)
		SELECT count(*) FROM m`, visitType, revisit.Microsecond(before), limit).Scan(&n)
	return n, translate(wrap(err, "fold %s grab marks", visitType))
}

// scanCandidate scans a row of grabsql.Columns.
func scanCandidate(row pgx.CollectableRow) (grabsql.Candidate, error) {
	var c grabsql.Candidate
	dests := append(originDests(&c.Origin), &c.QueuePosition, &c.LastScheduled)
	err := row.Scan(dests...)
	normalizeOrigin(&c.Origin)
	c.LastScheduled = utcPtr(c.LastScheduled)
	return c, err
}
