// Package orchestrator keeps every visit type's worker queue full
// (semantics.md §4–§6): one supervised loop per visit type measures the
// queue, grabs the origins that most need a visit among the visit type's
// weighted policies, records them in flight and publishes one message per
// origin. Each visit type is driven by one process at a time (a lease in the
// store); docs/orchestrator.md explains why a kill -9 at any instant loses
// no origin.
package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/internal/service/livequeue"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// ErrAllLoopsDown is returned by Run when every loop failed repeatedly.
var ErrAllLoopsDown = supervise.ErrAllDown

// Config configures an Orchestrator. Its settings are the orchestrator
// section of the configuration file, named there in snake case
// (max_per_round); their defaults are DefaultConfig's, which New gives the
// fields left zero.
type Config struct {
	// VisitTypes are the visit types to drive; empty: the visit type of
	// every load-* task type at start.
	VisitTypes []string
	// Shares are the weighted policies by visit type, or "default" for
	// the visit types not named; a visit type absent takes DefaultShares.
	Shares map[string][]Share
	// MaxPerRound caps the free slots filled in one round (1 to
	// revisit.MaxGrabCount).
	MaxPerRound int
	// MinFreeRatio: a round publishes only when at least this fraction of
	// the queue is free (revisit.SlotRule); AnyFreeSlot: as soon as one
	// slot is.
	MinFreeRatio float64
	// QueueFullBackoff is the wait when the queue is full; it also caps
	// the backoff while a dependency is unavailable.
	QueueFullBackoff time.Duration
	// QueuePollInterval is how often the depth of a full queue is
	// measured while the loop waits for it to drain: the loop runs a
	// round as soon as the queue has room again.
	QueuePollInterval time.Duration
	// NoOriginsBackoff is the wait when no origin was eligible, cut short
	// when the store tells of origins that may have become eligible
	// (store.Notifier).
	NoOriginsBackoff time.Duration
	// RoundJitter bounds the random wait added to every wait.
	RoundJitter time.Duration
	// KeepPolicyOrder publishes each round's visits in the order the
	// policies grabbed them instead of in a random order: off in
	// production, where a shuffled round keeps any lister's origins from
	// reaching the workers in one block; on to reproduce a scheduler that
	// queues each grab as it comes (revisit simulate --upstream). The
	// configuration file does not set it.
	KeepPolicyOrder bool
	// VisitTimeout is how long a sent visit may go without result before it
	// is marked lost; VisitTimeouts overrides it by visit type.
	VisitTimeout  time.Duration
	VisitTimeouts map[string]time.Duration
	// LostRetention is how long lost visits are kept after their timeout,
	// so that a late result still finds its visit; then their records are
	// deleted.
	LostRetention time.Duration
	// LeaseTTL is how long a visit type's lease lasts unless renewed; a
	// dead owner's visit types are taken over within it.
	LeaseTTL time.Duration
	// GracePeriod bounds how long Run takes to finish the rounds in flight
	// once its context is done.
	GracePeriod time.Duration
	// RestartMin and RestartMax bound the exponential backoff between
	// restarts of a failed loop.
	RestartMin, RestartMax time.Duration
	// UnhealthyAfter is how many consecutive failures make a loop
	// unhealthy.
	UnhealthyAfter int
	// Owner names this process in leases and in-flight records; default
	// host:pid:random.
	Owner string
	// Origin is the sender named in messages; default revisit@host.
	Origin string
	// SingleProcess says the store serves one process (embedded SQLite):
	// standing by then says that another process holds the visit types.
	SingleProcess bool
	// Logger receives one line per round and the loops' troubles; nil
	// discards.
	Logger *slog.Logger
	// Metrics receives the Prometheus metrics; nil creates unregistered
	// ones.
	Metrics *Metrics
	// Clock is the time of the visits' records, which must be the store's
	// (store.Options.Clock): when visits are sent, and which are lost;
	// nil is time.Now. Durations and waits use the real time.
	Clock revisit.Clock
	// Rand draws the rounds' jitter and the order of their messages; nil
	// is the process's random source. A simulation seeds it.
	Rand *rand.Rand
}

