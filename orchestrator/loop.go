package orchestrator

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/leased"
	"github.com/revisit-sched/revisit/internal/service/supervise"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
	"github.com/revisit-sched/revisit/store"
)

// loop drives one visit type: it holds the visit type's lease (through
// leased.Loop) and runs rounds (semantics.md §4) while it does.
type loop struct {
	o         *Orchestrator
	visitType string
	// lease names the visit type's lease; leased holds it and runs the
	// rounds.
	lease  string
	leased *leased.Loop
	log    *slog.Logger
	// standbyLogged avoids repeating that another process drives the type.
	standbyLogged string
	// msgs builds the visits' messages, keeping the listers it read.
	msgs *visitsend.Messages
	// publishing is the previous round's batch, published while this
	// round grabs; nil when none is.
	publishing *publication
	// eligible receives when the store says origins of the visit type may
	// have become eligible; nil when the store does not tell.
	eligible <-chan struct{}
	// lastQueue is the visit type's queue as the last round read it.
	lastQueue queueOf
	// pause is the visit type's pause as the last round read it; nil
	// when it was not paused.
	pause atomic.Pointer[revisit.Pause]
	// expiredAt is when a round last looked for lost visits (expire).
	expiredAt time.Time
}

// publication is a round's batch being published in the background, so
// that the broker's work overlaps the store's work of the next round.
type publication struct {
	done   chan struct{}
	count  int // messages: not in the queue's depth until confirmed
	visits []revisit.Visit
	start  time.Time
	attrs  []any // the round's log fields

	// Set before done closes.
	confirmed, failed int
	err               error
}

// over reports whether the publication has ended.
func (p *publication) over() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func newLoop(o *Orchestrator, visitType string) *loop {
	l := &loop{o: o, visitType: visitType, lease: "orchestrator:" + visitType,
		log: o.log.With("visit_type", visitType), msgs: visitsend.NewMessages(o.store, o.cfg.Origin)}
	l.leased = leased.New(leased.Config{Leases: o.store, Name: l.lease, Owner: o.cfg.Owner,
		TTL: o.cfg.LeaseTTL, MaxBackoff: o.cfg.QueueFullBackoff, Jitter: o.cfg.RoundJitter, Logger: l.log,
		Classify: classify,
		Waited:   func(reason string) { o.metrics.waits.WithLabelValues(visitType, reason).Inc() },
		Acquired: l.acquired,
		Resigned: func() { o.metrics.owner.WithLabelValues(visitType).Set(0) }}, l)
	return l
}

// classify sorts a round's error: a dependency unavailable, or a fenced
// dispatch that found the lease gone, is a *supervise.WaitError (the loop
// waits and tries again); anything else fails the loop.
func classify(err error) error {
	if revisit.Code(err) == revisit.CodeConflict {
		return leased.Lost(err)
	}
	return supervise.Classify(err)
}

// run drives the visit type until stop is done (it returns nil) or a round
// fails (it returns the error); see leased.Loop.Run.
func (l *loop) run(stop, hard context.Context, healthy func()) error {
	if n, ok := l.o.store.(store.Notifier); ok {
		var cancel func()
		l.eligible, cancel = n.SubscribeEligible(l.visitType)
		defer cancel()
	}
	return l.leased.Run(stop, hard, healthy)
}

func (l *loop) jitter() time.Duration { return l.o.jitter() }

// acquired tells who holds the visit type's lease after an attempt to take
// or renew it.
func (l *loop) acquired(held, was bool, holder string) {
	switch {
	case held && !was:
		l.o.metrics.owner.WithLabelValues(l.visitType).Set(1)
		l.log.Info("driving visit type", "owner", l.o.cfg.Owner)
		l.standbyLogged = ""
	case !held && was:
		l.o.metrics.owner.WithLabelValues(l.visitType).Set(0)
		l.log.Warn("lease lost: another process drives this visit type now", "owner", holder)
	case !held && l.standbyLogged != holder:
		l.standbyLogged = holder
		msg := "standing by: another process drives this visit type"
		if l.o.cfg.SingleProcess {
			msg += "; the embedded SQLite store runs a single orchestrator, so this one waits until it stops"
		}
		l.log.Info(msg, "owner", holder)
	}
}

