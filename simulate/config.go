package simulate

import (
	"fmt"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/simulate/world"
)

// Config is the world a simulation runs and how it runs it; zero fields
// take the defaults of Defaults.
type Config struct {
	// Origins is how many origins the world has at the start, spread
	// evenly over the visit types.
	Origins int
	// Duration is the simulated time.
	Duration time.Duration
	// VisitTypes are the visit types of the world's origins.
	VisitTypes []string
	// Workers is how many workers visit each visit type's origins; a
	// visit type absent takes DefaultWorkers.
	Workers map[string]int
	// QueueCapacity is each visit type's queue length (the load task
	// type's max_queue_length).
	QueueCapacity int
	// World is the world's parameters; nil: world.Default.
	World *world.Params
	// ListerRate is how many new origins the lister finds an hour, in all,
	// spread evenly over the visit types; 0: none.
	ListerRate float64
	// WorldListerRate sets ListerRate from the world: the rate whose
	// first visits take World.Origins.NewOriginsLoad of the workers' time.
	WorldListerRate bool
	// ListerEvery is how often the lister runs: it records the origins it
	// found since its previous run.
	ListerEvery time.Duration
	// SteadyListing makes the lister find exactly ListerRate origins an
	// hour instead of a Poisson-distributed number.
	SteadyListing bool
	// Relist, when set, is how often every lister of the world lists its
	// origins again with their last update, instead of its own cadence
	// (world.Lister.RelistEvery).
	Relist time.Duration
	// UpstreamLister has the lister behave as Software Heritage's
	// simulator's, whose count of origins restarts with the simulation:
	// its k-th run, the first at the start, lists the world's first
	// k·ListerRate·ListerEvery origins with their current last update,
	// those the world does not have yet being new. Relist is then unused.
	UpstreamLister bool
	// FoldBatch is how many results of a visit type are folded at once;
	// FoldWait, how long a result waits for its batch to fill. The
	// results waiting are also folded before each sample.
	FoldBatch int
	FoldWait  time.Duration
	// SampleEvery is how often the world is measured.
	SampleEvery time.Duration
	// LossRate is the fraction of visits whose worker never answers.
	LossRate float64
	// Seed seeds every random choice.
	Seed uint64
	// Start is the simulated time at the start.
	Start time.Time
	// Store is the URL of the store to run on, which must hold no origin
	// of the visit types simulated; the visit types then run one after
	// another. "" is a temporary SQLite store for each visit type, in
	// memory (in a file beyond a million origins), the visit types run
	// at once.
	Store string
	// CheckMetrics has every sample compare the scheduler metrics that
	// the simulation keeps with those the store computes
	// (MetricsUpdate), and fail on a difference; otherwise the store
	// computes them at the end only.
	CheckMetrics bool
}

// DefaultWorkers is how many workers a visit type has unless told.
const DefaultWorkers = 48

// Defaults are the values of the fields of Config left zero, but
// ListerRate, whose zero is no new origin, and Relist, whose zero is each
// lister's own cadence.
var Defaults = Config{
	Origins: 10_000, Duration: 7 * 24 * time.Hour, VisitTypes: []string{"git"},
	QueueCapacity: 1_000, ListerEvery: time.Hour,
	FoldBatch: 1000, FoldWait: 5 * time.Minute, SampleEvery: time.Hour, Seed: 1,
	Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
}

// Upstream returns the settings of Software Heritage's simulator (one
// visit type, 48 workers, queues of 10,000, rounds of at least 1,000
// every 10 s queued in the policy's order, its lister, which lists the
// world's first 100·(h+1) origins at hour h, results folded by 100, a
// partial batch at the hourly sample where upstream's waits for ever) for
// the world of cfg, and the orchestrator settings that go with them, so
// that both simulators run the same world.
func Upstream(cfg Config, o orchestrator.Config) (Config, orchestrator.Config) {
	cfg.VisitTypes = []string{"git"}
	cfg.Workers = map[string]int{"git": DefaultWorkers}
	cfg.QueueCapacity, cfg.ListerRate, cfg.ListerEvery, cfg.UpstreamLister = 10_000, 100, time.Hour, true
	cfg.WorldListerRate, cfg.Relist = false, 0
	w := world.Upstream()
	cfg.World = &w
	cfg.FoldBatch, cfg.FoldWait, cfg.SteadyListing = 100, time.Hour, true
	o.MaxPerRound, o.MinFreeRatio, o.KeepPolicyOrder = 10_000, 0.1, true
	// A jitter of 1 ns always draws 0: upstream has none (0 would take the
	// default).
	o.QueueFullBackoff, o.QueuePollInterval, o.NoOriginsBackoff, o.RoundJitter = 10*time.Second, 10*time.Second,
		10*time.Second, time.Nanosecond
	return cfg, o
}

