package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/revisit-sched/revisit"
)

// OperatorActionInsert stores an action and prunes the old ones
// (front.OperatorActionStatements).
func (x statements) OperatorActionInsert(ctx context.Context, a revisit.OperatorAction, prune time.Time) (int64, error) {
	res, err := x.tx.ExecContext(ctx, `INSERT INTO operator_action (at, done_by, action, target, answer)
		VALUES (?1, ?2, ?3, ?4, ?5)`, micro(a.At), a.By, a.Action, a.Target, string(a.Answer))
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	_, err = x.tx.ExecContext(ctx, "DELETE FROM operator_action WHERE at < ?1", micro(prune))
	return id, err
}

// OperatorActionsBefore reads a page of actions, newest first
// (front.OperatorActionStatements).
func (x statements) OperatorActionsBefore(ctx context.Context, f revisit.OperatorActionFilter, before int64, n int) ([]revisit.OperatorAction, error) {
	rows, err := x.query(ctx, `SELECT id, at, done_by, action, target, answer FROM operator_action
		WHERE (?1 = 0 OR id < ?1) AND (?2 = '' OR action = ?2) AND (?3 = '' OR done_by = ?3)
		ORDER BY id DESC LIMIT ?4`, before, f.Action, f.By, n)
	return collect(rows, err, nil, func(rows *sql.Rows) (a revisit.OperatorAction, err error) {
		var answer string
		err = rows.Scan(&a.ID, timeCol{&a.At}, &a.By, &a.Action, &a.Target, &answer)
		a.Answer = json.RawMessage(answer)
		return a, err
	})
}
