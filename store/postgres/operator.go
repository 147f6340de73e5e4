package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/front"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// The changes an operator makes to one origin from the console: a visit
// now, and enabling or disabling its listed rows.

// originRowOf selects the listed row an operator's visit of an origin
// carries ($1 url, $2 visit type, $3 the lister's id or null), wherever
// it sits: the lister's, or an enabled row before a disabled one, then the
// one listed last.
const originRowOf = `SELECT ` + grabsql.OriginColumns + ` FROM listed_origin_all
	WHERE url = $1 AND visit_type = $2 AND ($3::uuid IS NULL OR lister_id = $3)
	ORDER BY enabled DESC, last_seen DESC, lister_id LIMIT 1`

// inFlightOf selects the oldest visit of an origin pending or sent ($1
// url, $2 visit type).
const inFlightOf = `SELECT state, scheduled_at, sent_at FROM visit_in_flight
	WHERE url = $1 AND visit_type = $2 AND state IN ('pending', 'sent') ORDER BY scheduled_at LIMIT 1`

// statsScheduledOf selects the last_scheduled of an origin's stats ($1
// url, $2 visit type), which its visit gives back when released or lost:
// a pending origin's from before its grab's mark.
const statsScheduledOf = `SELECT s FROM (
		SELECT 0, stats_scheduled FROM listed_origin_pending WHERE url = $1 AND visit_type = $2
		UNION ALL
		SELECT 1, last_scheduled FROM listed_origin WHERE url = $1 AND visit_type = $2) AS r(pending, s)
	ORDER BY pending LIMIT 1`

// markOrigin marks an origin scheduled at $3 ($1 url, $2 visit type) as
// a grab does: its listed rows, every lister's, move to the pending table
// with that mark, and those pending already take it unless theirs is
// later (the outer UPDATE does not see the rows the CTE moves).
var markOrigin = `
	WITH moved AS (
		DELETE FROM listed_origin WHERE url = $1 AND visit_type = $2 RETURNING *
	), pend AS (
		INSERT INTO listed_origin_pending (` + pendingColumns + `)
		SELECT ` + pendingValues("GREATEST(last_scheduled, $3::timestamptz)") + ` FROM moved
	)
	UPDATE listed_origin_pending SET last_scheduled = GREATEST(last_scheduled, $3::timestamptz)
	WHERE url = $1 AND visit_type = $2`

// VisitsDispatchOrigin marks one origin scheduled and records its visit,
// in one transaction holding the visit type's grab lock.
func (s *Store) VisitsDispatchOrigin(ctx context.Context, p revisit.OriginDispatchParams) (revisit.Visit, error) {
	p, err := p.Resolve(s.opts.Clock)
	if err != nil {
		return revisit.Visit{}, err
	}
	var v revisit.Visit
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := lockVisitTypes(ctx, tx, grabLockKey, []string{p.Key.VisitType}); err != nil {
			return err
		}
		return s.withIndexLookups(ctx, tx, func() error {
			var o revisit.ListedOrigin
			err := scanOrigin(tx.QueryRow(ctx, originRowOf, p.Key.URL, p.Key.VisitType, p.ListerID), &o)
			if err == pgx.ErrNoRows {
				return revisit.OriginNotListedError(p.Key, p.ListerID)
			}
			if err != nil {
				return err
			}
			if !p.Force {
				if err := front.CheckNotInFlight(ctx, statements{s: s, q: tx, tx: tx}, p.Key); err != nil {
					return err
				}
			}
			var prev *time.Time
			if err := tx.QueryRow(ctx, statsScheduledOf, p.Key.URL, p.Key.VisitType).Scan(&prev); err != nil && err != pgx.ErrNoRows {
				return err
			}
			if _, err := tx.Exec(ctx, markOrigin, p.Key.URL, p.Key.VisitType, p.Now); err != nil {
				return err
			}
			id := revisit.NewVisitID()
			v = revisit.Visit{ID: id.String(), Origin: o, Policy: revisit.OperatorChoice, State: revisit.VisitPending,
				ScheduledAt: p.Now, Owner: p.Owner}
			_, err = tx.Exec(ctx, insertVisits, []uuid.UUID{id}, []string{o.URL}, []uuid.UUID{o.ListerID},
				[]*time.Time{prev}, o.VisitType, string(v.Policy), p.Now, p.Owner)
			return err
		})
	})
	return v, translate(wrap(err, "dispatch a visit of %s (%s)", p.Key.URL, p.Key.VisitType))
}

// VisitInFlightOf reads the oldest visit of an origin in flight
// (front.VisitStatements).
func (x statements) VisitInFlightOf(ctx context.Context, key revisit.OriginKey) (revisit.Visit, bool, error) {
	rows, _ := x.q.Query(ctx, inFlightOf, key.URL, key.VisitType)
	return one(rows, func(row pgx.CollectableRow) (revisit.Visit, error) {
		var (
			v     revisit.Visit
			state string
		)
		err := row.Scan(&state, &v.ScheduledAt, &v.SentAt)
		v.State = revisit.VisitState(state)
		return v, err
	})
}

// setEnabled sets enabled = $4 on the listed rows of an origin ($1 url,
// $2 visit type, $3 the lister's id or null), wherever they sit, and
// counts the rows there are and those it changed.
const setEnabled = `
	WITH listed AS (
		UPDATE listed_origin SET enabled = $4
		WHERE url = $1 AND visit_type = $2 AND ($3::uuid IS NULL OR lister_id = $3) AND enabled <> $4
		RETURNING 1
	), pending AS (
		UPDATE listed_origin_pending SET enabled = $4
		WHERE url = $1 AND visit_type = $2 AND ($3::uuid IS NULL OR lister_id = $3) AND enabled <> $4
		RETURNING 1
	)
	SELECT (SELECT count(*) FROM listed_origin_all WHERE url = $1 AND visit_type = $2 AND ($3::uuid IS NULL OR lister_id = $3)),
		(SELECT count(*) FROM listed) + (SELECT count(*) FROM pending)`

// ListedOriginsSetEnabled sets enabled on an origin's listed rows, holding
// the visit type's grab lock in shared mode as results do.
func (s *Store) ListedOriginsSetEnabled(ctx context.Context, key revisit.OriginKey, listerID *uuid.UUID, enabled bool) (int, error) {
	if err := revisit.ValidateOriginKey(key); err != nil {
		return 0, err
	}
	var rows, changed int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := shareGrabLocks(ctx, tx, []string{key.VisitType}); err != nil {
			return err
		}
		return s.withIndexLookups(ctx, tx, func() error {
			if err := tx.QueryRow(ctx, setEnabled, key.URL, key.VisitType, listerID, enabled).Scan(&rows, &changed); err != nil {
				return err
			}
			if rows == 0 {
				return revisit.OriginNotListedError(key, listerID)
			}
			return nil
		})
	})
	if enabled {
		err = s.notified(err, []string{key.VisitType})
	}
	return changed, translate(wrap(err, "set enabled on %s (%s)", key.URL, key.VisitType))
}
