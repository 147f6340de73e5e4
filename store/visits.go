package store

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
)

// VisitStore keeps the in-flight records of dispatched visits (semantics.md
// §6) and the leases that give each visit type one orchestrator at a time.
//
// A visit goes pending → sent → (closed by its result | lost). Releasing a
// visit (its message failed, or a crash left it pending) and losing it both
// give its origin back its previous last_scheduled, unless the origin was
// scheduled again since, so the origin is eligible again at once.
type VisitStore interface {
	// VisitsDispatch grabs and marks origins like GrabNextVisits and, in
	// the same transaction, records one pending visit per origin with a
	// new message id. With p.Lease set it first checks that p.Owner holds
	// that lease, unexpired at the grab's now; ErrConflict otherwise.
	VisitsDispatch(ctx context.Context, p revisit.DispatchParams) ([]revisit.Visit, error)
	// VisitsSent marks pending visits sent at `at` (their messages were
	// confirmed), or at their scheduled time if `at` is earlier, and returns
	// how many it changed; unknown ids are ignored.
	VisitsSent(ctx context.Context, ids []string, at time.Time) (int, error)
	// VisitsRelease forgets pending visits whose messages were not
	// delivered and makes their origins eligible again; it returns how many
	// it released. With maybePublished (a message sent but not confirmed
	// may be in the queue), they are kept as lost, like VisitsRecover's.
	VisitsRelease(ctx context.Context, ids []string, maybePublished bool) (int, error)
	// VisitsRecover releases every pending visit of a visit type: what a
	// crash left between grab and the record of its publication. Call it
	// while holding the visit type's lease, before the first round. With
	// maybePublished (their messages may be in the broker's queue: a crash
	// between a RabbitMQ publish and VisitsSent), the visits are kept as
	// lost, sent at their scheduled time, instead of deleted: a result for
	// them still closes them and counts, and VisitsForgetLost forgets the
	// others. It returns how many it released.
	VisitsRecover(ctx context.Context, visitType string, maybePublished bool) (int, error)
	// VisitsDispatchOrigin marks one origin scheduled at p.Now, whatever
	// the policies and cooldowns say, and records one pending visit of it
	// (policy revisit.OperatorChoice) carrying one of its listed rows:
	// p.ListerID's, or else an enabled row before a disabled one, then the
	// row listed last. No such row is ErrNotFound; a visit of the origin
	// pending or sent is ErrConflict saying since when, unless p.Force.
	// Grabs of the visit type wait for it, as for another grab. Released
	// or lost, the visit gives the origin back the last_scheduled of its
	// stats, as a dispatched visit does: the mark of a grab, or of a visit
	// in flight before it (forced), is not restored.
	VisitsDispatchOrigin(ctx context.Context, p revisit.OriginDispatchParams) (revisit.Visit, error)
	// VisitsExpire marks lost the sent visits of a visit type sent before
	// `before`, makes their origins eligible again, and returns how many;
	// when it marked some, store.Notifier's subscribers hear of it.
	VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error)
	// VisitsGet returns the visits among ids that exist, in any state.
	VisitsGet(ctx context.Context, ids []string) ([]revisit.Visit, error)
	// VisitsOfOrigin returns the visits of an origin, in any state, in
	// the order they were scheduled.
	VisitsOfOrigin(ctx context.Context, key revisit.OriginKey) ([]revisit.Visit, error)
	// VisitsForgetLost deletes the lost visits of a visit type sent before
	// `before` (a result for them then counts as one of an unknown visit)
	// and returns how many: lost records would otherwise pile up.
	VisitsForgetLost(ctx context.Context, visitType string, before time.Time) (int, error)
	// VisitsClose removes the records of visits whose result arrived, in
	// any state, and returns those that existed.
	VisitsClose(ctx context.Context, ids []string) ([]revisit.Visit, error)
	// VisitsCloseByOrigin closes, as VisitsClose does, the visits of
	// results that do not name them: of each result's origin, the visits
	// sent or lost (not pending: their message may not be published yet)
	// scheduled at or before the result's date. It takes at most
	// revisit.MaxOriginResults results (an origin given twice counts at
	// its latest date), in one transaction, and returns the visits closed.
	VisitsCloseByOrigin(ctx context.Context, results []revisit.OriginResult) ([]revisit.Visit, error)
	// VisitsCount counts visits by visit type and state, by visit type.
	VisitsCount(ctx context.Context) ([]revisit.VisitCounts, error)

	// LeaseAcquire takes the named lease for owner until now + ttl if it is
	// free, expired or already owner's (a renewal), and returns the lease
	// as it stands afterwards: held by owner, or by someone else.
	LeaseAcquire(ctx context.Context, name, owner string, ttl time.Duration) (revisit.Lease, error)
	// LeaseRelease frees the lease if owner holds it.
	LeaseRelease(ctx context.Context, name, owner string) error
}
