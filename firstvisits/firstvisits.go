// Package firstvisits sends the first visits of the listers that have
// queues of their own for them (Software Heritage's
// start-runner-first-visits). A lister with a first-visits queue prefix
// whose listing finished, and whose first visits were not all scheduled
// since, gets the origins it listed that were not scheduled since the
// listing finished (policy first_visits_after_listing) sent to the queues
// "<prefix>:<backend_name of load-VT>" of their visit types, as many as
// those queues have free slots. Once none is left to schedule, the
// lister's FirstVisitsScheduledAt records it and the lister is left alone
// until its next listing.
//
// Each visit is in flight from its grab to its result, as the
// orchestrator's are (visitsend). Run passes over the listers every
// interval while this process holds the lease "firstvisits", so that one
// process of those sharing a store does it at a time; Once makes one pass.
package firstvisits

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/internal/service/leased"
	"github.com/revisit-sched/revisit/internal/service/supervise"
	"github.com/revisit-sched/revisit/internal/service/visitsend"
)

// LeaseName is the lease held by the process that passes over the listers.
const LeaseName = "firstvisits"

// Store is what the first visits need of a store.
type Store interface {
	visitsend.Store
	leased.Leases
	// ListerList returns every lister.
	ListerList(ctx context.Context) ([]revisit.Lister, error)
	// ListerVisitTypes returns the visit types of a lister's origins.
	ListerVisitTypes(ctx context.Context, listerID uuid.UUID) ([]string, error)
	// ListerUpdate stores a lister changed since it was read by no one
	// else; ErrStaleData otherwise.
	ListerUpdate(ctx context.Context, l revisit.Lister) (revisit.Lister, error)
	// TaskTypeGet returns one task type; ErrNotFound if absent.
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	// GrabNextVisits, as a dry run, tells whether origins are left.
	GrabNextVisits(ctx context.Context, p revisit.GrabParams) ([]revisit.ListedOrigin, error)
}

