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
	// FirstVisitsQueuePrefix, when set, sends the first visits of the
	// lister's origins to the queues "<prefix>:<backend_name>" (Software
	// Heritage's high-priority queues) instead of the visit types' own.
	FirstVisitsQueuePrefix *string
	// FirstVisitsScheduledAt is when every origin of the lister's last
	// listing had been scheduled for its first visit; nil until then.
	FirstVisitsScheduledAt *time.Time
}

// MaxQueuePrefixLength bounds a first-visits queue prefix: a queue name is
// at most 255 bytes in RabbitMQ (AMQP's short strings), and the prefix
// starts one.
const MaxQueuePrefixLength = 255

// ValidateFirstVisitsQueuePrefix checks a lister's first-visits queue
// prefix when set (nil is none): non-empty valid UTF-8 of at most
// MaxQueuePrefixLength bytes.
func ValidateFirstVisitsQueuePrefix(prefix *string) error {
	const field = "first_visits_queue_prefix"
	switch {
	case prefix == nil:
		return nil
	case *prefix == "":
		return Invalidf(field, "empty (leave it unset for none)")
	case len(*prefix) > MaxQueuePrefixLength:
		return Invalidf(field, "%d bytes, at most %d", len(*prefix), MaxQueuePrefixLength)
	}
	return ValidateText(field, *prefix)
}
