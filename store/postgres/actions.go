package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// OperatorActionRecord stores an action and deletes those older than the
// retention, in one statement.
func (s *Store) OperatorActionRecord(ctx context.Context, a revisit.OperatorAction) (revisit.OperatorAction, error) {
	a, err := a.Resolve()
	if err != nil {
		return revisit.OperatorAction{}, err
	}
	err = s.pool.QueryRow(ctx, `
		WITH pruned AS (DELETE FROM operator_action WHERE at < $6)
		INSERT INTO operator_action (at, done_by, action, target, answer) VALUES ($1, $2, $3, $4, $5::jsonb)
		RETURNING id`, a.At, a.By, a.Action, a.Target, string(a.Answer), a.At.Add(-revisit.OperatorActionRetention)).
		Scan(&a.ID)
	if err != nil {
		return revisit.OperatorAction{}, translate(wrap(err, "record action %s", a.Action))
	}
	return a, nil
}

// OperatorActionsList returns one page of actions, newest first, their
// answers in the canonical form they were recorded in (jsonb orders keys
// its own way).
func (s *Store) OperatorActionsList(ctx context.Context, f revisit.OperatorActionFilter) (revisit.OperatorActionPage, error) {
	before, limit, err := batch.OperatorActionsStart(f)
	if err != nil {
		return revisit.OperatorActionPage{}, err
	}
	rows, _ := s.pool.Query(ctx, `SELECT id, at, done_by, action, target, answer FROM operator_action
		WHERE ($1 = 0 OR id < $1) AND ($2 = '' OR action = $2) AND ($3 = '' OR done_by = $3)
		ORDER BY id DESC LIMIT $4`, before, f.Action, f.By, limit+1)
	actions, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.OperatorAction, error) {
		var (
			a      revisit.OperatorAction
			answer []byte
		)
		if err := row.Scan(&a.ID, &a.At, &a.By, &a.Action, &a.Target, &answer); err != nil {
			return a, err
		}
		a.At = a.At.UTC()
		a.Answer, err = revisit.CanonicalAnswer(answer)
		return a, err
	})
	if err != nil {
		return revisit.OperatorActionPage{}, translate(wrap(err, "list actions"))
	}
	return batch.OperatorActionsPage(actions, limit), nil
}
