package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// The store methods and options that serve Software Heritage's RPC as its
// backend would: create_tasks, the task archive, grabs of every listed
// row, and stats batches applied in order.

func exerciseSWH(t *testing.T, newStore NewStore) {
	parallel(t, "SWH/CreateTasksUnlessWaiting", func(t *testing.T) {
		f := withTaskType(t, newStore)
		ids := func(ts []revisit.Task, err error) []int64 {
			t.Helper()
			require.NoError(t, err)
			out := make([]int64, len(ts))
			for i, tk := range ts {
				out[i] = tk.ID
			}
			return out
		}
		a, b := recurring("a"), recurring("b")
		first := ids(f.s.TasksCreateUnlessWaiting(f.ctx, []revisit.NewTask{a, b, a, b}))
		require.Len(t, first, 4, "a task of every input")
		require.IsIncreasing(t, first)
		require.Equal(t, first, ids(f.s.TasksCreateUnlessWaiting(f.ctx, []revisit.NewTask{b, a})),
			"nothing created again; every waiting copy answered, in id order")

		later := a
		later.NextRun = base.Add(time.Hour)
		require.Empty(t, ids(f.s.TasksCreateUnlessWaiting(f.ctx, []revisit.NewTask{later})),
			"a recurring task waits already: none created, and none due at that next_run")
		o, oLater := oneshot("a"), oneshot("a")
		oLater.NextRun = base.Add(time.Hour)
		made := ids(f.s.TasksCreateUnlessWaiting(f.ctx, []revisit.NewTask{o, oLater}))
		require.Len(t, made, 2, "oneshot tasks are told apart by their next_run")

		_, err := f.s.TasksUpdateStatus(f.ctx, revisit.TaskStatusUpdate{IDs: first[:2], Status: revisit.TaskNextRunScheduled})
		require.NoError(t, err)
		again := ids(f.s.TasksCreateUnlessWaiting(f.ctx, []revisit.NewTask{a, b}))
		require.Equal(t, first[2:], again, "only waiting tasks are identical")

		_, err = f.s.TasksCreateUnlessWaiting(f.ctx, []revisit.NewTask{a, {Type: "load-nothing", NextRun: base, Policy: revisit.TaskOneshot}})
		requireCode(t, err, revisit.ErrNotFound, "tasks[1].type")
		none, err := f.s.TasksCreateUnlessWaiting(f.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})

	parallel(t, "SWH/ArchiveAndDelete", func(t *testing.T) {
		f := withTaskType(t, newStore)
		// Six tasks, each with one run scheduled at base+1m: the first two
		// active, then a recurring one disabled, a oneshot disabled, a
		// recurring one active and a oneshot one completed.
		news := []revisit.NewTask{oneshot("t0"), recurring("t1"), recurring("t2"), oneshot("t3"), recurring("t4"), oneshot("t5")}
		ts, err := f.s.TasksCreate(f.ctx, news)
		require.NoError(t, err)
		var runs []revisit.NewTaskRun
		for i, tk := range ts {
			runs = append(runs, revisit.NewTaskRun{TaskID: tk.ID, BackendID: "b" + string(rune('0'+i)), Scheduled: at(time.Minute)})
		}
		_, err = f.s.TaskRunsSchedule(f.ctx, runs)
		require.NoError(t, err)
		_, err = f.s.TasksUpdateStatus(f.ctx, revisit.TaskStatusUpdate{IDs: []int64{ts[2].ID, ts[3].ID}, Status: revisit.TaskDisabled})
		require.NoError(t, err)
		_, err = f.s.TasksUpdateStatus(f.ctx, revisit.TaskStatusUpdate{IDs: []int64{ts[5].ID}, Status: revisit.TaskCompleted})
		require.NoError(t, err)
		_, err = f.s.TaskRunStart(f.ctx, "b5", at(2*time.Hour), nil)
		require.NoError(t, err)

		window := revisit.TaskArchiveFilter{After: base, Before: at(time.Hour), Limit: 1}
		var page revisit.TaskRunPage
		var archived []revisit.TaskRun
		for {
			page, err = f.s.TaskRunsToArchive(f.ctx, window)
			require.NoError(t, err)
			require.Len(t, page.Runs, 1, "a full page, the active tasks' runs left out in the query")
			archived = append(archived, page.Runs...)
			if page.NextPageToken == "" {
				break
			}
			window.PageToken = page.NextPageToken
		}
		require.Len(t, archived, 2, "t5's run started after before")
		require.Equal(t, []int64{ts[2].ID, ts[3].ID}, []int64{archived[0].TaskID, archived[1].TaskID})
		late, err := f.s.TaskRunsToArchive(f.ctx, revisit.TaskArchiveFilter{After: at(time.Hour), Before: at(3 * time.Hour)})
		require.NoError(t, err)
		require.Len(t, late.Runs, 1)
		require.Equal(t, ts[5].ID, late.Runs[0].TaskID, "a started run counts by its start")
		_, err = f.s.TaskRunsToArchive(f.ctx, revisit.TaskArchiveFilter{After: base, Before: at(time.Hour), PageToken: "nope"})
		requireInvalid(t, err, "page_token")
		_, err = f.s.TaskRunsToArchive(f.ctx, revisit.TaskArchiveFilter{Before: at(time.Hour)})
		requireInvalid(t, err, "after_ts")

		require.NoError(t, f.s.TasksDeleteArchived(f.ctx, []int64{ts[2].ID, ts[3].ID, ts[4].ID},
			[]int64{archived[0].ID, archived[1].ID}))
		left, err := f.s.TasksGet(f.ctx, revisit.TaskFilter{})
		require.NoError(t, err)
		var leftIDs []int64
		for _, tk := range left.Tasks {
			leftIDs = append(leftIDs, tk.ID)
		}
		require.Equal(t, []int64{ts[0].ID, ts[1].ID, ts[4].ID, ts[5].ID}, leftIDs,
			"the named tasks without runs are gone, the recurring one too; t4 keeps its run and stays")
	})

	parallel(t, "SWH/GrabEveryListedRow", func(t *testing.T) {
		f := newFixture(t, newStore)
		a, b := f.lister("github", ""), f.lister("mirror", "")
		f.record(origin(a.ID, "x", "git"), origin(b.ID, "x", "git"), origin(a.ID, "y", "git"))
		p := revisit.GrabParams{VisitType: "git", Count: 2, Policy: revisit.OldestScheduledFirst, Now: at(time.Hour),
			Cooldowns: noCooldowns(), DryRun: true, EveryListedRow: true}
		require.Len(t, f.grab(p), 2, "count counts rows")
		p.Count, p.DryRun = 10, false
		got := f.grab(p)
		require.ElementsMatch(t, []string{"x", "x", "y"}, names(got), "every lister's row")
		p.Cooldowns = nil
		require.Empty(t, f.grab(p), "every row of a grabbed origin is marked")
		require.Equal(t, atp(time.Hour), f.stats("x", "git").LastScheduled)
	})

	parallel(t, "SWH/GrabWithoutLastUpdateWritesPositionZero", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("cgit", "")
		f.record(origin(l.ID, "x", "git"))
		positions, err := f.s.QueuePositions(f.ctx)
		require.NoError(t, err)
		require.Empty(t, positions)
		require.Len(t, f.grab(revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OriginsWithoutLastUpdate,
			Now: at(time.Hour)}), 1)
		positions, err = f.s.QueuePositions(f.ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"git": 0}, positions, "origins without stats: the grab writes position 0")
	})

	parallel(t, "SWH/StatsOfOneOriginTwiceInABatch", func(t *testing.T) {
		f := newFixture(t, newStore)
		first := revisit.NewVisitStats(revisit.OriginKey{URL: url("x"), VisitType: "git"})
		first.LastVisit, first.LastVisitStatus = atp(time.Hour), stp(revisit.VisitFailed)
		second := revisit.NewVisitStats(revisit.OriginKey{URL: url("x"), VisitType: "git"})
		second.LastSuccessful, second.LastVisitStatus, second.SuccessiveVisits = atp(2*time.Hour), stp(revisit.VisitSuccessful), 3
		f.upsert(first, second)
		got := f.stats("x", "git")
		requireTimePtr(t, atp(time.Hour), got.LastVisit, "the first's field the second left")
		requireTimePtr(t, atp(2*time.Hour), got.LastSuccessful)
		require.Equal(t, revisit.VisitSuccessful, *got.LastVisitStatus, "the second's where both set it")
		require.Equal(t, 3, got.SuccessiveVisits)
	})
}
