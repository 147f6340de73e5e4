package front

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// QueueStatements read and write the embedded broker's queues; every time
// they are given is to the microsecond.
type QueueStatements interface {
	// QueueMessagesInsert creates queue unless it exists and adds msgs to
	// it, ready and enqueued at now, in order; it returns the ids of those
	// it did not add, already stored.
	QueueMessagesInsert(ctx context.Context, queue string, msgs []revisit.QueueMessage, now time.Time) ([]string, error)
	// QueueLeaseExpired leases to worker until until up to n messages of
	// queue whose lease expired at now, in the order they expired,
	// skipping those a concurrent lease holds, and returns them.
	QueueLeaseExpired(ctx context.Context, queue, worker string, now, until time.Time, n int) ([]revisit.QueueMessage, error)
	// QueueLeaseReady is QueueLeaseExpired for ready messages, highest
	// priority first, then in Seq order.
	QueueLeaseReady(ctx context.Context, queue, worker string, until time.Time, n int) ([]revisit.QueueMessage, error)
	// QueueMessageLock reads the message of that id and locks it until
	// the transaction ends; false if absent.
	QueueMessageLock(ctx context.Context, id string) (revisit.QueueMessage, bool, error)
	// QueueLeaseOf is QueueMessageLock reading only what a heartbeat or a
	// completion checks: the state, attempt and worker.
	QueueLeaseOf(ctx context.Context, id string) (revisit.QueueMessage, bool, error)
	// QueueLeaseExtend sets the lease of message id to end at until.
	QueueLeaseExtend(ctx context.Context, id string, until time.Time) error
	// QueueMessageDone stores p's result and marks its message done.
	QueueMessageDone(ctx context.Context, p revisit.QueueCompleteParams) error
	// QueueMessageReady makes message id ready again, its lease ending at
	// now, and returns it.
	QueueMessageReady(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error)
	// QueueMessageDelete deletes message id.
	QueueMessageDelete(ctx context.Context, id string) error
	// QueueLeasable counts the messages of queue leasable at now.
	QueueLeasable(ctx context.Context, queue string, now time.Time) (int64, error)
	// QueueResults reads the results p asks for (QueueResultsNext).
	QueueResults(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error)
	// QueueResultsAckOf marks acknowledged the results of those messages.
	QueueResultsAckOf(ctx context.Context, ids []string) error
	// QueueMessagesDeleteAcked deletes the done messages whose result was
	// acknowledged that completed before before, and returns how many.
	QueueMessagesDeleteAcked(ctx context.Context, before time.Time) (int64, error)
	// QueueDelete deletes queue and its messages, and returns how many
	// messages.
	QueueDelete(ctx context.Context, queue string) (int64, error)
	// QueueNamesAll reads the names of the queues, sorted.
	QueueNamesAll(ctx context.Context) ([]string, error)
	// QueueMessagesDeleteWaiting deletes the messages of queue waiting at
	// now (ready, or leased with an expired lease) and returns their ids.
	QueueMessagesDeleteWaiting(ctx context.Context, queue string, now time.Time) ([]string, error)
	// QueueListExpired reads, in the order leases take them, up to n
	// messages of queue whose lease expired at now, after the one whose
	// lease expired at expiresAt (µs) with Seq seq.
	QueueListExpired(ctx context.Context, queue string, now time.Time, expiresAt, seq int64, n int) ([]revisit.QueueMessage, error)
	// QueueListReady reads up to n ready messages of queue, highest
	// priority first, then in Seq order, after the one of that priority
	// and Seq.
	QueueListReady(ctx context.Context, queue string, priority int, seq int64, n int) ([]revisit.QueueMessage, error)
	// QueueListLeased reads, in Seq order, up to n messages of queue
	// leased at now with a Seq after seq.
	QueueListLeased(ctx context.Context, queue string, now time.Time, seq int64, n int) ([]revisit.QueueMessage, error)
	// QueueLeaseCounts counts the leases held at now by queue and worker,
	// sorted by queue and worker.
	QueueLeaseCounts(ctx context.Context, now time.Time) ([]revisit.QueueLeaseCount, error)
}

