package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/leased"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// recoverPage is how many scheduled tasks recovery inspects per store call.
const recoverPage = 500

// loop dispatches the due tasks of one task type while it holds the type's
// lease (through leased.Loop).
type loop struct {
	r        *Runner
	taskType string
	name     string
	log      *slog.Logger
	leased   *leased.Loop
}

func newLoop(r *Runner, taskType string) *loop {
	l := &loop{r: r, taskType: taskType, name: "dispatch:" + taskType, log: r.log.With("task_type", taskType)}
	l.leased = leased.New(leased.Config{Leases: r.store, Name: "runner:" + taskType, Owner: r.cfg.Owner,
		TTL: r.cfg.LeaseTTL, MaxBackoff: r.cfg.DependencyBackoff, Jitter: r.cfg.RoundJitter, Logger: l.log,
		Waited:   func(reason string) { r.metrics.waits.WithLabelValues(l.name, reason).Inc() },
		Acquired: l.acquired}, l)
	return l
}

// acquired tells who holds the task type's lease after an attempt to take
// or renew it.
func (l *loop) acquired(held, was bool, holder string) {
	switch {
	case held && !was:
		l.log.Info("dispatching task type", "owner", l.r.cfg.Owner)
	case !held && was:
		l.log.Warn("lease lost: another runner dispatches this task type now", "owner", holder)
	}
}

// Round runs a round; see round.
func (l *loop) Round(ctx context.Context) (leased.Rest, error) {
	d, err := l.round(ctx)
	return leased.Rest{D: d}, err
}

// round dispatches the type's due priority tasks, then as many of its
// other due tasks as its queue has room for, and returns how long to wait
// before the next round: at once (plus jitter) when a batch was full, so
// more tasks may be due, else the poll interval.
func (l *loop) round(ctx context.Context) (time.Duration, error) {
	tt, err := l.r.store.TaskTypeGet(ctx, l.taskType)
	if err != nil {
		return 0, fmt.Errorf("task type %s: %w", l.taskType, err)
	}
	morePriority, err := l.priorityRound(ctx, tt)
	if err != nil {
		return 0, err
	}
	more, err := l.normalRound(ctx, tt)
	if err != nil {
		return 0, err
	}
	if more || morePriority {
		return supervise.Jitter(l.r.cfg.RoundJitter), nil
	}
	return l.r.cfg.PollInterval + supervise.Jitter(l.r.cfg.RoundJitter), nil
}

// priorityRound dispatches due priority tasks to the priority queue,
// whatever its depth, and reports whether the batch was full. A missing
// priority queue is reported and the tasks wait; it does not stop the
// type's other tasks.
func (l *loop) priorityRound(ctx context.Context, tt revisit.TaskType) (bool, error) {
	due, err := l.r.store.TasksPeekReady(ctx, revisit.ReadyTasksParams{Type: tt.Type, Now: l.r.cfg.Clock.Now(),
		Limit: 1, Priority: true})
	if err != nil {
		return false, fmt.Errorf("peek priority tasks: %w", err)
	}
	if len(due) == 0 {
		return false, nil
	}
	queue := l.r.cfg.PriorityQueuePrefix + tt.BackendName
	if _, err := l.r.broker.Depth(ctx, queue); errors.Is(err, broker.ErrQueueMissing) {
		l.r.metrics.waits.WithLabelValues(l.name, "priority_queue_missing").Inc()
		l.log.Warn("priority tasks wait: their queue does not exist (no priority worker declared it)", "queue", queue)
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("depth of queue %s: %w", queue, err)
	}
	limit := min(tt.MaxQueueLengthOrDefault(), l.r.cfg.MaxPerRound)
	n, err := l.dispatch(ctx, tt, queue, limit, true)
	return n == limit, err
}

// normalRound dispatches due tasks without priority when at least
// MinFreeRatio of the queue is free, up to the free slots
// (revisit.SlotRule), and reports whether the batch was full.
func (l *loop) normalRound(ctx context.Context, tt revisit.TaskType) (bool, error) {
	queue := tt.BackendName
	depth, err := l.r.broker.Depth(ctx, queue)
	if err != nil {
		return false, fmt.Errorf("depth of queue %s: %w", queue, err)
	}
	l.r.metrics.depth.WithLabelValues(tt.Type).Set(float64(depth))
	maxLen := tt.MaxQueueLengthOrDefault()
	limit := revisit.SlotRule{MinFreeRatio: MinFreeRatio, PerSend: l.r.cfg.MaxPerRound}.Slots(maxLen, depth)
	if limit == 0 {
		l.log.Debug("queue full", "queue", queue, "depth", depth, "max_queue_length", maxLen)
		return false, nil
	}
	n, err := l.dispatch(ctx, tt, queue, limit, false)
	return n == limit, err
}

