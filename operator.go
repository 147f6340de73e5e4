package revisit

import (
	"time"

	"github.com/google/uuid"
)

// OperatorChoice is the Policy recorded on a visit that an operator asked
// for (OriginDispatchParams), which no scheduling policy chose. It is no
// policy a grab takes.
const OperatorChoice Policy = "operator"

// OriginDispatchParams ask for one visit of one origin now, whatever the
// policies and cooldowns say: the store marks the origin scheduled and
// records its visit pending, as a dispatch does.
type OriginDispatchParams struct {
	Key OriginKey
	// ListerID, when set, names the lister whose listed row the visit
	// carries (its lister's name and extra loader arguments go in the
	// message); otherwise an enabled row is preferred, then the one last
	// listed.
	ListerID *uuid.UUID
	// Owner names the dispatching process on the visit's record.
	Owner string
	// Now is the scheduling instant; zero means the store's clock.
	Now time.Time
	// Force dispatches even when a visit of the origin is in flight
	// (pending or sent); otherwise that is an ErrConflict saying since
	// when.
	Force bool
}

// Resolve checks the parameters and sets Now, at the stores' precision.
func (p OriginDispatchParams) Resolve(clock Clock) (OriginDispatchParams, error) {
	if err := ValidateOriginKey(p.Key); err != nil {
		return p, err
	}
	if p.Owner == "" {
		return p, Invalidf("owner", "must not be empty")
	}
	if p.Now.IsZero() {
		p.Now = clock.Now()
	}
	p.Now = Microsecond(p.Now)
	return p, nil
}

// Pause is a visit type whose orchestrator loop an operator paused: no
// round runs for it, in any process, until it is resumed.
type Pause struct {
	VisitType string
	// By names who paused it (an API token's name, or "anonymous").
	By string
	// At is when it was paused.
	At time.Time
}

// MaxPauseByLength bounds Pause.By.
const MaxPauseByLength = 200

// Validate checks the pause a caller gives.
func (p Pause) Validate() error {
	if err := ValidateVisitType(p.VisitType); err != nil {
		return err
	}
	switch {
	case p.By == "":
		return Invalidf("by", "missing")
	case len(p.By) > MaxPauseByLength:
		return Invalidf("by", "longer than %d bytes", MaxPauseByLength)
	case p.At.IsZero():
		return Invalidf("at", "missing")
	}
	return ValidateText("by", p.By)
}

// VisitInFlightError is the ErrConflict of an origin dispatch that finds a
// visit of the origin in flight: in that state since that time (when it
// was sent, or scheduled while pending).
func VisitInFlightError(key OriginKey, state VisitState, since time.Time) error {
	return Errorf(CodeConflict, "a visit of %s (%s) is in flight: %s since %s",
		key.URL, key.VisitType, state, since.UTC().Format(time.RFC3339))
}

// OriginNotListedError is the ErrNotFound of a change of an origin that
// has no listed row (of listerID, when given).
func OriginNotListedError(key OriginKey, listerID *uuid.UUID) error {
	if listerID != nil {
		return Errorf(CodeNotFound, "lister %s lists no origin %s of visit type %s", listerID, key.URL, key.VisitType)
	}
	return Errorf(CodeNotFound, "no listed origin %s of visit type %s", key.URL, key.VisitType)
}

// ValidateOriginKey checks the URL and visit type of an origin a caller
// names.
func ValidateOriginKey(key OriginKey) error {
	if err := ValidateOriginURL(key.URL); err != nil {
		return err
	}
	return ValidateVisitType(key.VisitType)
}