// QueueMessagesEnqueue adds a batch of ready messages to queue, all or
// nothing, and marks the pending visits of its messages sent in the same
// transaction.
func (f *Front) QueueMessagesEnqueue(ctx context.Context, queue string, msgs []revisit.QueueMessage, now time.Time) ([]string, error) {
	if dups, err := revisit.ValidateEnqueue(queue, msgs); err != nil {
		return dups, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	now = revisit.Microsecond(now)
	var dups []string
	err := f.d.Write(ctx, "enqueue into "+queue, func(x Statements) error {
		var err error
		if dups, err = x.QueueMessagesInsert(ctx, queue, msgs, now); err != nil {
			return err
		}
		if len(dups) > 0 {
			return revisit.DuplicateMessagesError(dups)
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.ID
		}
		_, err = x.VisitsMarkSent(ctx, ids, now)
		return err
	})
	if err != nil {
		return dups, err
	}
	return nil, nil
}

// QueueMessagesLease leases the first leasable messages of a queue: expired
// leases first, then ready messages by priority and age.
func (f *Front) QueueMessagesLease(ctx context.Context, p revisit.QueueLeaseParams) ([]revisit.QueueMessage, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	now, until := revisit.Microsecond(p.Now), revisit.Microsecond(p.Now.Add(p.LeaseFor))
	var out []revisit.QueueMessage
	err := f.d.Write(ctx, "lease from "+p.Queue, func(x Statements) error {
		var err error
		if out, err = x.QueueLeaseExpired(ctx, p.Queue, p.Worker, now, until, p.Max); err != nil || len(out) == p.Max {
			return err
		}
		ready, err := x.QueueLeaseReady(ctx, p.Queue, p.Worker, until, p.Max-len(out))
		out = append(out, ready...)
		return err
	})
	if err != nil {
		return nil, err
	}
	batch.SortLeased(out)
	return out, nil
}

// QueueMessageHeartbeat extends the lease of a message held by p.Worker.
func (f *Front) QueueMessageHeartbeat(ctx context.Context, p revisit.QueueHeartbeatParams) (time.Time, error) {
	if err := p.Validate(); err != nil {
		return time.Time{}, err
	}
	until := revisit.Microsecond(p.Now.Add(p.LeaseFor))
	err := f.d.Write(ctx, "heartbeat "+p.ID, func(x Statements) error {
		m, err := leaseOf(ctx, x, p.ID)
		if err != nil {
			return err
		}
		if err := batch.HeartbeatConflict(p, m.State, m.Worker); err != nil {
			return err
		}
		return x.QueueLeaseExtend(ctx, p.ID, until)
	})
	if err != nil {
		return time.Time{}, err
	}
	return until, nil
}

// QueueMessageComplete stores the first result of a message.
func (f *Front) QueueMessageComplete(ctx context.Context, p revisit.QueueCompleteParams) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, err
	}
	p.Now = revisit.Microsecond(p.Now)
	var stored bool
	err := f.d.Write(ctx, "complete "+p.ID, func(x Statements) error {
		m, err := leaseOf(ctx, x, p.ID)
		if err != nil {
			return err
		}
		if stored, err = batch.Completable(p.ID, m.State, m.Attempt, m.Worker, p.Worker); !stored || err != nil {
			return err
		}
		return x.QueueMessageDone(ctx, p)
	})
	if err != nil {
		return false, err
	}
	return stored, nil
}

// leaseOf locks the message of that id and reads its lease; ErrNotFound if
// it does not exist.
func leaseOf(ctx context.Context, x Statements, id string) (revisit.QueueMessage, error) {
	m, found, err := x.QueueLeaseOf(ctx, id)
	if err == nil && !found {
		err = messageNotFound(id)
	}
	return m, err
}

// lockMessage reads the message of that id and locks it; ErrNotFound if it
// does not exist.
func lockMessage(ctx context.Context, x Statements, id string) (revisit.QueueMessage, error) {
	m, found, err := x.QueueMessageLock(ctx, id)
	if err == nil && !found {
		err = messageNotFound(id)
	}
	return m, err
}

func messageNotFound(id string) error {
	return revisit.Errorf(revisit.CodeNotFound, "message %s not found", id)
}

// QueueDepth counts the leasable messages of a queue.
func (f *Front) QueueDepth(ctx context.Context, queue string, now time.Time) (int64, error) {
	if err := queueNamed(queue); err != nil {
		return 0, err
	}
	return value(ctx, f.d.Read, "depth of "+queue, func(x Statements) (int64, error) {
		return x.QueueLeasable(ctx, queue, revisit.Microsecond(now))
	})
}

// queueNamed checks the queue a method acts on, naming queue.
func queueNamed(queue string) error {
	if queue == "" {
		return revisit.Invalidf("queue", "must not be empty")
	}
	return nil
}

// QueueResultsNext returns stored results in completion order.
func (f *Front) QueueResultsNext(ctx context.Context, p revisit.QueueResultsParams) ([]revisit.QueueResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.After != nil {
		after := *p.After
		after.CompletedAt = revisit.Microsecond(after.CompletedAt)
		p.After = &after
	}
	return value(ctx, f.d.Read, "read results", func(x Statements) ([]revisit.QueueResult, error) {
		return x.QueueResults(ctx, p)
	})
}

// QueueResultsAck marks results consumed.
func (f *Front) QueueResultsAck(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return f.d.WriteOne(ctx, "ack results", func(x Statements) error {
		return x.QueueResultsAckOf(ctx, ids)
	})
}

// QueueMessagesDeleteDone deletes consumed results completed before before.
func (f *Front) QueueMessagesDeleteDone(ctx context.Context, before time.Time) (int64, error) {
	return value(ctx, f.d.WriteOne, "delete done messages", func(x Statements) (int64, error) {
		return x.QueueMessagesDeleteAcked(ctx, revisit.Microsecond(before))
	})
}

