package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// VisitTypePauseSet pauses a visit type, keeping an earlier pause of it.
func (s *Store) VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error) {
	if err := p.Validate(); err != nil {
		return revisit.Pause{}, err
	}
	var stored revisit.Pause
	err := s.pool.QueryRow(ctx, `
		WITH added AS (
			INSERT INTO visit_type_pause (visit_type, paused_by, paused_at) VALUES ($1, $2, $3)
			ON CONFLICT (visit_type) DO NOTHING
			RETURNING visit_type, paused_by, paused_at)
		SELECT * FROM added
		UNION ALL
		SELECT visit_type, paused_by, paused_at FROM visit_type_pause WHERE visit_type = $1`,
		p.VisitType, p.By, revisit.Microsecond(p.At)).Scan(&stored.VisitType, &stored.By, &stored.At)
	stored.At = stored.At.UTC()
	return stored, translate(wrap(s.notified(err, []string{p.VisitType}), "pause %s", p.VisitType))
}

// VisitTypePauseClear resumes a visit type.
func (s *Store) VisitTypePauseClear(ctx context.Context, visitType string) (bool, error) {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return false, err
	}
	tag, err := s.pool.Exec(ctx, "DELETE FROM visit_type_pause WHERE visit_type = $1", visitType)
	return tag.RowsAffected() > 0, translate(wrap(s.notified(err, []string{visitType}), "resume %s", visitType))
}

// VisitTypePauseList returns the paused visit types.
func (s *Store) VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error) {
	rows, _ := s.pool.Query(ctx, "SELECT visit_type, paused_by, paused_at FROM visit_type_pause ORDER BY visit_type")
	pauses, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.Pause, error) {
		var p revisit.Pause
		err := row.Scan(&p.VisitType, &p.By, &p.At)
		p.At = p.At.UTC()
		return p, err
	})
	if pauses == nil {
		pauses = []revisit.Pause{}
	}
	return pauses, translate(wrap(err, "list paused visit types"))
}
