package feedback

import (
	"bytes"
	"math"
	"math/rand/v2"

	"github.com/revisit-sched/revisit"
)

// Bounds and constants of the rules of semantics.md §7.
const (
	// MinOffset and MaxOffset bound next_position_offset.
	MinOffset = 0
	MaxOffset = 10
	// DisableAfter is how many failed or not_found visits in a row disable
	// an origin.
	DisableAfter = 3
	// Jitter is the half-width of the random spread of an interval: it is
	// multiplied by 1+u with u uniform in [−Jitter, Jitter].
	Jitter = 0.1
)

// Result is what folding a batch of visit statuses decided.
type Result struct {
	// Stats holds the rows the batch changed, each once, in its final state,
	// in the order of the first message that changed it. Rows are whole:
	// fields the batch did not touch keep the values read.
	Stats []revisit.VisitStats
	// Disable lists, in the same order, the origins that a message of the
	// batch left with a failed or not_found visit ending a run of at least
	// DisableAfter such visits of the same status (rule 8), whatever
	// messages followed it.
	Disable []revisit.OriginKey
	// Processed counts the messages folded into stats.
	Processed int
	// Ignored counts the messages skipped: created and ongoing statuses,
	// late and duplicate results (see Late), and anything Fold cannot
	// interpret (an unknown status or a zero date, which Validate rejects).
	Ignored int
	// Late counts the ignored results dated at or before the last visit
	// of their origin: late or duplicate. It is part of Ignored.
	Late int
	// Disabled counts the listed origins Process disabled (rows changed);
	// Fold leaves it 0.
	Disabled int
	// Closed counts the visits in flight Process closed (see Process);
	// Fold leaves it 0.
	Closed int
}

// add counts other's origins in r (other covers different origins).
func (r *Result) add(other Result) {
	r.Stats = append(r.Stats, other.Stats...)
	r.Disable = append(r.Disable, other.Disable...)
	r.Processed += other.Processed
	r.Ignored += other.Ignored
	r.Late += other.Late
	r.Disabled += other.Disabled
	r.Closed += other.Closed
}

// without returns r without the origins of keys, whose statuses part
// folded: part's counts come off r's.
func (r Result) without(keys map[revisit.OriginKey]bool, part Result) Result {
	out := Result{Processed: r.Processed - part.Processed, Ignored: r.Ignored - part.Ignored,
		Late: r.Late - part.Late, Disabled: r.Disabled}
	for _, s := range r.Stats {
		if !keys[s.Key()] {
			out.Stats = append(out.Stats, s)
		}
	}
	for _, k := range r.Disable {
		if !keys[k] {
			out.Disable = append(out.Disable, k)
		}
	}
	return out
}

// Fold applies a batch of visit statuses, in batch order, to the stats it
// concerns and returns the changed rows and the origins to disable. It reads
// stats (the stored rows; a missing key means the origin has none) and
// positions (each visit type's queue position; missing means 0) and changes
// neither. rnd returns a number uniform in [0, 1), mapped linearly onto
// u in [−Jitter, Jitter]: 0 gives −0.1, 0.5 gives 0, 1 (accepted, although
// outside a uniform source's range) gives +0.1; values outside [0, 1] and
// NaN are clamped. A nil rnd uses math/rand/v2. Given rnd, Fold is
// deterministic.
//
// Per message (semantics.md §7):
//
//  1. Missing stats default to revisit.NewVisitStats: all null, offset 4,
//     successive 1.
//  2. If last_visit is set and date <= last_visit, the message is late or a
//     duplicate and is skipped. Dates are compared at the stores'
//     precision (UTC, microseconds), so a replayed message is recognised
//     after a round trip through a store.
//  3. failed and not_found keep their status and are not eventful; full and
//     partial are successful when they carry a snapshot (eventful when it
//     differs from last_snapshot) or, without one, an Eventful flag
//     (eventful as it says), and failed otherwise.
//  4. "Visited before" means last_visit is set, whatever its status: a
//     failed or not_found visit is a visit (the §7 test vector of three
//     not_found ends with offset 6 and successive 3 only under this
//     reading; revisit.VisitStats.Visited, about successful visits, is not
//     this rule). If visited before, the offset moves by −2 when eventful
//     and +1 otherwise, and same_status is whether the new status equals
//     last_visit_status; else the offset stays and same_status is false.
//     The offset is always clamped to [MinOffset, MaxOffset].
//  5. last_visit and last_visit_status take the message's; a successful
//     visit sets last_successful to the later of its date and the old one,
//     and last_snapshot to its snapshot when it has one. The result (date,
//     status, eventful) goes in front of Recent, which keeps the newest
//     revisit.RecentResultsKept.
//  6. next_visit_queue_position = base + floor(IntervalDays(offset) × 86400
//     × (1 + u)), base being the origin's position if set and non-zero, else
//     the visit type's queue position. The visit type's queue position is
//     only read.
//  7. successive_visits is the previous count + 1 if same_status, else 1.
//  8. The origin is disabled if a message leaves it failed or not_found
//     with successive_visits >= DisableAfter. A later successful visit, in
//     the same batch or another, does not enable it again (a listing
//     does): where a stream is cut into batches changes nothing.
//
// Fields the rules do not name (last_scheduled) are kept as read.
func Fold(stats map[revisit.OriginKey]revisit.VisitStats, positions map[string]int64, batch []VisitStatus, rnd func() float64) Result {
	if rnd == nil {
		rnd = rand.Float64
	}
	var res Result
	cur := make(map[revisit.OriginKey]revisit.VisitStats)
	disable := make(map[revisit.OriginKey]bool)
	var order []revisit.OriginKey
	for _, m := range batch {
		if !m.final() || !known(m.Status) || m.Date.IsZero() {
			res.Ignored++
			continue
		}
		k := m.Key()
		s, changed := cur[k]
		if !changed {
			var ok bool
			if s, ok = stats[k]; !ok {
				s = revisit.NewVisitStats(k)
			}
			s.URL, s.VisitType = k.URL, k.VisitType
		}
		next, ok := apply(s, m, positions[k.VisitType], rnd)
		if !ok {
			res.Ignored++
			res.Late++
			continue
		}
		if !changed {
			order = append(order, k)
		}
		cur[k] = next
		disable[k] = disable[k] || disabling(next)
		res.Processed++
	}
	for _, k := range order {
		res.Stats = append(res.Stats, cur[k])
		if disable[k] {
			res.Disable = append(res.Disable, k)
		}
	}
	return res
}

