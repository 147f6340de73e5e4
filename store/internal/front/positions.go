package front

import (
	"context"

	"github.com/revisit-sched/revisit"
)

// QueuePositionStatements read and write the queue positions of visit
// types (the virtual clock of origins_without_last_update).
type QueuePositionStatements interface {
	// QueuePositionOf reads the queue position of visitType; false if it
	// has none.
	QueuePositionOf(ctx context.Context, visitType string) (int64, bool, error)
	// QueuePositionWrite sets the queue position of visitType.
	QueuePositionWrite(ctx context.Context, visitType string, position int64) error
	// QueuePositionsAll reads every stored queue position, by visit type.
	QueuePositionsAll(ctx context.Context) (map[string]int64, error)
}

// QueuePositionGet returns the visit type's queue position, 0 if unset.
func (f *Front) QueuePositionGet(ctx context.Context, visitType string) (int64, error) {
	return value(ctx, f.d.Read, "get queue position of "+visitType, func(x Statements) (int64, error) {
		pos, _, err := x.QueuePositionOf(ctx, visitType)
		return pos, err
	})
}

// QueuePositionSet sets the visit type's queue position.
func (f *Front) QueuePositionSet(ctx context.Context, visitType string, position int64) error {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return err
	}
	return f.d.WriteOne(ctx, "set queue position of "+visitType, func(x Statements) error {
		return x.QueuePositionWrite(ctx, visitType, position)
	})
}

// QueuePositions returns the queue position of every visit type that has
// one (an empty map when none).
func (f *Front) QueuePositions(ctx context.Context) (map[string]int64, error) {
	positions, err := value(ctx, f.d.Read, "get queue positions", func(x Statements) (map[string]int64, error) {
		return x.QueuePositionsAll(ctx)
	})
	if err != nil {
		return nil, err
	}
	return positions, nil
}
