// Package runner dispatches generic tasks (semantics.md §8): one supervised
// loop per task type keeps the type's worker queue fed with its due tasks,
// recording a run for each before publishing its message; another loop
// ends as lost the runs silent beyond their type's timeout. HandleEvents
// applies the workers' events to the runs. docs/runner.md explains why a
// crash loses no task.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/internal/kit/holder"
	"github.com/revisit-sched/revisit/internal/service/supervise"
	"github.com/revisit-sched/revisit/store"
)

// ErrAllLoopsDown is returned by Run when every loop failed repeatedly.
var ErrAllLoopsDown = errors.New("every loop of the task runner is down")

// DefaultPriorityQueuePrefix prefixes the backend name of a task type to
// name the queue of its priority tasks, as upstream does.
const DefaultPriorityQueuePrefix = "save_code_now:"

// Store is what the runner needs of a store.
type Store interface {
	store.TaskStore
	// TaskTypeGet returns one task type; ErrNotFound if absent.
	TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error)
	// TaskTypeList returns every task type, by name.
	TaskTypeList(ctx context.Context) ([]revisit.TaskType, error)
	// LeaseAcquire and LeaseRelease hold the task types' leases.
	LeaseAcquire(ctx context.Context, name, owner string, ttl time.Duration) (revisit.Lease, error)
	LeaseRelease(ctx context.Context, name, owner string) error
}

// MinFreeRatio is the least fraction of a queue free before the runner
// sends it tasks without priority (revisit.SlotRule): a fifth.
const MinFreeRatio = 0.2

