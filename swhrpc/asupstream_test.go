package swhrpc

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/swhwire"
)

// The answers and writes where upstream's backend is the rule, each found
// different by upstream's own test suite run through its client.

func TestTaskTypeWithoutQueueLengthIsNone(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		c.ok("task_type/create", "task_type", taskType("load-git", "max_queue_length", nil))
		got := fields(t, c.ok("task_type/get", "task_type_name", "load-git"), "TaskType")
		require.Nil(t, got["max_queue_length"], "stored and answered as given: None")
		all := list(t, c.ok("task_type/get_all"))
		require.Nil(t, fields(t, all[0], "TaskType")["max_queue_length"])
	})
}

func TestCreateTasksMakesOneTaskPerInput(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		c.ok("task_type/create", "task_type", taskType("load-git", "default_interval", day))
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		a, b := task("load-git", at, []any{"a"}), task("load-git", at, []any{"b"})
		ids := func(v any) []any {
			var out []any
			for _, m := range list(t, v) {
				out = append(out, fields(t, m, "Task")["id"])
			}
			return out
		}
		first := ids(c.ok("task/create", "tasks", []any{a, b, a, b}))
		require.Len(t, first, 4, "a task of every input, identical inputs included")
		for i := 1; i < len(first); i++ {
			require.Less(t, first[i-1], first[i], "in id order, each once")
		}
		require.Equal(t, first, ids(c.ok("task/create", "tasks", []any{a, b, a, b})),
			"created again: none is created, every waiting copy is answered")
		require.Equal(t, first[0:4:4][0:1], ids(c.ok("task/create", "tasks", []any{a}))[0:1])
		require.Len(t, ids(c.ok("task/create", "tasks", []any{a})), 2, "both copies of a")

		later := task("load-git", at.Add(time.Hour), []any{"a"})
		require.Empty(t, list(t, c.ok("task/create", "tasks", []any{later})),
			"a recurring task waiting already is not created again, and answers only at its own next_run")
		oneshot := task("load-git", at.Add(time.Hour), []any{"a"}, "policy", "oneshot")
		require.Len(t, list(t, c.ok("task/create", "tasks", []any{oneshot})), 1, "a oneshot task is told apart by its next_run")

		c.ok("task/set_status", "task_ids", first[:2], "status", "next_run_scheduled")
		again := ids(c.ok("task/create", "tasks", []any{a, b}))
		require.Len(t, again, 2, "the copies still waiting; the scheduled ones are no longer identical")
		require.ElementsMatch(t, first[2:], again)

		disabled := fields(t, list(t, c.ok("task/create", "tasks", []any{task("load-git", at, []any{"c"}, "status", "disabled")}))[0], "Task")
		require.Equal(t, "disabled", disabled["status"], "created in the status given, as upstream")
	})
}

func TestArchiveTakesRecurringTasksAndFullPages(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		c.ok("task_type/create", "task_type", taskType("load-git", "default_interval", day))
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		var tasks []any
		for i := range 12 {
			policy := "oneshot"
			if i%2 == 0 {
				policy = "recurring"
			}
			tasks = append(tasks, task("load-git", at, []any{int64(i)}, "policy", policy))
		}
		var ids []any
		for _, m := range list(t, c.ok("task/create", "tasks", tasks)) {
			ids = append(ids, fields(t, m, "Task")["id"])
		}
		// The first six stay active, their runs first in any order: a page
		// must still be full of the other six's runs.
		for i, id := range ids {
			c.ok("task_run/schedule_one", "task_id", id, "backend_id", fmt.Sprint("b-", i), "timestamp", at.Add(time.Minute))
		}
		c.ok("task/disable", "task_ids", ids[6:])
		page := func(token any) (rows []any, next any) {
			m := c.ok("task/filter_for_archive", "after_ts", "2026-03-01", "before_ts", "2026-03-02", "limit", int64(4),
				"page_token", token).(swhwire.Map)
			tasks, _ := m.Get("tasks")
			next, _ = m.Get("next_page_token")
			return list(t, tasks), next
		}
		rows, next := page(nil)
		require.Len(t, rows, 4, "a full page")
		require.NotNil(t, next)
		more, last := page(next)
		require.Len(t, more, 2)
		require.Nil(t, last)
		var named []any
		for _, r := range append(rows, more...) {
			row := r.(swhwire.Map)
			taskID, _ := row.Get("task_id")
			runID, _ := row.Get("task_run_id")
			metadata, _ := row.Get("metadata")
			require.Equal(t, swhwire.Map{}, metadata, "a run scheduled alone has {}")
			named = append(named, pairs("task_id", taskID, "task_run_id", runID))
		}
		require.Nil(t, c.ok("task/delete_archived", "task_ids", named))
		require.Len(t, list(t, c.ok("task/get", "task_ids", ids)), 6,
			"every named task left without runs is gone, recurring ones included")
		require.Len(t, list(t, c.ok("task_run/get", "task_ids", ids)), 6)
	})
}

