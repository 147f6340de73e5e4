package store

import (
	"context"

	"github.com/revisit-sched/revisit"
)

// OperatorActionStore keeps the operator's actions (revisit.OperatorAction):
// who changed what, and what came of it.
type OperatorActionStore interface {
	// OperatorActionRecord stores an action done and returns it as stored,
	// with its id; in the same step it deletes the actions done more than
	// revisit.OperatorActionRetention before it. Bad input is ErrInvalid
	// naming the field (action, by, target, at, answer).
	OperatorActionRecord(ctx context.Context, a revisit.OperatorAction) (revisit.OperatorAction, error)
	// OperatorActionsList returns one page of the actions f selects,
	// newest (last recorded) first. Bad input is ErrInvalid naming the
	// API's parameter (action, by, limit, page_token).
	OperatorActionsList(ctx context.Context, f revisit.OperatorActionFilter) (revisit.OperatorActionPage, error)
}
