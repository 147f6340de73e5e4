package swhrpc

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/swhwire"
)

var (
	taskTypeFields = []string{"type", "description", "backend_name", "default_interval", "min_interval", "max_interval",
		"backoff_factor", "max_queue_length", "num_retries", "retry_delay"}
	taskFields    = []string{"type", "arguments", "next_run", "status", "policy", "retries_left", "id", "current_interval", "priority"}
	taskRunFields = []string{"task", "id", "backend_id", "scheduled", "started", "ended", "metadata", "status"}
	day           = swhwire.Timedelta{Days: 1}
)

// taskType is the TaskType model of load-git, with more fields.
func taskType(name string, more ...any) swhwire.Model {
	return swhwire.Model{Type: "TaskType", Fields: append(pairs("type", name, "description", "Update a git repository",
		"backend_name", "swh.loader.git.tasks.UpdateGitRepository"), pairs(more...)...)}
}

// task is a Task model of type typ with args, due at nextRun.
func task(typ string, nextRun time.Time, args []any, more ...any) swhwire.Model {
	return swhwire.Model{Type: "Task", Fields: append(pairs("type", typ,
		"arguments", swhwire.Model{Type: "TaskArguments", Fields: pairs("args", args, "kwargs", pairs("url", "https://x/y"))},
		"next_run", nextRun), pairs(more...)...)}
}

func TestTaskTypes(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		require.Nil(t, c.ok("task_type/get", "task_type_name", "load-git"), "a missing task type is None")
		require.Nil(t, c.ok("task_type/create", "task_type", taskType("load-git", "default_interval", swhwire.Timedelta{Days: 64},
			"min_interval", swhwire.Timedelta{Seconds: 43200}, "max_interval", swhwire.Timedelta{Days: 64},
			"backoff_factor", int64(2), "max_queue_length", nil, "num_retries", int64(7), "retry_delay", swhwire.Timedelta{Seconds: 7200})))
		require.Nil(t, c.ok("task_type/create", "task_type", swhwire.Model{Type: "TaskType", Fields: pairs("type", "load-git",
			"description", "changed", "backend_name", "changed")}),
			"creating a task type that exists is no error, and changes nothing")
		got := c.ok("task_type/get", "task_type_name", "load-git").(swhwire.Model)
		require.Equal(t, taskTypeFields, names(got))
		tt := fields(t, got, "TaskType")
		require.Equal(t, "Update a git repository", tt["description"])
		require.Equal(t, 2.0, tt["backoff_factor"], "a float, even integral")
		require.Equal(t, swhwire.Timedelta{Seconds: 43200}, tt["min_interval"])
		require.Equal(t, int64(7), tt["num_retries"])

		c.ok("task_type/create", "task_type", taskType("list-gitlab"))
		minimal := fields(t, c.ok("task_type/get", "task_type_name", "list-gitlab"), "TaskType")
		require.Nil(t, minimal["default_interval"])
		require.Nil(t, minimal["backoff_factor"])
		require.Nil(t, minimal["num_retries"])
		require.Equal(t, int64(1000), minimal["max_queue_length"], "the default queue length")
		all := list(t, c.ok("task_type/get_all"))
		require.Len(t, all, 2)

		c.fails(http.StatusBadRequest, "SchedulerException", "task_type.backend_name: missing",
			"task_type/create", "task_type", swhwire.Model{Type: "TaskType", Fields: pairs("type", "x", "description", "")})
		c.fails(http.StatusBadRequest, "SchedulerException", "task_type.min_interval: want a timedelta, got an int",
			"task_type/create", "task_type", taskType("x", "min_interval", int64(3600)))
	})
}