// AnyFreeSlot is the MinFreeRatio of an orchestrator that publishes as
// soon as one slot of the queue is free (min_free_ratio: 0 in the
// configuration file): the least positive ratio, since a zero
// MinFreeRatio takes the default.
const AnyFreeSlot = math.SmallestNonzeroFloat64

// DefaultConfig returns the default of every setting (semantics.md §4):
// the values of the fields New finds zero, and of the configuration
// file's orchestrator section.
func DefaultConfig() Config {
	return Config{
		MaxPerRound:       10_000,
		MinFreeRatio:      0.05,
		QueueFullBackoff:  time.Minute,
		QueuePollInterval: time.Second,
		NoOriginsBackoff:  20 * time.Minute,
		RoundJitter:       5 * time.Second,
		VisitTimeout:      24 * time.Hour,
		LostRetention:     7 * 24 * time.Hour,
		LeaseTTL:          15 * time.Second,
		GracePeriod:       30 * time.Second,
		RestartMin:        time.Second,
		RestartMax:        5 * time.Minute,
		UnhealthyAfter:    5,
	}
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orDefault(&c.MaxPerRound, d.MaxPerRound)
	orDefault(&c.MinFreeRatio, d.MinFreeRatio)
	orDefault(&c.UnhealthyAfter, d.UnhealthyAfter)
	defaults := d.durations()
	for i, f := range c.durations() {
		orDefault(f.d, *defaults[i].d)
	}
	orDefault(&c.RestartMin, d.RestartMin)
	orDefault(&c.RestartMax, d.RestartMax)
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
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	return c
}

// orDefault sets *v to d when it is zero.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// duration is one duration setting of a Config, by its key in the
// configuration file.
type duration struct {
	key string
	d   *time.Duration
}

// durations returns the duration settings of c that the configuration
// file sets, which must be positive.
func (c *Config) durations() []duration {
	return []duration{{"queue_full_backoff", &c.QueueFullBackoff}, {"queue_poll_interval", &c.QueuePollInterval},
		{"no_origins_backoff", &c.NoOriginsBackoff}, {"round_jitter", &c.RoundJitter},
		{"visit_timeout", &c.VisitTimeout}, {"lost_retention", &c.LostRetention},
		{"lease_ttl", &c.LeaseTTL}, {"grace_period", &c.GracePeriod}}
}

// Validate checks the settings as they are: a zero max_per_round or
// duration is refused. New validates once it has given zero fields their
// defaults; the configuration file's settings are validated as written,
// so that a 0 there is refused, not replaced. Errors name the setting as
// the file spells it (max_per_round, scheduling_policy.git[0].weight).
func (c Config) Validate() error {
	for _, vt := range c.VisitTypes {
		if err := revisit.ValidateVisitType(vt); err != nil {
			return fmt.Errorf("visit type %q: %w", vt, err)
		}
	}
	for vt, shares := range c.Shares {
		key := "scheduling_policy." + vt
		if vt != "default" {
			if err := revisit.ValidateVisitType(vt); err != nil {
				return fmt.Errorf("%s: not a visit type: %w", key, err)
			}
		}
		if err := ValidateShares(key, shares); err != nil {
			return err
		}
	}
	if err := revisit.GrabCount.Check(c.MaxPerRound); err != nil {
		return fmt.Errorf("max_per_round: %s", err.(*revisit.Error).Message)
	}
	if !(c.MinFreeRatio >= 0 && c.MinFreeRatio <= 1) {
		return fmt.Errorf("min_free_ratio: %g is not between 0 and 1", c.MinFreeRatio)
	}
	for _, f := range c.durations() {
		if *f.d <= 0 {
			return fmt.Errorf("%s: %s is not positive", f.key, *f.d)
		}
	}
	for vt, d := range c.VisitTimeouts {
		if d <= 0 {
			return fmt.Errorf("visit_timeouts.%s: %s is not positive", vt, d)
		}
	}
	switch {
	case c.RestartMin < 0 || c.RestartMax < c.RestartMin:
		return fmt.Errorf("restart backoff: min %s, max %s: not 0 <= min <= max", c.RestartMin, c.RestartMax)
	case c.UnhealthyAfter < 0:
		return fmt.Errorf("unhealthy after %d failures: negative", c.UnhealthyAfter)
	}
	return nil
}

