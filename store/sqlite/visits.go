package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/front"
)

// visitColumns are the visit_in_flight columns scanVisits reads, in order.
const visitColumns = "id, url, visit_type, lister_id, policy, state, scheduled_at, sent_at, owner"

// The statements that give a released or lost visit's origin back the
// last_scheduled it had before the visit, unless a later grab scheduled it
// again, when its mark has been folded (dropMark drops it otherwise): ?1
// url, ?2 visit type, ?3 the visit's scheduled_at, ?4 the previous
// last_scheduled.
const (
	restoreStats = `UPDATE visit_stats SET last_scheduled = ?4
		WHERE url = ?1 AND visit_type = ?2 AND last_scheduled = ?3`
	restoreListed = `UPDATE listed_origin SET last_scheduled = ?4
		WHERE url = ?1 AND visit_type = ?2 AND last_scheduled = ?3`
)

// insertVisit records a pending visit: its id, url, visit type, lister,
// policy, scheduled_at, the origin's last_scheduled before it and owner.
const insertVisit = `INSERT INTO visit_in_flight
	(id, url, visit_type, lister_id, policy, state, scheduled_at, prev_scheduled, owner)
	VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`

// VisitsDispatch grabs, marks and records pending visits in one write
// transaction.
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
		w      walked
	)
	err = s.write(ctx, "dispatch "+g.VisitType+" visits", func(tx *sql.Tx) error {
		if p.Lease != "" {
			if err := front.CheckLease(ctx, statements{s: s, tx: tx}, p.Lease, p.Owner, g.Now); err != nil {
				return err
			}
		}
		var err error
		picked, w, err = s.grab(ctx, tx, g, cooldowns)
		if err != nil || len(picked) == 0 {
			return err
		}
		insert, err := s.stmt(ctx, tx, insertVisit)
		if err != nil {
			return err
		}
		visits = make([]revisit.Visit, len(picked))
		for i, c := range picked {
			v := revisit.Visit{ID: revisit.NewVisitID().String(), Origin: c.Origin, Policy: g.Policy,
				State: revisit.VisitPending, ScheduledAt: g.Now, Owner: p.Owner}
			if _, err := insert.ExecContext(ctx, v.ID, c.Origin.URL, g.VisitType, c.Origin.ListerID.String(),
				string(g.Policy), micro(g.Now), microPtr(c.LastScheduled), p.Owner); err != nil {
				return err
			}
			visits[i] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.recordWalk(g, w, picked)
	return visits, nil
}

// LeaseOf reads a lease; the single writer's transaction keeps it
// (front.VisitStatements).
func (x statements) LeaseOf(ctx context.Context, name string) (revisit.Lease, error) {
	var l revisit.Lease
	err := x.queryRow(ctx, "SELECT name, owner, expires_at FROM lease WHERE name = ?", []any{name},
		&l.Name, &l.Owner, timeCol{&l.Expires})
	if errors.Is(err, sql.ErrNoRows) {
		return revisit.Lease{}, nil
	}
	return l, err
}

// VisitsMarkSent marks pending visits sent (front.VisitStatements).
func (x statements) VisitsMarkSent(ctx context.Context, ids []string, at time.Time) (int, error) {
	return markSent(ctx, x.tx, ids, at)
}

// VisitsLoseSent declares lost the sent visits of messages taken out of
// their queue (front.VisitStatements).
func (x statements) VisitsLoseSent(ctx context.Context, ids []string, now time.Time) (int, []string, error) {
	visits := jsonArray(batch.MessageIDs(ids))
	visitTypes, err := scanStrings(x.tx.QueryContext(ctx, `SELECT DISTINCT visit_type FROM visit_in_flight
		WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'sent'`, visits))
	if err != nil || len(visitTypes) == 0 {
		return 0, nil, err
	}
	n, err := x.s.restoreTx(ctx, x.tx, `UPDATE visit_in_flight SET state = 'lost', lost_at = ?2
		WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'sent'`, visits, micro(now))
	return n, visitTypes, err
}

// markSent marks sent at `at` (or at their scheduled time if later) the
// pending visits among ids, in tx, and returns how many it changed.
func markSent(ctx context.Context, tx *sql.Tx, ids []string, at time.Time) (int, error) {
	res, err := tx.ExecContext(ctx, `UPDATE visit_in_flight SET state = 'sent', sent_at = max(?2, scheduled_at)
		WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'pending'`,
		jsonArray(batch.MessageIDs(ids)), micro(at))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// VisitsRelease releases pending visits, deleted or kept as lost.
func (s *Store) VisitsRelease(ctx context.Context, ids []string, maybePublished bool) (int, error) {
	return s.release(ctx, "release visits", `id IN (SELECT value FROM json_each(?1))`,
		jsonArray(batch.MessageIDs(ids)), maybePublished)
}

// VisitsRecover releases every pending visit of a visit type, deleted or
// kept as lost.
func (s *Store) VisitsRecover(ctx context.Context, visitType string, maybePublished bool) (int, error) {
	return s.release(ctx, "recover "+visitType+" visits", `visit_type = ?1 AND lost_at IS NULL`,
		visitType, maybePublished)
}

// release releases the pending visits meeting cond, a condition on ?1 =
// key: it deletes them or, when their messages may have been published,
// keeps them lost since now and sent when scheduled; their origins get
// their eligibility back either way.
func (s *Store) release(ctx context.Context, op, cond string, key any, maybePublished bool) (int, error) {
	if maybePublished {
		return s.restore(ctx, op, `UPDATE visit_in_flight SET state = 'lost', lost_at = ?2, sent_at = scheduled_at
			WHERE `+cond+` AND state = 'pending'`, key, micro(s.now()))
	}
	return s.restore(ctx, op, `DELETE FROM visit_in_flight WHERE `+cond+` AND state = 'pending'`, key)
}

// Expiry and forgetting change the visits of a type (?1) sent before ?2.
// Expiry walks the visits not yet lost only (visit_in_flight_open), so
// that the lost ones kept for the lost retention cost it nothing, and
// declares them lost at ?3; forgetting walks the lost ones only
// (visit_in_flight_lost). Each first looks on a reader whether a visit
// is concerned: the rounds look every minute and usually find none, and
// a write transaction that changes nothing still waits for the writer.
const (
	expiring         = `visit_type = ?1 AND scheduled_at < ?2 AND lost_at IS NULL AND state = 'sent' AND sent_at < ?2`
	expireVisits     = `UPDATE visit_in_flight SET state = 'lost', lost_at = ?3 WHERE ` + expiring
	forgettable      = `visit_type = ?1 AND scheduled_at < ?2 AND lost_at IS NOT NULL AND sent_at < ?2`
	forgetLostVisits = `DELETE FROM visit_in_flight WHERE ` + forgettable
)

// anyVisit reports whether a visit of visit_in_flight meets cond, whose
// parameters are the visit type (?1) and a time (?2).
func (s *Store) anyVisit(ctx context.Context, cond, visitType string, before time.Time) (bool, error) {
	var found bool
	err := s.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM visit_in_flight WHERE `+cond+`)`,
		[]any{visitType, micro(before)}, &found)
	return found, translate("look for visits of "+visitType, err)
}

// VisitsExpire marks lost the visits sent before `before`; their origins
// are eligible again, which the visit type's subscribers hear.
func (s *Store) VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error) {
	if found, err := s.anyVisit(ctx, expiring, visitType, before); err != nil || !found {
		return 0, err
	}
	n, err := s.restore(ctx, "expire "+visitType+" visits", expireVisits, visitType, micro(before), micro(s.now()))
	if n > 0 {
		err = s.notified(err, []string{visitType})
	}
	return n, err
}

// restore runs change, a DELETE or UPDATE of visit_in_flight, and gives the
// origins of the rows it touched their eligibility back, in one transaction.
func (s *Store) restore(ctx context.Context, op, change string, args ...any) (int, error) {
	var n int
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		var err error
		n, err = s.restoreTx(ctx, tx, change, args...)
		return err
	})
	return n, err
}

// restoreTx is restore in tx.
func (s *Store) restoreTx(ctx context.Context, tx *sql.Tx, change string, args ...any) (int, error) {
	type gone struct {
		url, visitType string
		scheduled      int64
		prev           sql.NullInt64
	}
	rows, err := tx.QueryContext(ctx, change+" RETURNING url, visit_type, scheduled_at, prev_scheduled", args...)
	if err != nil {
		return 0, err
	}
	var all []gone
	for rows.Next() {
		var g gone
		if err := rows.Scan(&g.url, &g.visitType, &g.scheduled, &g.prev); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, g)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, err
	}
	drop, err := s.stmt(ctx, tx, dropMark)
	if err != nil {
		return 0, err
	}
	known, err := s.stmt(ctx, tx, ensureStats)
	if err != nil {
		return 0, err
	}
	for _, g := range all {
		res, err := drop.ExecContext(ctx, g.url, g.visitType, g.scheduled)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		if n == 0 {
			continue
		}
		if _, err := known.ExecContext(ctx, g.url, g.visitType, g.prev); err != nil {
			return 0, err
		}
	}
	if len(all) > 0 {
		s.wroteListed()
	}
	for _, q := range []string{restoreStats, restoreListed} {
		st, err := s.stmt(ctx, tx, q)
		if err != nil {
			return 0, err
		}
		for _, g := range all {
			if _, err := st.ExecContext(ctx, g.url, g.visitType, g.scheduled, g.prev); err != nil {
				return 0, err
			}
		}
	}
	return len(all), nil
}

// VisitsWithIDs reads visits (front.VisitStatements).
func (x statements) VisitsWithIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Visit, error) {
	return scanVisits(x.query(ctx, `SELECT `+visitColumns+` FROM visit_in_flight
		WHERE id IN (SELECT value FROM json_each(?))`, jsonArray(ids)))
}

// VisitsOfOrigin returns the visits of an origin, found through the
// index on (url, visit_type).
func (s *Store) VisitsOfOrigin(ctx context.Context, key revisit.OriginKey) ([]revisit.Visit, error) {
	visits, err := query(ctx, s, scanVisits, `SELECT `+visitColumns+` FROM visit_in_flight
		WHERE url = ?1 AND visit_type = ?2 ORDER BY scheduled_at, id`, key.URL, key.VisitType)
	return visits, translate("visits of an origin", err)
}

// VisitsForgetLost deletes the lost visits sent before `before`.
func (s *Store) VisitsForgetLost(ctx context.Context, visitType string, before time.Time) (int, error) {
	if found, err := s.anyVisit(ctx, forgettable, visitType, before); err != nil || !found {
		return 0, err
	}
	var n int64
	err := s.write(ctx, "forget lost "+visitType+" visits", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, forgetLostVisits, visitType, micro(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// VisitsClose removes the records of visits whose result arrived.
func (s *Store) VisitsClose(ctx context.Context, ids []string) ([]revisit.Visit, error) {
	return s.closeVisits(ctx, "close visits", `SELECT value FROM json_each(?)`, jsonArray(batch.MessageIDs(ids)))
}

// VisitsCloseByOrigin removes the records of the sent and lost visits of
// each result's origin scheduled at or before its date: the results, a
// JSON array of [url, visit type, date], are the outer loop, each probing
// the index of (url, visit_type).
func (s *Store) VisitsCloseByOrigin(ctx context.Context, results []revisit.OriginResult) ([]revisit.Visit, error) {
	results, err := batch.OriginResults(results)
	if err != nil || len(results) == 0 {
		return nil, err
	}
	rows := make([][3]any, len(results))
	for i, r := range results {
		rows[i] = [3]any{r.Key.URL, r.Key.VisitType, micro(r.Date)}
	}
	return s.closeVisits(ctx, "close the visits of origins", `SELECT v.id FROM json_each(?) AS r
		JOIN visit_in_flight AS v ON v.url = r.value ->> 0 AND v.visit_type = r.value ->> 1
		WHERE v.scheduled_at <= r.value ->> 2 AND v.state <> 'pending'`, jsonArray(rows))
}

// closeVisits deletes, in one write transaction, the visits whose ids
// query selects, and returns them: whatever finds a visit's result,
// closing the visit is this.
func (s *Store) closeVisits(ctx context.Context, op, ids string, args ...any) ([]revisit.Visit, error) {
	var visits []revisit.Visit
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		del, err := s.stmt(ctx, tx, `DELETE FROM visit_in_flight WHERE id IN (`+ids+`) RETURNING `+visitColumns)
		if err != nil {
			return err
		}
		visits, err = scanVisits(del.QueryContext(ctx, args...))
		return err
	})
	return visits, err
}

// scanVisits reads the rows of a query returning visitColumns.
func scanVisits(rows *sql.Rows, err error) ([]revisit.Visit, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (v revisit.Visit, err error) {
		err = rows.Scan(&v.ID, &v.Origin.URL, &v.Origin.VisitType, &v.Origin.ListerID, &v.Policy, &v.State,
			timeCol{&v.ScheduledAt}, timePtrCol{&v.SentAt}, &v.Owner)
		return v, err
	})
}

// VisitCountsByType counts visits by visit type and state
// (front.VisitStatements).
func (x statements) VisitCountsByType(ctx context.Context) ([]revisit.VisitCounts, error) {
	return scanVisitCounts(x.query(ctx, `SELECT visit_type,
			count(*) FILTER (WHERE state = 'pending'),
			count(*) FILTER (WHERE state = 'sent'),
			count(*) FILTER (WHERE state = 'lost')
		FROM visit_in_flight GROUP BY visit_type ORDER BY visit_type`))
}

// scanVisitCounts reads the rows of VisitsCount's query.
func scanVisitCounts(rows *sql.Rows, err error) ([]revisit.VisitCounts, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (c revisit.VisitCounts, err error) {
		err = rows.Scan(&c.VisitType, &c.Pending, &c.Sent, &c.Lost)
		return c, err
	})
}

// LeaseTake takes or renews a lease unless another holder than
// takeOverFrom keeps it unexpired, and reads who holds it
// (front.VisitStatements).
func (x statements) LeaseTake(ctx context.Context, name, owner string, now, expires time.Time, takeOverFrom string) (revisit.Lease, error) {
	if _, err := x.tx.ExecContext(ctx, `INSERT INTO lease (name, owner, expires_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE lease.owner = excluded.owner OR lease.expires_at <= ?4 OR lease.owner = ?5`,
		name, owner, micro(expires), micro(now), takeOverFrom); err != nil {
		return revisit.Lease{}, err
	}
	var l revisit.Lease
	return l, x.queryRow(ctx, "SELECT name, owner, expires_at FROM lease WHERE name = ?", []any{name},
		&l.Name, &l.Owner, timeCol{&l.Expires})
}

// LeaseDrop frees a lease its owner holds (front.VisitStatements).
func (x statements) LeaseDrop(ctx context.Context, name, owner string) error {
	_, err := x.tx.ExecContext(ctx, "DELETE FROM lease WHERE name = ? AND owner = ?", name, owner)
	return err
}