func TestTasks(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		c.ok("task_type/create", "task_type", taskType("load-git", "default_interval", swhwire.Timedelta{Days: 64},
			"backoff_factor", 2.0, "num_retries", int64(7)))
		now := time.Now().UTC().Truncate(time.Microsecond)
		created := list(t, c.ok("task/create", "tasks", []any{
			task("load-git", now.Add(-time.Hour), []any{"a", int64(1)}),
			task("load-git", now.Add(-2*time.Hour), []any{"b"}, "policy", "oneshot", "priority", "high"),
			task("load-git", now.Add(time.Hour), []any{"c"}, "retries_left", int64(2), "current_interval", day),
		}, "policy", "recurring"))
		require.Len(t, created, 3)
		require.Equal(t, taskFields, names(created[0].(swhwire.Model)))
		a := fields(t, created[0], "Task")
		require.Equal(t, "next_run_not_scheduled", a["status"])
		require.Equal(t, "recurring", a["policy"])
		require.Equal(t, int64(7), a["retries_left"], "the type's num_retries")
		require.Equal(t, swhwire.Timedelta{Days: 64}, a["current_interval"], "the type's default interval")
		require.Nil(t, a["priority"])
		args := fields(t, a["arguments"], "TaskArguments")
		require.Equal(t, []any{"a", int64(1)}, args["args"])
		require.Equal(t, swhwire.Map{{Key: "url", Value: "https://x/y"}}, args["kwargs"])
		ids := make([]any, 3)
		for i, m := range created {
			ids[i] = fields(t, m, "Task")["id"]
		}
		require.Equal(t, "high", fields(t, created[1], "Task")["priority"])
		c3 := fields(t, created[2], "Task")
		require.Equal(t, int64(2), c3["retries_left"])
		require.Equal(t, swhwire.Timedelta{Days: 64}, c3["current_interval"], "the type's default interval, whatever the model says, as upstream")

		again := list(t, c.ok("task/create", "tasks", []any{task("load-git", now.Add(-time.Hour), []any{"a", int64(1)})}))
		require.Equal(t, ids[0], fields(t, again[0], "Task")["id"], "an identical active task is returned, not created again")

		got := list(t, c.ok("task/get", "task_ids", []any{ids[2], int64(999999), ids[0]}))
		require.Len(t, got, 2)
		require.Equal(t, ids[0], fields(t, got[0], "Task")["id"], "by id")

		search := func(params ...any) []any {
			t.Helper()
			var out []any
			for _, m := range list(t, c.ok("task/search", params...)) {
				out = append(out, fields(t, m, "Task")["id"])
			}
			return out
		}
		require.Equal(t, ids, search(), "everything, without a limit")
		require.Equal(t, ids, search("task_id", nil, "task_type", nil, "status", nil, "priority", nil, "policy", nil,
			"before", nil, "after", nil, "limit", nil))
		require.Equal(t, ids[1:2], search("task_id", ids[1]))
		require.Equal(t, []any{ids[0], ids[2]}, search("task_id", []any{ids[2], ids[0]}))
		require.Equal(t, ids[:2], search("limit", int64(2)))
		require.Equal(t, ids[1:2], search("priority", "high"))
		require.Equal(t, ids[1:2], search("priority", []any{"high", "low"}))
		require.Equal(t, ids[1:2], search("policy", "oneshot"))
		require.Equal(t, ids[:2], search("before", now.Add(-time.Hour)), "before is inclusive")
		require.Equal(t, ids[2:], search("after", now))
		require.Equal(t, ids, search("task_type", []any{"load-git", "load-hg"}, "status", []any{"next_run_not_scheduled"}))
		require.Empty(t, search("task_type", "load-hg"))

		// Ready tasks: without priority, or with one.
		ready := func(path string, params ...any) []any {
			t.Helper()
			var out []any
			for _, m := range list(t, c.ok(path, append([]any{"task_type", "load-git"}, params...)...)) {
				out = append(out, fields(t, m, "Task")["id"])
			}
			return out
		}
		require.Equal(t, ids[:1], ready("task/peek_ready", "timestamp", nil, "num_tasks", nil))
		require.Equal(t, []any{ids[0], ids[2]}, ready("task/peek_ready", "timestamp", now.Add(2*time.Hour)))
		require.Empty(t, ready("task/peek_ready", "num_tasks", int64(0)))
		require.Equal(t, ids[1:2], ready("task/peek_ready_with_priority"))
		require.Equal(t, ids[1:2], ready("task/grab_ready_with_priority", "num_tasks", int64(5)))
		require.Empty(t, ready("task/peek_ready_with_priority"), "grabbed")
		require.Equal(t, ids[:1], ready("task/grab_ready"))
		require.Equal(t, "next_run_scheduled", fields(t, list(t, c.ok("task/get", "task_ids", ids[:1]))[0], "Task")["status"])

		// Statuses: unknown ids are ignored; next_run moves with them.
		next := now.Add(72 * time.Hour)
		require.Nil(t, c.ok("task/set_status", "task_ids", []any{ids[0], int64(999999)}, "status", "next_run_not_scheduled",
			"next_run", next, "except_completed_tasks", false))
		a = fields(t, list(t, c.ok("task/get", "task_ids", ids[:1]))[0], "Task")
		require.Equal(t, "next_run_not_scheduled", a["status"])
		require.Equal(t, next, a["next_run"])
		require.Nil(t, c.ok("task/set_status", "task_ids", ids[1:2], "status", "completed"))
		require.Nil(t, c.ok("task/set_status", "task_ids", ids[:2], "except_completed_tasks", true), "status defaults to disabled")
		require.Equal(t, []any{ids[0]}, search("status", "disabled"))
		require.Equal(t, []any{ids[1]}, search("status", "completed"))
		require.Nil(t, c.ok("task/disable", "task_ids", []any{ids[2], int64(999999)}))
		require.Equal(t, []any{ids[0], ids[2]}, search("status", "disabled"))

		c.fails(http.StatusBadRequest, "SchedulerException", `status: "paused" is not next_run_not_scheduled`,
			"task/set_status", "task_ids", ids, "status", "paused")
		c.fails(http.StatusBadRequest, "SchedulerException", "tasks[0].next_run: missing",
			"task/create", "tasks", []any{swhwire.Model{Type: "Task", Fields: pairs("type", "load-git",
				"arguments", swhwire.Model{Type: "TaskArguments", Fields: pairs()})}})
		c.fails(http.StatusBadRequest, "SchedulerException", `tasks[0].status: "paused" is not next_run_not_scheduled`,
			"task/create", "tasks", []any{task("load-git", now, nil, "status", "paused")})
		c.fails(http.StatusBadRequest, "SchedulerException", `tasks[0].priority: "urgent" is not high, normal, low or None`,
			"task/create", "tasks", []any{task("load-git", now, nil, "priority", "urgent")})
		c.fails(http.StatusBadRequest, "SchedulerException", `tasks[0].type: task type "load-hg" not found`,
			"task/create", "tasks", []any{task("load-hg", now, nil)})
		require.Len(t, search(), 3, "nothing created")
	})
}
