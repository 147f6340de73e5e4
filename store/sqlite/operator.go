package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/front"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// The changes an operator makes to one origin from the console: a visit
// now, and enabling or disabling its listed rows.

// originRowOf selects the listed row an operator's visit of an origin
// carries (?1 url, ?2 visit type, ?3 the lister's id or null): the
// lister's, or an enabled row before a disabled one, then the one listed
// last.
const originRowOf = `SELECT ` + grabsql.OriginColumns + ` FROM listed_origin
	WHERE url = ?1 AND visit_type = ?2 AND (?3 IS NULL OR lister_id = ?3)
	ORDER BY enabled DESC, last_seen DESC, lister_id LIMIT 1`

// inFlightOf selects the oldest visit of an origin pending or sent (?1
// url, ?2 visit type).
const inFlightOf = `SELECT state, scheduled_at, sent_at FROM visit_in_flight
	WHERE url = ?1 AND visit_type = ?2 AND state IN ('pending', 'sent') ORDER BY scheduled_at LIMIT 1`

// statsScheduledOf selects the last_scheduled of an origin's stats (?1
// url, ?2 visit type), which its visit gives back when released or lost.
const statsScheduledOf = `SELECT last_scheduled FROM visit_stats WHERE url = ?1 AND visit_type = ?2`

// VisitsDispatchOrigin marks one origin scheduled, as a grab's setMarks
// does, and records its visit, in one write transaction.
func (s *Store) VisitsDispatchOrigin(ctx context.Context, p revisit.OriginDispatchParams) (revisit.Visit, error) {
	p, err := p.Resolve(s.opts.Clock)
	if err != nil {
		return revisit.Visit{}, err
	}
	var v revisit.Visit
	err = s.write(ctx, "dispatch a visit of "+p.Key.URL, func(tx *sql.Tx) error {
		origins, err := scanOrigins(tx.QueryContext(ctx, originRowOf, p.Key.URL, p.Key.VisitType, listerArg(p.ListerID)))
		if err != nil {
			return err
		}
		if len(origins) == 0 {
			return revisit.OriginNotListedError(p.Key, p.ListerID)
		}
		if !p.Force {
			if err := front.CheckNotInFlight(ctx, statements{s: s, tx: tx}, p.Key); err != nil {
				return err
			}
		}
		var prev *int64
		err = tx.QueryRowContext(ctx, statsScheduledOf, p.Key.URL, p.Key.VisitType).Scan(int64PtrCol{&prev})
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.ExecContext(ctx, setMarks, micro(p.Now), p.Key.VisitType, jsonArray([]string{p.Key.URL})); err != nil {
			return err
		}
		v = revisit.Visit{ID: revisit.NewVisitID().String(), Origin: origins[0], Policy: revisit.OperatorChoice,
			State: revisit.VisitPending, ScheduledAt: p.Now, Owner: p.Owner}
		_, err = tx.ExecContext(ctx, insertVisit, v.ID, v.Origin.URL, v.Origin.VisitType, v.Origin.ListerID.String(),
			string(v.Policy), micro(p.Now), int64Ptr(prev), p.Owner)
		return err
	})
	return v, err
}

// VisitInFlightOf reads the oldest visit of an origin in flight
// (front.VisitStatements).
func (x statements) VisitInFlightOf(ctx context.Context, key revisit.OriginKey) (revisit.Visit, bool, error) {
	var (
		v     revisit.Visit
		state string
	)
	err := x.queryRow(ctx, inFlightOf, []any{key.URL, key.VisitType}, &state, timeCol{&v.ScheduledAt}, timePtrCol{&v.SentAt})
	if errors.Is(err, sql.ErrNoRows) {
		return v, false, nil
	}
	v.State = revisit.VisitState(state)
	return v, err == nil, err
}

// ListedOriginsSetEnabled sets enabled on an origin's listed rows.
func (s *Store) ListedOriginsSetEnabled(ctx context.Context, key revisit.OriginKey, listerID *uuid.UUID, enabled bool) (int, error) {
	if err := revisit.ValidateOriginKey(key); err != nil {
		return 0, err
	}
	var changed int
	err := s.write(ctx, "set enabled on "+key.URL, func(tx *sql.Tx) error {
		s.wroteListed()
		var rows int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM listed_origin
			WHERE url = ?1 AND visit_type = ?2 AND (?3 IS NULL OR lister_id = ?3)`,
			key.URL, key.VisitType, listerArg(listerID)).Scan(&rows); err != nil {
			return err
		}
		if rows == 0 {
			return revisit.OriginNotListedError(key, listerID)
		}
		res, err := tx.ExecContext(ctx, `UPDATE listed_origin SET enabled = ?4
			WHERE url = ?1 AND visit_type = ?2 AND (?3 IS NULL OR lister_id = ?3) AND enabled <> ?4`,
			key.URL, key.VisitType, listerArg(listerID), enabled)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		changed = int(n)
		return err
	})
	if enabled {
		err = s.notified(err, []string{key.VisitType})
	}
	return changed, err
}

// listerArg is an optional lister id as a statement argument.
func listerArg(id *uuid.UUID) any {
	if id == nil {
		return nil
	}
	return id.String()
}
