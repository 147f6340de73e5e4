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
}

// Key returns the origin key of s.
func (s VisitStats) Key() OriginKey { return OriginKey{URL: s.URL, VisitType: s.VisitType} }

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
