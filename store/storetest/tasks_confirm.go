package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// scheduleUnconfirmed records one run of a task unconfirmed, as the runner
// does before publishing its message, scheduled at the clock's time.
func (f *fixture) scheduleUnconfirmed(taskID int64, backendID string) revisit.TaskRun {
	f.t.Helper()
	runs, err := f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: taskID, BackendID: backendID, Unconfirmed: true}})
	require.NoError(f.t, err)
	return runs[0]
}

// confirm confirms runs at `at` and returns how many it confirmed.
func (f *fixture) confirm(at time.Time, backendIDs ...string) int {
	f.t.Helper()
	n, err := f.s.TaskRunsConfirm(f.ctx, backendIDs, at)
	require.NoError(f.t, err)
	return n
}

// run returns the run of a backend id among the runs of a task.
func (f *fixture) run(taskID int64, backendID string) revisit.TaskRun {
	f.t.Helper()
	for _, r := range f.runs(taskID) {
		if r.BackendID == backendID {
			return r
		}
	}
	f.t.Fatalf("task %d has no run %s", taskID, backendID)
	return revisit.TaskRun{}
}

func exerciseTaskConfirm(t *testing.T, newStore NewStore) {
	parallel(t, "TaskRun/Confirm", func(t *testing.T) {
		f := withTaskType(t, newStore)
		ts := f.create(recurring("a"), recurring("b"), recurring("c"), recurring("d"))

		// By default a run is recorded confirmed when scheduled.
		plain, err := f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: ts[0].ID, BackendID: "plain", Scheduled: at(time.Minute)}})
		require.NoError(t, err)
		requireTimePtr(t, atp(time.Minute), plain[0].Confirmed)
		requireTimePtr(t, atp(time.Minute), f.run(ts[0].ID, "plain").Confirmed)

		u1 := f.scheduleUnconfirmed(ts[1].ID, "u1")
		require.Nil(t, u1.Confirmed, "recorded unconfirmed")
		require.Equal(t, revisit.RunScheduled, u1.Status)
		requireTimePtr(t, &base, u1.Scheduled)
		require.Nil(t, f.run(ts[1].ID, "u1").Confirmed)
		f.scheduleUnconfirmed(ts[2].ID, "u2")
		f.scheduleUnconfirmed(ts[3].ID, "u3")

		require.Equal(t, 1, f.confirm(at(2*time.Minute), "u1", "unknown", "plain"), "unknown ids ignored, confirmed ones kept")
		requireTimePtr(t, atp(2*time.Minute), f.run(ts[1].ID, "u1").Confirmed)
		requireTimePtr(t, atp(time.Minute), f.run(ts[0].ID, "plain").Confirmed)
		require.Equal(t, revisit.RunScheduled, f.run(ts[1].ID, "u1").Status, "a confirm changes nothing else")

		// Idempotent: a second confirm keeps the first time.
		f.clock.Set(at(3 * time.Minute))
		require.Equal(t, 1, f.confirm(time.Time{}, "u1", "u2"), "only u2, at the store's clock")
		requireTimePtr(t, atp(2*time.Minute), f.run(ts[1].ID, "u1").Confirmed)
		requireTimePtr(t, atp(3*time.Minute), f.run(ts[2].ID, "u2").Confirmed)
		require.Zero(t, f.confirm(at(4*time.Minute), "u1", "u2"))
		require.Zero(t, f.confirm(at(4*time.Minute)), "no id: nothing to do")

		// A run that starts counts as confirmed: its start confirms it, and
		// the broker's confirm, recorded later, keeps that time.
		started, err := f.s.TaskRunStart(f.ctx, "u3", at(5*time.Minute), nil)
		require.NoError(t, err)
		requireTimePtr(t, atp(5*time.Minute), started.Confirmed)
		require.Zero(t, f.confirm(at(6*time.Minute), "u3"))
		requireTimePtr(t, atp(5*time.Minute), f.run(ts[3].ID, "u3").Confirmed)

		_, err = f.s.TaskRunsConfirm(f.ctx, []string{"u1", ""}, time.Time{})
		requireInvalid(t, err, "backend_ids[1]")
	})

	parallel(t, "TaskRun/RecoverUnconfirmed", func(t *testing.T) {
		f := withTaskType(t, newStore)
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, revisit.TaskType{Type: "load-hg", BackendName: "hg.Load"}))
		hg := oneshot("hg")
		hg.Type = "load-hg"
		ts := f.create(recurring("pending"), recurring("confirmed"), recurring("started"), recurring("finished"),
			oneshot("disabled"), recurring("old"), hg)
		pending, confirmed, started, finished, disabled, old, other := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5], ts[6]
		require.Len(t, f.ready(true, false, at(time.Hour), 10), 6, "the dispatcher grabs the load-git tasks")
		grabbed, err := f.s.TasksGrabReady(f.ctx, revisit.ReadyTasksParams{Type: "load-hg", Now: at(time.Hour), Limit: 10})
		require.NoError(t, err)
		require.Len(t, grabbed, 1)

		// It records their runs unconfirmed (one, of an earlier round,
		// confirmed by default), publishes, then dies before recording
		// the confirms; meanwhile workers started and finished some.
		f.schedule(old.ID, "old")
		for _, task := range []revisit.Task{pending, confirmed, started, finished, disabled, other} {
			f.scheduleUnconfirmed(task.ID, task.Arguments.Kwargs["url"].(string))
		}
		f.confirm(at(time.Minute), url("confirmed"))
		_, err = f.s.TaskRunStart(f.ctx, url("started"), at(2*time.Minute), nil)
		require.NoError(t, err)
		f.end(url("finished"), revisit.RunUneventful, at(3*time.Minute))
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{disabled.ID}, revisit.TaskDisabled))
		finishedBefore := f.task(finished.ID)
		require.Equal(t, revisit.TaskNextRunNotScheduled, finishedBefore.Status)

		n, err := f.s.TaskRunsRecoverUnconfirmed(f.ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, 2, n, "the runs of pending and disabled: unconfirmed, neither started nor ended")

		// The pending task is due again, as it was: same next_run, same
		// retries, no run.
		require.Empty(t, f.runs(pending.ID))
		got := f.task(pending.ID)
		require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
		requireTime(t, pending.NextRun, got.NextRun)
		require.Equal(t, pending.RetriesLeft, got.RetriesLeft)
		require.Equal(t, pending.CurrentInterval, got.CurrentInterval)
		again := f.ready(false, false, at(time.Hour), 10)
		require.Equal(t, []int64{pending.ID}, taskIDs(again), "only the pending task is ready")

		// A task no longer next_run_scheduled keeps its status.
		require.Empty(t, f.runs(disabled.ID))
		require.Equal(t, revisit.TaskDisabled, f.task(disabled.ID).Status)
		// Confirmed, started and finished runs stay, their tasks untouched.
		require.Len(t, f.runs(confirmed.ID), 1)
		require.Equal(t, revisit.TaskNextRunScheduled, f.task(confirmed.ID).Status)
		s := f.run(started.ID, url("started"))
		require.Equal(t, revisit.RunStarted, s.Status)
		requireTimePtr(t, atp(2*time.Minute), s.Confirmed, "a started run counts as confirmed")
		require.Equal(t, revisit.TaskNextRunScheduled, f.task(started.ID).Status)
		e := f.run(finished.ID, url("finished"))
		require.Equal(t, revisit.RunUneventful, e.Status)
		require.Nil(t, e.Confirmed)
		require.Equal(t, finishedBefore, f.task(finished.ID), "a task a run finished is not clobbered")
		require.Len(t, f.runs(old.ID), 1)
		require.Equal(t, revisit.TaskNextRunScheduled, f.task(old.ID).Status)
		// Other task types are not touched.
		require.Nil(t, f.run(other.ID, url("hg")).Confirmed)
		require.Equal(t, revisit.TaskNextRunScheduled, f.task(other.ID).Status)

		// Idempotent.
		n, err = f.s.TaskRunsRecoverUnconfirmed(f.ctx, "load-git")
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, revisit.TaskNextRunNotScheduled, f.task(pending.ID).Status)

		n, err = f.s.TaskRunsRecoverUnconfirmed(f.ctx, "load-hg")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Empty(t, f.runs(other.ID))
		require.Equal(t, revisit.TaskNextRunNotScheduled, f.task(other.ID).Status)
		n, err = f.s.TaskRunsRecoverUnconfirmed(f.ctx, "load-svn")
		require.NoError(t, err)
		require.Zero(t, n, "an unknown task type has nothing to recover")

		_, err = f.s.TaskRunsRecoverUnconfirmed(f.ctx, "")
		requireInvalid(t, err, "task_type")
	})

	parallel(t, "TaskRun/UnconfirmedWedged", func(t *testing.T) {
		// Without a recovery (the dispatcher's confirm failed and it lives
		// on), the wedged-run rule still ends an unconfirmed run.
		f := withTaskType(t, newStore)
		task := f.create(recurring("a"))[0]
		f.ready(true, false, at(time.Hour), 1)
		f.scheduleUnconfirmed(task.ID, "u")
		got, err := f.s.TaskRunsEndWedged(f.ctx, at(6*time.Hour))
		require.NoError(t, err)
		require.Empty(t, got)
		got, err = f.s.TaskRunsEndWedged(f.ctx, at(6*time.Hour+time.Second))
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, revisit.RunLost, got[0].Status)
		require.Nil(t, got[0].Confirmed)
		require.Equal(t, revisit.TaskNextRunNotScheduled, f.task(task.ID).Status)
		n, err := f.s.TaskRunsRecoverUnconfirmed(f.ctx, "load-git")
		require.NoError(t, err)
		require.Zero(t, n, "an ended run is history")
	})
}
