package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/front"
)

// visitColumns are the visit_in_flight columns scanVisit reads, in order.
const visitColumns = "id, url, visit_type, lister_id, policy, state, scheduled_at, sent_at, owner"

// restoreEligibility ends a statement whose CTE "gone" returns (url,
// visit_type, scheduled_at, prev_scheduled) of released or lost visits: it
// gives their origins back the last_scheduled they had before the visit,
// unless a later grab scheduled them again, and counts the visits. Origins
// still pending come back to listed_origin (docs/store.md).
//
// A visit's pending rows are probed by URL (the hash index); OFFSET 0
// keeps the time of the grab out of the probe: every visit of a dispatch
// shares it, and on a table without statistics the planner would rather
// probe listed_origin_pending_scheduled by the time of the grab, reading
// every pending row of the dispatch for each visit released.
var restoreEligibility = `,
	back AS (
		DELETE FROM listed_origin_pending p USING (
			SELECT o.ctid, g.prev_scheduled FROM gone g CROSS JOIN LATERAL (
				SELECT ctid, last_scheduled FROM listed_origin_pending
				WHERE url = g.url AND visit_type = g.visit_type OFFSET 0) o
			WHERE o.last_scheduled = g.scheduled_at) o
		WHERE p.ctid = o.ctid
		RETURNING p.*, o.prev_scheduled),
	returned AS (
		INSERT INTO listed_origin (` + listedColumns + `) OVERRIDING SYSTEM VALUE
		SELECT ` + restoredColumns + ` FROM back),
	listed AS (
		UPDATE listed_origin AS l SET last_scheduled = g.prev_scheduled FROM gone AS g
		WHERE l.url = g.url AND l.visit_type = g.visit_type AND l.last_scheduled = g.scheduled_at
		RETURNING 1)
	SELECT count(*) FROM gone`

// restoredColumns are listedColumns with the last_scheduled of before the
// visit.
var restoredColumns = listedColumnsWith("prev_scheduled", "next_position_offset")

// insertVisits records pending visits: $1 their ids, $2 URLs, $3
// listers and $4 the origins' last_scheduled before them, of visit type
// $5, chosen by policy $6, scheduled at $7 by owner $8.
const insertVisits = `INSERT INTO visit_in_flight
	(id, url, visit_type, lister_id, policy, state, scheduled_at, prev_scheduled, owner)
	SELECT id, url, $5, lister_id, $6, 'pending', $7, prev, $8
	FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::timestamptz[]) AS v(id, url, lister_id, prev)`

// VisitsDispatch grabs, marks and records pending visits in one transaction.
func (s *Store) VisitsDispatch(ctx context.Context, p revisit.DispatchParams) ([]revisit.Visit, error) {
	if _, err := p.Validate(); err != nil {
		return nil, err
	}
	g, cooldowns, err := p.Grab.Resolve(s.opts.Clock)
	if err != nil {
		return nil, err
	}
	var (
		visits []revisit.Visit
		picked []candidate
		plan   grabPlan
	)
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if p.Lease != "" {
			if err := front.CheckLease(ctx, statements{s: s, q: tx, tx: tx}, p.Lease, p.Owner, g.Now); err != nil {
				return err
			}
		}
		var err error
		picked, plan, err = s.grab(ctx, tx, g, cooldowns, moveAll)
		if err != nil || len(picked) == 0 {
			visits = nil
			return err
		}
		visits = make([]revisit.Visit, len(picked))
		ids := make([]uuid.UUID, len(picked))
		urls := make([]string, len(picked))
		listers := make([]uuid.UUID, len(picked))
		prev := make([]*time.Time, len(picked))
		for i, c := range picked {
			ids[i], urls[i], listers[i], prev[i] = revisit.NewVisitID(), c.Origin.URL, c.Origin.ListerID, c.LastScheduled
			visits[i] = revisit.Visit{ID: ids[i].String(), Origin: c.Origin, Policy: g.Policy,
				State: revisit.VisitPending, ScheduledAt: g.Now, Owner: p.Owner}
		}
		_, err = tx.Exec(ctx, insertVisits, ids, urls, listers, prev, g.VisitType, string(g.Policy), g.Now, p.Owner)
		return err
	})
	if err != nil {
		return nil, translate(wrap(err, "dispatch %d %s visits (%s)", g.Count, g.VisitType, g.Policy))
	}
	s.recordWalk(g, plan, picked)
	return visits, nil
}

