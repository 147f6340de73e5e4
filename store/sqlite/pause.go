package sqlite

import (
	"context"
	"database/sql"

	"github.com/revisit-sched/revisit"
)

// PauseAdd stores a pause unless its visit type is paused, and reads the
// pause stored (front.PauseStatements).
func (x statements) PauseAdd(ctx context.Context, p revisit.Pause) (revisit.Pause, error) {
	if _, err := x.tx.ExecContext(ctx, `INSERT INTO visit_type_pause (visit_type, paused_by, paused_at)
		VALUES (?1, ?2, ?3) ON CONFLICT (visit_type) DO NOTHING`, p.VisitType, p.By, micro(p.At)); err != nil {
		return revisit.Pause{}, err
	}
	var stored revisit.Pause
	return stored, x.queryRow(ctx, `SELECT visit_type, paused_by, paused_at FROM visit_type_pause
		WHERE visit_type = ?1`, []any{p.VisitType}, &stored.VisitType, &stored.By, timeCol{&stored.At})
}

// PauseDelete deletes a pause (front.PauseStatements).
func (x statements) PauseDelete(ctx context.Context, visitType string) (bool, error) {
	n, err := x.changed(ctx, "DELETE FROM visit_type_pause WHERE visit_type = ?1", visitType)
	return n > 0, err
}

// PausesAll reads every pause (front.PauseStatements).
func (x statements) PausesAll(ctx context.Context) ([]revisit.Pause, error) {
	rows, err := x.query(ctx, "SELECT visit_type, paused_by, paused_at FROM visit_type_pause ORDER BY visit_type")
	return collect(rows, err, nil, func(rows *sql.Rows) (p revisit.Pause, err error) {
		return p, rows.Scan(&p.VisitType, &p.By, timeCol{&p.At})
	})
}