// Config configures a Runner; zero fields take their defaults.
type Config struct {
	// TaskTypes are the task types to dispatch; empty: every task type at
	// start, load-* ones included (their tasks share the queue the
	// orchestrator fills with visits, which are not tasks).
	TaskTypes []string
	// PriorityQueuePrefix prefixes a type's backend name to name the queue
	// of its priority tasks (DefaultPriorityQueuePrefix).
	PriorityQueuePrefix string
	// MaxPerRound caps the tasks dispatched to one queue in one round
	// (10,000).
	MaxPerRound int
	// PollInterval is the wait after a round that dispatched less than it
	// could: the queue was full or too few tasks were due (10 s).
	PollInterval time.Duration
	// RoundJitter bounds the random wait added to every wait (1 s).
	RoundJitter time.Duration
	// DependencyBackoff caps the doubling wait while the store or broker
	// is unavailable, a queue missing or its depth unknown (1 min).
	DependencyBackoff time.Duration
	// WedgedCheckInterval is the period of the check that ends as lost the
	// runs silent beyond their type's run timeout; it also runs at start
	// (5 min).
	WedgedCheckInterval time.Duration
	// GracePeriod bounds how long Run takes to finish the rounds in flight
	// once its context is done (30 s).
	GracePeriod time.Duration
	// RestartMin and RestartMax bound the exponential backoff between
	// restarts of a failed loop (1 s, 5 min).
	RestartMin, RestartMax time.Duration
	// UnhealthyAfter is how many consecutive failures make a loop
	// unhealthy (5).
	UnhealthyAfter int
	// Origin is the sender named in messages; default revisit@host.
	Origin string
	// Owner names this process in the task types' leases; default
	// host:pid:random. A task type is dispatched by the process that holds
	// its lease (runner:<type>), so several runners share the task types
	// without undoing each other's rounds.
	Owner string
	// LeaseTTL is how long a task type's lease lasts unless renewed
	// (15 s): a dead runner's task types are taken over within it.
	LeaseTTL time.Duration
	// Clock is the time of the runs and of the tasks' due dates; nil is
	// time.Now.
	Clock revisit.Clock
	// Logger receives one line per round that dispatched and the loops'
	// troubles; nil discards.
	Logger *slog.Logger
	// Metrics receives the Prometheus metrics; nil creates unregistered
	// ones.
	Metrics *Metrics
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.MaxPerRound < 0 || c.MaxPerRound > revisit.MaxGrabCount {
		return fmt.Errorf("max per round %d is not between 0 and %d", c.MaxPerRound, revisit.MaxGrabCount)
	}
	if c.RestartMax != 0 && c.RestartMax < c.RestartMin {
		return fmt.Errorf("restart backoff: max %s < min %s", c.RestartMax, c.RestartMin)
	}
	for name, d := range map[string]time.Duration{"poll interval": c.PollInterval, "round jitter": c.RoundJitter,
		"dependency backoff": c.DependencyBackoff, "wedged check interval": c.WedgedCheckInterval,
		"grace period": c.GracePeriod, "restart min": c.RestartMin, "lease ttl": c.LeaseTTL} {
		if d < 0 {
			return fmt.Errorf("%s %s is negative", name, d)
		}
	}
	for _, tt := range c.TaskTypes {
		if tt == "" {
			return errors.New("empty task type name")
		}
	}
	return nil
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.PriorityQueuePrefix == "" {
		c.PriorityQueuePrefix = DefaultPriorityQueuePrefix
	}
	if c.MaxPerRound == 0 {
		c.MaxPerRound = 10_000
	}
	set(&c.PollInterval, 10*time.Second)
	set(&c.RoundJitter, time.Second)
	set(&c.DependencyBackoff, time.Minute)
	set(&c.WedgedCheckInterval, 5*time.Minute)
	set(&c.GracePeriod, 30*time.Second)
	set(&c.LeaseTTL, 15*time.Second)
	host, _ := os.Hostname()
	if c.Origin == "" {
		c.Origin = "revisit@" + host
	}
	if c.Owner == "" {
		c.Owner = holder.New()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	return c
}

// Runner dispatches the due tasks of its task types.
type Runner struct {
	store   Store
	broker  broker.Broker
	cfg     Config
	log     *slog.Logger
	metrics *Metrics
	sup     *supervise.Supervisor
}

// New returns a runner publishing through b the tasks it grabs from st.
func New(st Store, b broker.Broker, cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &Runner{store: st, broker: b, cfg: cfg, log: cfg.Logger, metrics: cfg.Metrics}
	r.sup = supervise.New(supervise.Config{GracePeriod: cfg.GracePeriod, RestartMin: cfg.RestartMin,
		RestartMax: cfg.RestartMax, UnhealthyAfter: cfg.UnhealthyAfter, Logger: cfg.Logger,
		OnRestart: func(name string) { r.metrics.restarts.WithLabelValues(name).Inc() },
		OnHealth: func(name string, h supervise.Health) {
			v := 0.0
			if h.Healthy {
				v = 1
			}
			r.metrics.healthy.WithLabelValues(name).Set(v)
		}})
	return r, nil
}

// Health returns the state of every loop, by name: "dispatch:<task type>"
// and "wedged".
func (r *Runner) Health() map[string]supervise.Health { return r.sup.Health() }

// TaskTypes returns the task types to dispatch: the configured ones (each
// must exist), else every task type.
func (r *Runner) TaskTypes(ctx context.Context) ([]string, error) {
	if len(r.cfg.TaskTypes) > 0 {
		for _, name := range r.cfg.TaskTypes {
			if _, err := r.store.TaskTypeGet(ctx, name); err != nil {
				return nil, fmt.Errorf("task type %s: %w", name, err)
			}
		}
		return r.cfg.TaskTypes, nil
	}
	tts, err := r.store.TaskTypeList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list task types: %w", err)
	}
	names := make([]string, len(tts))
	for i, tt := range tts {
		names[i] = tt.Type
	}
	if len(names) == 0 {
		return nil, errors.New("no task type to dispatch: register one (revisit task-type add)")
	}
	return names, nil
}

// Run dispatches the task types' due tasks and ends wedged runs until ctx
// is done, then stops taking new rounds, lets the rounds in flight finish
// within the grace period and returns nil. It returns ErrAllLoopsDown when
// every loop is unhealthy at once, so that a service manager restarts the
// process.
func (r *Runner) Run(ctx context.Context) error {
	types, err := r.TaskTypes(ctx)
	if err != nil {
		return err
	}
	r.log.Info("task runner starting", "task_types", types)
	loops := map[string]supervise.Loop{"wedged": r.wedgedLoop}
	for _, tt := range types {
		// Each recovers what a crash left (runs recorded but not
		// confirmed, tasks claimed without a run) when it takes the lease,
		// and after a round that may have left some.
		loops["dispatch:"+tt] = newLoop(r, tt).leased.Run
	}
	err = r.sup.Run(ctx, loops)
	if errors.Is(err, supervise.ErrAllDown) {
		r.log.Error("every loop is down; exiting so that the service manager restarts the process")
		return ErrAllLoopsDown
	}
	r.log.Info("task runner stopped")
	return err
}