// Recover releases the visits a crash or a failed round left pending, so
// that their origins are offered again. Unless the broker records the
// visits it queues (broker.VisitRecorder), their messages may be queued
// already: the visits are kept as lost, so that their results still count.
func (l *loop) Recover(ctx context.Context) error {
	_, exact := l.o.broker.(broker.VisitRecorder)
	n, err := l.o.store.VisitsRecover(ctx, l.visitType, !exact)
	if err != nil {
		return fmt.Errorf("recover pending visits: %w", err)
	}
	l.o.metrics.recovered.WithLabelValues(l.visitType).Add(float64(n))
	if n > 0 {
		l.log.Warn("released visits left pending by a crash or a failed round; their origins are offered again",
			"visits", n)
	}
	return nil
}

// forOrigins is the rest after a round that found no origin eligible: d at
// most, less when the store says some may have become.
func (l *loop) forOrigins(d time.Duration) leased.Rest {
	return leased.Rest{D: d, Kind: restNoOrigins, Wake: l.eligible}
}

// drain is the rest while queue is full: d at most, less when a measure,
// every QueuePollInterval and soon after workers take messages when the
// broker tells (broker.TakeWatcher), finds room for a round.
func (l *loop) drain(d time.Duration, queue string) leased.Rest {
	return leased.Rest{D: d, Kind: restQueueFull, Ready: l.hasRoom, ReadyEvery: l.o.cfg.QueuePollInterval,
		Nudged: func() <-chan struct{} { return l.taken(queue) }}
}

// refill is the rest after a round that published: d at most, less as
// soon as a measure finds room for a round, as drain's: workers that
// empty the queue faster than d never wait for the next round.
func (l *loop) refill(d time.Duration, queue string) leased.Rest {
	r := l.drain(d, queue)
	r.Kind = ""
	return r
}

// taken returns a channel closed when workers take messages of queue, if
// the broker tells; nil otherwise.
func (l *loop) taken(queue string) <-chan struct{} {
	if w, ok := l.o.broker.(broker.TakeWatcher); ok {
		return w.Taken(queue)
	}
	return nil
}

// hasRoom measures the visit type's queue and reports whether it has room
// for a round; a queue that cannot be measured has none.
func (l *loop) hasRoom(ctx context.Context) bool {
	q, err := l.queue(ctx)
	return err == nil && l.roomIn(ctx, q)
}

// roomIn measures queue q and reports whether it has room for a round,
// the messages of a publication in progress counted in.
func (l *loop) roomIn(ctx context.Context, q queueOf) bool {
	depth, err := l.o.broker.Depth(ctx, q.name)
	if p := l.publishing; p != nil && !p.over() {
		depth += int64(p.count)
	}
	return err == nil && l.slots(q.maxLen, depth) > 0
}

// queueOf is a visit type's load task type and its queue.
type queueOf struct {
	taskType revisit.TaskType
	name     string
	maxLen   int
}

// queue reads the visit type's load task type: its queue and length
// limit.
func (l *loop) queue(ctx context.Context) (queueOf, error) {
	tt, err := l.o.store.TaskTypeGet(ctx, "load-"+l.visitType)
	if err != nil {
		return queueOf{}, fmt.Errorf("task type load-%s: %w", l.visitType, err)
	}
	return queueOf{taskType: tt, name: tt.BackendName, maxLen: tt.MaxQueueLengthOrDefault()}, nil
}

// slots returns how many visits a round sends into a queue of maxLen
// that holds depth: revisit.SlotRule with MinFreeRatio, MaxPerRound at
// most; none when the queue has no room for a round.
func (l *loop) slots(maxLen int, depth int64) int {
	return revisit.SlotRule{MinFreeRatio: l.o.cfg.MinFreeRatio, PerSend: l.o.cfg.MaxPerRound}.Slots(maxLen, depth)
}

// settle waits for the previous round's publication, logs that round and
// returns its error: a publish that failed, or that no message was
// confirmed.
func (l *loop) settle() error {
	p := l.publishing
	if p == nil {
		return nil
	}
	<-p.done
	l.publishing = nil
	if p.err != nil {
		return p.err
	}
	m := l.o.metrics
	m.roundSeconds.WithLabelValues(l.visitType).Observe(time.Since(p.start).Seconds())
	l.log.Info("round", append(p.attrs, "published", p.confirmed, "failed", p.failed,
		"duration", time.Since(p.start).Round(time.Millisecond))...)
	if p.confirmed == 0 {
		return &supervise.WaitError{Reason: "publish_failed", Err: fmt.Errorf("no message of %d confirmed by the broker", p.failed)}
	}
	return nil
}