// known reports whether status is one Fold understands.
func known(status string) bool {
	switch status {
	case StatusCreated, StatusOngoing, StatusFull, StatusPartial, StatusFailed, StatusNotFound:
		return true
	}
	return false
}

// apply folds one final visit status into s; false means it is late or a
// duplicate and s is unchanged.
func apply(s revisit.VisitStats, m VisitStatus, typePosition int64, rnd func() float64) (revisit.VisitStats, bool) {
	date := revisit.Microsecond(m.Date)
	if s.LastVisit != nil && !date.After(*s.LastVisit) {
		return s, false
	}
	status, eventful := outcome(s, m)

	sameStatus := false
	if s.LastVisit != nil {
		if eventful {
			s.NextPositionOffset -= 2
		} else {
			s.NextPositionOffset++
		}
		sameStatus = s.LastVisitStatus != nil && *s.LastVisitStatus == status
	}
	s.NextPositionOffset = min(max(s.NextPositionOffset, MinOffset), MaxOffset)

	s.LastVisit = &date
	s.LastVisitStatus = &status
	s.Recent = pushRecent(s.Recent, revisit.RecentResult{Date: date, Status: status, Eventful: eventful})
	if status == revisit.VisitSuccessful {
		if s.LastSuccessful == nil || date.After(*s.LastSuccessful) {
			d := date
			s.LastSuccessful = &d
		}
		if m.Snapshot != nil {
			s.LastSnapshot = bytes.Clone(m.Snapshot)
		}
	}

	base := typePosition
	if s.NextVisitQueuePosition != nil && *s.NextVisitQueuePosition != 0 {
		base = *s.NextVisitQueuePosition
	}
	pos := base + spread(IntervalDays(s.NextPositionOffset)*86400, jitter(rnd))
	s.NextVisitQueuePosition = &pos

	if sameStatus {
		s.SuccessiveVisits = max(s.SuccessiveVisits, 0) + 1
	} else {
		s.SuccessiveVisits = 1
	}
	return s, true
}

// outcome maps a final visit status onto the outcome kept in stats and
// whether the visit was eventful (rule 3).
func outcome(s revisit.VisitStats, m VisitStatus) (revisit.VisitStatus, bool) {
	switch {
	case m.Status == StatusFailed:
		return revisit.VisitFailed, false
	case m.Status == StatusNotFound:
		return revisit.VisitNotFound, false
	case m.Snapshot != nil:
		return revisit.VisitSuccessful, !bytes.Equal(m.Snapshot, s.LastSnapshot)
	case m.Eventful != nil:
		return revisit.VisitSuccessful, *m.Eventful
	default:
		return revisit.VisitFailed, false
	}
}

// pushRecent returns recent with r in front, keeping the newest
// revisit.RecentResultsKept; recent itself is left as it is.
func pushRecent(recent []revisit.RecentResult, r revisit.RecentResult) []revisit.RecentResult {
	return append([]revisit.RecentResult{r}, recent[:min(len(recent), revisit.RecentResultsKept-1)]...)
}

// disabling reports whether s, as left by a message, disables its origin.
func disabling(s revisit.VisitStats) bool {
	if s.LastVisitStatus == nil || s.SuccessiveVisits < DisableAfter {
		return false
	}
	return *s.LastVisitStatus == revisit.VisitFailed || *s.LastVisitStatus == revisit.VisitNotFound
}

// IntervalDays returns the visit interval of an offset, in days: 1 below 2,
// 2 below 5, else 4^(offset−4). The offset is clamped to [MinOffset,
// MaxOffset] first.
func IntervalDays(offset int) int64 {
	offset = min(max(offset, MinOffset), MaxOffset)
	switch {
	case offset < 2:
		return 1
	case offset < 5:
		return 2
	default:
		return 1 << (2 * (offset - 4))
	}
}

// jitter draws u in [−Jitter, Jitter] from rnd (see Fold).
func jitter(rnd func() float64) float64 {
	r := rnd()
	switch {
	case math.IsNaN(r) || r < 0:
		r = 0
	case r > 1:
		r = 1
	}
	return 2*Jitter*r - Jitter
}

// spread returns floor(seconds × (1 + u)). For the u of jitter the float
// product never falls below an exact integer result, so the floor is exact.
func spread(seconds int64, u float64) int64 {
	return int64(math.Floor(float64(seconds) * (1 + u)))
}