// LeaseOf reads a lease and share-locks it, so that no one takes it over
// before the transaction ends (front.VisitStatements).
func (x statements) LeaseOf(ctx context.Context, name string) (revisit.Lease, error) {
	var l revisit.Lease
	err := x.q.QueryRow(ctx, "SELECT name, owner, expires_at FROM lease WHERE name = $1 FOR SHARE", name).
		Scan(&l.Name, &l.Owner, &l.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return revisit.Lease{}, nil
	}
	return l, err
}

// VisitsMarkSent marks pending visits sent (front.VisitStatements).
func (x statements) VisitsMarkSent(ctx context.Context, ids []string, at time.Time) (int, error) {
	return markSent(ctx, x.q, ids, at)
}

// VisitsLoseSent declares lost the sent visits of messages taken out of
// their queue (front.VisitStatements).
func (x statements) VisitsLoseSent(ctx context.Context, ids []string, now time.Time) (int, []string, error) {
	visits := batch.MessageIDs(ids)
	if len(visits) == 0 {
		return 0, nil, nil
	}
	rows, _ := x.tx.Query(ctx, `SELECT DISTINCT visit_type FROM visit_in_flight WHERE id = ANY($1) AND state = 'sent'`, visits)
	visitTypes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(visitTypes) == 0 {
		return 0, nil, err
	}
	var n int
	err = x.s.withIndexLookups(ctx, x.tx, func() error {
		n, err = restore(ctx, x.tx, visitTypes, `UPDATE visit_in_flight SET state = 'lost', lost_at = $2
			WHERE id = ANY($1) AND state = 'sent'`, visits, now)
		return err
	})
	return n, visitTypes, err
}

// markSent marks sent at `at` (or at their scheduled time if later) the
// pending visits among ids, through q, and returns how many it changed.
func markSent(ctx context.Context, q querier, ids []string, at time.Time) (int, error) {
	tag, err := q.Exec(ctx, `UPDATE visit_in_flight SET state = 'sent', sent_at = GREATEST($2, scheduled_at)
		WHERE id = ANY($1) AND state = 'pending'`, batch.MessageIDs(ids), revisit.Microsecond(at))
	return int(tag.RowsAffected()), err
}

// VisitsRelease releases pending visits, deleted or kept as lost.
func (s *Store) VisitsRelease(ctx context.Context, ids []string, maybePublished bool) (int, error) {
	n, err := s.release(ctx, `id = ANY($1)`, batch.MessageIDs(ids), nil, maybePublished)
	return n, translate(wrap(err, "release %d visits", len(ids)))
}

// VisitsRecover releases every pending visit of a visit type, deleted or
// kept as lost.
func (s *Store) VisitsRecover(ctx context.Context, visitType string, maybePublished bool) (int, error) {
	n, err := s.release(ctx, `visit_type = $1 AND lost_at IS NULL`, visitType, []string{visitType}, maybePublished)
	return n, translate(wrap(err, "recover %s visits", visitType))
}

