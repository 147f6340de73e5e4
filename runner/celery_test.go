package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/pytest"
)

// workerTasks is the worker's module: a lister task that returns a truthy
// result without status, and one that always fails; %[1]s and %[2]s are
// their names (and queues).
const workerTasks = `
import os, time
from celery import Celery

app = Celery('revisit_test', broker=os.environ['TEST_CELERY_BROKER'])
app.conf.update(worker_send_task_events=True, task_serializer='json', accept_content=['json'],
                worker_hijack_root_logger=False, broker_connection_retry_on_startup=True)

@app.task(name='%[1]s')
def list_ok(*args, **kwargs):
    return {'pages': 2, 'url': kwargs['url']}

@app.task(name='%[2]s')
def list_fail(*args, **kwargs):
    raise RuntimeError('forge down: ' + kwargs['url'])

@app.task(name='%[3]s')
def list_busy(*args, **kwargs):
    time.sleep(0.2)
    return {'pages': 1}
`

func TestCeleryWorkerEndToEnd(t *testing.T) {
	t.Parallel()
	pytest.Celery(t)
	id := uuid.NewString()[:8]
	okName, failName := "revisit.test.runner."+id+".ok", "revisit.test.runner."+id+".fail"
	busyName := "revisit.test.runner." + id + ".busy"
	priorityQueue := DefaultPriorityQueuePrefix + busyName
	b := celerytest.OpenBroker(t, amqp.Config{EventsQueue: "revisit.test.runner." + id + ".events"})
	t.Cleanup(func() {
		for _, q := range []string{okName, failName, busyName, priorityQueue, "revisit.test.runner." + id + ".events"} {
			_ = b.DeleteQueue(context.Background(), q)
		}
	})

	ctx := context.Background()
	st := teststore.SQLite(t)
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-ok", BackendName: okName,
		DefaultInterval: time.Hour, MinInterval: 10 * time.Minute, MaxInterval: 4 * time.Hour, BackoffFactor: 2}))
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-fail", BackendName: failName,
		NumRetries: 1, RetryDelay: time.Second}))
	due := time.Now().Add(-time.Minute)
	created, err := st.TasksCreate(ctx, []revisit.NewTask{
		{Type: "list-ok", Policy: revisit.TaskRecurring, NextRun: due,
			Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://gitlab.example"}}},
		{Type: "list-fail", Policy: revisit.TaskOneshot, NextRun: due,
			Arguments: revisit.TaskArguments{Args: []any{1}, Kwargs: map[string]any{"url": "https://down.example"}}},
	})
	require.NoError(t, err)
	okTask, failTask := created[0], created[1]

	// A busy type whose queue holds two: twelve tasks due for an hour, and
	// a priority task due now, which overtakes them.
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-busy", BackendName: busyName,
		MaxQueueLength: 2}))
	var busy []revisit.NewTask
	for i := range 12 {
		busy = append(busy, revisit.NewTask{Type: "list-busy", Policy: revisit.TaskOneshot, NextRun: due.Add(-time.Hour),
			Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": fmt.Sprintf("https://busy.example/%d", i)}}})
	}
	busyTasks, err := st.TasksCreate(ctx, busy)
	require.NoError(t, err)
	urgent, err := st.TasksCreate(ctx, []revisit.NewTask{{Type: "list-busy", Policy: revisit.TaskOneshot,
		Priority: revisit.PriorityHigh, NextRun: due,
		Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://busy.example/urgent"}}}})
	require.NoError(t, err)

	// The event listener's part: worker events end the runs.
	evCtx, stopEvents := context.WithCancel(ctx)
	evDone := make(chan error, 1)
	go func() {
		evDone <- b.Events(evCtx, func(ctx context.Context, evs []celery.Event) error {
			_, err := HandleEvents(ctx, st, evs)
			return err
		})
	}()
	t.Cleanup(func() {
		stopEvents()
		require.NoError(t, <-evDone)
	})

	celerytest.StartWorker(t, celerytest.WorkerOptions{Module: fmt.Sprintf(workerTasks, okName, failName, busyName),
		Queues: []string{okName, failName, busyName, priorityQueue}})

	cfg := testConfig()
	cfg.PollInterval, cfg.DependencyBackoff = 100*time.Millisecond, 500*time.Millisecond
	cfg.TaskTypes = []string{"list-ok", "list-fail", "list-busy"}
	r := newRunner(t, st, b, cfg)
	runCtx, stopRunner := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(runCtx) }()
	t.Cleanup(func() {
		stopRunner()
		require.NoError(t, <-runDone)
	})

	waitFor(t, 90*time.Second, "the recurring task's run to end and the failing task to be disabled", func() bool {
		okRuns := runs(t, st, okTask.ID)
		if len(okRuns) != 1 || !okRuns[0].Status.Final() || task(t, st, failTask.ID).Status != revisit.TaskDisabled {
			return false
		}
		for _, bt := range append(busyTasks, urgent...) {
			if task(t, st, bt.ID).Status != revisit.TaskCompleted {
				return false
			}
		}
		return true
	})

	// The priority task started before most of the busy tasks due an hour
	// earlier: it went to its own queue at the first round, while they
	// waited for room two at a time (without its priority it would start
	// after all twelve; the worker's prefetch and a loaded machine let a
	// few go first).
	started := func(id int64) time.Time {
		rs := runs(t, st, id)
		require.Len(t, rs, 1)
		require.NotNil(t, rs[0].Started)
		return *rs[0].Started
	}
	urgentStart, before := started(urgent[0].ID), 0
	for _, bt := range busyTasks {
		if started(bt.ID).Before(urgentStart) {
			before++
		}
	}
	t.Logf("%d of 12 busy tasks started before the priority task", before)
	require.LessOrEqual(t, before, 6, "the priority task overtakes most of the tasks due before it")

	// The recurring task's truthy result is eventful: its interval halves
	// and it runs next that much after its run ended.
	run := runs(t, st, okTask.ID)[0]
	require.Equal(t, revisit.RunEventful, run.Status, "%+v", run)
	require.NotNil(t, run.Started)
	require.NotEmpty(t, run.Metadata["worker"])
	got := task(t, st, okTask.ID)
	require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
	require.Equal(t, 30*time.Minute, got.CurrentInterval)
	require.True(t, got.NextRun.Equal(run.Ended.Add(30*time.Minute)), "next run %v, ended %v", got.NextRun, run.Ended)

	// The failing oneshot task ran twice (one retry), then was disabled.
	failRuns := runs(t, st, failTask.ID)
	require.Len(t, failRuns, 2)
	for _, fr := range failRuns {
		require.Equal(t, revisit.RunFailed, fr.Status)
		require.Contains(t, fr.Metadata["exception"], "RuntimeError: forge down: https://down.example")
	}
	require.Equal(t, 0, task(t, st, failTask.ID).RetriesLeft)
}