func TestTaskRunsScheduledWithoutMetadata(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		ids := c.newTasks(2)
		require.Nil(t, c.ok("task_run/schedule", "task_runs", []any{taskRun(ids[0], "b-0", "metadata", nil),
			taskRun(ids[1], "b-1", "metadata", pairs("k", "v"))}))
		runs := list(t, c.ok("task_run/get", "task_ids", ids))
		require.Nil(t, fields(t, runs[0], "TaskRun")["metadata"], "none given: None")
		require.Equal(t, pairs("k", "v"), fields(t, runs[1], "TaskRun")["metadata"])
		started := fields(t, c.ok("task_run/start", "backend_id", "b-0", "metadata", nil), "TaskRun")
		require.Equal(t, swhwire.Map{}, started["metadata"], "a start merges into {}")

		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		require.Nil(t, c.ok("task_run/schedule", "task_runs", []any{taskRun(ids[0], "b-2", "status", "eventful", "started", at, "ended", at)}))
		again := fields(t, list(t, c.ok("task_run/get", "task_ids", ids[:1]))[1], "TaskRun")
		require.Equal(t, "scheduled", again["status"], "scheduled, whatever the model says, as upstream")
		require.Nil(t, again["started"])
		require.Nil(t, again["ended"])
	})
}

func TestListersInCreationOrder(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		created := []string{"sourceforge", "gitlab", "cgit", "github"}
		var ids []any
		for _, name := range created {
			ids = append(ids, c.newLister(name))
		}
		names := func(v any) []string {
			var out []string
			for _, l := range list(t, v) {
				out = append(out, fields(t, l, "Lister")["name"].(string))
			}
			return out
		}
		require.Equal(t, created, names(c.ok("listers/get")))
		require.Equal(t, created, names(c.ok("listers/get_by_id", "lister_ids", []any{
			ids[3].(fmt.Stringer).String(), ids[0].(fmt.Stringer).String(), ids[2].(fmt.Stringer).String(), ids[1].(fmt.Stringer).String()})))
	})
}

func TestGrabReturnsEveryListersRow(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		gh, mirror := c.newLister("github"), c.newLister("mirror")
		c.ok("origins/record", "listed_origins", []any{
			origin(gh, "https://github.com/o/a", "git", "extra_loader_arguments", pairs("from", "github")),
			origin(mirror, "https://github.com/o/a", "git", "extra_loader_arguments", pairs("from", "mirror")),
			origin(gh, "https://github.com/o/b", "git"),
		})
		got := list(t, c.ok("origins/grab_next", "visit_type", "git", "count", int64(10), "policy", "oldest_scheduled_first"))
		require.Len(t, got, 3, "one row per listed origin")
		from := map[string]int{}
		for _, row := range got {
			o := fields(t, row, "ListedOrigin")
			if args := o["extra_loader_arguments"].(swhwire.Map); len(args) > 0 {
				v, _ := args.Get("from")
				from[v.(string)]++
			}
		}
		require.Equal(t, map[string]int{"github": 1, "mirror": 1}, from, "each lister's row with its own arguments")
		require.Empty(t, list(t, c.ok("origins/grab_next", "visit_type", "git", "count", int64(10), "policy", "oldest_scheduled_first")),
			"every row of the origin is marked")
	})
}