// Store is what the orchestrator needs of a store: the visit types'
// leases, the grab that records visits in flight and their upkeep, the
// load-* task types and the listers of the origins it dispatches. A store
// that is also a store.Notifier wakes the loops up.
type Store interface {
	livequeue.Store
	// TaskTypeGet returns one task type; ErrNotFound if absent.
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	// ListerGetByIDs returns the listers with those ids that exist.
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
	// LeaseAcquire takes the named lease for owner until now + ttl if it is
	// free, expired or already owner's.
	LeaseAcquire(ctx context.Context, name, owner string, ttl time.Duration) (revisit.Lease, error)
	// LeaseRelease frees the lease if owner holds it.
	LeaseRelease(ctx context.Context, name, owner string) error
	// VisitsDispatch grabs origins and records one pending visit each.
	VisitsDispatch(ctx context.Context, p revisit.DispatchParams) ([]revisit.Visit, error)
	// VisitsSent marks pending visits sent.
	VisitsSent(ctx context.Context, ids []string, at time.Time) (int, error)
	// VisitsRelease forgets pending visits whose messages were not
	// delivered, or keeps them as lost when they may have been.
	VisitsRelease(ctx context.Context, ids []string, maybePublished bool) (int, error)
	// VisitsRecover releases every pending visit of a visit type.
	VisitsRecover(ctx context.Context, visitType string, maybePublished bool) (int, error)
	// VisitsExpire marks lost the visits of a visit type sent before before.
	VisitsExpire(ctx context.Context, visitType string, before time.Time) (int, error)
	// VisitsForgetLost deletes the lost visits of a visit type sent before
	// before.
	VisitsForgetLost(ctx context.Context, visitType string, before time.Time) (int, error)
	// VisitTypePauseList returns the pauses of the paused visit types.
	VisitTypePauseList(ctx context.Context) ([]revisit.Pause, error)
}

// Orchestrator runs the loops of the visit types it drives.
type Orchestrator struct {
	store   Store
	broker  broker.Broker
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	sup     *supervise.Supervisor
	// live measures the queues for the gauges and the API; the loops add
	// the messages they publish.
	live *livequeue.Live
	// randMu serialises the loops' draws from cfg.Rand.
	randMu sync.Mutex
	// loops are the loops of the last Run, by visit type.
	loopsMu sync.Mutex
	loops   map[string]*loop
}

// Health is the state of one visit type's loop: unhealthy after
// UnhealthyAfter consecutive failures, until a round runs again.
type Health = supervise.Health

// New returns an orchestrator publishing through b the visits it grabs
// from st.
func New(st Store, b broker.Broker, cfg Config) (*Orchestrator, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := cfg.Metrics
	sup := supervise.New(supervise.Config{GracePeriod: cfg.GracePeriod, RestartMin: cfg.RestartMin,
		RestartMax: cfg.RestartMax, UnhealthyAfter: cfg.UnhealthyAfter, Logger: cfg.Logger,
		OnRestart: func(vt string) { m.restarts.WithLabelValues(vt).Inc() },
		OnHealth: func(vt string, h supervise.Health) {
			m.healthy.WithLabelValues(vt).Set(map[bool]float64{false: 0, true: 1}[h.Healthy])
		}})
	live := livequeue.New(st, b, nil)
	m.queues.live.Store(live)
	return &Orchestrator{store: st, broker: b, cfg: cfg, log: cfg.Logger, metrics: m, sup: sup, live: live}, nil
}

