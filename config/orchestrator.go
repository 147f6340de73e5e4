package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
)

// Orchestrator configures revisit schedule-recurrent (semantics.md §4).
// Its settings are orchestrator.Config's, their defaults
// orchestrator.DefaultConfig's (the values below), their checks
// orchestrator.Config.Validate's:
//
//	orchestrator:
//	  max_per_round: 10000        # free slots filled per round, at most (1 to 100000)
//	  min_free_ratio: 0.05        # publish only when this much of the queue is free (0: one slot)
//	  queue_full_backoff: 60s     # the longest wait for a full queue to drain
//	  queue_poll_interval: 1s     # how often a full queue is measured while it drains
//	  no_origins_backoff: 20m
//	  round_jitter: 5s
//	  visit_timeout: 24h          # a sent visit without result is lost after this
//	  visit_timeouts: {content: 2h}
//	  lost_retention: 7d          # lost visits are forgotten this long after their timeout
//	  lease_ttl: 15s              # a dead replica's visit types move within this
//	  grace_period: 30s
//	  scheduling_policy:          # by visit type, or "default"
//	    git:
//	      - {policy: already_visited_order_by_lag, weight: 49}
//	      - {policy: never_visited_oldest_update_first, weight: 49}
//	      - {policy: origins_without_last_update, weight: 2,
//	         lister: gitlab/gitlab.com, sample: 0.5,
//	         cooldowns: {absolute: 12h, scheduled: 7d, failed: 14d, not_found: 31d}}
//
// Visit types absent from scheduling_policy (and "default") take the
// built-in weights of semantics.md §4.1.
type Orchestrator struct {
	MaxPerRound       int                    `yaml:"max_per_round"`
	MinFreeRatio      float64                `yaml:"min_free_ratio"`
	QueueFullBackoff  Duration               `yaml:"queue_full_backoff"`
	QueuePollInterval Duration               `yaml:"queue_poll_interval"`
	NoOriginsBackoff  Duration               `yaml:"no_origins_backoff"`
	RoundJitter       Duration               `yaml:"round_jitter"`
	VisitTimeout      Duration               `yaml:"visit_timeout"`
	LostRetention     Duration               `yaml:"lost_retention"`
	LeaseTTL          Duration               `yaml:"lease_ttl"`
	GracePeriod       Duration               `yaml:"grace_period"`
	VisitTimeouts     map[string]Duration    `yaml:"visit_timeouts"`
	SchedulingPolicy  map[string][]PolicyUse `yaml:"scheduling_policy"`
}

// PolicyUse is one weighted policy of a visit type and the extra options
// of its grabs.
type PolicyUse struct {
	Policy string `yaml:"policy"`
	// Weight is the policy's part of the free slots; 0 disables it.
	Weight *int `yaml:"weight"`
	// Lister restricts the policy to one lister: "name" or
	// "name/instance".
	Lister string `yaml:"lister"`
	// Sample considers each eligible origin with this probability.
	Sample float64 `yaml:"sample"`
	// Cooldowns override the default cooldowns of the policy's grabs.
	Cooldowns *Cooldowns `yaml:"cooldowns"`
}

// Cooldowns are the four cooldowns of semantics.md §3.1, in the
// configuration and in API requests: one left out keeps its default, one
// set to 0 is disabled.
type Cooldowns struct {
	Absolute  *Duration `yaml:"absolute" json:"absolute"`
	Scheduled *Duration `yaml:"scheduled" json:"scheduled"`
	Failed    *Duration `yaml:"failed" json:"failed"`
	NotFound  *Duration `yaml:"not_found" json:"not_found"`
}

// Resolve returns the cooldowns c sets, the defaults for those it leaves
// out (all of them when c is nil).
func (c *Cooldowns) Resolve() revisit.Cooldowns {
	r := revisit.DefaultCooldowns()
	if c == nil {
		return r
	}
	for _, o := range []struct {
		v   *Duration
		dst *time.Duration
	}{{c.Absolute, &r.Absolute}, {c.Scheduled, &r.Scheduled}, {c.Failed, &r.Failed}, {c.NotFound, &r.NotFound}} {
		if o.v != nil {
			*o.dst = time.Duration(*o.v)
		}
	}
	return r
}

