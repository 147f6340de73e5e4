package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// requireTimePtr requires got to be set and equal to want.
func requireTimePtr(t *testing.T, want time.Time, got *time.Time, msgAndArgs ...any) {
	t.Helper()
	require.NotNil(t, got, msgAndArgs...)
	require.True(t, want.Equal(*got), "want %v, got %v", want, *got)
}

// message returns a placeholder message with that id, as published by a
// runner that died before recording its confirm.
func message(id string) celery.Message {
	var m celery.Message
	m.Properties.CorrelationID = id
	return m
}

// runIn runs r until the test's end or stop is called, and requires it to
// return nil.
func runIn(t *testing.T, r *Runner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
	}
	t.Cleanup(stop)
	return stop
}

// inFlight returns the runs of tasks that have not ended, by task.
func inFlight(t *testing.T, st store.Store, ts []revisit.Task) map[int64][]revisit.TaskRun {
	t.Helper()
	out := map[int64][]revisit.TaskRun{}
	for _, tk := range ts {
		for _, run := range runs(t, st, tk.ID) {
			if run.Ended == nil {
				out[tk.ID] = append(out[tk.ID], run)
			}
		}
	}
	return out
}

func TestRunRedispatchesAtOnceAfterACrash(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		addType(t, st, 100)
		ts := addTasks(t, st, 4, revisit.TaskRecurring, revisit.PriorityNone)
		b := newFakeBroker()

		// A runner grabbed the four tasks, recorded unconfirmed runs for
		// three, published two of them (the broker had the first, a worker
		// already started the second), then was killed before recording
		// any confirm; the fourth task has no run.
		grabbed, err := st.TasksGrabReady(ctx, revisit.ReadyTasksParams{Type: listerType, Limit: 4})
		require.NoError(t, err)
		require.Len(t, grabbed, 4)
		_, err = st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{
			{TaskID: ts[0].ID, BackendID: "dead-0", Unconfirmed: true},
			{TaskID: ts[1].ID, BackendID: "dead-1", Unconfirmed: true},
			{TaskID: ts[2].ID, BackendID: "dead-2", Unconfirmed: true},
		})
		require.NoError(t, err)
		b.set(func(b *fakeBroker) {
			b.queues[listerBackend] = append(b.queues[listerBackend], message("dead-0"))
		})
		started := time.Now().UTC().Truncate(time.Microsecond)
		_, err = st.TaskRunStart(ctx, "dead-1", started, nil)
		require.NoError(t, err)

		// A new runner removes the unconfirmed runs that did not start and
		// dispatches their tasks, and the one without a run, at once: the
		// run timeout (a day) and the wedged check (an hour) play no part.
		cfg := testConfig()
		cfg.Metrics = NewMetrics(nil)
		r := newRunner(t, st, b, cfg)
		stop := runIn(t, r)
		waitFor(t, 10*time.Second, "three tasks dispatched again", func() bool {
			return len(b.queue(listerBackend)) == 4
		})
		stop()

		require.InDelta(t, 3, value(t, cfg.Metrics.recovered.WithLabelValues(listerType)), 0,
			"two unconfirmed runs, one task claimed without a run")
		queued := map[string]int{}
		for _, m := range b.queue(listerBackend) {
			queued[m.Properties.CorrelationID]++
		}
		flying := inFlight(t, st, ts)
		for _, tk := range ts {
			require.Len(t, flying[tk.ID], 1, "task %d has one run in flight", tk.ID)
			require.Equal(t, revisit.TaskNextRunScheduled, task(t, st, tk.ID).Status)
			run := flying[tk.ID][0]
			require.NotNil(t, run.Confirmed, "run %s confirmed", run.BackendID)
			if tk.ID == ts[1].ID {
				require.Equal(t, "dead-1", run.BackendID, "a started run is kept")
				requireTimePtr(t, started, run.Confirmed, "and counts as confirmed")
				continue
			}
			require.Len(t, runs(t, st, tk.ID), 1, "the unconfirmed run of task %d is removed", tk.ID)
			require.Equal(t, 1, queued[run.BackendID], "the message of run %s is in the queue", run.BackendID)
		}
		// The message the dead runner published is there twice: once under
		// its removed run, whose events will match nothing, once anew.
		require.Equal(t, 1, queued["dead-0"])
	})
}

// failingConfirms is a store whose TaskRunsConfirm fails as the store
// were unavailable, the first `failures` times.
type failingConfirms struct {
	store.Store
	failures atomic.Int32
}

func (s *failingConfirms) TaskRunsConfirm(ctx context.Context, backendIDs []string, at time.Time) (int, error) {
	if s.failures.Add(-1) >= 0 {
		return 0, revisit.Errorf(revisit.CodeUnavailable, "database is restarting")
	}
	return s.Store.TaskRunsConfirm(ctx, backendIDs, at)
}

func TestRunRecoversWhenConfirmsCannotBeRecorded(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, plain store.Store) {
		addType(t, plain, 100)
		ts := addTasks(t, plain, 2, revisit.TaskRecurring, revisit.PriorityNone)
		st := &failingConfirms{Store: plain}
		st.failures.Store(1)
		b := newFakeBroker()
		cfg := testConfig()
		cfg.DependencyBackoff = 50 * time.Millisecond
		cfg.Metrics = NewMetrics(nil)
		r := newRunner(t, st, b, cfg)
		stop := runIn(t, r)

		// The broker confirms both messages, the store cannot record it:
		// the runs stay unconfirmed and the loop waits for the store. Before
		// its next round it recovers them: the two tasks go again, without
		// waiting for the run timeout.
		waitFor(t, 10*time.Second, "the tasks dispatched again", func() bool {
			return len(b.queue(listerBackend)) == 4
		})
		time.Sleep(100 * time.Millisecond) // a few more rounds: nothing more goes
		stop()
		require.Len(t, b.queue(listerBackend), 4)
		require.InDelta(t, 2, value(t, cfg.Metrics.recovered.WithLabelValues(listerType)), 0)
		queued := map[string]bool{}
		for _, m := range b.queue(listerBackend) {
			queued[m.Properties.CorrelationID] = true
		}
		for _, tk := range ts {
			rs := runs(t, plain, tk.ID)
			require.Len(t, rs, 1, "the unconfirmed run of task %d was replaced", tk.ID)
			require.NotNil(t, rs[0].Confirmed)
			require.Nil(t, rs[0].Ended)
			require.True(t, queued[rs[0].BackendID])
		}
	})
}
