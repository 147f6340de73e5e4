package history

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
)

// Recall is what a history recalls the last 24 hours from: the store.
// store.Store implements it.
type Recall interface {
	// ActivityByMinute counts, by visit type, kind and minute of [since,
	// until), what the store keeps a trace of.
	ActivityByMinute(ctx context.Context, since, until time.Time) ([]revisit.MinuteCount, error)
}

// rebuild adds to the history what the store recalls of the Minutes
// minutes before the history started: the visits scheduled (by policy
// while their records are kept), the results by outcome, the visits lost.
// The minutes it counted and found nothing in get a value of 0, in the
// series of what it found and the visits lost and scheduled of every visit
// type it found.
func (h *History) rebuild(ctx context.Context) error {
	until := h.started
	since := until.Add(-Minutes * time.Minute)
	counts, err := h.cfg.Store.ActivityByMinute(ctx, since, until)
	if err != nil {
		return err
	}
	counted := map[Key]bool{}
	for _, c := range counts {
		k := Key{VisitType: c.VisitType, Label: c.Label}
		switch c.Kind {
		case revisit.ActivityScheduled:
			k.Series = Scheduled
		case revisit.ActivityResult:
			k.Series = Results
		case revisit.ActivityLost:
			k.Series = Lost
		default:
			continue
		}
		h.Add(k, c.Minute, float64(c.Count))
		counted[k] = true
		counted[Key{VisitType: c.VisitType, Series: Lost}] = true
		counted[Key{VisitType: c.VisitType, Series: Scheduled}] = true
	}
	for k := range counted {
		h.Known(k, since, until)
	}
	h.log.Info("history: recalled the last 24 h from the store", "minute_counts", len(counts))
	return nil
}