// NewCooldowns returns the form of c that sets all four.
func NewCooldowns(c revisit.Cooldowns) *Cooldowns {
	d := func(v time.Duration) *Duration { x := Duration(v); return &x }
	return &Cooldowns{Absolute: d(c.Absolute), Scheduled: d(c.Scheduled), Failed: d(c.Failed), NotFound: d(c.NotFound)}
}

// defaultOrchestrator returns the section with orchestrator.DefaultConfig's
// settings.
func defaultOrchestrator() Orchestrator {
	d := orchestrator.DefaultConfig()
	return Orchestrator{MaxPerRound: d.MaxPerRound, MinFreeRatio: d.MinFreeRatio,
		QueueFullBackoff: Duration(d.QueueFullBackoff), QueuePollInterval: Duration(d.QueuePollInterval),
		NoOriginsBackoff: Duration(d.NoOriginsBackoff), RoundJitter: Duration(d.RoundJitter),
		VisitTimeout: Duration(d.VisitTimeout), LostRetention: Duration(d.LostRetention),
		LeaseTTL: Duration(d.LeaseTTL), GracePeriod: Duration(d.GracePeriod)}
}

// Config returns the orchestrator's configuration of the section's
// settings. A min_free_ratio of 0 is orchestrator.AnyFreeSlot: a round
// runs as soon as one slot is free. Other zero settings stay zero, which
// orchestrator.Config.Validate refuses.
func (o Orchestrator) Config() orchestrator.Config {
	cfg := orchestrator.Config{
		MaxPerRound: o.MaxPerRound, MinFreeRatio: o.MinFreeRatio,
		QueueFullBackoff: time.Duration(o.QueueFullBackoff), QueuePollInterval: time.Duration(o.QueuePollInterval),
		NoOriginsBackoff: time.Duration(o.NoOriginsBackoff), RoundJitter: time.Duration(o.RoundJitter),
		VisitTimeout: time.Duration(o.VisitTimeout), LostRetention: time.Duration(o.LostRetention),
		LeaseTTL: time.Duration(o.LeaseTTL), GracePeriod: time.Duration(o.GracePeriod),
	}
	if o.MinFreeRatio == 0 {
		cfg.MinFreeRatio = orchestrator.AnyFreeSlot
	}
	if len(o.VisitTimeouts) > 0 {
		cfg.VisitTimeouts = map[string]time.Duration{}
		for vt, d := range o.VisitTimeouts {
			cfg.VisitTimeouts[vt] = time.Duration(d)
		}
	}
	if len(o.SchedulingPolicy) > 0 {
		cfg.Shares = map[string][]orchestrator.Share{}
		for vt, uses := range o.SchedulingPolicy {
			for _, u := range uses {
				s := orchestrator.Share{Policy: revisit.Policy(u.Policy)}
				if u.Weight != nil {
					s.Weight = *u.Weight
				}
				s.Grab.ListerName, s.Grab.ListerInstanceName = u.ListerName()
				s.Grab.Sample = u.Sample
				if u.Cooldowns != nil {
					c := u.Cooldowns.Resolve()
					s.Grab.Cooldowns = &c
				}
				cfg.Shares[vt] = append(cfg.Shares[vt], s)
			}
		}
	}
	return cfg
}

// validate checks the section: what only the file can get wrong (a
// weight left out, a lister not name or name/instance), then the
// orchestrator's own checks (orchestrator.Config.Validate). Errors name
// the key.
func (o Orchestrator) validate() error {
	for vt, uses := range o.SchedulingPolicy {
		for i, u := range uses {
			key := fmt.Sprintf("orchestrator.scheduling_policy.%s[%d]", vt, i)
			if u.Weight == nil {
				return fmt.Errorf("%s.weight: missing", key)
			}
			if u.Lister != "" && strings.Count(u.Lister, "/") > 1 {
				return fmt.Errorf("%s.lister: %q is not name or name/instance", key, u.Lister)
			}
		}
	}
	if err := o.Config().Validate(); err != nil {
		return fmt.Errorf("orchestrator.%w", err)
	}
	return nil
}

// ListerName splits Lister into the lister's name and instance name.
func (u PolicyUse) ListerName() (name, instance string) {
	name, instance, _ = strings.Cut(u.Lister, "/")
	return name, instance
}
