package history

import (
	"maps"
	"slices"
	"time"
)

// Window is the history of the last minutes, up to the last whole one.
type Window struct {
	// Start is the first minute: the values of a series are those of Start,
	// Start + 1 minute, and so on, Minutes of them.
	Start   time.Time `json:"start"`
	Minutes int       `json:"minutes"`
	// VisitTypes are the visit types with a series, by name.
	VisitTypes []VisitType `json:"visit_types"`
	// DroppedSeries counts the series not kept since start: the history
	// holds MaxSeries at most.
	DroppedSeries int `json:"dropped_series"`
}

// Values are a series' values, one a minute; null for a minute without
// one (before the process started, for a series the store does not
// recall).
type Values []*float64

// VisitType is the history of one visit type: counts are per minute,
// measures the last of their minute.
type VisitType struct {
	VisitType string `json:"visit_type"`
	// Scheduled are the visits scheduled per minute, by policy.
	Scheduled map[string]Values `json:"scheduled"`
	// ScheduledWithoutPolicy are the visits scheduled before the process
	// started whose policy the store no longer records (their visit has
	// ended).
	ScheduledWithoutPolicy Values `json:"scheduled_without_policy"`
	// Results are the results per minute, by outcome: successful, failed,
	// not_found, unreadable.
	Results map[string]Values `json:"results"`
	// Lost are the visits declared lost per minute.
	Lost Values `json:"lost"`
	// QueueDepth is the messages waiting in the queue; FreeSlots what it
	// still takes.
	QueueDepth Values `json:"queue_depth"`
	FreeSlots  Values `json:"free_slots"`
	// GrabP95Seconds and GrabMeanSeconds are the grabs' latency.
	GrabP95Seconds  Values `json:"grab_p95_seconds"`
	GrabMeanSeconds Values `json:"grab_mean_seconds"`
	// Last24h sums the counts of the last 24 hours, the minute in progress
	// included.
	Last24h Totals `json:"last_24h"`
}

// Totals are the counts of a visit type over a time, summed over the
// minutes that have a value.
type Totals struct {
	Scheduled int64            `json:"scheduled"`
	Results   map[string]int64 `json:"results"`
	Lost      int64            `json:"lost"`
}

// Window returns the last minutes (1 to Minutes) up to the last whole
// minute, and the totals of the last 24 hours up to now.
func (h *History) Window(minutes int) Window {
	minutes = min(max(minutes, 1), Minutes)
	last := minuteOf(h.now.Now()) - 1
	first := last - int64(minutes) + 1
	h.mu.Lock()
	defer h.mu.Unlock()
	byType := map[string]*VisitType{}
	for k, r := range h.series {
		v := byType[k.VisitType]
		if v == nil {
			v = &VisitType{VisitType: k.VisitType, Scheduled: map[string]Values{}, Results: map[string]Values{},
				Last24h: Totals{Results: map[string]int64{}}}
			byType[k.VisitType] = v
		}
		vals := r.values(first, last)
		day := int64(r.sum(last-Minutes+2, last+1))
		switch k.Series {
		case Scheduled:
			if k.Label == "" {
				v.ScheduledWithoutPolicy = vals
			} else {
				v.Scheduled[k.Label] = vals
			}
			v.Last24h.Scheduled += day
		case Results:
			v.Results[k.Label] = vals
			v.Last24h.Results[k.Label] += day
		case Lost:
			v.Lost = vals
			v.Last24h.Lost += day
		case QueueDepth:
			v.QueueDepth = vals
		case FreeSlots:
			v.FreeSlots = vals
		case GrabP95:
			v.GrabP95Seconds = vals
		case GrabMean:
			v.GrabMeanSeconds = vals
		}
	}
	w := Window{Start: timeOf(first), Minutes: minutes, VisitTypes: []VisitType{}, DroppedSeries: h.dropped}
	for _, name := range slices.Sorted(maps.Keys(byType)) {
		v := byType[name]
		for _, vals := range []*Values{&v.ScheduledWithoutPolicy, &v.Lost, &v.QueueDepth, &v.FreeSlots,
			&v.GrabP95Seconds, &v.GrabMeanSeconds} {
			if *vals == nil {
				*vals = make(Values, minutes)
			}
		}
		w.VisitTypes = append(w.VisitTypes, *v)
	}
	return w
}

// values returns the values of the minutes first to last.
func (r *ring) values(first, last int64) Values {
	out := make(Values, 0, last-first+1)
	for m := first; m <= last; m++ {
		if v, ok := r.get(m); ok {
			out = append(out, &v)
		} else {
			out = append(out, nil)
		}
	}
	return out
}

// sum adds the values of the minutes first to last.
func (r *ring) sum(first, last int64) float64 {
	total := 0.0
	for m := first; m <= last; m++ {
		if v, ok := r.get(m); ok {
			total += v
		}
	}
	return total
}
