package sqlite

import (
	"context"
	"database/sql"

	"github.com/revisit-sched/revisit"
)

// VisitTypePauseSet pauses a visit type, keeping an earlier pause of it.
func (s *Store) VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error) {
	if err := p.Validate(); err != nil {
		return revisit.Pause{}, err
	}
	var stored revisit.Pause
	err := s.write(ctx, "pause "+p.VisitType, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO visit_type_pause (visit_type, paused_by, paused_at)
			VALUES (?1, ?2, ?3) ON CONFLICT (visit_type) DO NOTHING`, p.VisitType, p.By, micro(p.At)); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT visit_type, paused_by, paused_at FROM visit_type_pause
			WHERE visit_type = ?1`, p.VisitType).Scan(&stored.VisitType, &stored.By, timeCol{&stored.At})
	})
	return stored, s.notified(err, []string{p.VisitType})
}

// VisitTypePauseClear resumes a visit type.
func (s *Store) VisitTypePauseClear(ctx context.Context, visitType string) (bool, error) {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return false, err
	}
	var n int64
	err := s.write(ctx, "resume "+visitType, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM visit_type_pause WHERE visit_type = ?1", visitType)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, s.notified(err, []string{visitType})
}

// VisitTypePauseList returns the paused visit types.
func (s *Store) VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error) {
	pauses, err := query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.Pause, error) {
		return collect(rows, err, []revisit.Pause{}, func(rows *sql.Rows) (p revisit.Pause, err error) {
			return p, rows.Scan(&p.VisitType, &p.By, timeCol{&p.At})
		})
	}, "SELECT visit_type, paused_by, paused_at FROM visit_type_pause ORDER BY visit_type")
	return pauses, translate("list paused visit types", err)
}
