package storetest

import (
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
)

// oracle is grab_next_visits written as plainly as possible: filter every
// listed origin by the rules of semantics.md §3, sort the survivors in Go.
// The property test holds the stores to it.
type oracle struct {
	rows      []revisit.ListedOrigin
	stats     map[revisit.OriginKey]revisit.VisitStats
	finished  map[uuid.UUID]*time.Time // listers' last_listing_finished_at
	positions map[string]int64         // queue positions
}

func newOracle() *oracle {
	return &oracle{stats: map[revisit.OriginKey]revisit.VisitStats{},
		finished: map[uuid.UUID]*time.Time{}, positions: map[string]int64{}}
}

// sortKey is a policy's order key: compared element by element.
type sortKey []int64

func us(t *time.Time, ifNil int64) int64 {
	if t == nil {
		return ifNil
	}
	return t.UnixMicro()
}

// eligible reports whether a row may be grabbed with p at now.
func (o *oracle) eligible(lo revisit.ListedOrigin, p revisit.GrabParams, c revisit.Cooldowns, now time.Time, lister *uuid.UUID) bool {
	if lo.VisitType != p.VisitType || lo.Enabled == p.Disabled {
		return false
	}
	if lister != nil && lo.ListerID != *lister {
		return false
	}
	st := o.stats[lo.Key()]
	ls, lv, succ := st.LastScheduled, st.LastVisit, st.LastSuccessful
	status := revisit.VisitStatus("")
	if st.LastVisitStatus != nil {
		status = *st.LastVisitStatus
	}
	before := func(t *time.Time, bound time.Time) bool { return t != nil && t.Before(bound) }
	if c.Absolute > 0 && ls != nil && !before(ls, now.Add(-c.Absolute)) {
		return false
	}
	if c.Scheduled > 0 && ls != nil && !before(ls, now.Add(-c.Scheduled)) && !(lv != nil && ls.Before(*lv)) {
		return false
	}
	if c.Failed > 0 && status == revisit.VisitFailed && !before(lv, now.Add(-c.Failed)) {
		return false
	}
	if c.NotFound > 0 && status == revisit.VisitNotFound && !before(lv, now.Add(-c.NotFound)) {
		return false
	}
	switch p.Policy {
	case revisit.NeverVisitedOldestUpdateFirst:
		return succ == nil && lo.LastUpdate != nil
	case revisit.AlreadyVisitedOrderByLag:
		return succ != nil && lo.LastUpdate != nil && lo.LastUpdate.After(*succ)
	case revisit.OriginsWithoutLastUpdate:
		return lo.LastUpdate == nil
	case revisit.StopAfterSuccess:
		return status != revisit.VisitSuccessful
	case revisit.FirstVisitsAfterListing:
		fin := o.finished[lo.ListerID]
		return ls == nil || (fin != nil && ls.Before(*fin))
	}
	return true
}

// key returns the row's position in the policy's order.
func (o *oracle) key(lo revisit.ListedOrigin, p revisit.Policy) sortKey {
	st := o.stats[lo.Key()]
	switch p {
	case revisit.OldestScheduledFirst, revisit.FirstVisitsAfterListing:
		return sortKey{us(st.LastScheduled, math.MinInt64)}
	case revisit.NeverVisitedOldestUpdateFirst:
		return sortKey{us(lo.LastUpdate, 0)}
	case revisit.AlreadyVisitedOrderByLag:
		return sortKey{-(lo.LastUpdate.UnixMicro() - st.LastSuccessful.UnixMicro())}
	case revisit.OriginsWithoutLastUpdate:
		pos := int64(math.MinInt64)
		if st.NextVisitQueuePosition != nil {
			pos = *st.NextVisitQueuePosition
		}
		return sortKey{pos, lo.FirstSeen.UnixMicro()}
	case revisit.StopAfterSuccess:
		return sortKey{us(lo.LastUpdate, math.MaxInt64), lo.FirstSeen.UnixMicro()}
	}
	panic("oracle: policy " + p)
}

// grab returns the keys of the expected result, one per origin, in order.
func (o *oracle) grab(p revisit.GrabParams, c revisit.Cooldowns, lister *uuid.UUID) []sortKey {
	var candidates []revisit.ListedOrigin
	for _, r := range o.rows {
		if o.eligible(r, p, c, p.Now, lister) {
			candidates = append(candidates, r)
		}
	}
	slices.SortStableFunc(candidates, func(a, b revisit.ListedOrigin) int {
		return slices.Compare(o.key(a, p.Policy), o.key(b, p.Policy))
	})
	var keys []sortKey
	seen := map[string]bool{}
	for _, r := range candidates {
		if len(keys) == p.Count {
			break
		}
		if !seen[r.URL] {
			seen[r.URL] = true
			keys = append(keys, o.key(r, p.Policy))
		}
	}
	return keys
}

// mark applies a grab's marking to the model.
func (o *oracle) mark(p revisit.GrabParams, got []revisit.ListedOrigin) {
	best, found := int64(0), false
	for _, lo := range got {
		st, ok := o.stats[lo.Key()]
		if !ok {
			st = revisit.NewVisitStats(lo.Key())
		}
		if st.LastScheduled == nil || st.LastScheduled.Before(p.Now) {
			now := p.Now
			st.LastScheduled = &now
		}
		o.stats[lo.Key()] = st
		if st.NextVisitQueuePosition != nil && (!found || *st.NextVisitQueuePosition > best) {
			best, found = *st.NextVisitQueuePosition, true
		}
	}
	if found && p.Policy == revisit.OriginsWithoutLastUpdate {
		o.positions[p.VisitType] = max(o.positions[p.VisitType], best)
	}
}