// release releases the pending visits meeting cond, a condition on $1 =
// key, of visitTypes (nil: those the visits have): it deletes them or,
// when their messages may have been published, keeps them lost since now
// and sent when scheduled; their origins get their eligibility back
// either way. It runs with statistics and index scans only
// (withIndexLookups): it joins the visits with listed_origin_pending and
// listed_origin.
func (s *Store) release(ctx context.Context, cond string, key any, visitTypes []string, maybePublished bool) (int, error) {
	cond += " AND state = 'pending'"
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return s.withIndexLookups(ctx, tx, func() error {
			var err error
			if visitTypes == nil {
				rows, _ := tx.Query(ctx, `SELECT DISTINCT visit_type FROM visit_in_flight WHERE `+cond, key)
				if visitTypes, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(visitTypes) == 0 {
					return err
				}
			}
			if maybePublished {
				n, err = restore(ctx, tx, visitTypes, `UPDATE visit_in_flight SET state = 'lost', lost_at = $2,
					sent_at = scheduled_at WHERE `+cond, key, s.now())
			} else {
				n, err = restore(ctx, tx, visitTypes, `DELETE FROM visit_in_flight WHERE `+cond, key)
			}
			return err
		})
	})
	return n, err
}

// Expiry and forgetting change a chunk of visits of a type ($1) sent
// before $2 ($3 the chunk size). Expiry walks the visits not yet lost only
// (visit_in_flight_open), so that the lost ones kept for the lost retention
// cost it nothing, and declares them lost at $4; forgetting walks the lost
// ones only (visit_in_flight_lost).
var (
	expireChunk = chunked(`UPDATE visit_in_flight AS v SET state = 'lost', lost_at = $4 FROM %s WHERE %s`,
		`visit_type = $1 AND scheduled_at < $2 AND lost_at IS NULL AND state = 'sent' AND sent_at < $2`)
	forgetChunk = chunked(`DELETE FROM visit_in_flight AS v USING %s WHERE %s`,
		`visit_type = $1 AND scheduled_at < $2 AND lost_at IS NOT NULL AND sent_at < $2`)
)

// VisitsExpire marks lost the visits sent before `before`; their origins
// are eligible again, which the visit type's subscribers hear.
func (s *Store) VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error) {
	n, err := s.oldestFirst(ctx, func(tx pgx.Tx) (int, error) {
		return restore(ctx, tx, []string{visitType}, expireChunk, visitType, revisit.Microsecond(before), visitChunk, s.now())
	})
	if n > 0 {
		err = s.notified(err, []string{visitType})
	}
	return n, translate(wrap(err, "expire %s visits", visitType))
}

// restore runs change, a DELETE or UPDATE of visit_in_flight, and gives
// the origins of the rows it touched, all of visitTypes, their
// eligibility back, holding those visit types' grab locks in shared mode
// as every writer of listed rows does (migration 00031).
func restore(ctx context.Context, tx pgx.Tx, visitTypes []string, change string, args ...any) (int, error) {
	if err := shareGrabLocks(ctx, tx, visitTypes); err != nil {
		return 0, err
	}
	var n int
	err := tx.QueryRow(ctx, `WITH gone AS (`+change+` RETURNING url, visit_type, scheduled_at, prev_scheduled)`+
		restoreEligibility, args...).Scan(&n)
	return n, err
}

// visitChunk bounds the visits one expiry or forgetting statement changes
// (a variable so that tests can make several chunks of a few visits). It
// is large because each chunk walks the index from its start again, over
// the entries of the visits that the chunks before it changed (they stay
// until a scan finds their rows gone): expiring a million visits at once
// took 166 s in chunks of 10,000 and 107 s in chunks of 100,000, as long
// as one statement did (on the 10M bench, with the chunk's rows picked by
// ctid = ANY(…) rather than joined).
var visitChunk = 100000

// chunked renders a statement that changes the first visitChunk visits
// meeting cond, a condition on one visit type ($1) and scheduled_at with
// more filters, in (visit_type, scheduled_at) order, $3 being the chunk
// size. format has two verbs: the FROM item that lists the chunk's
// addresses (c.tid), and the condition that joins visit_in_flight (as v)
// to it. cond is checked again on the rows themselves, which a concurrent
// result may have changed. A join, and not ctid = ANY(array): with
// statistics that undercount the range, the planner turned the latter into
// a filter on an index scan of the range, comparing every visit with every
// address of the chunk (a chunk of 100,000 lost visits had not been
// forgotten after two minutes).
func chunked(format, cond string) string {
	from := `(SELECT ctid AS tid FROM visit_in_flight WHERE ` + cond + `
		ORDER BY visit_type, scheduled_at LIMIT $3) AS c`
	return fmt.Sprintf(format, from, "v.ctid = c.tid AND "+cond)
}

