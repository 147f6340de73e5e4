package orchestrator

import (
	"context"
	"fmt"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/leased"
	"github.com/revisit-sched/revisit/store"
)

// Stepper runs the rounds of one visit type when its caller says, for a
// caller that keeps its own time (revisit simulate): it calls Round, waits
// as the returned Step says on its clock (Config.Clock, also the store's),
// and calls Round again. The rounds are the loop's: the same weights,
// thresholds, cooldowns and waits. The Stepper holds the visit type's
// lease, renewed by the rounds; it is not safe for concurrent use.
type Stepper struct {
	l      *loop
	cancel func()
	// renew is when the lease is renewed, half its time before it lapses.
	renew time.Time
}

// Step is what a round did and how long until the next.
type Step struct {
	// Visits are the visits the round published, in their messages'
	// order; each names the policy that chose it.
	Visits []revisit.Visit
	// Wait is the longest wait before the next round.
	Wait time.Duration
	// Drain says the wait ends once HasRoom reports room, asked every
	// Poll: the queue was full, or the round filled it.
	Drain bool
	Poll  time.Duration
	// Woken, when set, says that no origin was eligible: the wait ends
	// once it receives (the store tells that origins may have become
	// eligible), though not sooner than WakeSpacing after it began.
	Woken <-chan struct{}
}

// WakeSpacing is the least wait of a Step that its Woken channel ends.
const WakeSpacing = leased.WakeSpacing

// Stepper returns a Stepper of visitType, holding its lease; ErrConflict
// when another process holds it. Close releases it.
func (o *Orchestrator) Stepper(ctx context.Context, visitType string) (*Stepper, error) {
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return nil, fmt.Errorf("visit type %q: %w", visitType, err)
	}
	s := &Stepper{l: newLoop(o, visitType), cancel: func() {}}
	if err := s.hold(ctx); err != nil {
		return nil, err
	}
	if n, ok := o.store.(store.Notifier); ok {
		s.l.eligible, s.cancel = n.SubscribeEligible(visitType)
	}
	return s, nil
}

// hold takes or renews the visit type's lease.
func (s *Stepper) hold(ctx context.Context) error {
	l := s.l
	lease, err := l.o.store.LeaseAcquire(ctx, l.lease, l.o.cfg.Owner, l.o.cfg.LeaseTTL)
	if err != nil {
		return fmt.Errorf("lease of visit type %s: %w", l.visitType, err)
	}
	if lease.Owner != l.o.cfg.Owner {
		return revisit.Errorf(revisit.CodeConflict, "visit type %s is driven by %s", l.visitType, lease.Owner)
	}
	s.renew = lease.Expires.Add(-l.o.cfg.LeaseTTL / 2)
	return nil
}

// Round runs one round: it expires the visits lost, measures the queue,
// grabs among the shares and publishes, and returns when the messages are
// confirmed. It renews the lease first when half its time has passed.
func (s *Stepper) Round(ctx context.Context) (Step, error) {
	if s.l.o.cfg.Clock.Now().After(s.renew) {
		if err := s.hold(ctx); err != nil {
			return Step{}, err
		}
	}
	l := s.l
	rest, err := l.round(ctx)
	var visits []revisit.Visit
	if l.publishing != nil {
		visits = l.publishing.visits
	}
	if err := l.settle(); err != nil {
		return Step{}, err
	}
	if err != nil {
		return Step{}, err
	}
	return Step{Visits: visits, Wait: rest.D, Drain: rest.Ready != nil,
		Poll: rest.ReadyEvery, Woken: rest.Wake}, nil
}

// HasRoom measures the queue and reports whether it has room for a
// round; the queue's length limit is the one the last round read.
func (s *Stepper) HasRoom(ctx context.Context) bool {
	return s.l.roomIn(ctx, s.l.lastQueue)
}

// Close releases the lease.
func (s *Stepper) Close(ctx context.Context) error {
	s.cancel()
	return s.l.o.store.LeaseRelease(ctx, s.l.lease, s.l.o.cfg.Owner)
}
