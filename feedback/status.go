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
}

// Key returns the origin key v is about.
func (v VisitStatus) Key() revisit.OriginKey {
	return revisit.OriginKey{URL: v.Origin, VisitType: v.VisitType}
}

// Validate checks that v can be processed: a valid origin URL and visit
// type, a known status, a date, and a snapshot that is either absent or not
// empty. Errors are invalid-input *revisit.Error values naming the field.
func (v VisitStatus) Validate() error {
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
	if v.Snapshot != nil && len(v.Snapshot) == 0 {
		return revisit.Invalidf("snapshot", "empty; omit it when the visit has no snapshot")
	}
	return nil
}

// final reports whether the status ends a visit; created and ongoing do not
// and are ignored.
func (v VisitStatus) final() bool {
	return v.Status != StatusCreated && v.Status != StatusOngoing
}
