package front

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// OperatorActionStatements read and write the operator's actions.
type OperatorActionStatements interface {
	// OperatorActionInsert stores a (resolved), deletes the actions done
	// before prune, and returns a's id.
	OperatorActionInsert(ctx context.Context, a revisit.OperatorAction, prune time.Time) (int64, error)
	// OperatorActionsBefore reads, newest first, up to n of the actions f
	// selects (its action and by, when given) whose id is below before
	// (0: any).
	OperatorActionsBefore(ctx context.Context, f revisit.OperatorActionFilter, before int64, n int) ([]revisit.OperatorAction, error)
}

// OperatorActionRecord stores an action and deletes those older than the
// retention, in one step.
func (f *Front) OperatorActionRecord(ctx context.Context, a revisit.OperatorAction) (revisit.OperatorAction, error) {
	a, err := a.Resolve()
	if err != nil {
		return revisit.OperatorAction{}, err
	}
	a.ID, err = value(ctx, f.d.WriteOne, "record action "+a.Action, func(x Statements) (int64, error) {
		return x.OperatorActionInsert(ctx, a, a.At.Add(-revisit.OperatorActionRetention))
	})
	if err != nil {
		return revisit.OperatorAction{}, err
	}
	return a, nil
}

// OperatorActionsList returns one page of actions, newest first.
func (f *Front) OperatorActionsList(ctx context.Context, filter revisit.OperatorActionFilter) (revisit.OperatorActionPage, error) {
	before, limit, err := batch.OperatorActionsStart(filter)
	if err != nil {
		return revisit.OperatorActionPage{}, err
	}
	actions, err := value(ctx, f.d.Read, "list actions", func(x Statements) ([]revisit.OperatorAction, error) {
		return x.OperatorActionsBefore(ctx, filter, before, limit+1)
	})
	if err != nil {
		return revisit.OperatorActionPage{}, err
	}
	return batch.OperatorActionsPage(actions, limit), nil
}
