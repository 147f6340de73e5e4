package embedded

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
)

// QueuedMessage is a message of a queue as an operator sees it: what it
// visits, and who holds it.
type QueuedMessage struct {
	// ID is the message id (the Celery task id).
	ID string
	// Task is the task name.
	Task string
	// URL is the origin the message visits, its keyword argument "url";
	// "" when it has none.
	URL string
	// Attempt counts the leases of the message.
	Attempt    int
	EnqueuedAt time.Time
	// Worker holds, or last held, the lease; "" before the first lease.
	Worker string
	// LeaseExpiresAt ends the current or last lease; zero before the
	// first lease.
	LeaseExpiresAt time.Time
}

// MessagePage is one page of a queue's messages, in enqueue order;
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
		out.Messages[i] = QueuedMessage{ID: m.ID, Task: m.Task, URL: messageURL(string(m.Body)), Attempt: m.Attempt,
			EnqueuedAt: m.EnqueuedAt, Worker: m.Worker, LeaseExpiresAt: m.LeaseExpiresAt}
	}
	return out, nil
}

// Leases counts the messages workers hold now, by queue and worker (see
// store.QueueStore.QueueLeases).
func (b *Broker) Leases(ctx context.Context) ([]revisit.QueueLeaseCount, error) {
	return b.st.QueueLeases(ctx, b.now())
}
