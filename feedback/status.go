package feedback

import (
	"time"

	"github.com/revisit-sched/revisit"
)

// The statuses a visit status may carry.
const (
	StatusCreated  = "created"
	StatusOngoing  = "ongoing"
	StatusFull     = "full"
	StatusPartial  = "partial"
	StatusFailed   = "failed"
	StatusNotFound = "not_found"
)

// VisitStatus is one report on one visit of an origin.
type VisitStatus struct {
	// Origin is the origin's URL.
	Origin    string
	VisitType string
	// Status is one of created, ongoing, full, partial, failed, not_found.
	Status string
	// Date is when the visit reached Status.
	Date time.Time
	// Snapshot is the id of the snapshot the visit produced; nil if none.
	Snapshot []byte
	// Eventful is set by results that only say whether the visit found
	// changes, without a snapshot id. A snapshot, when present, decides
	// instead.
	Eventful *bool
	// MessageID is the id of the message the status answers, when the
	// status came with one (a worker's event): whoever read it closes
	// that visit by its id, and Process closes no visit for it.
	MessageID string
}

// Key returns the origin key v is about.
func (v VisitStatus) Key() revisit.OriginKey {
	return revisit.OriginKey{URL: v.Origin, VisitType: v.VisitType}
}

// DefaultMaxFuture is how far beyond the clock a visit status may be dated
// unless configured otherwise (results.max_future).
const DefaultMaxFuture = time.Hour

// Horizon bounds the dates of visit statuses: one dated beyond the clock by
// more than MaxFuture is refused, since every real result after it would
// be ignored as late.
type Horizon struct {
	// Clock is the clock; nil is time.Now.
	Clock revisit.Clock
	// MaxFuture is the tolerance; 0 is DefaultMaxFuture.
	MaxFuture time.Duration
}

// latest returns the latest date a status may carry now.
func (h Horizon) latest() time.Time {
	maxFuture := DefaultMaxFuture
	if h.MaxFuture != 0 {
		maxFuture = h.MaxFuture
	}
	return h.Clock.Now().Add(maxFuture)
}

// Validate checks that v can be processed: a valid origin URL and visit
// type, a known status, a date no later than the horizon allows, and a
// snapshot that is either absent or a snapshot id. Errors are invalid-input
// *revisit.Error values naming the field.
func (v VisitStatus) Validate(h Horizon) error {
	if err := revisit.ValidateOriginURL(v.Origin); err != nil {
		return err
	}
	if err := revisit.ValidateVisitType(v.VisitType); err != nil {
		return err
	}
	switch v.Status {
	case StatusCreated, StatusOngoing, StatusFull, StatusPartial, StatusFailed, StatusNotFound:
	case "":
		return revisit.Invalidf("status", "missing")
	default:
		return revisit.Invalidf("status", "%q is not one of created, ongoing, full, partial, failed, not_found", v.Status)
	}
	if v.Date.IsZero() {
		return revisit.Invalidf("date", "missing")
	}
	if latest := h.latest(); v.Date.After(latest) {
		return revisit.Invalidf("date", "%s is in the future: the latest date accepted now is %s (the clock + results.max_future)",
			v.Date.UTC().Format(time.RFC3339Nano), latest.UTC().Format(time.RFC3339))
	}
	return revisit.ValidateSnapshotID("snapshot", v.Snapshot)
}

// final reports whether the status ends a visit; created and ongoing do not
// and are ignored.
func (v VisitStatus) final() bool {
	return v.Status != StatusCreated && v.Status != StatusOngoing
}