// Queues returns the measure of the queues this orchestrator's gauges
// show, which counts the messages it is publishing.
func (o *Orchestrator) Queues() *livequeue.Live { return o.live }

// Owner returns the name this process goes by in leases.
func (o *Orchestrator) Owner() string { return o.cfg.Owner }

// Shares returns the weighted policies of a visit type: the configured
// ones, else the configured "default" ones, else DefaultShares.
func (o *Orchestrator) Shares(visitType string) []Share {
	if s, ok := o.cfg.Shares[visitType]; ok {
		return s
	}
	if s, ok := o.cfg.Shares["default"]; ok {
		return s
	}
	return DefaultShares(visitType)
}

// jitter returns a random wait below the round jitter.
func (o *Orchestrator) jitter() time.Duration {
	if o.cfg.Rand == nil || o.cfg.RoundJitter <= 0 {
		return supervise.Jitter(o.cfg.RoundJitter)
	}
	o.randMu.Lock()
	defer o.randMu.Unlock()
	return time.Duration(o.cfg.Rand.Int64N(int64(o.cfg.RoundJitter)))
}

// shuffle puts the visits of a round in a random order, so that no
// lister's origins come to the workers in one block.
func (o *Orchestrator) shuffle(visits []revisit.Visit) {
	swap := func(i, j int) { visits[i], visits[j] = visits[j], visits[i] }
	if o.cfg.Rand == nil {
		rand.Shuffle(len(visits), swap)
		return
	}
	o.randMu.Lock()
	defer o.randMu.Unlock()
	o.cfg.Rand.Shuffle(len(visits), swap)
}

// timeout returns the visit timeout of a visit type.
func (o *Orchestrator) timeout(visitType string) time.Duration {
	if d, ok := o.cfg.VisitTimeouts[visitType]; ok {
		return d
	}
	return o.cfg.VisitTimeout
}

// Health returns the state of every loop, by visit type.
func (o *Orchestrator) Health() map[string]Health { return o.sup.Health() }

// VisitTypes returns the visit types to drive: the configured ones, else
// the visit type of every load-* task type.
func (o *Orchestrator) VisitTypes(ctx context.Context) ([]string, error) {
	if len(o.cfg.VisitTypes) > 0 {
		return o.cfg.VisitTypes, nil
	}
	tts, err := o.store.TaskTypeList(ctx)
	if err != nil {
		return nil, err
	}
	var vts []string
	for _, tt := range tts {
		if vt, ok := tt.VisitType(); ok {
			vts = append(vts, vt)
		}
	}
	if len(vts) == 0 {
		return nil, errors.New("no visit type to drive: register a load-<visit type> task type " +
			"(revisit task-type add) or name visit types")
	}
	return vts, nil
}

// Run drives the visit types until ctx is done, then stops taking new
// rounds, lets the rounds in flight finish within the grace period,
// releases its leases and returns nil. It returns ErrAllLoopsDown when
// every loop is unhealthy at once, so that a service manager restarts the
// process.
func (o *Orchestrator) Run(ctx context.Context) error {
	vts, err := o.VisitTypes(ctx)
	if err != nil {
		return err
	}
	o.log.Info("orchestrator starting", "visit_types", vts, "owner", o.cfg.Owner)
	loops := make(map[string]supervise.Loop, len(vts))
	byType := make(map[string]*loop, len(vts))
	for _, vt := range vts {
		byType[vt] = newLoop(o, vt)
		loops[vt] = byType[vt].run
	}
	o.loopsMu.Lock()
	o.loops = byType
	o.loopsMu.Unlock()
	defer context.AfterFunc(ctx, func() {
		o.log.Info("orchestrator stopping: finishing the rounds in flight", "grace_period", o.cfg.GracePeriod)
	})()
	err = o.sup.Run(ctx, loops)
	if errors.Is(err, ErrAllLoopsDown) {
		o.log.Error("every loop is down; exiting so that the service manager restarts the process")
	}
	o.log.Info("orchestrator stopped")
	return err
}
