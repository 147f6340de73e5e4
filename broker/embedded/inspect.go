package embedded

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
)

// QueuedMessage is a message of a queue as an operator sees it: what it
// visits, and who holds it.
type QueuedMessage struct {
	// ID is the message id (the Celery task id).
	ID string
	// Queue is the queue's name.
	Queue string
	// Task is the task name.
	Task string
	// URL is the origin the message visits, its keyword argument "url";
	// "" when it has none.
	URL string
	// Priority is the message's priority: a lease takes the ready messages
	// of higher priority first.
	Priority int
	// Attempt counts the leases of the message.
	Attempt    int
	EnqueuedAt time.Time
	// Worker holds, or last held, the lease; "" before the first lease.
	Worker string
	// LeaseExpiresAt ends the current or last lease; zero before the
	// first lease.
	LeaseExpiresAt time.Time
}

// MessagePage is one page of a queue's messages, in the order of its
// listing (see store.QueueStore.QueueMessagesList);
// NextPageToken is empty on the last page.
type MessagePage struct {
	Messages      []QueuedMessage
	NextPageToken string
}

// Messages returns one page of the messages of f.Queue waiting or leased
// now (f.Now is set to the broker's clock; see
// store.QueueStore.QueueMessagesList).
func (b *Broker) Messages(ctx context.Context, f revisit.QueueMessageFilter) (MessagePage, error) {
	f.Now = b.now()
	page, err := b.st.QueueMessagesList(ctx, f)
	if err != nil {
		return MessagePage{}, err
	}
	out := MessagePage{Messages: make([]QueuedMessage, len(page.Messages)), NextPageToken: page.NextPageToken}
	for i, m := range page.Messages {
		out.Messages[i] = queuedMessage(m)
	}
	return out, nil
}

// queuedMessage is the operator's view of a stored message.
func queuedMessage(m revisit.QueueMessage) QueuedMessage {
	return QueuedMessage{ID: m.ID, Queue: m.Queue, Task: m.Task, URL: messageURL(string(m.Body)), Priority: m.Priority,
		Attempt: m.Attempt, EnqueuedAt: m.EnqueuedAt, Worker: m.Worker, LeaseExpiresAt: m.LeaseExpiresAt}
}

// Leases counts the messages workers hold now, by queue and worker (see
// store.QueueStore.QueueLeases).
func (b *Broker) Leases(ctx context.Context) ([]revisit.QueueLeaseCount, error) {
	return b.st.QueueLeases(ctx, b.now())
}

var _ broker.Purger = (*Broker)(nil)

// PurgeQueue deletes the messages of queue waiting for a worker (ready,
// or whose lease expired) and declares their visits lost, so that their
// origins are offered again at once (see
// store.QueueStore.QueueMessagesPurge). A queue that does not exist (see
// Lease) is an ErrNotFound naming those that do.
func (b *Broker) PurgeQueue(ctx context.Context, queue string) (revisit.QueuePurge, error) {
	if b.isClosed() {
		return revisit.QueuePurge{}, broker.ErrClosed
	}
	if queue == "" {
		return revisit.QueuePurge{}, revisit.Invalidf("queue", "must not be empty")
	}
	if err := b.checkQueue(ctx, queue); err != nil {
		return revisit.QueuePurge{}, err
	}
	n, lost, err := b.st.QueueMessagesPurge(ctx, queue, b.now())
	if err != nil {
		return revisit.QueuePurge{}, err
	}
	return revisit.QueuePurge{Queue: queue, Purged: n, VisitsLost: &lost}, nil
}

// DropMessage deletes one message, waiting or held by a worker (whose
// heartbeat and result then answer not found), and declares its visit
// lost (see store.QueueStore.QueueMessageDrop). It returns the message as
// it was and whether its visit was declared lost.
func (b *Broker) DropMessage(ctx context.Context, id string) (QueuedMessage, bool, error) {
	if b.isClosed() {
		return QueuedMessage{}, false, broker.ErrClosed
	}
	d, err := b.st.QueueMessageDrop(ctx, id, b.now())
	if err != nil {
		return QueuedMessage{}, false, err
	}
	return queuedMessage(d.Message), d.VisitLost, nil
}

// RequeueMessage takes a leased message back from its worker: it waits
// again in its place, and a waiting Lease of this process takes it at
// once (see store.QueueStore.QueueMessageRequeue).
func (b *Broker) RequeueMessage(ctx context.Context, id string) (QueuedMessage, error) {
	if b.isClosed() {
		return QueuedMessage{}, broker.ErrClosed
	}
	m, err := b.st.QueueMessageRequeue(ctx, id, b.now())
	if err != nil {
		return QueuedMessage{}, err
	}
	b.queues.notify(m.Queue)
	return queuedMessage(m), nil
}
