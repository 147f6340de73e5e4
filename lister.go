package revisit

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Lister is a process that enumerates the origins of one forge instance.
type Lister struct {
	ID           uuid.UUID
	Name         string
	InstanceName string
	Created      time.Time
	// Updated is the optimistic-concurrency token: ListerUpdate succeeds only
	// when the caller's Updated equals the stored one (to the microsecond).
	Updated time.Time
	// CurrentState is the lister's opaque resume cursor, a JSON object.
	CurrentState json.RawMessage
	// LastListingFinishedAt is when the lister last finished a full listing;
	// the first_visits_after_listing policy schedules what it found since.
	LastListingFinishedAt *time.Time
}