// dispatch grabs up to limit due tasks (with or without priority), records
// an unconfirmed run for each, publishes their messages to queue, confirms
// the runs of the messages the broker confirmed and ends as lost the
// others. It returns how many tasks it grabbed.
func (l *loop) dispatch(ctx context.Context, tt revisit.TaskType, queue string, limit int, priority bool) (int, error) {
	now := l.r.cfg.Clock.Now()
	tasks, err := l.r.store.TasksGrabReady(ctx, revisit.ReadyTasksParams{Type: tt.Type, Now: now, Limit: limit,
		Priority: priority})
	if err != nil {
		return 0, fmt.Errorf("grab %d tasks: %w", limit, err)
	}
	if len(tasks) == 0 {
		return 0, nil
	}
	ids := make([]string, len(tasks))
	runs := make([]revisit.NewTaskRun, len(tasks))
	for i, t := range tasks {
		ids[i] = uuid.NewString()
		runs[i] = revisit.NewTaskRun{TaskID: t.ID, BackendID: ids[i], Scheduled: now, Unconfirmed: true,
			Metadata: map[string]any{"queue": queue}}
	}
	if _, err := l.r.store.TaskRunsSchedule(ctx, runs); err != nil {
		l.leased.MarkDirty() // in case the runs were recorded after all
		l.release(tasks)
		return 0, fmt.Errorf("record %d task runs: %w", len(runs), err)
	}

	var ends []revisit.TaskRunEnd
	msgs := make([]celery.Message, 0, len(tasks))
	sent := make([]string, 0, len(tasks)) // backend ids of msgs
	for i, t := range tasks {
		m, err := celery.NewMessage(celery.Task{Name: tt.BackendName, ID: ids[i], Args: t.Arguments.Args,
			Kwargs: t.Arguments.Kwargs, Origin: l.r.cfg.Origin})
		if err != nil { // the arguments cannot travel: retrying cannot help
			ends = append(ends, revisit.TaskRunEnd{BackendID: ids[i], Status: revisit.RunPermfailed,
				Metadata: map[string]any{"error": fmt.Sprintf("task %d: %v", t.ID, err)}})
			continue
		}
		msgs = append(msgs, m)
		sent = append(sent, ids[i])
	}
	var pubs []broker.Publication
	if len(msgs) > 0 {
		pubs, _ = l.r.broker.Publish(ctx, queue, msgs) // the outcomes say all
	}
	confirmed := make([]string, 0, len(sent))
	var firstErr error
	for i, id := range sent {
		if i < len(pubs) && pubs[i].Outcome == broker.Confirmed {
			confirmed = append(confirmed, id)
			continue
		}
		why := errors.New("no outcome reported")
		if i < len(pubs) && pubs[i].Err != nil {
			why = pubs[i].Err
		}
		if firstErr == nil {
			firstErr = why
		}
		ends = append(ends, revisit.TaskRunEnd{BackendID: id, Status: revisit.RunLost,
			Metadata: map[string]any{"publish_error": why.Error()}})
	}
	prio := fmt.Sprint(priority)
	l.r.metrics.dispatched.WithLabelValues(tt.Type, prio).Add(float64(len(confirmed)))
	l.r.metrics.publishFailed.WithLabelValues(tt.Type, prio).Add(float64(len(sent) - len(confirmed)))
	l.log.Info("dispatched", "queue", queue, "grabbed", len(tasks), "confirmed", len(confirmed),
		"not_confirmed", len(sent)-len(confirmed), "unsendable", len(tasks)-len(sent))
	if err := l.confirmRuns(ctx, confirmed); err != nil {
		return len(tasks), err
	}
	if err := l.endRuns(ctx, ends); err != nil {
		return len(tasks), err
	}
	if len(confirmed) == 0 && firstErr != nil {
		return len(tasks), &supervise.WaitError{Reason: "publish_failed",
			Err: fmt.Errorf("no message of %d confirmed by the broker: %w", len(sent), firstErr)}
	}
	return len(tasks), nil
}

// confirmRuns records the broker's confirms of the runs with those backend
// ids, also after the round's context ended. When it cannot, the runs stay
// unconfirmed and the loop recovers them before its next round: their
// tasks are dispatched again, and their messages, in the queue already,
// are duplicated.
func (l *loop) confirmRuns(ctx context.Context, backendIDs []string) error {
	if len(backendIDs) == 0 {
		return nil
	}
	ctx, cancel := leased.CleanupContext(ctx)
	defer cancel()
	if _, err := l.r.store.TaskRunsConfirm(ctx, backendIDs, l.r.cfg.Clock.Now()); err != nil {
		l.leased.MarkDirty()
		return fmt.Errorf("confirm %d task runs: %w", len(backendIDs), err)
	}
	return nil
}

