package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// PauseAdd stores a pause unless its visit type is paused, and returns the
// pause stored, in one statement (front.PauseStatements).
func (x statements) PauseAdd(ctx context.Context, p revisit.Pause) (revisit.Pause, error) {
	var stored revisit.Pause
	err := x.q.QueryRow(ctx, `
		WITH added AS (
			INSERT INTO visit_type_pause (visit_type, paused_by, paused_at) VALUES ($1, $2, $3)
			ON CONFLICT (visit_type) DO NOTHING
			RETURNING visit_type, paused_by, paused_at)
		SELECT * FROM added
		UNION ALL
		SELECT visit_type, paused_by, paused_at FROM visit_type_pause WHERE visit_type = $1`,
		p.VisitType, p.By, p.At).Scan(&stored.VisitType, &stored.By, &stored.At)
	stored.At = stored.At.UTC()
	return stored, err
}

// PauseDelete deletes a pause (front.PauseStatements).
func (x statements) PauseDelete(ctx context.Context, visitType string) (bool, error) {
	tag, err := x.q.Exec(ctx, "DELETE FROM visit_type_pause WHERE visit_type = $1", visitType)
	return tag.RowsAffected() > 0, err
}

// PausesAll reads every pause (front.PauseStatements).
func (x statements) PausesAll(ctx context.Context) ([]revisit.Pause, error) {
	rows, _ := x.q.Query(ctx, "SELECT visit_type, paused_by, paused_at FROM visit_type_pause ORDER BY visit_type")
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.Pause, error) {
		var p revisit.Pause
		err := row.Scan(&p.VisitType, &p.By, &p.At)
		p.At = p.At.UTC()
		return p, err
	})
}
