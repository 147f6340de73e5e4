package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/store"
)

// dispatched grabs n new recurring tasks and records one run for each, as
// the runner does before publishing; it returns the tasks and their runs'
// backend ids.
func dispatched(t *testing.T, st store.Store, n int) ([]revisit.Task, []string) {
	t.Helper()
	ctx := context.Background()
	addTasks(t, st, n, revisit.TaskRecurring, revisit.PriorityNone)
	ts, err := st.TasksGrabReady(ctx, revisit.ReadyTasksParams{Type: listerType, Limit: n})
	require.NoError(t, err)
	require.Len(t, ts, n)
	ids := make([]string, n)
	news := make([]revisit.NewTaskRun, n)
	for i, tk := range ts {
		ids[i] = uuid.NewString()
		news[i] = revisit.NewTaskRun{TaskID: tk.ID, BackendID: ids[i]}
	}
	_, err = st.TaskRunsSchedule(ctx, news)
	require.NoError(t, err)
	return ts, ids
}

// ev is a worker event as JSON: type, uuid, timestamp, hostname and more
// fields.
func ev(typ, id string, at time.Time, fields ...any) map[string]any {
	m := map[string]any{"type": typ, "uuid": id, "hostname": "celery@worker1", "pid": 42, "clock": 7,
		"timestamp": float64(at.UnixMicro()) / 1e6}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	return m
}

// decode encodes events as one task.multi body and decodes it as the
// broker does.
func decode(t *testing.T, objs ...map[string]any) []celery.Event {
	t.Helper()
	body, err := json.Marshal(objs)
	require.NoError(t, err)
	evs, err := celery.DecodeEvents("task.multi", body)
	require.NoError(t, err)
	return evs
}

func TestHandleEventsEndsRuns(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		addType(t, st, 100)
		ts, ids := dispatched(t, st, 6)
		t0 := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Minute)
		t1 := t0.Add(30 * time.Second)
		unknown := uuid.NewString()
		evs := decode(t,
			ev(celery.TypeReceived, ids[0], t0, "name", listerBackend),
			ev(celery.TypeStarted, ids[0], t0),
			ev(celery.TypeStarted, unknown, t0),
			ev(celery.TypeResult, ids[0], t1, "result", map[string]any{"status": "eventful", "pages": 3}),
			ev(celery.TypeSucceeded, ids[1], t1, "result", "{'pages': 2, 'origins': 100}", "runtime", 1.5),
			ev(celery.TypeSucceeded, ids[2], t1, "result", "None"),
			ev(celery.TypeFailed, ids[3], t1, "exception", "ExceptionWithTraceback()",
				"traceback", "Traceback (most recent call last):\n  File \"x.py\", line 1\nRuntimeError: forge is down\n"),
			ev(celery.TypeResult, ids[4], t1, "result", map[string]any{"status": "not_found"}),
			ev(celery.TypeSucceeded, ids[5], t1, "result", "<object object at 0x7f>"),
			ev(celery.TypeSucceeded, unknown, t1, "result", "{'status': 'eventful'}"),
		)
		unmatched, err := HandleEvents(ctx, st, evs)
		require.NoError(t, err)
		// The unknown run's events, and the task-received that no run uses.
		require.Equal(t, []celery.Event{evs[0], evs[2], evs[9]}, unmatched)

		byTask := map[int64]revisit.TaskRun{}
		for _, r := range runs(t, st, ts[0].ID, ts[1].ID, ts[2].ID, ts[3].ID, ts[4].ID, ts[5].ID) {
			byTask[r.TaskID] = r
		}
		r := byTask[ts[0].ID]
		require.Equal(t, revisit.RunEventful, r.Status)
		require.True(t, r.Started.Equal(t0), "started %v, want %v", r.Started, t0)
		require.True(t, r.Ended.Equal(t1), "ended %v, want %v", r.Ended, t1)
		require.Equal(t, "celery@worker1", r.Metadata["worker"])
		require.EqualValues(t, map[string]any{"status": "eventful", "pages": json.Number("3")}, normalize(t, r.Metadata["result"]))
		// Eventful: the day's interval halves to its 12 h floor.
		tk := task(t, st, ts[0].ID)
		require.Equal(t, revisit.TaskNextRunNotScheduled, tk.Status)
		require.Equal(t, 12*time.Hour, tk.CurrentInterval)
		require.True(t, tk.NextRun.Equal(t1.Add(12*time.Hour)), "next run %v", tk.NextRun)

		// A truthy result without status is eventful, None uneventful.
		require.Equal(t, revisit.RunEventful, byTask[ts[1].ID].Status)
		require.Equal(t, "{'pages': 2, 'origins': 100}", byTask[ts[1].ID].Metadata["result"])
		require.Equal(t, revisit.RunUneventful, byTask[ts[2].ID].Status)
		tk = task(t, st, ts[2].ID)
		require.Equal(t, 48*time.Hour, tk.CurrentInterval)
		require.True(t, tk.NextRun.Equal(t1.Add(48*time.Hour)), "next run %v", tk.NextRun)

		// A failure keeps the exception's last line and uses a retry.
		r = byTask[ts[3].ID]
		require.Equal(t, revisit.RunFailed, r.Status)
		require.Equal(t, "RuntimeError: forge is down", r.Metadata["exception"])
		tk = task(t, st, ts[3].ID)
		require.Equal(t, 0, tk.RetriesLeft)
		require.True(t, tk.NextRun.Equal(t1.Add(10*time.Minute)), "next run %v", tk.NextRun)

		// not_found is a failed run; an unreadable result an uneventful one.
		require.Equal(t, revisit.RunFailed, byTask[ts[4].ID].Status)
		require.Equal(t, revisit.RunUneventful, byTask[ts[5].ID].Status)
		require.Contains(t, byTask[ts[5].ID].Metadata["result_error"], "bad task result")
	})
}

