package swhrpc

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/swhwire"
)

func taskRun(task any, backendID string, more ...any) swhwire.Model {
	return swhwire.Model{Type: "TaskRun", Fields: append(pairs("task", task, "backend_id", backendID), pairs(more...)...)}
}

// newTasks creates load-git and n oneshot tasks of it, and returns their ids.
func (c *client) newTasks(n int) []any {
	c.t.Helper()
	c.ok("task_type/create", "task_type", taskType("load-git", "default_interval", day))
	var tasks []any
	for i := range n {
		tasks = append(tasks, task("load-git", time.Now(), []any{int64(i), "é"}, "policy", "oneshot"))
	}
	var ids []any
	for _, m := range list(c.t, c.ok("task/create", "tasks", tasks)) {
		ids = append(ids, fields(c.t, m, "Task")["id"])
	}
	return ids
}

func TestTaskRuns(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		ids := c.newTasks(2)
		at := time.Date(2026, 3, 1, 12, 0, 0, 7000, time.UTC)
		one := c.ok("task_run/schedule_one", "task_id", ids[0], "backend_id", "b-0", "metadata", pairs("queue", "q"), "timestamp", at).(swhwire.Model)
		require.Equal(t, taskRunFields, names(one))
		r := fields(t, one, "TaskRun")
		require.Equal(t, ids[0], r["task"])
		require.Equal(t, at, r["scheduled"])
		require.Equal(t, "scheduled", r["status"])
		require.Equal(t, swhwire.Map{{Key: "queue", Value: "q"}}, r["metadata"])

		require.Nil(t, c.ok("task_run/schedule", "task_runs", []any{
			taskRun(ids[1], "b-1", "scheduled", at, "status", "scheduled", "id", nil, "started", nil, "ended", nil, "metadata", nil)}))
		started := at.Add(time.Minute)
		r = fields(t, c.ok("task_run/start", "backend_id", "b-1", "metadata", pairs("worker", "w1"), "timestamp", started), "TaskRun")
		require.Equal(t, "started", r["status"])
		require.Equal(t, started, r["started"])
		require.Nil(t, c.ok("task_run/start", "backend_id", "nope", "metadata", nil, "timestamp", nil), "an unknown backend id is None")

		ended := at.Add(2 * time.Minute)
		r = fields(t, c.ok("task_run/end", "backend_id", "b-1", "status", "eventful", "metadata", pairs("took", 1.5), "timestamp", ended), "TaskRun")
		require.Equal(t, "eventful", r["status"])
		require.Equal(t, ended, r["ended"])
		require.ElementsMatch(t, swhwire.Map{{Key: "took", Value: 1.5}, {Key: "worker", Value: "w1"}}, r["metadata"])
		require.Nil(t, c.ok("task_run/end", "backend_id", "nope", "status", "eventful"), "an unknown backend id is None")
		require.Equal(t, "completed", fields(t, list(t, c.ok("task/get", "task_ids", ids[1:]))[0], "Task")["status"],
			"the end of its run moves the task")

		runs := list(t, c.ok("task_run/get", "task_ids", ids, "limit", nil))
		require.Len(t, runs, 2)
		require.Len(t, list(t, c.ok("task_run/get", "task_ids", ids, "limit", int64(1))), 1)

		c.fails(http.StatusBadRequest, "SchedulerException", `status: "started" is not eventful, uneventful, failed, permfailed or lost`,
			"task_run/end", "backend_id", "b-0", "status", "started")
		c.fails(http.StatusBadRequest, "SchedulerException", `task_runs[1].status: "begun" is not scheduled`,
			"task_run/schedule", "task_runs", []any{taskRun(ids[0], "b-2"), taskRun(ids[0], "b-3", "status", "begun")})
		c.fails(http.StatusBadRequest, "SchedulerException", "task_runs[1].task_id: task 999999 not found",
			"task_run/schedule", "task_runs", []any{taskRun(ids[0], "b-2"), taskRun(int64(999999), "b-3")})
		c.fails(http.StatusBadRequest, "SchedulerException", "task_id: task 999999 not found",
			"task_run/schedule_one", "task_id", int64(999999), "backend_id", "b-4")
		require.Len(t, list(t, c.ok("task_run/get", "task_ids", ids)), 2, "nothing written")

		// Marking tasks scheduled after their dispatch leaves those whose
		// last run ended already.
		var recurring []any
		for _, m := range list(t, c.ok("task/create", "tasks", []any{task("load-git", at, []any{"r1"}), task("load-git", at, []any{"r2"})})) {
			recurring = append(recurring, fields(t, m, "Task")["id"])
		}
		c.ok("task_run/schedule", "task_runs", []any{taskRun(recurring[0], "r-1"), taskRun(recurring[1], "r-2")})
		c.ok("task_run/end", "backend_id", "r-1", "status", "failed")
		require.Nil(t, c.ok("task/set_status", "task_ids", recurring, "status", "next_run_scheduled", "except_completed_tasks", true))
		statuses := map[any]any{}
		for _, m := range list(t, c.ok("task/get", "task_ids", recurring)) {
			f := fields(t, m, "Task")
			statuses[f["id"]] = f["status"]
		}
		require.Equal(t, map[any]any{recurring[0]: "next_run_not_scheduled", recurring[1]: "next_run_scheduled"}, statuses)
	})
}