// Settle settles the previous round's publication before the loop does
// anything else than a round (recovering, handing the lease over): an error
// marks the loop dirty, so that what that round left pending is recovered.
func (l *loop) Settle() {
	if err := l.settle(); err != nil {
		l.leased.MarkDirty()
		l.log.Warn("the previous round's publication failed", "err", err)
	}
}

// Round runs a round unless the visit type is paused (then it rests
// until resumed); a round that failed may have left visits pending, which
// are recovered before the next.
func (l *loop) Round(ctx context.Context) (leased.Rest, error) {
	r, paused, err := l.paused(ctx)
	if err == nil && !paused {
		r, err = l.round(ctx)
	}
	if err != nil {
		l.leased.MarkDirty()
	}
	return r, err
}

// round runs one scheduling round and returns how long to wait before the
// next one. It grabs while the previous round's batch is published, and
// leaves its own batch publishing when it returns (settle waits for it).
func (l *loop) round(ctx context.Context) (leased.Rest, error) {
	cfg := &l.o.cfg
	start := time.Now()
	q, err := l.queue(ctx)
	if err != nil {
		return leased.Rest{}, err
	}
	l.lastQueue = q
	tt, queue, maxLen := q.taskType, q.name, q.maxLen
	depth, err := l.o.broker.Depth(ctx, queue)
	if err != nil {
		return leased.Rest{}, fmt.Errorf("depth of queue %s: %w", queue, err)
	}
	if err := l.expire(ctx); err != nil {
		return leased.Rest{}, err
	}

	// The threshold applies to the queue's free space; the per-round cap
	// only bounds how much of it one round fills. The previous round's
	// messages still publishing count as taken; if that makes the queue
	// look full, the round waits for them and measures again.
	publishing := int64(0)
	if l.publishing != nil {
		publishing = int64(l.publishing.count)
	}
	free := l.slots(maxLen, depth+publishing)
	if free == 0 {
		if l.publishing != nil {
			if err := l.settle(); err != nil {
				return leased.Rest{}, err
			}
			return l.round(ctx)
		}
		l.log.Debug("queue full", "queue", queue, "depth", depth, "max_queue_length", maxLen)
		return l.drain(cfg.QueueFullBackoff+l.jitter(), queue), nil
	}

	shares := l.o.Shares(l.visitType)
	visits, fetched, dry, err := l.dispatch(ctx, free, shares)
	if err != nil {
		l.release(visits, "dispatch failed")
		return leased.Rest{}, err
	}
	l.checkShares(shares, fetched, dry)
	if len(visits) == 0 {
		if err := l.settle(); err != nil {
			return leased.Rest{}, err
		}
		l.log.Info("round", "queue", queue, "depth", depth, "free", free, "published", 0)
		return l.forOrigins(cfg.NoOriginsBackoff + l.jitter()), nil
	}
	if !cfg.KeepPolicyOrder {
		l.o.shuffle(visits)
	}
	msgs, err := l.msgs.Build(ctx, tt.BackendName, visits)
	if err != nil {
		l.release(visits, "messages not built")
		return leased.Rest{}, err
	}
	if err := l.settle(); err != nil {
		l.release(visits, "the previous round's publication failed")
		return leased.Rest{}, err
	}

	attrs := []any{"queue", queue, "depth", depth, "free", free}
	for i, s := range shares {
		attrs = append(attrs, string(s.Policy), fetched[i])
	}
	p := &publication{done: make(chan struct{}), count: len(msgs), visits: visits, start: start, attrs: attrs}
	l.publishing = p
	l.o.live.Publishing(queue, len(msgs))
	go func() {
		defer close(p.done)
		p.confirmed, p.failed, p.err = l.publish(ctx, queue, visits, msgs)
	}()
	return l.refill(l.jitter(), queue), nil
}

