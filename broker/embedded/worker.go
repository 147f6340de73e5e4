package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
)

// LeaseParams say what a worker leases.
type LeaseParams struct {
	// Queue is the queue to lease from.
	Queue string
	// Worker names the worker.
	Worker string
	// Max bounds how many messages are leased; it must be positive.
	Max int
	// LeaseFor is how long the worker may hold them without a heartbeat.
	LeaseFor time.Duration
	// Wait is how long to wait for a message when none is ready; 0 returns
	// at once.
	Wait time.Duration
}

// Task is one leased message, as a worker sees it.
type Task struct {
	// ID is the message id (the Celery task id); heartbeats and the result
	// name it.
	ID string
	// Task is the task name.
	Task string
	// Args is the JSON list of positional arguments.
	Args json.RawMessage
	// Kwargs is the JSON object of keyword arguments.
	Kwargs json.RawMessage
	// Attempt counts the leases of the message, this one included.
	Attempt int
	// LeaseExpiresAt is when the lease ends without a heartbeat.
	LeaseExpiresAt time.Time
}

// Lease leases up to p.Max messages of p.Queue (see
// store.QueueStore.QueueMessagesLease). When none is ready it waits up to
// p.Wait: it wakes up at once when this process publishes into the queue,
// and otherwise looks at the store every Config.PollInterval. It returns
// an empty list when the wait ends empty, an ErrNotFound when the queue
// does not exist (see checkQueue), and early when ctx ends (with ctx's
// error) or the broker closes (broker.ErrClosed).
func (b *Broker) Lease(ctx context.Context, p LeaseParams) ([]Task, error) {
	if p.Wait < 0 {
		return nil, revisit.Invalidf("wait", "must not be negative, got %s", p.Wait)
	}
	deadline := time.Now().Add(p.Wait)
	checked := false // whether the queue is known to exist
	for {
		if b.isClosed() {
			return nil, broker.ErrClosed
		}
		wake := b.queues.wait(p.Queue)
		msgs, err := b.st.QueueMessagesLease(ctx, revisit.QueueLeaseParams{Queue: p.Queue, Worker: p.Worker,
			Max: p.Max, LeaseFor: p.LeaseFor, Now: b.now()})
		if err != nil {
			return nil, err
		}
		if len(msgs) > 0 {
			b.leased.notify(p.Queue)
			return tasks(msgs)
		}
		if !checked {
			if err := b.checkQueue(ctx, p.Queue); err != nil {
				return nil, err
			}
			checked = true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return []Task{}, nil
		}
		if !b.wait(ctx, wake, min(left, b.cfg.PollInterval)) {
			if b.isClosed() {
				return nil, broker.ErrClosed
			}
			return nil, ctx.Err()
		}
	}
}

// checkQueue returns an ErrNotFound naming the queues that exist when queue
// is none of them: no message was ever published to it (or it was deleted)
// and it is no task type's queue, neither its backend_name nor a queue
// named <prefix>:<backend_name> (the high-priority queues).
func (b *Broker) checkQueue(ctx context.Context, queue string) error {
	names, err := b.st.QueueNames(ctx)
	if err != nil || slices.Contains(names, queue) {
		return err
	}
	tts, err := b.st.TaskTypeList(ctx)
	if err != nil {
		return err
	}
	for _, tt := range tts {
		if queue == tt.BackendName || strings.HasSuffix(queue, ":"+tt.BackendName) {
			return nil
		}
		names = append(names, tt.BackendName)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return revisit.Errorf(revisit.CodeNotFound, "queue %q does not exist, nor does any other: "+
			"register a task type (its backend_name names its queue) or publish to the queue", queue)
	}
	return revisit.Errorf(revisit.CodeNotFound, "queue %q does not exist; the queues are %s "+
		"(a visit type's queue is named after its task type's backend_name)", queue, strings.Join(names, ", "))
}

// Taken returns a channel closed the next time a Lease of this broker
// takes messages of queue (broker.TakeWatcher).
func (b *Broker) Taken(queue string) <-chan struct{} { return b.leased.wait(queue) }

// tasks returns the worker's view of leased messages.
func tasks(msgs []revisit.QueueMessage) ([]Task, error) {
	out := make([]Task, len(msgs))
	for i, m := range msgs {
		args, kwargs, err := splitBody(m.Body)
		if err != nil {
			return nil, fmt.Errorf("embedded lease: message %s: %w", m.ID, err)
		}
		out[i] = Task{ID: m.ID, Task: m.Task, Args: args, Kwargs: kwargs, Attempt: m.Attempt,
			LeaseExpiresAt: m.LeaseExpiresAt}
	}
	return out, nil
}

// Heartbeat extends the lease of message id held by worker to now +
// leaseFor, and returns the new expiry (see
// store.QueueStore.QueueMessageHeartbeat for the errors).
func (b *Broker) Heartbeat(ctx context.Context, id, worker string, leaseFor time.Duration) (time.Time, error) {
	if b.isClosed() {
		return time.Time{}, broker.ErrClosed
	}
	return b.st.QueueMessageHeartbeat(ctx, revisit.QueueHeartbeatParams{ID: id, Worker: worker,
		LeaseFor: leaseFor, Now: b.now()})
}

// Result is what a worker reports about one message.
type Result struct {
	// ID is the message id.
	ID string
	// Worker names the worker.
	Worker string
	// Status is eventful, uneventful, failed or not_found.
	Status celery.VisitStatus
	// Snapshot is the snapshot id, 40 hex digits; optional.
	Snapshot string
	// Error says what went wrong (failed, not_found); optional.
	Error string
}

// Validate checks r, naming the first bad field.
func (r Result) Validate() error {
	switch r.Status {
	case celery.VisitEventful, celery.VisitUneventful, celery.VisitFailed, celery.VisitNotFound:
	case "":
		return revisit.Invalidf("status", "missing (eventful, uneventful, failed or not_found)")
	default:
		return revisit.Invalidf("status", "%q is not one of eventful, uneventful, failed, not_found", truncate(string(r.Status)))
	}
	if r.Snapshot != "" {
		if _, err := revisit.ParseSnapshotID("snapshot", r.Snapshot); err != nil {
			return err
		}
	}
	return revisit.ValidateText("error", r.Error)
}

// truncate shortens untrusted text quoted in an error.
func truncate(s string) string {
	const max = 60
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// Complete stores the result of a message, as the object {"status",
// "snapshot_id"?, "error"?}, and wakes up Events. Only the worker the
// message is leased to may post it (an ErrConflict otherwise); it returns
// false when the message had a result already (see
// store.QueueStore.QueueMessageComplete).
func (b *Broker) Complete(ctx context.Context, r Result) (bool, error) {
	if b.isClosed() {
		return false, broker.ErrClosed
	}
	if err := r.Validate(); err != nil {
		return false, err
	}
	obj := map[string]string{"status": string(r.Status)}
	if r.Snapshot != "" {
		obj["snapshot_id"] = r.Snapshot
	}
	if r.Error != "" {
		obj["error"] = r.Error
	}
	result, err := json.Marshal(obj)
	if err != nil {
		return false, err
	}
	stored, err := b.st.QueueMessageComplete(ctx, revisit.QueueCompleteParams{ID: r.ID, Worker: r.Worker,
		Result: result, Now: b.now()})
	if stored {
		b.results.notify("")
	}
	return stored, err
}
