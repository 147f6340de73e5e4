package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// The writes of an import from another scheduler's database: rows kept as
// they are, ids and times included.

func exerciseImports(t *testing.T, newStore NewStore) {
	parallel(t, "Import/Listers", func(t *testing.T) {
		f := newFixture(t, newStore)
		created, updated := at(-48*time.Hour+time.Microsecond), at(-time.Hour+7*time.Microsecond)
		a := revisit.Lister{ID: uuid.New(), Name: "gitlab", InstanceName: "gitlab.com", Created: created, Updated: updated,
			CurrentState:          json.RawMessage(`{"last_page":{"n":12,"name":"ünïcode ✓"},"ids":[1,2]}`),
			LastListingFinishedAt: atp(-2 * time.Hour), FirstVisitsQueuePrefix: sp("add_forge_now"),
			FirstVisitsScheduledAt: atp(-90 * time.Minute)}
		b := revisit.Lister{ID: uuid.New(), Name: "cgit", Created: created, Updated: updated, CurrentState: json.RawMessage(`{}`)}
		require.NoError(t, f.s.ListersImport(f.ctx, []revisit.Lister{a, b}))
		got, err := f.s.ListerGetByIDs(f.ctx, []uuid.UUID{a.ID, b.ID})
		require.NoError(t, err)
		require.Len(t, got, 2)
		byID := map[uuid.UUID]revisit.Lister{got[0].ID: got[0], got[1].ID: got[1]}
		for _, want := range []revisit.Lister{a, b} {
			l := byID[want.ID]
			require.Equal(t, want.Name, l.Name)
			require.Equal(t, want.InstanceName, l.InstanceName)
			requireTime(t, want.Created, l.Created)
			requireTime(t, want.Updated, l.Updated, "the optimistic-lock token, to the microsecond")
			require.JSONEq(t, string(want.CurrentState), string(l.CurrentState))
			requireTimePtr(t, want.LastListingFinishedAt, l.LastListingFinishedAt)
			require.Equal(t, want.FirstVisitsQueuePrefix, l.FirstVisitsQueuePrefix)
			requireTimePtr(t, want.FirstVisitsScheduledAt, l.FirstVisitsScheduledAt)
		}
		// The imported token works: the lister updates as before the switch.
		a.CurrentState = json.RawMessage(`{"last_page":{"n":13}}`)
		_, err = f.s.ListerUpdate(f.ctx, a)
		require.NoError(t, err)

		a.Updated = updated
		a.CurrentState = json.RawMessage(`{"again":true}`)
		require.NoError(t, f.s.ListersImport(f.ctx, []revisit.Lister{a}), "importing again replaces")
		l, err := f.s.ListerGet(f.ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		require.JSONEq(t, `{"again":true}`, string(l.CurrentState))
		requireTime(t, updated, l.Updated)

		other := b
		other.ID = uuid.New()
		err = f.s.ListersImport(f.ctx, []revisit.Lister{a, other})
		requireCode(t, err, revisit.ErrConflict, "listers[1]")
		require.ErrorContains(t, err, "cgit/ exists with another id")
		bad := b
		bad.CurrentState = json.RawMessage(`[1]`)
		requireInvalid(t, f.s.ListersImport(f.ctx, []revisit.Lister{a, bad}), "listers[1].current_state")
		bad = b
		bad.ID = uuid.Nil
		requireInvalid(t, f.s.ListersImport(f.ctx, []revisit.Lister{bad}), "listers[0].id")
	})

	parallel(t, "Import/ListedOriginsKeepTheirDates", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("github", "")
		m := f.lister("mirror", "")
		first, last := at(-1000*time.Hour+3*time.Microsecond), at(-time.Hour+5*time.Microsecond)
		x := origin(l.ID, "x", "git")
		x.FirstSeen, x.LastSeen = first, last
		shared := origin(m.ID, "x", "git")
		shared.FirstSeen, shared.LastSeen = first.Add(time.Hour), last
		foo := origin(l.ID, "x", "git")
		foo.URL, foo.FirstSeen, foo.LastSeen, foo.Enabled = "foo", first, last, false
		res, err := f.s.ListedOriginsImport(f.ctx, []revisit.ListedOrigin{x, shared, foo})
		require.NoError(t, err)
		require.Equal(t, 3, res.Inserted)
		got := f.get(l.ID, "x", "git")
		requireTime(t, first, got.FirstSeen)
		requireTime(t, last, got.LastSeen)
		requireTime(t, first.Add(time.Hour), f.get(m.ID, "x", "git").FirstSeen)
		all := f.all(revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled})
		require.Len(t, all, 3, "a URL of any text, disabled, and an origin of two listers")

		res, err = f.s.ListedOriginsImport(f.ctx, []revisit.ListedOrigin{x})
		require.NoError(t, err)
		require.Equal(t, 1, res.Updated)
		requireTime(t, last, f.get(l.ID, "x", "git").LastSeen, "importing again changes nothing")

		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: at(0), DryRun: true,
			EveryListedRow: true}
		require.Len(t, f.grab(p), 2, "both listers' rows of the shared origin, the disabled one left")
		p.EveryListedRow = false
		require.Len(t, f.grab(p), 1, "one origin")
	})

	parallel(t, "Import/TasksAndRunsKeepTheirIDs", func(t *testing.T) {
		f := withTaskType(t, newStore)
		args := revisit.TaskArguments{Args: []any{}, Kwargs: map[string]any{"url": url("a")}}
		ts := []revisit.Task{
			{ID: 1000, Type: "load-git", Arguments: args, NextRun: at(time.Microsecond), CurrentInterval: 64 * 24 * time.Hour,
				Status: revisit.TaskNextRunScheduled, Policy: revisit.TaskRecurring, RetriesLeft: 3},
			{ID: 7, Type: "load-git", Arguments: revisit.TaskArguments{Args: []any{"x", 1.5}, Kwargs: map[string]any{}},
				NextRun: at(time.Hour), Status: revisit.TaskCompleted, Policy: revisit.TaskOneshot, Priority: revisit.PriorityHigh},
		}
		require.NoError(t, f.s.TasksImport(f.ctx, ts))
		runs := []revisit.TaskRun{
			{ID: 50, TaskID: 1000, BackendID: "celery-1", Scheduled: atp(time.Minute), Started: atp(2 * time.Minute),
				Metadata: map[string]any{"worker": "w1", "nested": map[string]any{"k": []any{"v"}}}, Status: revisit.RunStarted},
			{ID: 51, TaskID: 7, BackendID: "celery-2", Scheduled: atp(time.Minute), Ended: atp(time.Hour),
				Status: revisit.RunEventful},
		}
		require.NoError(t, f.s.TaskRunsImport(f.ctx, runs))
		page, err := f.s.TasksGet(f.ctx, revisit.TaskFilter{})
		require.NoError(t, err)
		require.Len(t, page.Tasks, 2)
		require.Equal(t, int64(7), page.Tasks[0].ID)
		require.Equal(t, revisit.PriorityHigh, page.Tasks[0].Priority)
		require.Equal(t, revisit.TaskCompleted, page.Tasks[0].Status)
		require.Equal(t, []any{"x", 1.5}, page.Tasks[0].Arguments.Args)
		require.Equal(t, int64(1000), page.Tasks[1].ID)
		require.Equal(t, 64*24*time.Hour, page.Tasks[1].CurrentInterval)
		requireTime(t, at(time.Microsecond), page.Tasks[1].NextRun)
		got, err := f.s.TaskRunsGet(f.ctx, []int64{1000, 7})
		require.NoError(t, err)
		require.Len(t, got, 2)
		byID := map[int64]revisit.TaskRun{got[0].ID: got[0], got[1].ID: got[1]}
		require.Equal(t, runs[0].Metadata, byID[50].Metadata)
		require.Nil(t, byID[51].Metadata, "none stays none")
		requireTimePtr(t, atp(2*time.Minute), byID[50].Started)
		requireTimePtr(t, atp(time.Minute), byID[50].Confirmed, "confirmed when scheduled")
		require.Equal(t, revisit.RunEventful, byID[51].Status)

		// A worker's end of the imported run finds it; new ids follow.
		_, err = f.s.TaskRunEnd(f.ctx, revisit.TaskRunEnd{BackendID: "celery-1", Status: revisit.RunEventful, Ended: at(3 * time.Minute)})
		require.NoError(t, err)
		created, err := f.s.TasksCreate(f.ctx, []revisit.NewTask{oneshot("new")})
		require.NoError(t, err)
		require.Greater(t, created[0].ID, int64(1000), "new task ids follow the imported ones")
		scheduled, err := f.s.TaskRunsSchedule(f.ctx, []revisit.NewTaskRun{{TaskID: created[0].ID, BackendID: "celery-3"}})
		require.NoError(t, err)
		require.Greater(t, scheduled[0].ID, int64(51))

		require.NoError(t, f.s.TasksImport(f.ctx, ts[1:]), "importing again replaces")
		require.NoError(t, f.s.TaskRunsImport(f.ctx, runs[1:]))
		requireCode(t, f.s.TasksImport(f.ctx, []revisit.Task{{ID: 9, Type: "load-nothing", NextRun: base,
			Status: revisit.TaskDisabled, Policy: revisit.TaskOneshot}}), revisit.ErrNotFound, "tasks[0].type")
		requireInvalid(t, f.s.TasksImport(f.ctx, []revisit.Task{{ID: 9, Type: "load-git", NextRun: base,
			Status: "paused", Policy: revisit.TaskOneshot}}), "tasks[0].status")
		requireCode(t, f.s.TaskRunsImport(f.ctx, []revisit.TaskRun{{ID: 60, TaskID: 99999, BackendID: "x",
			Status: revisit.RunLost}}), revisit.ErrNotFound, "runs[0].task_id")
		requireCode(t, f.s.TaskRunsImport(f.ctx, []revisit.TaskRun{{ID: 60, TaskID: 7, BackendID: "celery-2",
			Status: revisit.RunLost}}), revisit.ErrConflict, "runs[0].backend_id")
		requireCode(t, f.s.TaskRunsImport(f.ctx, []revisit.TaskRun{
			{ID: 51, TaskID: 7, BackendID: "celery-9", Status: revisit.RunLost},
			{ID: 60, TaskID: 7, BackendID: "celery-2", Status: revisit.RunLost},
		}), revisit.ErrConflict, "runs[1].backend_id", "a backend id is taken as stored before the batch, whatever the batch renames")
		got, err = f.s.TaskRunsGet(f.ctx, []int64{7})
		require.NoError(t, err)
		require.Equal(t, "celery-2", got[0].BackendID, "nothing half-written")
	})
}