// expire marks lost the visits without result within the timeout, and
// forgets those lost for longer than the lost retention. It looks at most
// every expiryInterval of the timeout: a visit is then declared lost that
// much after its timeout at worst, and the rounds in between write
// nothing for it (two transactions a round otherwise, usually finding
// nothing).
func (l *loop) expire(ctx context.Context) error {
	now, timeout := l.o.cfg.Clock.Now(), l.o.timeout(l.visitType)
	if since := now.Sub(l.expiredAt); since >= 0 && since < expiryInterval(timeout) {
		return nil
	}
	deadline := now.Add(-timeout)
	if _, err := l.o.store.VisitsForgetLost(ctx, l.visitType, deadline.Add(-l.o.cfg.LostRetention)); err != nil {
		return fmt.Errorf("forget old lost visits: %w", err)
	}
	n, err := l.o.store.VisitsExpire(ctx, l.visitType, deadline)
	if err != nil {
		return fmt.Errorf("expire lost visits: %w", err)
	}
	l.expiredAt = now
	if n > 0 {
		l.o.metrics.lost.WithLabelValues(l.visitType).Add(float64(n))
		l.log.Warn("visits lost: no result within the timeout; their origins are offered again",
			"lost", n, "timeout", l.o.timeout(l.visitType))
	}
	return nil
}

// expiryInterval is how often rounds look for lost visits, for a visit
// timeout: a minute, or a tenth of the timeout when that is shorter.
func expiryInterval(timeout time.Duration) time.Duration {
	return min(time.Minute, timeout/10)
}

// dispatch grabs free origins among the shares (work-conserving) and
// records them pending; it returns every visit dispatched, also on error.
func (l *loop) dispatch(ctx context.Context, free int, shares []Share) ([]revisit.Visit, []int, []bool, error) {
	m := l.o.metrics
	var visits []revisit.Visit
	fetched, dry, err := fill(free, shares, func(i, n int) (int, error) {
		s := shares[i]
		g := s.Grab
		g.VisitType, g.Count, g.Policy, g.Now = l.visitType, n, s.Policy, time.Time{}
		start := time.Now()
		vs, err := l.o.store.VisitsDispatch(ctx, revisit.DispatchParams{Grab: g, Owner: l.o.cfg.Owner, Lease: l.lease})
		if err != nil {
			return 0, fmt.Errorf("grab %d %s: %w", n, s.Policy, err)
		}
		m.grabSeconds.WithLabelValues(l.visitType, string(s.Policy)).Observe(time.Since(start).Seconds())
		m.requested.WithLabelValues(l.visitType, string(s.Policy)).Add(float64(n))
		m.fetched.WithLabelValues(l.visitType, string(s.Policy)).Add(float64(len(vs)))
		visits = append(visits, vs...)
		return len(vs), nil
	})
	return visits, fetched, dry, err
}

// publish sends msgs, the message of each visit, and records the outcome
// (visitsend.Record); it returns how many were confirmed and failed. It
// runs beside the next round: it touches nothing of the loop's but its
// metrics and logger.
func (l *loop) publish(ctx context.Context, queue string, visits []revisit.Visit, msgs []celery.Message) (int, int, error) {
	pubs, _ := l.o.broker.Publish(ctx, queue, msgs)
	l.o.live.Publishing(queue, -len(msgs))
	out, err := visitsend.Record(ctx, l.o.store, visits, pubs, l.o.cfg.Clock.Now())
	l.o.metrics.published.WithLabelValues(l.visitType).Add(float64(out.Sent))
	if n := out.NotSent(); n > 0 {
		l.o.metrics.publishFailed.WithLabelValues(l.visitType).Add(float64(n))
		l.log.Warn("messages not confirmed; their origins are released", "failed", n, "err", out.Err)
	}
	return out.Sent, out.NotSent(), err
}

// release gives back the origins of visits not published; on failure
// recovery does it at the next start of the loop.
func (l *loop) release(visits []revisit.Visit, why string) {
	if err := visitsend.Release(l.o.store, visits); err != nil {
		l.log.Warn("cannot release visits; recovery will", "why", why, "visits", len(visits), "err", err)
	}
}

// checkShares warns when the fetched shares deviate from the configured
// ones by more than 5 % relative although no policy ran dry (when one does,
// the deviation is the work-conserving pass at work).
func (l *loop) checkShares(shares []Share, fetched []int, dry []bool) {
	total, weights := sum(fetched), 0
	for i, s := range shares {
		if dry[i] {
			return
		}
		weights += s.Weight
	}
	if total < 100 || weights == 0 {
		return
	}
	for i, s := range shares {
		want := float64(s.Weight) / float64(weights)
		got := float64(fetched[i]) / float64(total)
		if want > 0 && (got/want > 1.05 || got/want < 0.95) {
			l.log.Warn("fetched share deviates from the configured share", "policy", s.Policy,
				"configured", fmt.Sprintf("%.1f%%", want*100), "fetched", fmt.Sprintf("%.1f%%", got*100))
		}
	}
}
