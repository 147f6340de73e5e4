package revisit

import (
	"encoding/json"
	"fmt"
	"time"
)

// QueueState is where a message of the embedded broker's queues stands.
type QueueState string

// The states of a queued message: ready to lease, leased by a worker until
// its lease expires (an expired lease counts as ready again), or done (a
// result was stored).
const (
	QueueReady  QueueState = "ready"
	QueueLeased QueueState = "leased"
	QueueDone   QueueState = "done"
)

// QueueMessage is one task message of the embedded broker (wire.md §4),
// stored in the database until its result is consumed.
type QueueMessage struct {
	// ID is the Celery task id, a UUID string; it is unique in the store.
	ID string
	// Queue is the queue's name (a task type's backend name for visits).
	Queue string
	// Seq orders the messages of the store as they were enqueued (batch
	// order included); the store assigns it.
	Seq int64
	// Task is the worker-side task name.
	Task string
	// Headers is the Celery headers as a JSON object.
	Headers json.RawMessage
	// Body is the Celery body, the JSON list [args, kwargs, embed].
	Body json.RawMessage
	// Priority is the message's priority, 0 (the default) to
	// MaxQueuePriority: a lease takes the ready messages of higher
	// priority first, then in Seq order, as RabbitMQ honours the AMQP
	// priority property.
	Priority int
	// State is where the message stands.
	State QueueState
	// Attempt counts the leases of the message: 0 until first leased.
	Attempt int
	// EnqueuedAt is when the message was queued.
	EnqueuedAt time.Time
	// Worker names the worker that holds or last held the lease; "" before
	// the first lease.
	Worker string
	// LeaseExpiresAt is when the current or last lease ends; zero before the
	// first lease.
	LeaseExpiresAt time.Time
	// Result is the stored result object (JSON); nil until done.
	Result json.RawMessage
	// CompletedAt is when the result was stored; zero until done.
	CompletedAt time.Time
}

// QueueLeaseParams say which messages QueueMessagesLease takes and for how
// long.
type QueueLeaseParams struct {
	// Queue is the queue to lease from.
	Queue string
	// Worker names the worker taking the lease.
	Worker string
	// Max bounds how many messages are leased; it must be positive.
	Max int
	// LeaseFor is the lease's duration; it must be positive.
	LeaseFor time.Duration
	// Now is the current time.
	Now time.Time
}

// Validate checks every field, naming the first bad one.
func (p QueueLeaseParams) Validate() error {
	if p.Queue == "" {
		return Invalidf("queue", "must not be empty")
	}
	if p.Worker == "" {
		return Invalidf("worker", "must not be empty")
	}
	if p.Max <= 0 {
		return Invalidf("max", "must be positive, got %d", p.Max)
	}
	if p.LeaseFor <= 0 {
		return Invalidf("lease", "must be positive, got %s", p.LeaseFor)
	}
	return nil
}

// QueueHeartbeatParams extend the lease of one message.
type QueueHeartbeatParams struct {
	// ID is the message's id.
	ID string
	// Worker must be the worker holding the lease.
	Worker string
	// LeaseFor is the lease's new duration from Now; it must be positive.
	LeaseFor time.Duration
	// Now is the current time.
	Now time.Time
}

// Validate checks every field, naming the first bad one.
func (p QueueHeartbeatParams) Validate() error {
	if p.ID == "" {
		return Invalidf("id", "must not be empty")
	}
	if p.Worker == "" {
		return Invalidf("worker", "must not be empty")
	}
	if p.LeaseFor <= 0 {
		return Invalidf("lease", "must be positive, got %s", p.LeaseFor)
	}
	return nil
}

// QueueCompleteParams store the result of one message.
type QueueCompleteParams struct {
	// ID is the message's id.
	ID string
	// Worker names the worker reporting the result.
	Worker string
	// Result is the result object (JSON), e.g. {"status": "eventful"}.
	Result json.RawMessage
	// Now is the completion time.
	Now time.Time
}

// Validate checks every field, naming the first bad one.
func (p QueueCompleteParams) Validate() error {
	if p.ID == "" {
		return Invalidf("id", "must not be empty")
	}
	if p.Worker == "" {
		return Invalidf("worker", "must not be empty")
	}
	if !isJSONObject(p.Result) {
		return Invalidf("result", "must be a JSON object")
	}
	return nil
}

