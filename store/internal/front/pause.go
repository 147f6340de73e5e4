package front

import (
	"context"

	"github.com/revisit-sched/revisit"
)

// PauseStatements read and write the pauses of visit types.
type PauseStatements interface {
	// PauseAdd stores p unless its visit type is paused already, and
	// returns the pause stored.
	PauseAdd(ctx context.Context, p revisit.Pause) (revisit.Pause, error)
	// PauseDelete deletes the pause of visitType and reports whether
	// there was one.
	PauseDelete(ctx context.Context, visitType string) (bool, error)
	// PausesAll reads every pause, by visit type.
	PausesAll(ctx context.Context) ([]revisit.Pause, error)
}

// VisitTypePauseSet pauses a visit type, keeping an earlier pause of it.
func (f *Front) VisitTypePauseSet(ctx context.Context, p revisit.Pause) (revisit.Pause, error) {
	if err := p.Validate(); err != nil {
		return revisit.Pause{}, err
	}
	p.At = revisit.Microsecond(p.At)
	stored, err := value(ctx, f.d.WriteOne, "pause "+p.VisitType, func(x Statements) (revisit.Pause, error) {
		return x.PauseAdd(ctx, p)
	})
	return stored, f.notified(err, []string{p.VisitType})
}

// VisitTypePauseClear resumes a visit type.
func (f *Front) VisitTypePauseClear(ctx context.Context, visitType string) (bool, error) {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return false, err
	}
	paused, err := value(ctx, f.d.WriteOne, "resume "+visitType, func(x Statements) (bool, error) {
		return x.PauseDelete(ctx, visitType)
	})
	return paused, f.notified(err, []string{visitType})
}

// VisitTypePauseList returns the paused visit types.
func (f *Front) VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error) {
	pauses, err := value(ctx, f.d.Read, "list paused visit types", func(x Statements) ([]revisit.Pause, error) {
		return x.PausesAll(ctx)
	})
	return nonNil(pauses), err
}
