package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// Fixtures of the generic-task cases: the task type load-git of
// gitTaskType (interval 64 days in [12 hours, 64 days], backoff 2.5, 3
// retries 90 minutes apart, runs time out after 6 hours).

// withTaskType returns a fixture whose store knows gitTaskType.
func withTaskType(t *testing.T, newStore NewStore) *fixture {
	f := newFixture(t, newStore)
	require.NoError(t, f.s.TaskTypeCreate(f.ctx, gitTaskType()))
	return f
}

// recurring is a new recurring load-git task of url(name), due at base.
func recurring(name string) revisit.NewTask {
	return revisit.NewTask{Type: "load-git", Policy: revisit.TaskRecurring, NextRun: base,
		Arguments: revisit.TaskArguments{Args: []any{}, Kwargs: map[string]any{"url": url(name)}}}
}

// oneshot is a new oneshot load-git task of url(name), due at base.
func oneshot(name string) revisit.NewTask {
	n := recurring(name)
	n.Policy = revisit.TaskOneshot
	return n
}

func intp(i int) *int { return &i }

// create creates tasks and requires success.
func (f *fixture) create(tasks ...revisit.NewTask) []revisit.Task {
	f.t.Helper()
	got, err := f.s.TasksCreate(f.ctx, tasks)
	require.NoError(f.t, err)
	require.Len(f.t, got, len(tasks))
	return got
}

// task reads one task.
func (f *fixture) task(id int64) revisit.Task {
	f.t.Helper()
	page, err := f.s.TasksGet(f.ctx, revisit.TaskFilter{IDs: []int64{id}})
	require.NoError(f.t, err)
	require.Len(f.t, page.Tasks, 1, "task %d", id)
	return page.Tasks[0]
}

// allTasks returns every task flt selects, walking every page.
func (f *fixture) allTasks(flt revisit.TaskFilter) []revisit.Task {
	f.t.Helper()
	var out []revisit.Task
	for i := 0; ; i++ {
		require.Less(f.t, i, 1000, "pagination does not end")
		page, err := f.s.TasksGet(f.ctx, flt)
		require.NoError(f.t, err)
		out = append(out, page.Tasks...)
		if page.NextPageToken == "" {
			return out
		}
		flt.PageToken = page.NextPageToken
	}
}