// Config configures a Scheduler; zero fields take their defaults.
type Config struct {
	// Interval is the time between two passes (1 min).
	Interval time.Duration
	// LeaseTTL is how long the lease lasts unless renewed (15 s): another
	// process takes over within it when this one dies.
	LeaseTTL time.Duration
	// GracePeriod bounds how long Run takes to finish the pass in flight
	// once its context is done (30 s).
	GracePeriod time.Duration
	// Jitter bounds the random wait added to every wait (1 s).
	Jitter time.Duration
	// Owner names this process in the lease and on the visits' records;
	// default host:pid:random.
	Owner string
	// Origin is the sender named in messages; default revisit@host.
	Origin string
	// Clock is the time of the visits' records and of
	// FirstVisitsScheduledAt, which must be the store's; nil is time.Now.
	Clock revisit.Clock
	// Logger receives a line per lister and visit type sent to, and the
	// troubles; nil discards.
	Logger *slog.Logger
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	set(&c.Interval, time.Minute)
	set(&c.LeaseTTL, 15*time.Second)
	set(&c.GracePeriod, 30*time.Second)
	set(&c.Jitter, time.Second)
	if c.Owner == "" {
		c.Owner = holder.New()
	}
	if c.Origin == "" {
		host, _ := os.Hostname()
		c.Origin = "revisit@" + host
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Scheduler sends the first visits of listers.
type Scheduler struct {
	st     Store
	cfg    Config
	log    *slog.Logger
	sender *visitsend.Sender
}

// New returns a scheduler grabbing from st and publishing through b.
func New(st Store, b visitsend.Broker, cfg Config) (*Scheduler, error) {
	for name, d := range map[string]time.Duration{"interval": cfg.Interval, "lease ttl": cfg.LeaseTTL,
		"grace period": cfg.GracePeriod, "jitter": cfg.Jitter} {
		if d < 0 {
			return nil, fmt.Errorf("first visits: %s %s is negative", name, d)
		}
	}
	cfg = cfg.withDefaults()
	return &Scheduler{st: st, cfg: cfg, log: cfg.Logger,
		sender: visitsend.NewSender(st, b, visitsend.Config{Owner: cfg.Owner, Origin: cfg.Origin, Clock: cfg.Clock})}, nil
}

// Sent is what a pass did for one visit type of a lister.
type Sent struct {
	Lister    revisit.Lister
	VisitType string
	// Queue is where its visits go; empty when the visit type has no load
	// task type.
	Queue string
	// Slots is the free slots found in the queue.
	Slots int
	visitsend.Outcome
	// Skipped says why nothing could be sent, when nothing could: the
	// visit type has no load task type, or its queue does not exist.
	Skipped string
}

// Pass is what one pass over the listers did.
type Pass struct {
	// Sent has a line per visit type of each lister whose first visits
	// were due.
	Sent []Sent
	// Done are the listers whose first visits this pass found all
	// scheduled; their FirstVisitsScheduledAt is set now.
	Done []revisit.Lister
}

// Once makes one pass over the listers, without the lease.
func (s *Scheduler) Once(ctx context.Context) (Pass, error) { return s.pass(ctx, "") }

// pass sends the due first visits of every lister; with lease set, the
// grabs happen only while this process holds it.
func (s *Scheduler) pass(ctx context.Context, lease string) (Pass, error) {
	var p Pass
	listers, err := s.st.ListerList(ctx)
	if err != nil {
		return p, fmt.Errorf("listers: %w", err)
	}
	for _, l := range listers {
		if !due(l) {
			continue
		}
		sent, done, err := s.lister(ctx, l, lease)
		p.Sent = append(p.Sent, sent...)
		if err != nil {
			return p, fmt.Errorf("lister %s: %w", label(l), err)
		}
		if done != nil {
			p.Done = append(p.Done, *done)
		}
	}
	return p, nil
}

// due reports whether l's first visits are to be scheduled: it has a
// queue prefix, finished a listing, and its first visits were not all
// scheduled since.
func due(l revisit.Lister) bool {
	return l.FirstVisitsQueuePrefix != nil && l.LastListingFinishedAt != nil &&
		(l.FirstVisitsScheduledAt == nil || l.FirstVisitsScheduledAt.Before(*l.LastListingFinishedAt))
}

// lister sends the first visits of l's visit types, and records that they
// are all scheduled when no origin of l is left to schedule; it returns
// the lister so updated, if it was.
func (s *Scheduler) lister(ctx context.Context, l revisit.Lister, lease string) ([]Sent, *revisit.Lister, error) {
	vts, err := s.st.ListerVisitTypes(ctx, l.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("visit types: %w", err)
	}
	var out []Sent
	complete := true
	for _, vt := range vts {
		sent, err := s.visitType(ctx, l, vt, lease)
		if err != nil {
			return out, nil, fmt.Errorf("%s: %w", vt, err)
		}
		out = append(out, sent)
		if sent.Skipped != "" {
			complete = false
			continue
		}
		left, err := s.left(ctx, l, vt)
		if err != nil {
			return out, nil, fmt.Errorf("%s: %w", vt, err)
		}
		complete = complete && !left
	}
	if !complete {
		return out, nil, nil
	}
	now := s.cfg.Clock.Now().UTC()
	l.FirstVisitsScheduledAt = &now
	updated, err := s.st.ListerUpdate(ctx, l)
	if errors.Is(err, revisit.ErrStaleData) {
		s.log.Info("lister changed meanwhile: its first visits are checked again at the next pass", "lister", label(l))
		return out, nil, nil
	}
	if err != nil {
		return out, nil, fmt.Errorf("record its first visits scheduled: %w", err)
	}
	s.log.Info("first visits scheduled", "lister", label(l), "listing_finished_at", l.LastListingFinishedAt)
	return out, &updated, nil
}

// visitType fills the first-visits queue of one visit type of l.
func (s *Scheduler) visitType(ctx context.Context, l revisit.Lister, vt string, lease string) (Sent, error) {
	sent := Sent{Lister: l, VisitType: vt}
	tt, err := s.st.TaskTypeGet(ctx, "load-"+vt)
	if revisit.Code(err) == revisit.CodeNotFound {
		sent.Skipped = "no task type load-" + vt
		s.log.Warn("first visits not sent: the visit type has no task type", "lister", label(l), "visit_type", vt)
		return sent, nil
	}
	if err != nil {
		return sent, fmt.Errorf("task type load-%s: %w", vt, err)
	}
	sent.Queue = *l.FirstVisitsQueuePrefix + ":" + tt.BackendName
	id := l.ID
	r := visitsend.Request{Grab: revisit.GrabParams{VisitType: vt, Policy: revisit.FirstVisitsAfterListing, ListerID: &id},
		Task: tt.BackendName, Queue: sent.Queue, Lease: lease}
	var res visitsend.Result
	sent.Slots, res, err = s.sender.Fill(ctx, r, tt.MaxQueueLengthOrDefault(), 0)
	if errors.Is(err, broker.ErrQueueMissing) {
		sent.Skipped = "queue " + sent.Queue + " does not exist"
		s.log.Warn("first visits not sent: the queue does not exist (no worker declared it yet)",
			"lister", label(l), "visit_type", vt, "queue", sent.Queue)
		return sent, nil
	}
	if err != nil {
		return sent, err
	}
	sent.Outcome = res.Outcome
	if len(res.Visits) > 0 {
		s.log.Info("first visits sent", "lister", label(l), "visit_type", vt, "queue", sent.Queue,
			"slots", sent.Slots, "sent", res.Sent, "failed", res.NotSent())
	}
	if n := res.NotSent(); n > 0 {
		s.log.Warn("messages not confirmed; their origins are offered again", "lister", label(l), "visit_type", vt,
			"failed", n, "err", res.Err)
	}
	return sent, nil
}

// left reports whether origins of l's visit type vt are still to be
// scheduled since its listing finished, whatever their cooldowns.
func (s *Scheduler) left(ctx context.Context, l revisit.Lister, vt string) (bool, error) {
	id := l.ID
	os, err := s.st.GrabNextVisits(ctx, revisit.GrabParams{VisitType: vt, Count: 1,
		Policy: revisit.FirstVisitsAfterListing, ListerID: &id, Cooldowns: &revisit.Cooldowns{}, DryRun: true})
	if err != nil {
		return false, fmt.Errorf("origins left: %w", err)
	}
	return len(os) > 0, nil
}

// label names a lister as NAME or NAME/INSTANCE.
func label(l revisit.Lister) string {
	if l.InstanceName == "" {
		return l.Name
	}
	return l.Name + "/" + l.InstanceName
}

// Run passes over the listers every Interval while this process holds the
// lease, until ctx is done; then the pass in flight finishes within the
// grace period and Run returns nil. It returns an error when the loop
// failed repeatedly, so that a service manager restarts the process.
func (s *Scheduler) Run(ctx context.Context) error {
	w := &work{s: s}
	w.loop = leased.New(leased.Config{Leases: s.st, Name: LeaseName, Owner: s.cfg.Owner, TTL: s.cfg.LeaseTTL,
		MaxBackoff: s.cfg.Interval, Jitter: s.cfg.Jitter, Logger: s.log, Classify: classify,
		Acquired: w.acquired}, w)
	sup := supervise.New(supervise.Config{GracePeriod: s.cfg.GracePeriod, Logger: s.log})
	return sup.Run(ctx, map[string]supervise.Loop{LeaseName: w.loop.Run})
}

// classify sorts a pass's error: a fenced grab that found the lease gone is
// a lost lease, a dependency unavailable a wait; anything else fails the
// loop.
func classify(err error) error {
	if revisit.Code(err) == revisit.CodeConflict {
		return leased.Lost(err)
	}
	return supervise.Classify(err)
}

// work is the leased loop's work: a pass every Interval.
type work struct {
	s    *Scheduler
	loop *leased.Loop
}

// Recover does nothing: the store releases pending visits by visit type
// only, and only the process driving a visit type may do that. The visits
// a crash leaves pending are released when that visit type's orchestrator
// next takes its lease.
func (w *work) Recover(context.Context) error { return nil }

// Round makes a pass under the lease.
func (w *work) Round(ctx context.Context) (leased.Rest, error) {
	_, err := w.s.pass(ctx, LeaseName)
	return leased.Rest{D: w.s.cfg.Interval + supervise.Jitter(w.s.cfg.Jitter)}, err
}

// acquired logs who passes over the listers.
func (w *work) acquired(held, was bool, holder string) {
	switch {
	case held && !was:
		w.s.log.Info("scheduling the first visits of listers", "owner", w.s.cfg.Owner)
	case !held && was:
		w.s.log.Warn("lease lost: another process schedules the first visits now", "owner", holder)
	}
}
