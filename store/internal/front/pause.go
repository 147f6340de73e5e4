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
	var stored revisit.Pause
	err := f.d.WriteOne(ctx, "pause "+p.VisitType, func(x Statements) error {
		var err error
		stored, err = x.PauseAdd(ctx, p)
		return err
	})
	return stored, f.notified(err, []string{p.VisitType})
}

// VisitTypePauseClear resumes a visit type.
func (f *Front) VisitTypePauseClear(ctx context.Context, visitType string) (bool, error) {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return false, err
	}
	var paused bool
	err := f.d.WriteOne(ctx, "resume "+visitType, func(x Statements) error {
		var err error
		paused, err = x.PauseDelete(ctx, visitType)
		return err
	})
	return paused, f.notified(err, []string{visitType})
}

// VisitTypePauseList returns the paused visit types.
func (f *Front) VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error) {
	pauses := []revisit.Pause{}
	err := f.d.Read(ctx, "list paused visit types", func(x Statements) error {
		got, err := x.PausesAll(ctx)
		pauses = append(pauses, got...)
		return err
	})
	return pauses, err
}