// QueueResultsParams say which stored results QueueResultsNext returns.
type QueueResultsParams struct {
	// Max bounds how many results are returned; it must be positive.
	Max int
	// After, when set, makes QueueResultsNext return the results completed
	// after this one, acknowledged or not, for observers that must not
	// consume results; when nil, it returns the oldest unacknowledged ones.
	After *QueueResultCursor
}

// QueueResultCursor is a position in the order of QueueResultsNext:
// completion time, then id.
type QueueResultCursor struct {
	CompletedAt time.Time
	ID          string
}

// QueueResult is the stored result of one completed message.
type QueueResult struct {
	// ID is the message's id.
	ID string
	// Queue and Task are the message's queue and task name.
	Queue, Task string
	// Worker names the worker that reported the result.
	Worker string
	// Attempt is the message's lease count when it completed.
	Attempt int
	// Result is the result object (JSON).
	Result json.RawMessage
	// Body is the message's Celery body: [args, kwargs, embed] (JSON).
	Body string
	// CompletedAt is when the result was stored.
	CompletedAt time.Time
}

// Cursor returns the position of r, for QueueResultsParams.After.
func (r QueueResult) Cursor() QueueResultCursor {
	return QueueResultCursor{CompletedAt: r.CompletedAt, ID: r.ID}
}

// Validate checks every field, naming the first bad one.
func (p QueueResultsParams) Validate() error {
	if p.Max <= 0 {
		return Invalidf("max", "must be positive, got %d", p.Max)
	}
	return nil
}

// MaxQueuePriority is the highest priority of a queued message (the AMQP
// priority property is one byte).
const MaxQueuePriority = 255

// ValidateEnqueue checks a batch for QueueMessagesEnqueue: a named queue,
// and per message an id, a task name, a JSON object of headers, a JSON
// body and a priority from 0 to MaxQueuePriority. A bad field is an ErrInvalid naming it (msgs[i].field); ids repeated
// in the batch are returned with an ErrConflict naming the first.
func ValidateEnqueue(queue string, msgs []QueueMessage) (duplicates []string, err error) {
	if queue == "" {
		return nil, Invalidf("queue", "must not be empty")
	}
	seen := make(map[string]bool, len(msgs))
	for i, m := range msgs {
		switch {
		case m.ID == "":
			return nil, Invalidf(fmt.Sprintf("msgs[%d].id", i), "must not be empty")
		case m.Task == "":
			return nil, Invalidf(fmt.Sprintf("msgs[%d].task", i), "must not be empty")
		case !isJSONObject(m.Headers):
			return nil, Invalidf(fmt.Sprintf("msgs[%d].headers", i), "must be a JSON object")
		case !json.Valid(m.Body):
			return nil, Invalidf(fmt.Sprintf("msgs[%d].body", i), "must be JSON")
		case m.Priority < 0 || m.Priority > MaxQueuePriority:
			return nil, Invalidf(fmt.Sprintf("msgs[%d].priority", i), "must be 0 to %d, got %d", MaxQueuePriority, m.Priority)
		}
		if seen[m.ID] {
			duplicates = append(duplicates, m.ID)
		}
		seen[m.ID] = true
	}
	if len(duplicates) > 0 {
		return duplicates, DuplicateMessagesError(duplicates)
	}
	return nil, nil
}

// QueuePurge is what purging a queue did: its waiting messages deleted,
// and their visits declared lost so that their origins are offered again.
type QueuePurge struct {
	Queue string
	// Purged counts the messages deleted.
	Purged int64
	// VisitsLost counts the visits of those messages declared lost; nil
	// when the broker does not tell which visits its messages carried
	// (RabbitMQ): they stay in flight until their visit type's timeout.
	VisitsLost *int
}

// QueueDrop is a message taken out of its queue, as it was, and whether
// its visit was declared lost (false when it had no visit in flight).
type QueueDrop struct {
	Message   QueueMessage
	VisitLost bool
}

// DuplicateMessagesError is the ErrConflict of an enqueue whose ids are
// already queued, naming the first.
func DuplicateMessagesError(ids []string) error {
	if len(ids) == 1 {
		return Errorf(CodeConflict, "message id %s is already queued", ids[0])
	}
	return Errorf(CodeConflict, "message id %s (and %d more) already queued", ids[0], len(ids)-1)
}

func isJSONObject(b json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(b, &obj) == nil && obj != nil
}
