package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// schedule records one run of a task, scheduled at the clock's time.
func (f *fixture) schedule(taskID int64, backendID string) revisit.TaskRun {
	f.t.Helper()
	runs, err := f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: taskID, BackendID: backendID}})
	require.NoError(f.t, err)
	return runs[0]
}

// end ends a run at ended and requires success.
func (f *fixture) end(backendID string, status revisit.TaskRunStatus, ended time.Time) revisit.TaskRun {
	f.t.Helper()
	r, err := f.s.TaskRunEnd(f.ctx, revisit.TaskRunEnd{BackendID: backendID, Status: status, Ended: ended})
	require.NoError(f.t, err)
	return r
}

// runs returns the runs of one task.
func (f *fixture) runs(taskID int64) []revisit.TaskRun {
	f.t.Helper()
	runs, err := f.s.TaskRunsGet(f.ctx, []int64{taskID})
	require.NoError(f.t, err)
	return runs
}

func exerciseTaskRuns(t *testing.T, newStore NewStore) {
	parallel(t, "TaskRun/Lifecycle", func(t *testing.T) {
		f := withTaskType(t, newStore)
		ts := f.create(recurring("a"), oneshot("b"))
		runs, err := f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{
			{TaskID: ts[1].ID, BackendID: "m-b", Scheduled: at(time.Minute), Metadata: map[string]any{"queue": "q"}},
			{TaskID: ts[0].ID, BackendID: "m-a"},
		})
		require.NoError(t, err)
		require.Equal(t, "m-b", runs[0].BackendID, "input order")
		require.Equal(t, ts[1].ID, runs[0].TaskID)
		require.Equal(t, revisit.RunScheduled, runs[0].Status)
		requireTimePtr(t, atp(time.Minute), runs[0].Scheduled)
		requireTimePtr(t, &base, runs[1].Scheduled, "zero Scheduled: the store's clock")
		require.Nil(t, runs[1].Metadata, "none given: none")

		started, err := f.s.TaskRunStart(f.ctx, "m-b", at(2*time.Minute), map[string]any{"worker": "w1"})
		require.NoError(t, err)
		require.Equal(t, revisit.RunStarted, started.Status)
		requireTimePtr(t, atp(2*time.Minute), started.Started)
		require.Equal(t, map[string]any{"queue": "q", "worker": "w1"}, started.Metadata)
		again, err := f.s.TaskRunStart(f.ctx, "m-b", at(3*time.Minute), nil)
		require.NoError(t, err)
		requireTimePtr(t, atp(2*time.Minute), again.Started, "a second start changes nothing")

		ended, err := f.s.TaskRunEnd(f.ctx, revisit.TaskRunEnd{BackendID: "m-b", Status: revisit.RunEventful,
			Ended: at(time.Hour), Metadata: map[string]any{"worker": "w2", "result": 1.0}})
		require.NoError(t, err)
		require.Equal(t, revisit.RunEventful, ended.Status)
		requireTimePtr(t, atp(time.Hour), ended.Ended)
		require.Equal(t, map[string]any{"queue": "q", "worker": "w2", "result": 1.0}, ended.Metadata)
		require.Equal(t, revisit.TaskCompleted, f.task(ts[1].ID).Status, "oneshot eventful: completed")
		require.Equal(t, []revisit.TaskRun{ended}, f.runs(ts[1].ID))

		late, err := f.s.TaskRunStart(f.ctx, "m-b", at(2*time.Hour), nil)
		require.NoError(t, err)
		require.Equal(t, ended, late, "a start after the end changes nothing")

		all, err := f.s.TaskRunsGet(f.ctx, taskIDs(ts))
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, ts[0].ID, all[0].TaskID, "by task")
	})

	parallel(t, "TaskRun/BackoffClamped", func(t *testing.T) {
		f := withTaskType(t, newStore)
		n := recurring("a")
		n.CurrentInterval = 10 * day
		task := f.create(n)[0]
		ended := base
		// min 12h, max 64d, factor 2.5: eventful divides, uneventful multiplies.
		steps := []struct {
			status revisit.TaskRunStatus
			want   time.Duration
		}{
			{revisit.RunEventful, 4 * day},
			{revisit.RunEventful, 38*time.Hour + 24*time.Minute},
			{revisit.RunEventful, 15*time.Hour + 21*time.Minute + 36*time.Second},
			{revisit.RunEventful, 12 * time.Hour}, // 6h08m38.4s clamped up to min
			{revisit.RunUneventful, 30 * time.Hour},
			{revisit.RunUneventful, 75 * time.Hour},
			{revisit.RunUneventful, 187*time.Hour + 30*time.Minute},
			{revisit.RunUneventful, 468*time.Hour + 45*time.Minute},
			{revisit.RunUneventful, 1171*time.Hour + 52*time.Minute + 30*time.Second},
			{revisit.RunUneventful, 64 * day}, // clamped down to max
			{revisit.RunEventful, 64 * day * 2 / 5},
		}
		for i, s := range steps {
			id := fmt.Sprintf("m%d", i)
			f.schedule(task.ID, id)
			ended = ended.Add(time.Hour)
			f.end(id, s.status, ended)
			got := f.task(task.ID)
			require.Equal(t, s.want, got.CurrentInterval, "step %d (%s)", i, s.status)
			requireTime(t, ended.Add(s.want), got.NextRun, "step %d: next_run = ended + interval", i)
			require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
			require.Equal(t, 3, got.RetriesLeft)
		}
	})

	parallel(t, "TaskRun/FailuresAndRetries", func(t *testing.T) {
		f := withTaskType(t, newStore)
		n := recurring("a")
		n.RetriesLeft = intp(2)
		n.CurrentInterval = 5 * day
		rec := f.create(n)[0]
		one := oneshot("b")
		one.RetriesLeft = intp(1)
		once := f.create(one)[0]

		expect := func(id int64, status revisit.TaskStatus, next time.Time, retries int) {
			t.Helper()
			got := f.task(id)
			require.Equal(t, status, got.Status)
			requireTime(t, next, got.NextRun)
			require.Equal(t, retries, got.RetriesLeft)
		}
		f.schedule(rec.ID, "r1")
		f.end("r1", revisit.RunFailed, at(time.Hour))
		expect(rec.ID, revisit.TaskNextRunNotScheduled, at(time.Hour+90*time.Minute), 1)
		f.schedule(rec.ID, "r2")
		f.end("r2", revisit.RunLost, at(2*time.Hour))
		expect(rec.ID, revisit.TaskNextRunNotScheduled, at(2*time.Hour+90*time.Minute), 0)
		f.schedule(rec.ID, "r3")
		f.end("r3", revisit.RunFailed, at(3*time.Hour))
		expect(rec.ID, revisit.TaskNextRunNotScheduled, at(3*time.Hour+5*day), 3)
		require.Equal(t, 5*day, f.task(rec.ID).CurrentInterval, "a failure keeps the interval")

		f.schedule(once.ID, "o1")
		f.end("o1", revisit.RunFailed, at(time.Hour))
		expect(once.ID, revisit.TaskNextRunNotScheduled, at(time.Hour+90*time.Minute), 0)
		f.schedule(once.ID, "o2")
		f.end("o2", revisit.RunLost, at(2*time.Hour))
		require.Equal(t, revisit.TaskDisabled, f.task(once.ID).Status, "oneshot out of retries: disabled")

		f.schedule(rec.ID, "r4")
		f.end("r4", revisit.RunPermfailed, at(4*time.Hour))
		require.Equal(t, revisit.TaskDisabled, f.task(rec.ID).Status, "permfailed: disabled")

		// Without retry_delay, retries wait an hour.
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, revisit.TaskType{Type: "load-hg", BackendName: "hg.Load", NumRetries: 1}))
		hg := oneshot("hg")
		hg.Type = "load-hg"
		h := f.create(hg)[0]
		f.schedule(h.ID, "h1")
		f.end("h1", revisit.RunFailed, at(day))
		expect(h.ID, revisit.TaskNextRunNotScheduled, at(day+time.Hour), 0)
	})

	parallel(t, "TaskRun/DuplicateEndChangesNothing", func(t *testing.T) {
		f := withTaskType(t, newStore)
		task := f.create(recurring("a"))[0]
		f.schedule(task.ID, "m")
		first := f.end("m", revisit.RunEventful, at(time.Hour))
		after := f.task(task.ID)
		require.Equal(t, 64*day*2/5, after.CurrentInterval)
		for _, status := range []revisit.TaskRunStatus{revisit.RunEventful, revisit.RunFailed, revisit.RunPermfailed} {
			again := f.end("m", status, at(2*time.Hour))
			require.Equal(t, first, again, "the run is unchanged")
			require.Equal(t, after, f.task(task.ID), "the task is unchanged (no second backoff)")
		}
		// A run ended while its task was disabled leaves it disabled.
		f.schedule(task.ID, "m2")
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{task.ID}, revisit.TaskDisabled))
		f.end("m2", revisit.RunEventful, at(3*time.Hour))
		require.Equal(t, revisit.TaskDisabled, f.task(task.ID).Status)
	})

	parallel(t, "TaskRun/MarkScheduledNoClobber", func(t *testing.T) {
		f := withTaskType(t, newStore)
		ts := f.create(recurring("fast"), recurring("slow"), oneshot("done"))
		peeked := f.ready(false, false, at(time.Hour), 10)
		require.Len(t, peeked, 3)
		for _, task := range ts {
			f.schedule(task.ID, fmt.Sprintf("m%d", task.ID))
		}
		// Two workers end their runs before the dispatcher marks the tasks.
		f.end(fmt.Sprintf("m%d", ts[0].ID), revisit.RunUneventful, at(time.Minute))
		f.end(fmt.Sprintf("m%d", ts[2].ID), revisit.RunEventful, at(time.Minute))
		before := f.task(ts[0].ID)
		n, err := f.s.TasksMarkScheduled(f.ctx, []string{fmt.Sprintf("m%d", ts[0].ID), fmt.Sprintf("m%d", ts[1].ID),
			fmt.Sprintf("m%d", ts[2].ID), "unknown"})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, before, f.task(ts[0].ID), "a finished run's task is not clobbered")
		require.Equal(t, revisit.TaskNextRunScheduled, f.task(ts[1].ID).Status)
		require.Equal(t, revisit.TaskCompleted, f.task(ts[2].ID).Status)
		n, err = f.s.TasksMarkScheduled(f.ctx, nil)
		require.NoError(t, err)
		require.Zero(t, n)
	})

	parallel(t, "TaskRun/EndWedged", func(t *testing.T) {
		f := withTaskType(t, newStore)
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, revisit.TaskType{Type: "load-hg", BackendName: "hg.Load"}))
		hg := oneshot("hg")
		hg.Type = "load-hg"
		ts := f.create(recurring("queued"), recurring("running"), recurring("done"), hg)
		f.schedule(ts[0].ID, "queued")
		f.schedule(ts[1].ID, "running")
		f.schedule(ts[2].ID, "done")
		f.schedule(ts[3].ID, "hg")
		_, err := f.s.TaskRunStart(f.ctx, "running", at(5*time.Hour), nil)
		require.NoError(t, err)
		f.end("done", revisit.RunEventful, at(time.Hour))

		got, err := f.s.TaskRunsEndWedged(f.ctx, at(6*time.Hour))
		require.NoError(t, err)
		require.Empty(t, got, "the timeout (6h) is not exceeded yet")

		f.clock.Set(at(7 * time.Hour))
		got, err = f.s.TaskRunsEndWedged(f.ctx, time.Time{})
		require.NoError(t, err)
		require.Len(t, got, 1, "the queued run, silent since its schedule 7h ago")
		require.Equal(t, "queued", got[0].BackendID)
		require.Equal(t, revisit.RunLost, got[0].Status)
		requireTimePtr(t, atp(7*time.Hour), got[0].Ended)
		task := f.task(ts[0].ID)
		require.Equal(t, 2, task.RetriesLeft, "lost: retried")
		requireTime(t, at(7*time.Hour+90*time.Minute), task.NextRun)

		got, err = f.s.TaskRunsEndWedged(f.ctx, at(12*time.Hour))
		require.NoError(t, err)
		require.Len(t, got, 1, "the started run, silent since its start")
		require.Equal(t, "running", got[0].BackendID)

		got, err = f.s.TaskRunsEndWedged(f.ctx, at(24*time.Hour))
		require.NoError(t, err)
		require.Empty(t, got, "a type without run_timeout waits DefaultRunTimeout")
		got, err = f.s.TaskRunsEndWedged(f.ctx, at(24*time.Hour+time.Second))
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, revisit.TaskDisabled, f.task(ts[3].ID).Status, "oneshot without retries: disabled")

		// A late end event of a run declared lost changes nothing.
		before := f.task(ts[0].ID)
		f.end("queued", revisit.RunEventful, at(25*time.Hour))
		require.Equal(t, before, f.task(ts[0].ID))
	})

	parallel(t, "TaskRun/InvalidInput", func(t *testing.T) {
		f := withTaskType(t, newStore)
		task := f.create(recurring("a"))[0]
		f.schedule(task.ID, "taken")
		for field, runs := range map[string][]revisit.NewTaskRun{
			"runs[1].backend_id": {{TaskID: task.ID, BackendID: "x"}, {TaskID: task.ID}},
			"runs[0].task_id":    {{BackendID: "x"}},
			"runs[0].metadata":   {{TaskID: task.ID, BackendID: "x", Metadata: map[string]any{"c": make(chan int)}}},
		} {
			_, err := f.s.TaskRunsSchedule(f.ctx, runs)
			requireInvalid(t, err, field)
		}
		_, err := f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: task.ID, BackendID: "x"}, {TaskID: task.ID, BackendID: "x"}})
		requireInvalid(t, err, "runs[1].backend_id")
		_, err = f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: task.ID, BackendID: "x"}, {TaskID: 1 << 40, BackendID: "y"}})
		requireCode(t, err, revisit.ErrNotFound, "runs[1].task_id")
		_, err = f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: task.ID, BackendID: "x"}, {TaskID: task.ID, BackendID: "taken"}})
		requireCode(t, err, revisit.ErrConflict, "runs[1].backend_id")
		_, err = f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: task.ID, BackendID: "taken"}, {TaskID: 1 << 40, BackendID: "y"}})
		requireCode(t, err, revisit.ErrNotFound, "runs[1].task_id", "every run's task is checked before the backend ids")
		require.Len(t, f.runs(task.ID), 1, "nothing half-written")

		_, err = f.s.TaskRunEnd(f.ctx, revisit.TaskRunEnd{BackendID: "taken", Status: revisit.RunStarted})
		requireInvalid(t, err, "status")
		_, err = f.s.TaskRunEnd(f.ctx, revisit.TaskRunEnd{Status: revisit.RunFailed})
		requireInvalid(t, err, "backend_id")
		_, err = f.s.TaskRunEnd(f.ctx, revisit.TaskRunEnd{BackendID: "nope", Status: revisit.RunFailed})
		requireCode(t, err, revisit.ErrNotFound, "backend_id")
		_, err = f.s.TaskRunStart(f.ctx, "nope", time.Time{}, nil)
		requireCode(t, err, revisit.ErrNotFound, "backend_id")
		_, err = f.s.TaskRunStart(f.ctx, "", time.Time{}, nil)
		requireInvalid(t, err, "backend_id")
		require.Equal(t, revisit.RunScheduled, f.runs(task.ID)[0].Status)
	})

	parallel(t, "TaskRun/Retention", func(t *testing.T) {
		f := withTaskType(t, newStore)
		ts := f.create(recurring("rec"), oneshot("old"), oneshot("recent"), oneshot("pending"), oneshot("never-run"))
		// rec: three old runs and one in flight; old: ended long ago;
		// recent: ended after the cutoff; never-run: disabled, no run.
		for i := range 3 {
			id := fmt.Sprintf("rec%d", i)
			f.schedule(ts[0].ID, id)
			f.end(id, revisit.RunUneventful, at(time.Duration(i)*time.Hour))
		}
		f.schedule(ts[0].ID, "rec-now")
		f.schedule(ts[1].ID, "old")
		f.end("old", revisit.RunEventful, at(time.Hour))
		f.schedule(ts[2].ID, "recent")
		f.end("recent", revisit.RunEventful, at(20*day))
		f.schedule(ts[3].ID, "pending")
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{ts[4].ID}, revisit.TaskDisabled))
		cutoff := at(10 * day)

		var archived []string
		flt := revisit.ArchiveFilter{Before: cutoff, Limit: 2}
		for {
			page, err := f.s.TaskRunsArchivable(f.ctx, flt)
			require.NoError(t, err)
			ids := make([]int64, len(page.Runs))
			for i, r := range page.Runs {
				ids[i] = r.ID
				archived = append(archived, r.BackendID)
			}
			n, err := f.s.TaskRunsDelete(f.ctx, ids)
			require.NoError(t, err)
			require.Equal(t, len(ids), n)
			if page.NextPageToken == "" {
				break
			}
			flt.PageToken = page.NextPageToken
		}
		require.Equal(t, []string{"rec0", "rec1", "rec2", "old"}, archived)
		require.Len(t, f.runs(ts[0].ID), 1, "the run in flight stays")

		page, err := f.s.TasksArchivable(f.ctx, revisit.ArchiveFilter{Before: cutoff})
		require.NoError(t, err)
		require.Equal(t, []int64{ts[1].ID, ts[4].ID}, taskIDs(page.Tasks), "finished oneshot tasks without newer runs")
		require.Empty(t, page.NextPageToken)
		n, err := f.s.TasksDelete(f.ctx, append(taskIDs(page.Tasks), ts[0].ID, ts[2].ID, ts[3].ID))
		require.NoError(t, err)
		require.Equal(t, 2, n, "only finished oneshot tasks without runs are deleted")
		require.Len(t, f.allTasks(revisit.TaskFilter{}), 3)

		n, err = f.s.TaskRunsDelete(f.ctx, []int64{f.runs(ts[3].ID)[0].ID})
		require.NoError(t, err)
		require.Zero(t, n, "a run in flight is never deleted")

		_, err = f.s.TaskRunsArchivable(f.ctx, revisit.ArchiveFilter{})
		requireInvalid(t, err, "before")
		_, err = f.s.TasksArchivable(f.ctx, revisit.ArchiveFilter{Before: cutoff, PageToken: "x"})
		requireInvalid(t, err, "page_token")
	})
}
