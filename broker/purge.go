package broker

import (
	"context"

	"github.com/revisit-sched/revisit"
)

// Purger is implemented by brokers that can empty a queue for an
// operator.
type Purger interface {
	// PurgeQueue deletes the messages of queue waiting for a worker, not
	// those a worker holds now, and says how many and, when the broker
	// knows their visits (the embedded broker), how many it declared
	// lost. An unknown queue is an ErrNotFound.
	PurgeQueue(ctx context.Context, queue string) (revisit.QueuePurge, error)
}
