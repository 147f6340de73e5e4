// Package leased runs a loop of rounds that works only while this process
// holds a lease in the store: the orchestrator's loop of a visit type and
// the runner's loop of a task type. The loop takes the lease, renews it
// while a round runs and while it rests, has the work recover what a
// previous holder or a failed round left, waits with backoff and jitter
// while a dependency is unavailable, and hands the lease over on stop.
package leased

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// CleanupTimeout bounds the store calls that record or undo a round after
// its context ended.
const CleanupTimeout = 10 * time.Second

// CleanupContext is ctx, or a fresh context bounded by CleanupTimeout when
// ctx is over (the grace period ended mid-round): what the round did must
// still be recorded or undone.
func CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
}

// LostReason is the wait reason of a round that found the lease taken by
// another process (Lost).
const LostReason = "lease_lost"

// Lost returns err, met by a round that found the lease held by another
// process (a fenced store call), as a wait: the loop stops holding the
// lease and asks for it again.
func Lost(err error) error { return &supervise.WaitError{Reason: LostReason, Err: err} }

// Leases is what the loop needs of a store.
type Leases interface {
	// LeaseAcquire takes or renews a lease for owner for ttl unless
	// another holder keeps it, and returns who holds it.
	LeaseAcquire(ctx context.Context, name, owner string, ttl time.Duration) (revisit.Lease, error)
	// LeaseRelease gives the lease up, if owner holds it.
	LeaseRelease(ctx context.Context, name, owner string) error
}

// Work is what the loop does while it holds the lease.
type Work interface {
	// Recover undoes what a previous holder, or a failed round of this
	// process (MarkDirty), left; it runs before the next round.
	Recover(ctx context.Context) error
	// Round runs one round and says how to rest before the next.
	Round(ctx context.Context) (Rest, error)
}

// Settler is Work whose rounds leave work running after they return (the
// orchestrator publishes a batch while it grabs the next): Settle waits for
// it before the loop does anything else than a round (recovering, waiting
// for the lease, handing it over).
type Settler interface {
	Settle()
}

// Config configures a Loop.
type Config struct {
	// Leases holds the lease.
	Leases Leases
	// Name is the lease's name (orchestrator:<visit type>, runner:<task
	// type>); Owner names this process in it.
	Name, Owner string
	// TTL is how long the lease lasts unless renewed; it is renewed every
	// third of it, and a loop standing by asks for it as often.
	TTL time.Duration
	// MaxBackoff caps the wait, doubling from one second, while a
	// dependency is unavailable.
	MaxBackoff time.Duration
	// Jitter bounds the random wait added to that wait.
	Jitter time.Duration
	// Logger receives the loop's troubles.
	Logger *slog.Logger
	// Classify sorts errors into waits (*supervise.WaitError) and
	// failures; nil is supervise.Classify.
	Classify func(error) error
	// Waited, when set, is called with the reason of every wait for an
	// unavailable dependency.
	Waited func(reason string)
	// Acquired, when set, is called after every attempt that got an
	// answer: whether this process holds the lease now and held it before,
	// and who holds it.
	Acquired func(held, was bool, holder string)
	// Resigned, when set, is called once the lease is handed over on stop.
	Resigned func()
}

// Loop runs Work while it holds a lease.
type Loop struct {
	cfg  Config
	work Work
	// owning says this process holds the lease; holder names who does.
	owning bool
	holder string
	// dirty: the lease was just taken, or a round may have left what
	// Recover undoes; Recover runs before the next round.
	dirty bool
	// renewed is when the lease was last taken or renewed.
	renewed time.Time
	// renewals follows the renewals that fail in a row; retryAt is when
	// the next is tried.
	renewals supervise.Outage
	retryAt  time.Time
	// backoff spaces the rounds skipped for an unavailable dependency.
	backoff supervise.Backoff
	// status is what the loop does, for Status.
	status statusBox
}