func TestTaskArchive(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		ids := c.newTasks(5)
		var runs []any
		for i, id := range ids {
			runs = append(runs, taskRun(id, "b-"+string(rune('0'+i))))
		}
		c.ok("task_run/schedule", "task_runs", runs)
		for i := range 4 {
			c.ok("task_run/end", "backend_id", "b-"+string(rune('0'+i)), "status", "eventful")
		}
		// Task 3 runs again: its task is active, so none of its runs is archived.
		c.ok("task/set_status", "task_ids", ids[3:4], "status", "next_run_not_scheduled")
		tomorrow := time.Now().UTC().Add(24 * time.Hour).Format(time.DateOnly)

		page := func(params ...any) ([]map[string]any, any) {
			t.Helper()
			m := c.ok("task/filter_for_archive", params...).(swhwire.Map)
			tasks, _ := m.Get("tasks")
			var rows []map[string]any
			for _, row := range list(t, tasks) {
				r := map[string]any{}
				for _, p := range row.(swhwire.Map) {
					r[p.Key.(string)] = p.Value
				}
				rows = append(rows, r)
			}
			next, ok := m.Get("next_page_token")
			require.Equal(t, ok, next != nil, "next_page_token only when more")
			return rows, next
		}
		all, next := page("after_ts", "2020-01-01", "before_ts", tomorrow, "limit", int64(10), "page_token", nil)
		require.Nil(t, next)
		require.Len(t, all, 3, "the runs that ended, of finished tasks")
		first := all[0]
		require.Equal(t, ids[0], first["task_id"])
		require.Equal(t, "oneshot", first["task_policy"])
		require.Equal(t, "completed", first["task_status"])
		require.Equal(t, "eventful", first["task_run_status"])
		require.Equal(t, "load-git", first["type"])
		require.Equal(t, "b-0", first["backend_id"])
		require.Equal(t, swhwire.Map{{Key: int64(0), Value: int64(0)}, {Key: int64(1), Value: "é"}},
			fields(t, swhwire.Model{Type: "x", Fields: first["arguments"].(swhwire.Map)}, "x")["args"])
		require.Equal(t, `{"url": "https://x/y"}`, fields(t, swhwire.Model{Type: "x", Fields: first["arguments"].(swhwire.Map)}, "x")["kwargs"])

		p1, next := page("after_ts", "2020-01-01", "before_ts", tomorrow+"T00:00:00Z", "limit", int64(2))
		require.Len(t, p1, 2)
		require.NotNil(t, next)
		p2, next := page("after_ts", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), "before_ts", tomorrow, "limit", int64(2), "page_token", next)
		require.Nil(t, next)
		require.Equal(t, all, append(p1, p2...))
		none, _ := page("after_ts", tomorrow, "before_ts", tomorrow)
		require.Empty(t, none, "runs before after_ts are left out")

		c.fails(http.StatusBadRequest, "SchedulerException", `after_ts: "2020-01-01T00:00:00" has no timezone`,
			"task/filter_for_archive", "after_ts", "2020-01-01T00:00:00", "before_ts", tomorrow)
		c.fails(http.StatusBadRequest, "SchedulerException", "before_ts: missing",
			"task/filter_for_archive", "after_ts", "2020-01-01")

		var archived []any
		for _, r := range all {
			archived = append(archived, pairs("task_id", r["task_id"], "task_run_id", r["task_run_id"]))
		}
		require.Nil(t, c.ok("task/delete_archived", "task_ids", archived))
		require.Len(t, list(t, c.ok("task/get", "task_ids", ids)), 2, "the archived tasks are gone")
		require.Len(t, list(t, c.ok("task_run/get", "task_ids", ids)), 2, "and their runs")
		c.fails(http.StatusBadRequest, "SchedulerException", `task_ids[0].task: unknown key "task" (known: task_id, task_run_id)`,
			"task/delete_archived", "task_ids", []any{pairs("task", int64(1), "task_id", int64(1), "task_run_id", int64(1))})
	})
}
