// Package inflight keeps a count of the visits in flight for those that
// show it often (the orchestrator's gauges, the API's queues).
// A store's VisitsCount counts every visit type at once and, on
// PostgreSQL, reads every in-flight record (~0.4 s a million), so its
// callers share a count and bound how often they take one.
package inflight

import (
	"context"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
)

// Store is what Counts needs of a store.
type Store interface {
	// VisitsCount counts visits by visit type and state, by visit type.
	VisitsCount(ctx context.Context) ([]revisit.VisitCounts, error)
}

// Counts is a shared count of the visits in flight. A count serves for
// MinAge, or for Reuse times as long as it took when that is longer, so
// that counting a large backlog keeps the store busy 1/Reuse of the time
// at most. The zero value counts at every call.
type Counts struct {
	MinAge time.Duration
	Reuse  int

	mu     sync.Mutex
	at     time.Time
	took   time.Duration
	counts map[string]revisit.VisitCounts // by visit type
}

// Get returns the visits in flight by visit type, as counted from st at
// most MinAge (or Reuse times the count's duration) before now. Callers
// that find the count stale while another one counts wait for its count.
func (c *Counts) Get(ctx context.Context, st Store, now time.Time) (map[string]revisit.VisitCounts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maxAge := max(c.MinAge, time.Duration(c.Reuse)*c.took)
	if c.counts != nil && !now.Before(c.at) && now.Sub(c.at) < maxAge {
		return c.counts, nil
	}
	start := time.Now()
	cs, err := st.VisitsCount(ctx)
	if err != nil {
		return nil, err
	}
	c.took = time.Since(start)
	c.counts = make(map[string]revisit.VisitCounts, len(cs))
	for _, vc := range cs {
		c.counts[vc.VisitType] = vc
	}
	c.at = now
	return c.counts, nil
}