func TestHandleEventsEndsARunOnce(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		addType(t, st, 100)
		ts, ids := dispatched(t, st, 2)
		t1 := time.Now().UTC().Truncate(time.Microsecond)

		// Across batches: the task-result ends the run, the task-succeeded
		// that follows (and a redelivery of both) changes nothing.
		result := decode(t, ev(celery.TypeResult, ids[0], t1, "result", map[string]any{"status": "uneventful"}))
		succeeded := decode(t, ev(celery.TypeSucceeded, ids[0], t1.Add(time.Second), "result", "{'status': 'eventful'}"))
		for _, batch := range [][]celery.Event{result, succeeded, result, succeeded} {
			unmatched, err := HandleEvents(ctx, st, batch)
			require.NoError(t, err)
			require.Empty(t, unmatched)
		}
		tk := task(t, st, ts[0].ID)
		require.Equal(t, 48*time.Hour, tk.CurrentInterval, "backoff applied once")
		require.True(t, tk.NextRun.Equal(t1.Add(48*time.Hour)), "next run %v", tk.NextRun)
		r := runs(t, st, ts[0].ID)
		require.Len(t, r, 1)
		require.Equal(t, revisit.RunUneventful, r[0].Status)
		require.True(t, r[0].Ended.Equal(t1))

		// In one batch the task-result wins, even after the task-succeeded.
		_, err := HandleEvents(ctx, st, decode(t,
			ev(celery.TypeSucceeded, ids[1], t1, "result", "{'status': 'uneventful'}"),
			ev(celery.TypeResult, ids[1], t1, "result", map[string]any{"status": "success", "eventful": true}),
			ev(celery.TypeStarted, ids[1], t1.Add(-time.Second)),
		))
		require.NoError(t, err)
		r = runs(t, st, ts[1].ID)
		require.Equal(t, revisit.RunEventful, r[0].Status)
		require.NotNil(t, r[0].Started)
		require.Equal(t, 12*time.Hour, task(t, st, ts[1].ID).CurrentInterval)
	})
}

func TestHandleEventsStoreErrorFailsTheBatch(t *testing.T) {
	st := teststore.SQLite(t)
	addType(t, st, 100)
	_, ids := dispatched(t, st, 1)
	evs := decode(t, ev(celery.TypeStarted, ids[0], time.Now()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	unmatched, err := HandleEvents(ctx, st, evs)
	require.Error(t, err)
	require.Contains(t, err.Error(), ids[0])
	require.Nil(t, unmatched)

	// Hand-made events without a decoded result do not panic.
	unmatched, err = HandleEvents(context.Background(), st, []celery.Event{{Type: celery.TypeResult, UUID: ids[0]}})
	require.NoError(t, err)
	require.Empty(t, unmatched)
}

// normalize round-trips v through JSON, numbers as json.Number.
func normalize(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	require.NoError(t, dec.Decode(&out))
	return out
}
