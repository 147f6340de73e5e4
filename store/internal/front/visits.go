package front

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// VisitStatements read and write the visits in flight and the leases of
// visit types; the statements that release, lose or close visits, which
// give their origins back their eligibility, stay the stores' own.
type VisitStatements interface {
	// VisitsMarkSent marks sent at at (or at their scheduled time if
	// later) the pending visits among ids, and returns how many.
	VisitsMarkSent(ctx context.Context, ids []string, at time.Time) (int, error)
	// VisitsLoseSent declares lost at now the sent visits among ids (the
	// ids of messages taken out of their queue) and gives their origins
	// their eligibility back; it returns how many, and their visit types.
	// It runs in a transaction (Write).
	VisitsLoseSent(ctx context.Context, ids []string, now time.Time) (int, []string, error)
	// VisitsWithIDs reads the visits among ids.
	VisitsWithIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Visit, error)
	// VisitCountsByType counts the visits by visit type and state, by
	// visit type.
	VisitCountsByType(ctx context.Context) ([]revisit.VisitCounts, error)
	// LeaseTake takes the lease name for owner until expires, or renews
	// it, if it is free, expired at now, owner's or takeOverFrom's (or,
	// where the engine knows it, its holder's connection is gone), and
	// returns the lease as it stands.
	LeaseTake(ctx context.Context, name, owner string, now, expires time.Time, takeOverFrom string) (revisit.Lease, error)
	// LeaseDrop deletes the lease name if owner holds it.
	LeaseDrop(ctx context.Context, name, owner string) error
	// LeaseOf reads the lease name (the zero lease if none) and keeps
	// anyone from taking it over until the transaction ends.
	LeaseOf(ctx context.Context, name string) (revisit.Lease, error)
	// VisitInFlightOf reads the oldest visit of an origin pending or
	// sent (its state, scheduled and sent times); false if none.
	VisitInFlightOf(ctx context.Context, key revisit.OriginKey) (revisit.Visit, bool, error)
}

// VisitsSent marks pending visits sent.
func (f *Front) VisitsSent(ctx context.Context, ids []string, at time.Time) (int, error) {
	return value(ctx, f.d.WriteOne, fmt.Sprintf("mark %d visits sent", len(ids)), func(x Statements) (int, error) {
		return x.VisitsMarkSent(ctx, ids, revisit.Microsecond(at))
	})
}

// VisitsGet returns the visits among ids that exist; an id that is not a
// visit's (not a UUID) matches none.
func (f *Front) VisitsGet(ctx context.Context, ids []string) ([]revisit.Visit, error) {
	return value(ctx, f.d.Read, fmt.Sprintf("get %d visits", len(ids)), func(x Statements) ([]revisit.Visit, error) {
		return x.VisitsWithIDs(ctx, batch.MessageIDs(ids))
	})
}

// VisitsCount counts visits by visit type and state.
func (f *Front) VisitsCount(ctx context.Context) ([]revisit.VisitCounts, error) {
	return value(ctx, f.d.Read, "count visits", func(x Statements) ([]revisit.VisitCounts, error) {
		return x.VisitCountsByType(ctx)
	})
}

// LeaseAcquire takes or renews a lease, or reports who holds it; a lease
// whose holder is gone (holder.Acquire) is taken over at once.
func (f *Front) LeaseAcquire(ctx context.Context, name, owner string, ttl time.Duration) (revisit.Lease, error) {
	if err := revisit.ValidateLease(name, owner, ttl); err != nil {
		return revisit.Lease{}, err
	}
	return holder.Acquire(owner, func(takeOverFrom string) (revisit.Lease, error) {
		now := f.d.Now()
		return value(ctx, f.d.WriteOne, "acquire lease "+name, func(x Statements) (revisit.Lease, error) {
			return x.LeaseTake(ctx, name, owner, now, now.Add(ttl), takeOverFrom)
		})
	})
}

// LeaseRelease frees the lease if owner holds it.
func (f *Front) LeaseRelease(ctx context.Context, name, owner string) error {
	return f.d.WriteOne(ctx, "release lease "+name, func(x Statements) error {
		return x.LeaseDrop(ctx, name, owner)
	})
}

// CheckLease fails with ErrConflict unless owner holds the lease name at
// now: a dispatch's check, in its transaction x.
func CheckLease(ctx context.Context, x Statements, name, owner string, now time.Time) error {
	l, err := x.LeaseOf(ctx, name)
	if err != nil {
		return err
	}
	if !l.HeldBy(owner, now) {
		return revisit.Errorf(revisit.CodeConflict, "lease %s is not held by %s", name, owner)
	}
	return nil
}

// CheckNotInFlight fails with the ErrConflict of VisitInFlightError, in
// transaction x, when a visit of the origin is pending or sent.
func CheckNotInFlight(ctx context.Context, x Statements, key revisit.OriginKey) error {
	v, found, err := x.VisitInFlightOf(ctx, key)
	if err != nil || !found {
		return err
	}
	since := v.ScheduledAt
	if v.SentAt != nil {
		since = *v.SentAt
	}
	return revisit.VisitInFlightError(key, v.State, since)
}