func TestGrabWithoutLastUpdateWritesTheQueuePosition(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		require.Equal(t, swhwire.Map{}, c.ok("visit_scheduler/get"))
		lister := c.newLister("cgit")
		c.ok("origins/record", "listed_origins", []any{origin(lister, "https://git.example.org/a", "git")})
		require.Len(t, list(t, c.ok("origins/grab_next", "visit_type", "git", "count", int64(1), "policy", "origins_without_last_update",
			"dry_run", true)), 1)
		require.Equal(t, swhwire.Map{}, c.ok("visit_scheduler/get"), "a dry run writes nothing")
		require.Len(t, list(t, c.ok("origins/grab_next", "visit_type", "git", "count", int64(1), "policy", "origins_without_last_update")), 1)
		require.Equal(t, pairs("git", int64(0)), c.ok("visit_scheduler/get"), "origins without stats: position 0")
	})
}

func TestAnyURLText(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		lister := c.newLister("old")
		for _, url := range []string{"foo", "bar baz", "deposit:1234"} {
			c.ok("origins/record", "listed_origins", []any{origin(lister, url, "git")})
			c.ok("visit_stats/upsert", "origin_visit_stats", []any{visitStats(url, "last_visit_status", "failed")})
			got := list(t, c.ok("visit_stats/get", "ids", []any{[]any{url, "git"}}))
			require.Len(t, got, 1, url)
			require.Equal(t, url, fields(t, got[0], "OriginVisitStats")["url"])
		}
		c.fails(400, "SchedulerException", "url: missing", "visit_stats/upsert", "origin_visit_stats", []any{visitStats("")})
		c.fails(400, "SchedulerException", "not valid UTF-8", "visit_stats/upsert", "origin_visit_stats", []any{visitStats("a\xff")})
	})
}

func TestStatsOfOneOriginTwiceInABatch(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		t1, t2 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
		url := "https://example.org/r"
		c.ok("visit_stats/upsert", "origin_visit_stats", []any{
			visitStats(url, "last_visit", t1, "last_visit_status", "failed"),
			visitStats(url, "last_successful", t2, "last_visit_status", "successful"),
		})
		s := fields(t, list(t, c.ok("visit_stats/get", "ids", []any{[]any{url, "git"}}))[0], "OriginVisitStats")
		require.Equal(t, t1, s["last_visit"], "the first row's field the second left")
		require.Equal(t, t2, s["last_successful"])
		require.Equal(t, swhwire.VisitSuccessful, s["last_visit_status"], "the second row's where both set it")
	})
}

func TestGrabByListerNameOrInstance(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		lister := func(name, instance string) any {
			return fields(t, c.ok("lister/get_or_create", "name", name, "instance_name", instance), "Lister")["id"]
		}
		gh, gnome, gl := lister("github", "github"), lister("gitlab", "gitlab.gnome.org"), lister("gitlab", "gitlab.com")
		var batch []any
		for i, id := range []any{gh, gnome, gl} {
			batch = append(batch, origin(id.(uuid.UUID), fmt.Sprintf("https://forge%d.example/r", i), "git"))
		}
		c.ok("origins/record", "listed_origins", batch)
		grab := func(params ...any) []any {
			return list(t, c.ok("origins/grab_next", append([]any{"visit_type", "git", "count", int64(10),
				"policy", "oldest_scheduled_first", "dry_run", true}, params...)...))
		}
		urlOf := func(rows []any) []any {
			var out []any
			for _, r := range rows {
				out = append(out, fields(t, r, "ListedOrigin")["url"])
			}
			return out
		}
		require.Equal(t, []any{"https://forge0.example/r"}, urlOf(grab("lister_name", "github")), "a name alone, as upstream")
		require.Equal(t, []any{"https://forge1.example/r"}, urlOf(grab("lister_instance_name", "gitlab.gnome.org")),
			"an instance alone")
		require.Equal(t, []any{"https://forge2.example/r"}, urlOf(grab("lister_name", "gitlab", "lister_instance_name", "gitlab.com")))
		require.Empty(t, grab("lister_name", "nope"), "an unknown lister has no origins")
		c.fails(400, "SchedulerException", "2 listers match (gitlab/gitlab.com, gitlab/gitlab.gnome.org)",
			"origins/grab_next", "visit_type", "git", "count", int64(10), "policy", "oldest_scheduled_first", "lister_name", "gitlab")
	})
}
