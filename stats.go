package revisit

import "time"

// VisitStatus is the outcome of a visit as kept in visit stats.
type VisitStatus string

// The outcomes of a visit.
const (
	VisitSuccessful VisitStatus = "successful"
	VisitFailed     VisitStatus = "failed"
	VisitNotFound   VisitStatus = "not_found"
)

// Valid reports whether s is one of the three outcomes.
func (s VisitStatus) Valid() bool {
	return s == VisitSuccessful || s == VisitFailed || s == VisitNotFound
}

// Defaults of a new visit stats row.
const (
	DefaultNextPositionOffset = 4
	DefaultSuccessiveVisits   = 1
)

// VisitStats is what revisit knows of the visits of one origin.
type VisitStats struct {
	URL             string
	VisitType       string
	LastSuccessful  *time.Time
	LastVisit       *time.Time
	LastVisitStatus *VisitStatus
	LastScheduled   *time.Time
	// LastSnapshot is the id of the last snapshot; nil if never known.
	LastSnapshot []byte
	// NextVisitQueuePosition is on the visit type's virtual clock (seconds).
	NextVisitQueuePosition *int64
	NextPositionOffset     int
	SuccessiveVisits       int
	// Recent holds the origin's last results, newest first, at most
	// RecentResultsKept. A write with nil Recent leaves the stored ones.
	Recent []RecentResult
}

// RecentResultsKept is how many results of an origin its stats keep.
const RecentResultsKept = 5

// RecentResult is one result of an origin's visit as its stats keep it.
type RecentResult struct {
	// Date is the date of the result, as in LastVisit.
	Date   time.Time
	Status VisitStatus
	// Eventful reports that the visit brought a snapshot other than the
	// one before, or said it was eventful; only a successful visit is.
	Eventful bool
}

// Key returns the origin key of s.
func (s VisitStats) Key() OriginKey { return OriginKey{URL: s.URL, VisitType: s.VisitType} }

// VisitStatsWrite is one origin's stats to write with a store's
// VisitStatsWrite, with the condition that result processing needs to fold
// concurrently with other writers without losing a result.
type VisitStatsWrite struct {
	Stats VisitStats
	// Guarded makes the write conditional: it happens only if the stored
	// stats still have IfLastVisit as their last_visit (nil: no stats, or
	// none visited). Every result a fold accepts raises last_visit, so an
	// unchanged last_visit means no other fold wrote the origin since the
	// stats were read.
	Guarded     bool
	IfLastVisit *time.Time
	// Disable disables every listed row of the origin, whatever its lister,
	// in the transaction that writes the stats (only if they are written).
	Disable bool
}

// VisitStatsWriteResult is what a store's VisitStatsWrite did.
type VisitStatsWriteResult struct {
	// Stale holds the keys of the guarded writes that did not happen: their
	// stats had changed since they were read.
	Stale []OriginKey
	// Disabled counts the listed rows that went from enabled to disabled.
	Disabled int
}

// NewVisitStats returns the stats of an origin never seen: everything
// unknown, offset 4, one successive visit.
func NewVisitStats(k OriginKey) VisitStats {
	return VisitStats{URL: k.URL, VisitType: k.VisitType,
		NextPositionOffset: DefaultNextPositionOffset, SuccessiveVisits: DefaultSuccessiveVisits}
}

// Visited reports whether the origin had a successful visit. revisit takes a
// known last_successful as the evidence (a result may say "eventful" without
// naming a snapshot), which upstream data always pairs with last_snapshot.
func (s VisitStats) Visited() bool { return s.LastSuccessful != nil }