// oldestFirst runs step, a statement of chunked, one chunk per transaction
// with statistics and index scans only (as release), until it changes fewer rows than a chunk, and
// returns how many it changed in all.
func (s *Store) oldestFirst(ctx context.Context, step func(tx pgx.Tx) (int, error)) (int, error) {
	return inChunks(visitChunk, func() (int, error) {
		n := 0
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			return s.withIndexLookups(ctx, tx, func() error {
				var err error
				n, err = step(tx)
				return err
			})
		})
		if err != nil {
			return 0, err // rolled back
		}
		return n, nil
	})
}

// VisitsWithIDs reads visits (front.VisitStatements).
func (x statements) VisitsWithIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Visit, error) {
	rows, _ := x.q.Query(ctx, `SELECT `+visitColumns+` FROM visit_in_flight WHERE id = ANY($1)`, ids)
	return pgx.CollectRows(rows, scanVisit)
}

// VisitsOfOrigin returns the visits of an origin, probed by URL in the
// hash index (withIndexScans, as VisitsCloseByOrigin).
func (s *Store) VisitsOfOrigin(ctx context.Context, key revisit.OriginKey) ([]revisit.Visit, error) {
	var visits []revisit.Visit
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			rows, _ := tx.Query(ctx, `SELECT `+visitColumns+` FROM visit_in_flight
				WHERE url = $1 AND visit_type = $2 ORDER BY scheduled_at, id`, key.URL, key.VisitType)
			var err error
			visits, err = pgx.CollectRows(rows, scanVisit)
			return err
		})
	})
	return visits, translate(wrap(err, "visits of %s %s", key.VisitType, key.URL))
}

// VisitsForgetLost deletes the lost visits sent before `before`.
func (s *Store) VisitsForgetLost(ctx context.Context, visitType string, before time.Time) (int, error) {
	n, err := s.oldestFirst(ctx, func(tx pgx.Tx) (int, error) {
		tag, err := tx.Exec(ctx, forgetChunk, visitType, revisit.Microsecond(before), visitChunk)
		return int(tag.RowsAffected()), err
	})
	return n, translate(wrap(err, "forget lost %s visits", visitType))
}

// VisitsClose removes the records of visits whose result arrived.
func (s *Store) VisitsClose(ctx context.Context, ids []string) ([]revisit.Visit, error) {
	visits, err := closeVisits(ctx, s.pool, "", "id = ANY($1)", batch.MessageIDs(ids))
	return visits, translate(wrap(err, "close %d visits", len(ids)))
}

// VisitsCloseByOrigin removes the records of the sent and lost visits of
// each result's origin scheduled at or before its date. Each origin's
// visits are probed by URL (the hash index), with index scans only
// (withIndexScans): the table's size swings with the visits in flight.
func (s *Store) VisitsCloseByOrigin(ctx context.Context, results []revisit.OriginResult) ([]revisit.Visit, error) {
	results, err := batch.OriginResults(results)
	if err != nil || len(results) == 0 {
		return nil, err
	}
	urls, types, dates := make([]string, len(results)), make([]string, len(results)), make([]time.Time, len(results))
	for i, r := range results {
		urls[i], types[i], dates[i] = r.Key.URL, r.Key.VisitType, r.Date
	}
	var visits []revisit.Visit
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			var err error
			visits, err = closeVisits(ctx, tx,
				"USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS r(result_url, result_type, result_date)",
				"url = r.result_url AND visit_type = r.result_type AND scheduled_at <= r.result_date AND state <> 'pending'",
				urls, types, dates)
			return err
		})
	})
	return visits, translate(wrap(err, "close the visits of %d origins", len(results)))
}

