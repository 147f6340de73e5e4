package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// OperatorActionRecord stores an action and deletes those older than the
// retention, in one write transaction.
func (s *Store) OperatorActionRecord(ctx context.Context, a revisit.OperatorAction) (revisit.OperatorAction, error) {
	a, err := a.Resolve()
	if err != nil {
		return revisit.OperatorAction{}, err
	}
	err = s.write(ctx, "record action "+a.Action, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO operator_action (at, done_by, action, target, answer)
			VALUES (?1, ?2, ?3, ?4, ?5)`, micro(a.At), a.By, a.Action, a.Target, string(a.Answer))
		if err != nil {
			return err
		}
		if a.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM operator_action WHERE at < ?1",
			micro(a.At.Add(-revisit.OperatorActionRetention)))
		return err
	})
	if err != nil {
		return revisit.OperatorAction{}, err
	}
	return a, nil
}

// OperatorActionsList returns one page of actions, newest first.
func (s *Store) OperatorActionsList(ctx context.Context, f revisit.OperatorActionFilter) (revisit.OperatorActionPage, error) {
	before, limit, err := batch.OperatorActionsStart(f)
	if err != nil {
		return revisit.OperatorActionPage{}, err
	}
	actions, err := query(ctx, s, func(rows *sql.Rows, err error) ([]revisit.OperatorAction, error) {
		return collect(rows, err, nil, func(rows *sql.Rows) (a revisit.OperatorAction, err error) {
			var answer string
			err = rows.Scan(&a.ID, timeCol{&a.At}, &a.By, &a.Action, &a.Target, &answer)
			a.Answer = json.RawMessage(answer)
			return a, err
		})
	}, `SELECT id, at, done_by, action, target, answer FROM operator_action
		WHERE (?1 = 0 OR id < ?1) AND (?2 = '' OR action = ?2) AND (?3 = '' OR done_by = ?3)
		ORDER BY id DESC LIMIT ?4`, before, f.Action, f.By, limit+1)
	if err != nil {
		return revisit.OperatorActionPage{}, translate("list actions", err)
	}
	return batch.OperatorActionsPage(actions, limit), nil
}
