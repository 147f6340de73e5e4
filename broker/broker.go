// Package broker defines how revisit hands task messages to workers and
// hears back from them: publishing batches with a per-message outcome,
// measuring queue depth, and streaming worker events (wire.md §1–§3).
//
// Implementations live in sub-packages: broker/amqp talks to RabbitMQ and
// Python Celery workers.
package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/revisit-sched/revisit/celery"
)

// Outcome is what became of one published message.
type Outcome int

// The outcomes of a publication.
const (
	// Failed: the message may not have reached a queue (nacked by the
	// broker, connection lost before the confirm, no confirm in time, or
	// never sent). The caller should treat it as not delivered; it may
	// still have been delivered, so redelivery can duplicate it.
	Failed Outcome = iota
	// Confirmed: the broker took responsibility for the message and routed
	// it to the queue.
	Confirmed
	// Returned: the broker could not route the message (no such queue).
	Returned
)

// String returns the outcome's lower-case name.
func (o Outcome) String() string {
	switch o {
	case Failed:
		return "failed"
	case Confirmed:
		return "confirmed"
	case Returned:
		return "returned"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Publication is the outcome of publishing one message.
type Publication struct {
	// ID is the message's correlation id (the Celery task id).
	ID string
	// Outcome says whether the message reached the queue.
	Outcome Outcome
	// Err says why, when Outcome is not Confirmed; it wraps one of
	// ErrUnroutable, ErrNacked, ErrUnconfirmed, ErrNotSent or
	// ErrDuplicateID.
	Err error
}

// Errors reported by brokers; match them with errors.Is.
var (
	// ErrClosed: the broker was closed.
	ErrClosed = errors.New("broker closed")
	// ErrUnavailable: the broker is not connected (yet).
	ErrUnavailable error = &waitError{"broker unavailable", "broker_unavailable"}
	// ErrQueueMissing: the queue does not exist.
	ErrQueueMissing error = &waitError{"queue does not exist", "queue_missing"}
	// ErrDepthUnknown: the queue's depth cannot be measured now.
	ErrDepthUnknown error = &waitError{"queue depth unknown", "depth_unknown"}
	// ErrUnroutable: the broker returned the message (Outcome Returned).
	ErrUnroutable = errors.New("message returned unroutable")
	// ErrNacked: the broker refused the message.
	ErrNacked = errors.New("message nacked by the broker")
	// ErrUnconfirmed: the message was sent but no confirm came (connection
	// lost, timeout, context done); it may or may not be in the queue.
	ErrUnconfirmed = errors.New("message sent but not confirmed")
	// ErrNotSent: the message was never sent.
	ErrNotSent = errors.New("message not sent")
	// ErrDuplicateID: the batch already holds a message with this
	// correlation id; the duplicate is not sent.
	ErrDuplicateID = errors.New("duplicate message id in batch")
)

// waitError is an error after which a loop waits for the broker and tries
// again rather than fails (supervise.Waiter).
type waitError struct{ msg, reason string }

func (e *waitError) Error() string { return e.msg }

// WaitReason is the label of the wait in metrics.
func (e *waitError) WaitReason() string { return e.reason }

// VisitRecorder is a Broker whose Publish, in the transaction that queues
// the messages, marks their visits sent (the embedded broker, through
// store.QueueStore.QueueMessagesEnqueue): a visit still pending after a
// crash was never published, and none is published twice.
type VisitRecorder interface {
	Broker
	// RecordsVisitsSent marks the implementation; it does nothing.
	RecordsVisitsSent()
}

// TakeWatcher is implemented by brokers that learn, in this process, when
// workers take messages (the embedded broker, whose workers lease through
// this process's API): an orchestrator waiting for a full queue to drain
// measures it again at once instead of at its next poll.
type TakeWatcher interface {
	// Taken returns a channel closed the next time workers take messages
	// of queue through this process.
	Taken(queue string) <-chan struct{}
}

// Broker carries task messages to workers and their events back.
// Implementations are safe for concurrent use.
type Broker interface {
	// Publish sends msgs to queue and returns one Publication per message,
	// in order, once every message is confirmed, returned or failed. The
	// error is for the call as a whole (ctx done before anything was sent,
	// broker closed); even then the result has one entry per message, each
	// Failed.
	Publish(ctx context.Context, queue string, msgs []celery.Message) ([]Publication, error)
	// Depth returns how many messages wait in queue; ErrQueueMissing when
	// it does not exist, an error wrapping ErrDepthUnknown when it cannot
	// be measured now. Never 0 for "unknown". Implementations document
	// whether messages delivered to workers but not yet acknowledged count.
	Depth(ctx context.Context, queue string) (int64, error)
	// Events consumes worker events until ctx ends (then it returns nil),
	// calling handle with batches; a batch is acknowledged only after
	// handle returns nil (so no event is lost across restarts, and an
	// event may be seen twice); malformed events are counted, logged once
	// per kind, acked and skipped.
	Events(ctx context.Context, handle func(context.Context, []celery.Event) error) error
	// Malformed returns how many malformed events were skipped so far.
	Malformed() MalformedCounts
	// Close releases the connection; calls in progress fail.
	Close() error
}
