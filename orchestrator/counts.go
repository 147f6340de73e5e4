package orchestrator

import (
	"context"
	"sync"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// countInterval is how often a loop refreshes its revisit_visits_in_flight
// gauges.
const countInterval = 30 * time.Second

// inFlightCounts is the last count of the in-flight visits, shared by the
// loops of a process. VisitsCount counts the visits of every visit type at
// once (on PostgreSQL a scan of every in-flight record, ~0.4 s a million),
// so one count serves every loop: with a loop per visit type each counting
// for itself, a process driving twenty visit types scanned the records
// twenty times per interval.
type inFlightCounts struct {
	mu     sync.Mutex
	at     time.Time
	counts map[string]revisit.VisitCounts
}

// of returns the counts of a visit type, counted less than countInterval
// before now, counting again when the last count is older. A loop that
// finds another one counting waits for its count.
func (c *inFlightCounts) of(ctx context.Context, st store.Store, visitType string, now time.Time) (revisit.VisitCounts, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || now.Sub(c.at) >= countInterval || now.Before(c.at) {
		cs, err := st.VisitsCount(ctx)
		if err != nil {
			return revisit.VisitCounts{}, err
		}
		c.counts = make(map[string]revisit.VisitCounts, len(cs))
		for _, vc := range cs {
			c.counts[vc.VisitType] = vc
		}
		c.at = now
	}
	if vc, ok := c.counts[visitType]; ok {
		return vc, nil
	}
	return revisit.VisitCounts{VisitType: visitType}, nil
}
