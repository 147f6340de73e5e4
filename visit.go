package revisit

import (
	"time"

	"github.com/google/uuid"
)

// VisitState is where a dispatched visit stands (semantics.md §6).
type VisitState string

// The states of a dispatched visit.
const (
	// VisitPending: grabbed and marked scheduled, its message not yet
	// confirmed by the broker. A crash leaves visits pending; recovery
	// releases them, so their origins are offered again.
	VisitPending VisitState = "pending"
	// VisitSent: the broker confirmed the message; the visit waits for its
	// result.
	VisitSent VisitState = "sent"
	// VisitLost: no result came within the visit type's timeout; the
	// origin was offered again. A late result still counts.
	VisitLost VisitState = "lost"
)

// Visit is one origin visit revisit dispatched to workers and has not yet
// heard the end of: the in-flight record of semantics.md §6.
type Visit struct {
	// ID is the message id (the Celery task id) that results refer to.
	ID string
	// Origin is the listed origin visited. Visits returned by dispatch carry
	// the whole row; others carry URL, VisitType and ListerID.
	Origin ListedOrigin
	// Policy is the policy that chose the origin.
	Policy Policy
	// State is where the visit stands.
	State VisitState
	// ScheduledAt is when the origin was grabbed and marked scheduled.
	ScheduledAt time.Time
	// SentAt is when the broker confirmed the message; nil while pending.
	SentAt *time.Time
	// Owner names the process that dispatched the visit.
	Owner string
}

// Key returns the visit's (url, visit_type).
func (v Visit) Key() OriginKey { return OriginKey{URL: v.Origin.URL, VisitType: v.Origin.VisitType} }

// OriginResult is the end of a visit of an origin reported without the
// visit's id (a visit status that did not come in a worker's event): it
// closes the origin's visits in flight scheduled at or before Date, since
// a result dated before a visit was scheduled is another visit's.
type OriginResult struct {
	Key OriginKey
	// Date is when the visit reached its final status.
	Date time.Time
}

// MaxOriginResults bounds the results of one VisitsCloseByOrigin call:
// the statuses of one batch.
const MaxOriginResults = 10_000

// NewVisitID returns the id of a new visit, which is also its message id:
// a time-ordered UUID (version 7), so that the stores append the ids of a
// round at the end of their indexes instead of at random places.
// It panics only if the system's random source fails, as uuid.New does.
func NewVisitID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// DispatchParams are the inputs of a store's VisitsDispatch.
type DispatchParams struct {
	// Grab chooses and marks the origins; DryRun is refused.
	Grab GrabParams
	// Owner names the dispatching process; it is recorded on each visit.
	Owner string
	// Lease, when set, fences the dispatch: it happens only while Owner
	// holds this lease, unexpired; otherwise the store returns ErrConflict
	// and changes nothing.
	Lease string
}

// Validate checks the parameters and returns the grab's cooldowns.
func (p DispatchParams) Validate() (Cooldowns, error) {
	if p.Grab.DryRun {
		return Cooldowns{}, Invalidf("dry_run", "a dispatch cannot be a dry run")
	}
	if p.Owner == "" {
		return Cooldowns{}, Invalidf("owner", "must not be empty")
	}
	return p.Grab.Validate()
}

// VisitCounts counts the dispatched visits of one visit type by state.
type VisitCounts struct {
	VisitType string
	Pending   int64
	Sent      int64
	Lost      int64
}

// Lease is a named, expiring right held by one process: the orchestrator
// drives a visit type only while it holds the visit type's lease.
type Lease struct {
	Name  string
	Owner string
	// Expires is when the lease lapses unless its owner renews it.
	Expires time.Time
}

// HeldBy reports whether owner holds the lease at now.
func (l Lease) HeldBy(owner string, now time.Time) bool {
	return l.Owner == owner && now.Before(l.Expires)
}

// ValidateLease checks the arguments of a lease acquisition.
func ValidateLease(name, owner string, ttl time.Duration) error {
	switch {
	case name == "":
		return Invalidf("name", "lease name must not be empty")
	case owner == "":
		return Invalidf("owner", "lease owner must not be empty")
	case ttl <= 0:
		return Invalidf("ttl", "lease duration must be positive, not %s", ttl)
	}
	return nil
}