func taskIDs(ts []revisit.Task) []int64 {
	ids := make([]int64, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// ready peeks or grabs the ready load-git tasks at now.
func (f *fixture) ready(grab, priority bool, now time.Time, limit int) []revisit.Task {
	f.t.Helper()
	p := revisit.ReadyTasksParams{Type: "load-git", Now: now, Limit: limit, Priority: priority}
	op := f.s.TasksPeekReady
	if grab {
		op = f.s.TasksGrabReady
	}
	got, err := op(f.ctx, p)
	require.NoError(f.t, err)
	return got
}

func exerciseTasks(t *testing.T, newStore NewStore) {
	parallel(t, "Task/CreateDefaults", func(t *testing.T) {
		f := withTaskType(t, newStore)
		given := recurring("given")
		given.CurrentInterval = 2 * day
		given.RetriesLeft = intp(0)
		given.Priority = revisit.PriorityHigh
		given.NextRun = at(time.Hour + 1500*time.Nanosecond)
		got := f.create(recurring("default"), given, oneshot("once"))

		require.Equal(t, 64*day, got[0].CurrentInterval, "the type's default interval")
		require.Equal(t, 3, got[0].RetriesLeft, "the type's num_retries")
		require.Equal(t, revisit.TaskNextRunNotScheduled, got[0].Status)
		require.Equal(t, revisit.PriorityNone, got[0].Priority)
		require.Equal(t, 2*day, got[1].CurrentInterval)
		require.Equal(t, 0, got[1].RetriesLeft, "given zero retries are kept")
		requireTime(t, at(time.Hour+time.Microsecond), got[1].NextRun)
		require.Equal(t, revisit.TaskOneshot, got[2].Policy)
		require.Less(t, got[0].ID, got[1].ID)
		require.Less(t, got[1].ID, got[2].ID)
		for _, want := range got {
			require.Equal(t, want, f.task(want.ID), "stored as returned")
		}
		require.Equal(t, map[string]any{"url": url("default")}, got[0].Arguments.Kwargs)
		require.Equal(t, []any{}, got[0].Arguments.Args)

		noRetries := revisit.TaskType{Type: "load-hg", BackendName: "hg.Load"}
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, noRetries))
		hg := oneshot("hg")
		hg.Type = "load-hg"
		got = f.create(hg)
		require.Equal(t, 0, got[0].RetriesLeft, "no num_retries: no retries")
		require.Zero(t, got[0].CurrentInterval)
	})

	parallel(t, "Task/CreateDeduplicates", func(t *testing.T) {
		f := withTaskType(t, newStore)
		first := f.create(recurring("a"), oneshot("b"))

		laterRecurring := recurring("a")
		laterRecurring.NextRun = at(day)
		otherPriority := recurring("a")
		otherPriority.Priority = revisit.PriorityLow
		laterOneshot := oneshot("b")
		laterOneshot.NextRun = at(day)
		sameKwargsOtherOrder := recurring("a")
		sameKwargsOtherOrder.Arguments.Args = nil // nil and empty are the same arguments
		got := f.create(recurring("c"), laterRecurring, oneshot("b"), otherPriority, laterOneshot, recurring("c"), sameKwargsOtherOrder)

		require.Equal(t, first[0].ID, got[1].ID, "a recurring duplicate, whatever its next_run, is the existing task")
		requireTime(t, base, got[1].NextRun, "the existing task is unchanged")
		require.Equal(t, first[1].ID, got[2].ID, "oneshot with the same next_run")
		require.NotEqual(t, first[0].ID, got[3].ID, "another priority is another task")
		require.NotEqual(t, first[1].ID, got[4].ID, "oneshot at another time is another task")
		require.Equal(t, got[0].ID, got[5].ID, "duplicates inside one batch share one task")
		require.Equal(t, first[0].ID, got[6].ID)
		require.Len(t, f.allTasks(revisit.TaskFilter{}), 5)

		// Only active tasks count: a completed task is created again.
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{first[1].ID}, revisit.TaskCompleted))
		again := f.create(oneshot("b"))
		require.NotEqual(t, first[1].ID, again[0].ID)
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{first[0].ID}, revisit.TaskNextRunScheduled))
		require.Equal(t, first[0].ID, f.create(recurring("a"))[0].ID, "a scheduled task is active")
	})

	parallel(t, "Task/CreateInvalidNothingWritten", func(t *testing.T) {
		f := withTaskType(t, newStore)
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, revisit.TaskType{Type: "load-hg", BackendName: "hg.Load"}))
		hg := recurring("hg")
		hg.Type = "load-hg"
		_, err := f.s.TasksCreate(f.ctx, []revisit.NewTask{recurring("ok"), hg})
		requireInvalid(t, err, "tasks[1].current_interval")

		unknown := recurring("x")
		unknown.Type = "load-nothing"
		_, err = f.s.TasksCreate(f.ctx, []revisit.NewTask{recurring("ok"), unknown})
		requireCode(t, err, revisit.ErrNotFound, "tasks[1].type")
		require.Contains(t, err.Error(), "load-nothing")

		for field, mod := range map[string]func(*revisit.NewTask){
			"tasks[1].type":             func(n *revisit.NewTask) { n.Type = "" },
			"tasks[1].policy":           func(n *revisit.NewTask) { n.Policy = "sometimes" },
			"tasks[1].priority":         func(n *revisit.NewTask) { n.Priority = "urgent" },
			"tasks[1].next_run":         func(n *revisit.NewTask) { n.NextRun = time.Time{} },
			"tasks[1].retries_left":     func(n *revisit.NewTask) { n.RetriesLeft = intp(-1) },
			"tasks[1].current_interval": func(n *revisit.NewTask) { n.CurrentInterval = -time.Second },
			"tasks[1].arguments":        func(n *revisit.NewTask) { n.Arguments.Kwargs = map[string]any{"f": func() {}} },
		} {
			bad := recurring("bad")
			mod(&bad)
			_, err := f.s.TasksCreate(f.ctx, []revisit.NewTask{recurring("ok"), bad})
			requireInvalid(t, err, field)
		}
		require.Empty(t, f.allTasks(revisit.TaskFilter{}), "nothing half-written")
		got, err := f.s.TasksCreate(f.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
	})

	parallel(t, "Task/SearchAndPages", func(t *testing.T) {
		f := withTaskType(t, newStore)
		var batch []revisit.NewTask
		for i := range 25 {
			n := recurring(fmt.Sprintf("r%02d", i))
			if i%2 == 1 {
				n = oneshot(fmt.Sprintf("o%02d", i))
			}
			n.NextRun = at(time.Duration(i) * time.Hour)
			n.Priority = []revisit.TaskPriority{revisit.PriorityNone, revisit.PriorityHigh, revisit.PriorityNormal, revisit.PriorityLow, revisit.PriorityNone}[i%5]
			batch = append(batch, n)
		}
		created := f.create(batch...)
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{created[3].ID, created[4].ID}, revisit.TaskDisabled))

		all := f.allTasks(revisit.TaskFilter{Limit: 4})
		require.Equal(t, taskIDs(created), taskIDs(all), "every task once, in id order, across pages")

		count := func(flt revisit.TaskFilter, want int) {
			t.Helper()
			require.Len(t, f.allTasks(flt), want, "%+v", flt)
		}
		none, high := revisit.PriorityNone, revisit.PriorityHigh
		count(revisit.TaskFilter{Type: "load-git"}, 25)
		count(revisit.TaskFilter{Type: "load-hg"}, 0)
		count(revisit.TaskFilter{Policy: revisit.TaskOneshot}, 12)
		count(revisit.TaskFilter{Status: revisit.TaskDisabled}, 2)
		count(revisit.TaskFilter{Priority: &none}, 10)
		count(revisit.TaskFilter{Priority: &high}, 5)
		count(revisit.TaskFilter{NextRunAfter: atp(10 * time.Hour), NextRunBefore: atp(20 * time.Hour)}, 10)
		count(revisit.TaskFilter{IDs: []int64{created[0].ID, created[7].ID, 1 << 40}}, 2)
		count(revisit.TaskFilter{Policy: revisit.TaskRecurring, Priority: &high, Limit: 1}, 2) // i = 6, 16

		for field, flt := range map[string]revisit.TaskFilter{
			"page_token": {PageToken: "garbage"},
			"limit":      {Limit: -1},
			"status":     {Status: "running"},
			"policy":     {Policy: "twice"},
		} {
			_, err := f.s.TasksGet(f.ctx, flt)
			requireInvalid(t, err, field)
		}
	})

	parallel(t, "Task/SetStatusAndRespawn", func(t *testing.T) {
		f := withTaskType(t, newStore)
		b := oneshot("b")
		b.RetriesLeft = intp(0)
		ts := f.create(recurring("a"), b)
		requireInvalid(t, f.s.TasksSetStatus(f.ctx, []int64{ts[0].ID}, "paused"), "status")
		requireCode(t, f.s.TasksSetStatus(f.ctx, []int64{ts[0].ID, 1 << 40}, revisit.TaskDisabled), revisit.ErrNotFound, "")
		require.Equal(t, revisit.TaskNextRunNotScheduled, f.task(ts[0].ID).Status, "all or nothing")
		requireInvalid(t, f.s.TasksSetStatus(f.ctx, nil, revisit.TaskDisabled), "ids")

		require.NoError(t, f.s.TasksSetStatus(f.ctx, taskIDs(ts), revisit.TaskDisabled))
		require.Equal(t, revisit.TaskDisabled, f.task(ts[1].ID).Status)

		// A disabled task with no retries left comes back with the type's.
		f.schedule(ts[1].ID, "m-b")
		require.NoError(t, f.s.TasksRespawn(f.ctx, []int64{ts[1].ID}, atp(3*day)))
		got := f.task(ts[1].ID)
		require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
		requireTime(t, at(3*day), got.NextRun)
		require.Equal(t, 3, got.RetriesLeft)

		require.NoError(t, f.s.TasksRespawn(f.ctx, []int64{ts[0].ID}, nil))
		requireTime(t, base, f.task(ts[0].ID).NextRun, "no next_run: unchanged")
		requireCode(t, f.s.TasksRespawn(f.ctx, []int64{1 << 40}, nil), revisit.ErrNotFound, "")
	})

	// TasksUpdateStatus does what Software Heritage's set_status_tasks
	// does: unknown ids are ignored, next_run is set when given, and
	// completed tasks may be left alone.
	parallel(t, "Task/UpdateStatus", func(t *testing.T) {
		f := withTaskType(t, newStore)
		ts := f.create(recurring("a"), oneshot("b"), oneshot("c"))
		a, b, c := ts[0].ID, ts[1].ID, ts[2].ID
		require.NoError(t, f.s.TasksSetStatus(f.ctx, []int64{b}, revisit.TaskCompleted))
		update := func(u revisit.TaskStatusUpdate) int {
			t.Helper()
			n, err := f.s.TasksUpdateStatus(f.ctx, u)
			require.NoError(t, err)
			return n
		}

		require.Equal(t, 2, update(revisit.TaskStatusUpdate{IDs: []int64{a, c, 1 << 40, a}, Status: revisit.TaskDisabled}),
			"unknown ids are ignored, repeated ones count once")
		require.Equal(t, revisit.TaskDisabled, f.task(a).Status)
		require.Equal(t, revisit.TaskCompleted, f.task(b).Status)
		require.Equal(t, revisit.TaskDisabled, f.task(c).Status)
		requireTime(t, base, f.task(a).NextRun, "no next_run: unchanged")

		next := at(3*day + 1500*time.Nanosecond)
		require.Equal(t, 2, update(revisit.TaskStatusUpdate{IDs: []int64{a, b, c}, Status: revisit.TaskNextRunNotScheduled,
			NextRun: &next, ExceptCompleted: true}), "the completed task is left alone")
		require.Equal(t, revisit.TaskCompleted, f.task(b).Status)
		requireTime(t, base, f.task(b).NextRun)
		for _, id := range []int64{a, c} {
			got := f.task(id)
			require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
			requireTime(t, next, got.NextRun, "next_run at the microsecond")
		}
		require.Equal(t, 1, update(revisit.TaskStatusUpdate{IDs: []int64{b}, Status: revisit.TaskDisabled}),
			"completed tasks too, unless told")
		require.Equal(t, revisit.TaskDisabled, f.task(b).Status)
		require.Equal(t, 1, update(revisit.TaskStatusUpdate{IDs: []int64{b}, Status: revisit.TaskDisabled}),
			"a task already in that status counts")

		require.Zero(t, update(revisit.TaskStatusUpdate{IDs: []int64{1 << 40}, Status: revisit.TaskDisabled}))
		require.Zero(t, update(revisit.TaskStatusUpdate{Status: revisit.TaskDisabled}), "no ids: nothing to do")
		_, err := f.s.TasksUpdateStatus(f.ctx, revisit.TaskStatusUpdate{IDs: []int64{a}, Status: "paused"})
		requireInvalid(t, err, "status")
		_, err = f.s.TasksUpdateStatus(f.ctx, revisit.TaskStatusUpdate{Status: ""})
		requireInvalid(t, err, "status")
		require.Equal(t, revisit.TaskNextRunNotScheduled, f.task(a).Status, "an invalid update changes nothing")
	})

	parallel(t, "Task/ReadyOrder", func(t *testing.T) {
		f := withTaskType(t, newStore)
		mk := func(name string, due time.Duration, p revisit.TaskPriority) revisit.NewTask {
			n := recurring(name)
			n.NextRun, n.Priority = at(due), p
			return n
		}
		ts := f.create(
			mk("late", 3*time.Hour, ""), mk("early", time.Hour, ""), mk("future", 2*day, ""),
			mk("low", 0, revisit.PriorityLow), mk("normal-late", 2*time.Hour, revisit.PriorityNormal),
			mk("high-late", 5*time.Hour, revisit.PriorityHigh), mk("normal-early", time.Hour, revisit.PriorityNormal),
			mk("high-future", 3*day, revisit.PriorityHigh), mk("now", day, ""),
		)
		id := func(i int) int64 { return ts[i].ID }
		now := at(day)
		require.Equal(t, []int64{id(1), id(0), id(8)}, taskIDs(f.ready(false, false, now, 10)), "oldest next_run first, next_run <= now")
		require.Equal(t, []int64{id(5), id(6), id(4), id(3)}, taskIDs(f.ready(false, true, now, 10)), "high, normal, low")
		require.Equal(t, []int64{id(5), id(6)}, taskIDs(f.ready(false, true, now, 2)))

		grabbed := f.ready(true, true, now, 3)
		require.Equal(t, []int64{id(5), id(6), id(4)}, taskIDs(grabbed))
		for _, g := range grabbed {
			require.Equal(t, revisit.TaskNextRunScheduled, g.Status)
			require.Equal(t, revisit.TaskNextRunScheduled, f.task(g.ID).Status)
		}
		require.Equal(t, []int64{id(3)}, taskIDs(f.ready(true, true, now, 3)), "never handed twice")
		require.Empty(t, f.ready(true, true, now, 3))
		require.Equal(t, []int64{id(1), id(0)}, taskIDs(f.ready(true, false, now, 2)))

		f.clock.Set(at(2 * day))
		require.Equal(t, []int64{id(8), id(2)}, taskIDs(f.ready(false, false, time.Time{}, 10)), "zero Now is the store's clock")

		for _, c := range []struct {
			p     revisit.ReadyTasksParams
			field string
		}{
			{revisit.ReadyTasksParams{Type: "load-git"}, "limit"},
			{revisit.ReadyTasksParams{Type: "load-git", Limit: -1}, "limit"},
			{revisit.ReadyTasksParams{Limit: 1}, "type"},
		} {
			_, err := f.s.TasksGrabReady(f.ctx, c.p)
			requireInvalid(t, err, c.field, "%+v", c.p)
		}
	})

	parallel(t, "Task/GrabConcurrentDisjoint", func(t *testing.T) {
		f := withTaskType(t, newStore)
		var batch []revisit.NewTask
		for i := range 120 {
			n := recurring(fmt.Sprintf("t%03d", i))
			if i%3 == 0 {
				n.Priority = revisit.PriorityNormal
			}
			batch = append(batch, n)
		}
		f.create(batch...)
		var (
			mu  sync.Mutex
			got []int64
			wg  sync.WaitGroup
		)
		for g := range 6 {
			wg.Go(func() {
				for {
					ts, err := f.s.TasksGrabReady(f.ctx, revisit.ReadyTasksParams{Type: "load-git", Now: at(day), Limit: 7, Priority: g%2 == 0})
					if err != nil {
						t.Errorf("grab: %v", err)
						return
					}
					if len(ts) == 0 {
						return
					}
					mu.Lock()
					got = append(got, taskIDs(ts)...)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.Sort(got)
		require.Len(t, got, 120, "every task grabbed")
		require.Len(t, slices.Compact(got), 120, "no task grabbed twice")
	})
}
