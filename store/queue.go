package store

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
)

// QueueStore holds the queues of the embedded broker (broker/embedded):
// task messages that workers lease over HTTP (wire.md §4), and their
// results until the event stream consumes them. Every time is passed in by
// the caller. Bad input is an ErrInvalid naming the field.
type QueueStore interface {
	// QueueMessagesEnqueue adds msgs (ID, Task, Headers, Body, Priority;
	// the other fields are ignored) to queue as ready messages enqueued at now, in
	// order (their Seq grows along the batch), creates queue if it does
	// not exist, and, in the same transaction, marks sent at now
	// (VisitStore.VisitsSent) the pending visits whose ids are those of
	// msgs: a visit's message is queued if and only if its visit is no
	// longer pending, whenever a crash strikes. The batch is written whole
	// or not at all: when ids are already in the store (or repeated in the
	// batch), nothing is written and it returns those ids with an
	// ErrConflict naming the first.
	QueueMessagesEnqueue(ctx context.Context, queue string, msgs []revisit.QueueMessage, now time.Time) (duplicates []string, err error)
	// QueueMessagesLease leases up to p.Max messages of p.Queue to
	// p.Worker until p.Now + p.LeaseFor, incrementing their Attempt, and
	// returns them highest Priority first, then in Seq order. It takes
	// leased messages whose lease has expired (first: they waited
	// longest), then ready ones, highest Priority first, then in Seq
	// order, through the ready index. Concurrent callers never get the
	// same message.
	QueueMessagesLease(ctx context.Context, p revisit.QueueLeaseParams) ([]revisit.QueueMessage, error)
	// QueueMessageHeartbeat extends the lease of a message to p.Now +
	// p.LeaseFor and returns the new expiry; ErrNotFound if the message
	// does not exist, ErrConflict if it is done or leased to another
	// worker. A worker may extend its own lease after it expired as long
	// as nobody leased the message since.
	QueueMessageHeartbeat(ctx context.Context, p revisit.QueueHeartbeatParams) (time.Time, error)
	// QueueMessageComplete stores the result of a message and marks it
	// done; ErrNotFound if the message does not exist, ErrConflict if it
	// was never leased or is leased to another worker than p.Worker. Like a
	// heartbeat, a worker may post its result after its lease expired as
	// long as nobody leased the message since. It returns false, storing
	// nothing, when the message is done already (a repeated or late
	// completion is ignored).
	QueueMessageComplete(ctx context.Context, p revisit.QueueCompleteParams) (stored bool, err error)
	// QueueDepth returns how many messages of queue can be leased at now:
	// ready ones and leased ones whose lease has expired. Like RabbitMQ's
	// message_count it excludes messages held by workers; an unknown
	// queue has depth 0.
	QueueDepth(ctx context.Context, queue string, now time.Time) (int64, error)
	// QueueMessagesList returns one page of f.Queue's messages: those
	// waiting (leasable at f.Now) in the order leases take them (expired
	// leases by expiry, then ready messages highest Priority first, then
	// in Seq order), or those leased (held at f.Now) in Seq order. It
	// reads the queue's ready messages through their index and sorts only
	// the leased ones, so that a page of a queue of 100,000 messages costs
	// a page. An unknown queue has none.
	QueueMessagesList(ctx context.Context, f revisit.QueueMessageFilter) (revisit.QueueMessagePage, error)
	// QueueLeases counts the messages held at now (leases not expired) by
	// queue and worker, sorted by queue and worker.
	QueueLeases(ctx context.Context, now time.Time) ([]revisit.QueueLeaseCount, error)
	// QueueResultsNext returns up to p.Max results of done messages in
	// (CompletedAt, ID) order: the oldest not yet acknowledged, or those
	// after p.After.
	QueueResultsNext(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error)
	// QueueResultsAck marks the results of those messages consumed;
	// unknown ids and ids acknowledged already are ignored.
	QueueResultsAck(ctx context.Context, ids []string) error
	// QueueMessagesDelete deletes every message of queue, whatever its
	// state, results included, and the queue itself, and returns how many
	// messages.
	QueueMessagesDelete(ctx context.Context, queue string) (int64, error)
	// QueueMessagesPurge deletes the waiting messages of queue (ready,
	// and leased with a lease expired at now: not those a worker holds)
	// and, in the same transaction, declares lost at now the sent visits
	// whose ids are theirs, giving their origins their eligibility back
	// (as VisitStore.VisitsExpire does, store.Notifier's subscribers hear
	// of it). It returns how many messages it deleted and visits it
	// declared lost; an unknown queue has none.
	QueueMessagesPurge(ctx context.Context, queue string, now time.Time) (purged int64, visitsLost int, err error)
	// QueueMessageDrop deletes one message, waiting or leased (a worker
	// holding it then gets ErrNotFound on heartbeat and result), and
	// declares its visit lost as QueueMessagesPurge does. It returns the
	// message as it was; ErrNotFound if it does not exist, ErrConflict if
	// it is done (its result is stored).
	QueueMessageDrop(ctx context.Context, id string, now time.Time) (revisit.QueueDrop, error)
	// QueueMessageRequeue drops the lease of a leased message (its lease
	// then ends at now): it is ready again in its place (its Seq and
	// Priority), and returns it. Its last worker may still post its
	// result until the message is leased again, as after an expired
	// lease, but no longer extend the lease. ErrNotFound if the message
	// does not exist, ErrConflict if it is not leased.
	QueueMessageRequeue(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error)
	// QueueNames returns the queues that exist (created by an enqueue and
	// not deleted since), sorted.
	QueueNames(ctx context.Context) ([]string, error)
	// QueueMessagesDeleteDone deletes the done messages whose result was
	// acknowledged and that completed before before, and returns how many.
	QueueMessagesDeleteDone(ctx context.Context, before time.Time) (int64, error)
}