// closeVisits deletes the visits meeting cond, a condition on
// visit_in_flight and the FROM items of using (a USING clause, or
// nothing), through q, and returns them: whatever finds a visit's result,
// closing the visit is this.
func closeVisits(ctx context.Context, q querier, using, cond string, args ...any) ([]revisit.Visit, error) {
	rows, _ := q.Query(ctx, `DELETE FROM visit_in_flight `+using+` WHERE `+cond+` RETURNING `+visitColumns, args...)
	return pgx.CollectRows(rows, scanVisit)
}

// scanVisit scans a row of visitColumns.
func scanVisit(row pgx.CollectableRow) (revisit.Visit, error) {
	var (
		v      revisit.Visit
		id     uuid.UUID
		policy string
		state  string
	)
	err := row.Scan(&id, &v.Origin.URL, &v.Origin.VisitType, &v.Origin.ListerID, &policy, &state,
		&v.ScheduledAt, &v.SentAt, &v.Owner)
	v.ID, v.Policy, v.State = id.String(), revisit.Policy(policy), revisit.VisitState(state)
	v.ScheduledAt, v.SentAt = v.ScheduledAt.UTC(), utcPtr(v.SentAt)
	return v, err
}

// VisitCountsByType counts visits by visit type and state
// (front.VisitStatements).
func (x statements) VisitCountsByType(ctx context.Context) ([]revisit.VisitCounts, error) {
	rows, _ := x.q.Query(ctx, `SELECT visit_type,
			count(*) FILTER (WHERE state = 'pending'),
			count(*) FILTER (WHERE state = 'sent'),
			count(*) FILTER (WHERE state = 'lost')
		FROM visit_in_flight GROUP BY visit_type ORDER BY visit_type`)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.VisitCounts, error) {
		var c revisit.VisitCounts
		return c, row.Scan(&c.VisitType, &c.Pending, &c.Sent, &c.Lost)
	})
}

// LeaseTake takes or renews a lease unless another holder than
// takeOverFrom keeps it unexpired with its presence connection still
// there, and returns who holds it, in one statement
// (front.VisitStatements). A backend whose start time this role may not
// read counts as there.
func (x statements) LeaseTake(ctx context.Context, name, owner string, now, expires time.Time, takeOverFrom string) (revisit.Lease, error) {
	var (
		pid   *int32
		since *time.Time
	)
	if p, at, ok := x.s.presence.identity(ctx); ok {
		pid, since = &p, &at
	}
	var l revisit.Lease
	err := x.q.QueryRow(ctx, `
		WITH up AS (
			INSERT INTO lease AS l (name, owner, expires_at, holder_pid, holder_since) VALUES ($1, $2, $3, $6, $7)
			ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at,
				holder_pid = EXCLUDED.holder_pid, holder_since = EXCLUDED.holder_since
			WHERE l.owner = EXCLUDED.owner OR l.expires_at <= $4 OR l.owner = $5
				OR (l.holder_pid IS NOT NULL AND NOT EXISTS (SELECT FROM pg_stat_activity a
					WHERE a.pid = l.holder_pid AND (a.backend_start = l.holder_since OR a.backend_start IS NULL)))
			RETURNING name, owner, expires_at)
		SELECT name, owner, expires_at FROM up
		UNION ALL
		SELECT name, owner, expires_at FROM lease WHERE name = $1 AND NOT EXISTS (SELECT FROM up)`,
		name, owner, expires, now, takeOverFrom, pid, since).Scan(&l.Name, &l.Owner, &l.Expires)
	l.Expires = l.Expires.UTC()
	return l, err
}

// LeaseDrop frees a lease its owner holds (front.VisitStatements).
func (x statements) LeaseDrop(ctx context.Context, name, owner string) error {
	_, err := x.q.Exec(ctx, "DELETE FROM lease WHERE name = $1 AND owner = $2", name, owner)
	return err
}