// withDefaults returns c with its zero fields set.
func (c Config) withDefaults() Config {
	d := Defaults
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setD := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	set(&c.Origins, d.Origins)
	set(&c.QueueCapacity, d.QueueCapacity)
	set(&c.FoldBatch, d.FoldBatch)
	setD(&c.Duration, d.Duration)
	setD(&c.ListerEvery, d.ListerEvery)
	setD(&c.FoldWait, d.FoldWait)
	setD(&c.SampleEvery, d.SampleEvery)
	if len(c.VisitTypes) == 0 {
		c.VisitTypes = d.VisitTypes
	}
	if c.Seed == 0 {
		c.Seed = d.Seed
	}
	if c.Start.IsZero() {
		c.Start = d.Start
	}
	if c.World == nil {
		w := world.Default()
		c.World = &w
	}
	if c.WorldListerRate {
		c.ListerRate = c.worldListerRate()
	}
	return c
}

// worldListerRate returns the rate of new origins an hour whose first
// visits take the world's NewOriginsLoad of the workers' time.
func (c Config) worldListerRate() float64 {
	m, err := world.New(*c.World)
	if err != nil {
		return 0 // Validate says why
	}
	workers := 0
	for _, vt := range c.VisitTypes {
		workers += c.workers(vt)
	}
	return c.World.Origins.NewOriginsLoad * float64(workers) * time.Hour.Seconds() / m.MeanFirstVisit().Seconds()
}

// Validate checks the configuration; errors name the option.
func (c Config) Validate() error {
	switch {
	case c.Origins < 0:
		return fmt.Errorf("origins: %d is negative", c.Origins)
	case c.Duration < 0:
		return fmt.Errorf("duration: %s is negative", c.Duration)
	case c.QueueCapacity < 0:
		return fmt.Errorf("queue capacity: %d is negative", c.QueueCapacity)
	case c.ListerRate < 0:
		return fmt.Errorf("lister rate: %g origins an hour is negative", c.ListerRate)
	case c.FoldBatch < 0:
		return fmt.Errorf("fold batch: %d is negative", c.FoldBatch)
	case c.LossRate < 0 || c.LossRate > 1:
		return fmt.Errorf("loss rate: %g is not between 0 and 1", c.LossRate)
	}
	for name, d := range map[string]time.Duration{"lister interval": c.ListerEvery, "relist interval": c.Relist,
		"fold wait": c.FoldWait, "sample interval": c.SampleEvery} {
		if d < 0 {
			return fmt.Errorf("%s: %s is negative", name, d)
		}
	}
	if c.World != nil {
		if err := c.World.Validate(); err != nil {
			return fmt.Errorf("world: %w", err)
		}
	}
	for i, vt := range c.VisitTypes {
		if err := revisit.ValidateVisitType(vt); err != nil {
			return fmt.Errorf("visit types: %w", err)
		}
		if slices.Contains(c.VisitTypes[:i], vt) {
			return fmt.Errorf("visit types: %s is named twice", vt)
		}
	}
	for vt, n := range c.Workers {
		if !slices.Contains(c.VisitTypes, vt) && len(c.VisitTypes) > 0 {
			return fmt.Errorf("workers: %s is not a simulated visit type (%v)", vt, c.VisitTypes)
		}
		if n < 1 {
			return fmt.Errorf("workers of %s: %d, want at least 1", vt, n)
		}
	}
	return nil
}

// workers returns how many workers visit a visit type.
func (c Config) workers(vt string) int {
	if n, ok := c.Workers[vt]; ok {
		return n
	}
	return DefaultWorkers
}

// settings describes c, the visit timeout and the policies' weights for
// the report.
func (c Config) settings(visitTimeout time.Duration, policies []PolicyFigures) []string {
	s := []string{
		fmt.Sprintf("origins at the start: %d", c.Origins),
		fmt.Sprintf("simulated time: %s, from %s", c.Duration, c.Start.Format(time.RFC3339)),
		"world: " + c.World.Describe(),
		c.listerSetting(),
		fmt.Sprintf("queue capacity: %d; results of each visit type folded by %d (or after %s)",
			c.QueueCapacity, c.FoldBatch, c.FoldWait),
		fmt.Sprintf("visits lost: %g%%; visit timeout %s", c.LossRate*100, visitTimeout),
		fmt.Sprintf("seed: %d", c.Seed),
	}
	for _, vt := range c.VisitTypes {
		line := fmt.Sprintf("%s: %d workers; policies", vt, c.workers(vt))
		for _, p := range policies {
			if p.VisitType == vt {
				line += fmt.Sprintf(" %s %d", p.Policy, p.Weight)
			}
		}
		s = append(s, line)
	}
	return s
}

// listerSetting describes the lister for the report.
func (c Config) listerSetting() string {
	if c.UpstreamLister {
		return fmt.Sprintf("lister: upstream's, listing the world's first %g·k origins at its k-th run, every %s",
			c.ListerRate*c.ListerEvery.Hours(), c.ListerEvery)
	}
	relist := "by each lister at its own cadence"
	if c.Relist > 0 {
		relist = "every " + c.Relist.String()
	}
	return fmt.Sprintf("new origins: %.4g an hour, listed every %s; known origins listed again %s",
		c.ListerRate, c.ListerEvery, relist)
}