// QueueMessagesDelete deletes a queue and every message of it.
func (f *Front) QueueMessagesDelete(ctx context.Context, queue string) (int64, error) {
	if err := queueNamed(queue); err != nil {
		return 0, err
	}
	n, err := value(ctx, f.d.Write, "delete queue "+queue, func(x Statements) (int64, error) {
		return x.QueueDelete(ctx, queue)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// QueueNames returns the queues that exist, sorted.
func (f *Front) QueueNames(ctx context.Context) ([]string, error) {
	return value(ctx, f.d.Read, "list queues", func(x Statements) ([]string, error) {
		return x.QueueNamesAll(ctx)
	})
}

// QueueMessagesPurge deletes the waiting messages of a queue and declares
// their visits lost, in one transaction.
func (f *Front) QueueMessagesPurge(ctx context.Context, queue string, now time.Time) (int64, int, error) {
	if err := queueNamed(queue); err != nil {
		return 0, 0, err
	}
	now = revisit.Microsecond(now)
	var (
		purged     []string
		lost       int
		visitTypes []string
	)
	err := f.d.Write(ctx, "purge queue "+queue, func(x Statements) error {
		var err error
		if purged, err = x.QueueMessagesDeleteWaiting(ctx, queue, now); err != nil {
			return err
		}
		lost, visitTypes, err = x.VisitsLoseSent(ctx, purged, now)
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	return int64(len(purged)), lost, f.notified(nil, visitTypes)
}

// QueueMessageDrop deletes one message that is not done and declares its
// visit lost, in one transaction.
func (f *Front) QueueMessageDrop(ctx context.Context, id string, now time.Time) (revisit.QueueDrop, error) {
	if err := messageID(id); err != nil {
		return revisit.QueueDrop{}, err
	}
	now = revisit.Microsecond(now)
	var (
		drop       revisit.QueueDrop
		visitTypes []string
	)
	err := f.d.Write(ctx, "drop message "+id, func(x Statements) error {
		m, err := lockMessage(ctx, x, id)
		if err != nil {
			return err
		}
		if m.State == revisit.QueueDone {
			return revisit.Errorf(revisit.CodeConflict, "message %s is done: its result is stored", id)
		}
		if err := x.QueueMessageDelete(ctx, id); err != nil {
			return err
		}
		var lost int
		lost, visitTypes, err = x.VisitsLoseSent(ctx, []string{id}, now)
		drop = revisit.QueueDrop{Message: m, VisitLost: lost > 0}
		return err
	})
	if err != nil {
		return revisit.QueueDrop{}, err
	}
	return drop, f.notified(nil, visitTypes)
}

// QueueMessageRequeue makes a leased message ready again.
func (f *Front) QueueMessageRequeue(ctx context.Context, id string, now time.Time) (revisit.QueueMessage, error) {
	if err := messageID(id); err != nil {
		return revisit.QueueMessage{}, err
	}
	m, err := value(ctx, f.d.Write, "requeue message "+id, func(x Statements) (revisit.QueueMessage, error) {
		m, err := lockMessage(ctx, x, id)
		if err != nil {
			return m, err
		}
		if err := batch.RequeueConflict(m); err != nil {
			return m, err
		}
		return x.QueueMessageReady(ctx, id, revisit.Microsecond(now))
	})
	if err != nil {
		return revisit.QueueMessage{}, err
	}
	return m, nil
}

// messageID checks the message id a method acts on, naming id.
func messageID(id string) error {
	if id == "" {
		return revisit.Invalidf("id", "must not be empty")
	}
	return nil
}

// QueueMessagesList returns one page of a queue's waiting or leased
// messages (store.QueueStore): the expired leases, few, sorted, then the
// ready messages through their index.
func (f *Front) QueueMessagesList(ctx context.Context, filter revisit.QueueMessageFilter) (revisit.QueueMessagePage, error) {
	start, limit, err := batch.QueuePageStart(filter)
	if err != nil {
		return revisit.QueueMessagePage{}, err
	}
	now := revisit.Microsecond(filter.Now)
	var msgs []revisit.QueueMessage
	err = f.d.Read(ctx, "list the messages of "+filter.Queue, func(x Statements) error {
		var err error
		if filter.Listing == revisit.QueueListLeased {
			msgs, err = x.QueueListLeased(ctx, filter.Queue, now, start.Seq, limit+1)
			return err
		}
		if !start.Ready {
			if msgs, err = x.QueueListExpired(ctx, filter.Queue, now, start.ExpiresAt, start.Seq, limit+1); err != nil {
				return err
			}
		}
		if len(msgs) > limit {
			return nil
		}
		from := batch.ReadyStart(start)
		ready, err := x.QueueListReady(ctx, filter.Queue, from.Priority, from.Seq, limit+1-len(msgs))
		msgs = append(msgs, ready...)
		return err
	})
	if err != nil {
		return revisit.QueueMessagePage{}, err
	}
	return batch.QueuePage(msgs, filter.Listing, limit), nil
}

// QueueLeases counts the leases held now by queue and worker.
func (f *Front) QueueLeases(ctx context.Context, now time.Time) ([]revisit.QueueLeaseCount, error) {
	return value(ctx, f.d.Read, "count the leases", func(x Statements) ([]revisit.QueueLeaseCount, error) {
		return x.QueueLeaseCounts(ctx, revisit.Microsecond(now))
	})
}