// endRuns ends the runs whose message never reached the queue, also after
// the round's context ended: their tasks then follow the end-of-run rules.
// Runs it cannot end stay unconfirmed, and the loop recovers them before
// its next round.
func (l *loop) endRuns(ctx context.Context, ends []revisit.TaskRunEnd) error {
	if len(ends) == 0 {
		return nil
	}
	ctx, cancel := leased.CleanupContext(ctx)
	defer cancel()
	now := l.r.cfg.Clock.Now()
	for _, e := range ends {
		e.Ended = now
		if _, err := l.r.store.TaskRunEnd(ctx, e); err != nil {
			l.leased.MarkDirty()
			return fmt.Errorf("end task run %s (%s): %w", e.BackendID, e.Status, err)
		}
	}
	l.log.Warn("messages not sent or not confirmed: their runs ended, their tasks follow the end-of-run rules",
		"runs", len(ends), "first", ends[0].Metadata)
	return nil
}

// release makes grabbed tasks without a run due again; on failure the
// loop's recovery does it before the next round.
func (l *loop) release(tasks []revisit.Task) {
	ids := make([]int64, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), leased.CleanupTimeout)
	defer cancel()
	if err := l.r.store.TasksSetStatus(ctx, ids, revisit.TaskNextRunNotScheduled); err != nil {
		l.leased.MarkDirty()
		l.log.Warn("cannot release grabbed tasks; the loop's recovery will", "tasks", len(ids), "err", err)
	}
}

// Recover undoes what a runner that stopped mid-round left of the type:
// first the runs it recorded but whose confirms it never recorded (their
// messages may or may not be in the queue), then the tasks it claimed
// without recording a run. Both are made due again.
func (l *loop) Recover(ctx context.Context) error {
	n, err := l.r.store.TaskRunsRecoverUnconfirmed(ctx, l.taskType)
	if err != nil {
		return fmt.Errorf("recover unconfirmed task runs: %w", err)
	}
	if n > 0 {
		l.r.metrics.recovered.WithLabelValues(l.taskType).Add(float64(n))
		l.log.Warn("runs recorded but never confirmed (a runner stopped mid-round) removed; their tasks are due again",
			"runs", n)
	}
	return l.recoverClaimed(ctx)
}

// recoverClaimed makes due again the tasks of the type left
// next_run_scheduled without a run in flight: grabbed by a runner that
// crashed (or failed to release them) before recording their runs. It runs
// when the loop starts, after the unconfirmed runs are recovered. It is
// exact while one runner process drives the type; with several, a task
// another process grabbed an instant before, and has not recorded the run
// of yet, is made due again and may be dispatched twice.
func (l *loop) recoverClaimed(ctx context.Context) error {
	f := revisit.TaskFilter{Type: l.taskType, Status: revisit.TaskNextRunScheduled, Limit: recoverPage}
	var orphans []int64
	for {
		page, err := l.r.store.TasksGet(ctx, f)
		if err != nil {
			return fmt.Errorf("recover claimed tasks: %w", err)
		}
		if len(page.Tasks) == 0 {
			break
		}
		ids := make([]int64, len(page.Tasks))
		for i, t := range page.Tasks {
			ids[i] = t.ID
		}
		runs, err := l.r.store.TaskRunsGet(ctx, ids)
		if err != nil {
			return fmt.Errorf("recover claimed tasks: %w", err)
		}
		inFlight := map[int64]bool{}
		for _, r := range runs {
			if r.Ended == nil {
				inFlight[r.TaskID] = true
			}
		}
		var candidates []int64
		for _, id := range ids {
			if !inFlight[id] {
				candidates = append(candidates, id)
			}
		}
		// A run that ended between the two reads left its task as the
		// end-of-run rules made it: read the statuses again.
		if len(candidates) > 0 {
			now, err := l.r.store.TasksGet(ctx, revisit.TaskFilter{IDs: candidates, Limit: len(candidates)})
			if err != nil {
				return fmt.Errorf("recover claimed tasks: %w", err)
			}
			for _, t := range now.Tasks {
				if t.Status == revisit.TaskNextRunScheduled {
					orphans = append(orphans, t.ID)
				}
			}
		}
		if page.NextPageToken == "" {
			break
		}
		f.PageToken = page.NextPageToken
	}
	if len(orphans) == 0 {
		return nil
	}
	if err := l.r.store.TasksSetStatus(ctx, orphans, revisit.TaskNextRunNotScheduled); err != nil {
		return fmt.Errorf("recover %d claimed tasks: %w", len(orphans), err)
	}
	l.r.metrics.recovered.WithLabelValues(l.taskType).Add(float64(len(orphans)))
	l.log.Warn("tasks claimed without a run (a runner stopped mid-round) are due again", "tasks", len(orphans))
	return nil
}