// New returns a loop running work under the lease cfg names.
func New(cfg Config, work Work) *Loop {
	if cfg.Classify == nil {
		cfg.Classify = supervise.Classify
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Loop{cfg: cfg, work: work, backoff: supervise.Backoff{Max: cfg.MaxBackoff},
		renewals: supervise.Outage{Min: renewRetryMin, Max: RenewRetryMax, Jitter: renewRetryJitter}}
}

// MarkDirty has Recover run before the next round. Call it from the loop's
// goroutine (a round, Settle).
func (l *Loop) MarkDirty() { l.dirty = true }

// Run is a supervise.Loop: it runs rounds while it holds the lease, until
// stop is done (it returns nil) or a round fails (it returns the error).
// Rounds run under hard, which ends only when the grace period after stop
// has passed, so that a round in flight at stop finishes. healthy is
// called after every round that went well.
func (l *Loop) Run(stop, hard context.Context, healthy func()) error {
	l.status.set(Status{Activity: Starting})
	defer l.status.set(Status{Activity: Stopped})
	defer l.resign()
	defer l.settle()
	for stop.Err() == nil {
		if !l.owning || l.dirty {
			l.settle()
		}
		if !l.owning {
			if err := l.acquire(hard); err != nil {
				werr, ok := l.wait(err)
				if !ok {
					return err
				}
				l.pause(stop, Rest{D: l.waited(werr)})
				continue
			}
			if !l.owning {
				l.status.set(Status{Activity: StandingBy, Holder: l.holder, Until: time.Now().Add(l.cfg.TTL / 3)})
				l.pause(stop, Rest{D: l.cfg.TTL / 3})
				continue
			}
		}
		if l.dirty {
			stopRenewing := l.renewDuring(hard)
			err := l.work.Recover(hard)
			stopRenewing()
			if err != nil {
				werr, ok := l.wait(err)
				if !ok {
					return err
				}
				l.pause(stop, Rest{D: l.waited(werr)})
				continue
			}
			l.dirty = false
		}
		l.status.set(Status{Activity: Working})
		stopRenewing := l.renewDuring(hard)
		rest, err := l.work.Round(hard)
		stopRenewing()
		if err != nil {
			werr, ok := l.wait(err)
			if !ok {
				return err
			}
			if werr.Reason == LostReason {
				l.owning = false
			}
			rest = Rest{D: l.waited(werr)}
		} else {
			l.backoff.Reset()
			healthy()
			l.rests(rest)
		}
		l.pause(stop, rest)
	}
	return nil
}

// wait classifies err and returns it as a wait, or false when it fails the
// loop.
func (l *Loop) wait(err error) (*supervise.WaitError, bool) {
	var werr *supervise.WaitError
	if errors.As(l.cfg.Classify(err), &werr) {
		return werr, true
	}
	return nil, false
}

// waited records a skipped round and returns how long to wait: doubling
// from one second up to MaxBackoff, plus jitter.
func (l *Loop) waited(werr *supervise.WaitError) time.Duration {
	if l.cfg.Waited != nil {
		l.cfg.Waited(werr.Reason)
	}
	l.cfg.Logger.Warn("waiting: dependency unavailable", "reason", werr.Reason, "err", werr.Err)
	d := l.backoff.Next() + supervise.Jitter(l.cfg.Jitter)
	l.status.set(Status{Activity: Waiting, Reason: werr.Reason, Err: werr.Err.Error(), Until: time.Now().Add(d)})
	return d
}

func (l *Loop) settle() {
	if s, ok := l.work.(Settler); ok {
		s.Settle()
	}
}

// acquire takes or renews the lease. On taking it, the loop recovers what
// a crashed or stopped holder left before its first round.
func (l *Loop) acquire(ctx context.Context) error {
	lease, err := l.renew(ctx)
	if err != nil {
		return fmt.Errorf("lease %s: %w", l.cfg.Name, err)
	}
	was := l.owning
	l.owning, l.holder = lease.Owner == l.cfg.Owner, lease.Owner
	if l.owning && !was {
		l.dirty = true
	}
	if l.cfg.Acquired != nil {
		l.cfg.Acquired(l.owning, was, lease.Owner)
	}
	return nil
}

// renew takes or renews the lease for one TTL and returns who holds it.
// The attempt is bounded by a third of the TTL: a store that does not
// answer fails it as one that refuses.
func (l *Loop) renew(ctx context.Context) (revisit.Lease, error) {
	asked := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.cfg.TTL/3)
	defer cancel()
	lease, err := l.cfg.Leases.LeaseAcquire(ctx, l.cfg.Name, l.cfg.Owner, l.cfg.TTL)
	if err == nil && lease.Owner == l.cfg.Owner {
		l.renewed = asked
	}
	return lease, err
}

// renewDue is when the lease is to be renewed: a third of its TTL after
// it last was, or soon after a renewal that failed.
func (l *Loop) renewDue() time.Time {
	if l.renewals.Going() {
		return l.retryAt
	}
	return l.renewed.Add(l.cfg.TTL / 3)
}

// RenewRetryMax bounds the wait before a failed renewal of the lease is
// tried again: the loop renews it within that (and its jitter) of the
// store's return.
const RenewRetryMax = 750 * time.Millisecond

// renewRetryMin and renewRetryJitter are the first wait before a failed
// renewal is tried again, doubling up to RenewRetryMax, and the random
// wait added to each.
const (
	renewRetryMin    = 100 * time.Millisecond
	renewRetryJitter = 250 * time.Millisecond
)

// renewLease renews the lease through renew; it logs the first failure of
// a run and the renewal that ends it, with the count of failed attempts,
// and spaces the failed attempts (renewals).
func (l *Loop) renewLease(ctx context.Context, renew func(context.Context) error) {
	err := renew(ctx)
	now := time.Now()
	switch {
	case err == nil:
		if failures, lasted := l.renewals.Ended(now); failures > 0 {
			l.cfg.Logger.Info("lease renewed again", "failed_attempts", failures, "after", lasted.Round(time.Millisecond))
		}
	case ctx.Err() != nil: // stopping
	default:
		wait, began := l.renewals.Failed(now)
		if began {
			l.cfg.Logger.Warn("cannot renew the lease; trying again until the store answers", "err", err)
		}
		l.retryAt = now.Add(wait)
	}
}

// renewDuring renews the lease when due (renewDue) until the function it
// returns is called, while a round or a recovery runs. Either can outlast
// the TTL (a slow store, a database that stopped answering, a broker that
// holds its confirms); a lease that expired mid-round would let a standby
// process take over and undo what the round is doing. The loop itself
// learns of a lease lost at its next renewal in a rest, or from a fenced
// store call of its round (Lost).
func (l *Loop) renewDuring(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			t := time.NewTimer(time.Until(l.renewDue()))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			l.renewLease(ctx, func(ctx context.Context) error {
				_, err := l.renew(ctx)
				return err
			})
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// resign hands the lease over: it is released so that another process
// takes over at once.
func (l *Loop) resign() {
	if !l.owning {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	if err := l.cfg.Leases.LeaseRelease(ctx, l.cfg.Name, l.cfg.Owner); err != nil {
		l.cfg.Logger.Warn("cannot release the lease; it expires by itself", "err", err)
	}
	l.owning = false
	if l.cfg.Resigned != nil {
		l.cfg.Resigned()
	}
}
