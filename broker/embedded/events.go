package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// ackTimeout bounds the acknowledgement of a delivered batch.
const ackTimeout = 30 * time.Second

// trimInterval is the least time between two deletions of the done
// messages kept beyond Config.KeepDone.
const trimInterval = time.Minute

// Events hands the stored results of completed messages to handle, in
// completion order and in batches of at most Config.EventsBatch, as
// task-result events (celery.TypeResult: UUID the message id, Hostname the
// worker, Timestamp the completion time, VisitResult and Fields set as a
// Celery worker's task-result event would set them). A batch is
// acknowledged in the store only after handle returns nil, so no result is
// lost across restarts and one may be seen twice; when handle fails, the
// batch is handed again after Config.PollInterval. Run one consumer per
// store: concurrent ones may see the same results.
//
// No task-started events are produced: a lease is visible in the store
// (attempt, worker, expiry) and revisit's feedback loop only needs results.
//
// With Config.EventsObserve, Events follows the results completed from
// the moment it starts, acknowledged or not, and acknowledges nothing.
// Otherwise it also keeps the store small: at its start and then about
// once a minute (by Config.Clock) it deletes the done messages whose result
// was acknowledged and that completed more than Config.KeepDone ago.
//
// Events waits for new results, woken at once by a completion in this
// process and otherwise polling every Config.PollInterval. It returns nil
// when ctx ends and broker.ErrClosed when the broker is closed.
func (b *Broker) Events(ctx context.Context, handle func(context.Context, []celery.Event) error) error {
	if handle == nil {
		return errors.New("embedded events: nil handler")
	}
	var after *revisit.QueueResultCursor
	if b.cfg.EventsObserve {
		after = &revisit.QueueResultCursor{CompletedAt: b.now()}
	}
	var trimmed time.Time // last trim, by b's clock
	outage := supervise.Outage{Min: b.cfg.PollInterval, Max: maxEventsRetry, Jitter: b.cfg.PollInterval}
	for {
		wake := b.results.wait("")
		full, err := b.deliver(ctx, handle, &after)
		poll := b.cfg.PollInterval
		switch {
		case b.isClosed():
			return broker.ErrClosed
		case ctx.Err() != nil:
			return nil
		case err != nil:
			var began bool
			if poll, began = outage.Failed(time.Now()); began {
				b.cfg.Logger.Warn("embedded events: cannot read the results; retrying until the store answers", "err", err)
			}
			wake = nil // wait for the retry
		default:
			if failures, lasted := outage.Ended(time.Now()); failures > 0 {
				b.cfg.Logger.Info("embedded events: reading the results again", "failed_attempts", failures,
					"after", lasted.Round(time.Millisecond))
			}
		}
		if now := b.now(); !b.cfg.EventsObserve && now.Sub(trimmed) >= trimInterval {
			trimmed = now
			b.trim(ctx, now)
		}
		if full {
			continue
		}
		if !b.wait(ctx, wake, poll) {
			if b.isClosed() {
				return broker.ErrClosed
			}
			return nil
		}
	}
}

// maxEventsRetry bounds the wait between two reads of the results while
// the store fails them: Events reads again within it of the store's
// return.
const maxEventsRetry = time.Second

// deliver hands one batch of results to handle and acknowledges it (or,
// observing, moves *after past it). It reports whether the batch was full,
// so more may wait.
func (b *Broker) deliver(ctx context.Context, handle func(context.Context, []celery.Event) error,
	after **revisit.QueueResultCursor) (full bool, err error) {
	rs, err := b.st.QueueResultsNext(ctx, revisit.QueueResultsParams{Max: b.cfg.EventsBatch, After: *after})
	if err != nil || len(rs) == 0 {
		return false, err
	}
	events := make([]celery.Event, 0, len(rs))
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.ID
		ev, err := resultEvent(r)
		if err != nil {
			for _, first := range b.malformed.Record(err) {
				b.cfg.Logger.Warn("embedded events: skipping a malformed result (logged once per kind)", "err", first)
			}
			continue
		}
		events = append(events, ev)
	}
	if len(events) > 0 {
		if err := handle(ctx, events); err != nil {
			return false, fmt.Errorf("embedded events: handler: %w", err)
		}
	}
	if *after != nil {
		c := rs[len(rs)-1].Cursor()
		*after = &c
	} else if err := b.ack(ctx, ids); err != nil {
		return false, err
	}
	return len(rs) == b.cfg.EventsBatch, nil
}

// trim deletes the done messages whose result was acknowledged and that
// completed more than Config.KeepDone before now. A failure is logged: the
// next trim will do.
func (b *Broker) trim(ctx context.Context, now time.Time) {
	n, err := b.st.QueueMessagesDeleteDone(ctx, now.Add(-b.cfg.KeepDone))
	switch {
	case err != nil && ctx.Err() == nil:
		b.cfg.Logger.Warn("embedded events: cannot delete old done messages", "err", err)
	case n > 0:
		b.cfg.Logger.Debug("embedded events: deleted old done messages", "messages", n, "keep_done", b.cfg.KeepDone)
	}
}

// ack acknowledges delivered results, also when ctx ended while the
// handler ran: it took the batch, so it must not see it again.
func (b *Broker) ack(ctx context.Context, ids []string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	return b.st.QueueResultsAck(ctx, ids)
}

// resultEvent turns a stored result into the task-result event a Software
// Heritage Celery worker would send.
func resultEvent(r revisit.QueueResult) (celery.Event, error) {
	bad := func(format string, args ...any) error {
		return &celery.EventError{Index: -1, Type: celery.TypeResult, UUID: r.ID, Field: "result",
			Err: celery.ErrBadResult, Detail: fmt.Sprintf(format, args...)}
	}
	raw, err := decodeObject(r.Result)
	if err != nil {
		return celery.Event{}, bad("%v", err)
	}
	status, _ := raw["status"].(string)
	vr := &celery.VisitResult{Status: celery.VisitStatus(status), Raw: raw}
	switch vr.Status {
	case celery.VisitEventful, celery.VisitUneventful:
		eventful := vr.Status == celery.VisitEventful
		vr.Eventful = &eventful
	case celery.VisitFailed, celery.VisitNotFound:
	default:
		return celery.Event{}, bad("unknown status %q", status)
	}
	if snap, ok := raw["snapshot_id"].(string); ok {
		if vr.SnapshotID, err = revisit.ParseSnapshotID("snapshot_id", snap); err != nil {
			return celery.Event{}, bad("%v", err)
		}
	}
	ts := float64(r.CompletedAt.UnixMicro()) / 1e6
	ev := celery.Event{
		Type: celery.TypeResult, UUID: r.ID, Hostname: r.Worker, Timestamp: r.CompletedAt, VisitResult: vr,
		Name: r.Task,
		Fields: map[string]any{
			"type": celery.TypeResult, "uuid": r.ID, "hostname": r.Worker, "name": r.Task,
			"timestamp": json.Number(strconv.FormatFloat(ts, 'f', -1, 64)), "result": raw,
		},
	}
	if url := messageURL(r.Body); url != "" {
		ev.Fields["origin"] = url
	}
	return ev, nil
}

// messageURL returns the url keyword argument of a Celery message body
// ([args, kwargs, embed]), the origin a visit message is about; "" when it
// has none.
func messageURL(body string) string {
	var parts []json.RawMessage
	if json.Unmarshal([]byte(body), &parts) != nil || len(parts) < 2 {
		return ""
	}
	var kwargs struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(parts[1], &kwargs) != nil {
		return ""
	}
	return kwargs.URL
}
