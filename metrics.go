package revisit

import (
	"time"

	"github.com/google/uuid"
)

// SchedulerMetrics are the figures of one (lister, visit type) pair, as
// computed by MetricsUpdate at LastUpdate.
type SchedulerMetrics struct {
	ListerID  uuid.UUID
	VisitType string
	// LastUpdate is when the figures were computed.
	LastUpdate     time.Time
	OriginsKnown   int64
	OriginsEnabled int64
	// OriginsNeverVisited counts enabled origins without a successful visit.
	OriginsNeverVisited int64
	// OriginsWithPendingChanges counts enabled origins whose forge reports
	// activity after their last successful visit.
	OriginsWithPendingChanges int64
}
