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

// VisitOutcomes counts the enabled listed origins of a lister by the status
// of their last visit. Enabled = Successful + Failed + NotFound +
// NeverVisited.
type VisitOutcomes struct {
	Enabled    int64
	Successful int64
	Failed     int64
	NotFound   int64
	// NeverVisited counts the origins without visit stats, or whose stats
	// have no last visit status.
	NeverVisited int64
}
