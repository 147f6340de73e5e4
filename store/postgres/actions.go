package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

// OperatorActionInsert stores an action and prunes the old ones in one
// statement (front.OperatorActionStatements).
func (x statements) OperatorActionInsert(ctx context.Context, a revisit.OperatorAction, prune time.Time) (int64, error) {
	var id int64
	err := x.q.QueryRow(ctx, `
		WITH pruned AS (DELETE FROM operator_action WHERE at < $6)
		INSERT INTO operator_action (at, done_by, action, target, answer) VALUES ($1, $2, $3, $4, $5::jsonb)
		RETURNING id`, a.At, a.By, a.Action, a.Target, string(a.Answer), prune).Scan(&id)
	return id, err
}

// OperatorActionsBefore reads a page of actions, newest first, their
// answers in the canonical form they were recorded in (jsonb orders keys
// its own way) (front.OperatorActionStatements).
func (x statements) OperatorActionsBefore(ctx context.Context, f revisit.OperatorActionFilter, before int64, n int) ([]revisit.OperatorAction, error) {
	rows, _ := x.q.Query(ctx, `SELECT id, at, done_by, action, target, answer FROM operator_action
		WHERE ($1 = 0 OR id < $1) AND ($2 = '' OR action = $2) AND ($3 = '' OR done_by = $3)
		ORDER BY id DESC LIMIT $4`, before, f.Action, f.By, n)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.OperatorAction, error) {
		var (
			a      revisit.OperatorAction
			answer []byte
		)
		if err := row.Scan(&a.ID, &a.At, &a.By, &a.Action, &a.Target, &answer); err != nil {
			return a, err
		}
		a.At = a.At.UTC()
		var err error
		a.Answer, err = revisit.CanonicalAnswer(answer)
		return a, err
	})
}
