package simulate

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// runtimeBounds are the buckets of the histogram of eventful visits'
// durations.
var runtimeBounds = []time.Duration{time.Second, 10 * time.Second, time.Minute, 10 * time.Minute,
	time.Hour, 2 * time.Hour}

// add counts d in its bucket.
func (h *Histogram) add(d time.Duration) {
	i, _ := slices.BinarySearch(h.Bounds, d)
	h.Counts[i]++
}

// quantiles returns the 50th, 90th and 99th percentiles of ds (nearest
// rank); it reorders ds.
func quantiles(ds []time.Duration) Quantiles {
	if len(ds) == 0 {
		return Quantiles{}
	}
	rank := func(p float64) int { return max(0, int(math.Ceil(p*float64(len(ds))))-1) }
	// Selecting the 99th, then the 90th below it, then the 50th below that
	// leaves each earlier pick in place.
	p99 := nth(ds, rank(0.99))
	p90 := nth(ds[:rank(0.99)+1], rank(0.9))
	p50 := nth(ds[:rank(0.9)+1], rank(0.5))
	return Quantiles{P50: p50, P90: p90, P99: p99}
}

// nth reorders ds so that ds[k] is the value a sort would put there, every
// value before it no greater and every value after it no less, and returns
// it (quickselect, median-of-three pivots).
func nth(ds []time.Duration, k int) time.Duration {
	lo, hi := 0, len(ds)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if ds[mid] < ds[lo] {
			ds[mid], ds[lo] = ds[lo], ds[mid]
		}
		if ds[hi] < ds[lo] {
			ds[hi], ds[lo] = ds[lo], ds[hi]
		}
		if ds[hi] < ds[mid] {
			ds[hi], ds[mid] = ds[mid], ds[hi]
		}
		pivot := ds[mid]
		i, j := lo, hi
		for i <= j {
			for ds[i] < pivot {
				i++
			}
			for ds[j] > pivot {
				j--
			}
			if i <= j {
				ds[i], ds[j] = ds[j], ds[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return ds[k]
		}
	}
	return ds[k]
}

// sample measures the world now, once the results waiting are folded,
// and appends it to the result.
func (r *run) sample() error {
	now, vt := r.sim.Now(), r.vt
	s := Sample{Time: now, Visits: r.res.Counters.Total}
	s.Known, s.Enabled, s.NeverVisited, s.PendingChanges, r.lags = r.survey(now)
	if r.cfg.CheckMetrics || now.Equal(r.res.End) {
		if err := r.checkMetrics(s); err != nil {
			return err
		}
	}
	var since time.Duration
	if n := len(r.res.Samples); n > 0 {
		since = now.Sub(r.res.Samples[n-1].Time)
	}
	r.busy(0)
	ts := TypeSample{QueueDepth: vt.queue.Len(), Visited: len(r.lags), Freshness: quantiles(r.lags)}
	if since > 0 {
		ts.Utilization = float64(vt.busyTime-vt.lastBusy) / float64(time.Duration(vt.workers)*since)
	}
	vt.lastBusy = vt.busyTime
	s.ByType = []TypeSample{ts}
	r.res.Samples = append(r.res.Samples, s)
	return nil
}

// finish fills the figures of the whole run.
func (r *run) finish() {
	vt := r.vt
	r.res.Events = r.sim.Processed()
	var weights, total int64
	for i, sh := range vt.shares {
		weights += int64(sh.Weight)
		total += vt.visits[i]
	}
	for i, sh := range vt.shares {
		p := PolicyFigures{VisitType: vt.name, Policy: sh.Policy, Weight: sh.Weight, Visits: vt.visits[i],
			Eventful: vt.eventful[i]}
		if weights > 0 {
			p.Configured = float64(sh.Weight) / float64(weights)
		}
		if total > 0 {
			p.Share = float64(vt.visits[i]) / float64(total)
		}
		r.res.Policies = append(r.res.Policies, p)
	}
	l := Latency{VisitType: vt.name, Visited: len(vt.latency), Quantiles: quantiles(vt.latency)}
	for _, o := range r.origins {
		if o.new {
			l.New++
		}
	}
	r.res.FirstVisits = []Latency{l}
}

// merge adds up the Results of the visit types of one scenario, in the
// order of cfg.VisitTypes: they were sampled at the same simulated times.
func merge(cfg Config, visitTimeout time.Duration, parts []Result) Result {
	res := parts[0]
	res.VisitTypes, res.Policies, res.FirstVisits = cfg.VisitTypes, nil, nil
	res.Counters, res.Events = Counters{}, 0
	res.Runtimes.Counts = make([]int64, len(res.Runtimes.Bounds)+1)
	res.Samples = make([]Sample, len(parts[0].Samples))
	for i, s := range parts[0].Samples {
		res.Samples[i] = Sample{Time: s.Time}
	}
	for _, p := range parts {
		res.Counters.Total += p.Counters.Total
		res.Counters.Uneventful += p.Counters.Uneventful
		res.Counters.Eventful += p.Counters.Eventful
		res.Counters.VeryLong += p.Counters.VeryLong
		res.Events += p.Events
		for i, n := range p.Runtimes.Counts {
			res.Runtimes.Counts[i] += n
		}
		res.Policies = append(res.Policies, p.Policies...)
		res.FirstVisits = append(res.FirstVisits, p.FirstVisits...)
		for i, s := range p.Samples {
			m := &res.Samples[i]
			m.Known += s.Known
			m.Enabled += s.Enabled
			m.NeverVisited += s.NeverVisited
			m.PendingChanges += s.PendingChanges
			m.Visits += s.Visits
			m.ByType = append(m.ByType, s.ByType...)
		}
	}
	res.Settings = cfg.settings(visitTimeout, res.Policies)
	return res
}

// survey walks the visit type's origins once, for a sample at now. It
// returns their scheduler metrics (revisit.SchedulerMetrics) summed over
// listers, as the store would compute them: the simulation mirrors what
// the store holds of each origin (its listed last update, whether it is
// enabled, its last successful visit folded). And it returns the freshness
// lag of each origin visited with success, in the room of r.lags.
func (r *run) survey(now time.Time) (known, enabled, never, pending int64, lags []time.Duration) {
	lags = r.lags[:0]
	for _, o := range r.origins {
		known++
		if !o.succeeded.IsZero() {
			lags = append(lags, max(0, o.lastUpdate(now).Sub(o.succeeded)))
		}
		if !o.enabled {
			continue
		}
		enabled++
		switch {
		case o.successful.IsZero():
			never++
		case o.listedUpdate.After(o.successful):
			pending++
		}
	}
	return known, enabled, never, pending, lags
}

// checkMetrics has the store compute the scheduler metrics now and
// compares them with those of s.
func (r *run) checkMetrics(s Sample) error {
	ms, err := r.st.MetricsUpdate(r.ctx, nil, s.Time)
	if err != nil {
		return err
	}
	var got Sample
	for _, m := range ms {
		if m.VisitType != r.vt.name {
			continue
		}
		got.Known += m.OriginsKnown
		got.Enabled += m.OriginsEnabled
		got.NeverVisited += m.OriginsNeverVisited
		got.PendingChanges += m.OriginsWithPendingChanges
	}
	if got.Known != s.Known || got.Enabled != s.Enabled || got.NeverVisited != s.NeverVisited ||
		got.PendingChanges != s.PendingChanges {
		return fmt.Errorf("at %s the store's scheduler metrics (known %d, enabled %d, never visited %d, "+
			"pending changes %d) differ from the simulation's (%d, %d, %d, %d)", s.Time.Format(time.RFC3339),
			got.Known, got.Enabled, got.NeverVisited, got.PendingChanges,
			s.Known, s.Enabled, s.NeverVisited, s.PendingChanges)
	}
	return nil
}
