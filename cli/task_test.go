package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// withGitType is a harness whose store knows the task type load-git.
func withGitType(t *testing.T) *harness {
	h := newHarness(t)
	h.ok("task-type", "add", "load-git", "--backend-name", "swh.loader.git.tasks.UpdateGitRepository",
		"--default-interval", "1d", "--num-retries", "2")
	return h
}

func TestTaskAddAndList(t *testing.T) {
	t.Parallel()
	h := withGitType(t)
	task := h.jsonObject("task", "add", "load-git", "url=https://x.org/r", "depth=3", `opts={"a": [1]}`, "name=plain text",
		"--policy", "oneshot", "--priority", "high", "--next-run", "2025-03-02T00:00:00Z")
	require.Equal(t, map[string]any{"id": 1.0, "type": "load-git", "policy": "oneshot", "status": "next_run_not_scheduled",
		"priority": "high", "next_run": "2025-03-02T00:00:00Z", "current_interval": "1d", "retries_left": 2.0,
		"args": []any{}, "kwargs": map[string]any{"url": "https://x.org/r", "depth": 3.0, "opts": map[string]any{"a": []any{1.0}}, "name": "plain text"}},
		task)
	again := h.jsonObject("task", "add", "load-git", "url=https://x.org/r", "depth=3", `opts={"a": [1]}`, "name=plain text",
		"--policy", "oneshot", "--priority", "high", "--next-run", "2025-03-02")
	require.Equal(t, 1.0, again["id"], "an identical active task is not created again")

	rec := h.jsonObject("task", "add", "load-git", "url=https://x.org/s")
	require.Equal(t, "recurring", rec["policy"])
	require.Nil(t, rec["priority"])
	require.Equal(t, testNow.Format(time.RFC3339), rec["next_run"], "default next run: now")

	require.Len(t, h.jsonList("task", "list"), 2)
	require.Len(t, h.jsonList("task", "list", "--policy", "oneshot"), 1)
	require.Len(t, h.jsonList("task", "list", "--priority", "none"), 1)
	require.Len(t, h.jsonList("task", "list", "--after", "2025-03-02"), 1)
	require.Len(t, h.jsonList("task", "list", "--before", "2025-03-02", "--status", "next_run_not_scheduled", "--type", "load-git"), 1)
	table := h.ok("task", "list")
	require.Contains(t, table, "ID  TYPE")
	require.NotContains(t, strings.Fields(strings.SplitN(table, "\n", 2)[0]), "ARGS", "args is a wide column")
	csvOut := h.ok("task", "list", "--format", "csv")
	require.True(t, strings.HasPrefix(csvOut, "id,type,policy,status,priority,next_run,current_interval,retries_left,args,kwargs\n"), csvOut)

	require.Contains(t, h.fails(ExitUsage, "task", "add", "load-git", "--policy", "twice"), "--policy")
	require.Contains(t, h.fails(ExitUsage, "task", "add", "load-git", "nokey"), `"nokey" is not KEY=VALUE`)
	require.Contains(t, h.fails(ExitUsage, "task", "add", "load-git", "--next-run", "tomorrow"), "--next-run")
	require.Contains(t, h.fails(ExitError, "task", "add", "load-nothing"), `task type "load-nothing" not found`)
	require.Contains(t, h.fails(ExitUsage, "task", "list", "--status", "running"), "--status")
}

func TestTaskScheduleCSV(t *testing.T) {
	t.Parallel()
	h := withGitType(t)
	good := h.file("tasks.csv", `type,args,kwargs,next_run,policy,priority
load-git,,"{""url"": ""https://x.org/a""}",2025-01-01T00:00:00Z,oneshot,high
load-git,"[1, ""two""]",,,,
load-git,"[1, ""two""]",,,,
`)
	require.Equal(t, "scheduled 3 line(s) as 2 task(s)\n", h.ok("task", "schedule", good))
	ts := h.jsonList("task", "list")
	require.Len(t, ts, 2)
	require.Equal(t, []any{1.0, "two"}, ts[1]["args"])
	require.Equal(t, "recurring", ts[1]["policy"])

	for content, want := range map[string]string{
		"load-git,,{},,oneshot,urgent\n":                "line 1, column priority",
		"load-git,,{},,oneshot\nload-git,[,{},,,\n":     "line 2, column args",
		"load-git,,[],,,\n":                             "line 1, column kwargs",
		"load-git,,,yesterday,,\n":                      "line 1, column next_run",
		"load-git,,,,sometimes,\n":                      "line 1, column policy",
		",,,,,\n":                                       "line 1, column type",
		"load-git,,,,,,extra\n":                         "line 1: 7 columns",
		"load-git,,,,,\nload-hg,,,,,\n":                 `line 2, column type: task type "load-hg" not found`,
		"load-git,,,,,\nload-git,\"unterminated,,,,,\n": "line 2: not CSV",
		"type\n": "no task",
	} {
		out := h.fails(ExitError, "task", "schedule", h.file("bad.csv", content))
		require.Contains(t, out, want, "input %q", content)
	}
	require.Len(t, h.jsonList("task", "list"), 2, "nothing written by bad files")

	r := h.runIn("load-git,,\"{\"\"url\"\": \"\"https://x.org/stdin\"\"}\",,,\n", "task", "schedule", "-", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.JSONEq(t, `{"lines": 1, "tasks": 1}`, r.stdout)
}

func TestTaskListPendingRespawnRuns(t *testing.T) {
	t.Parallel()
	h := withGitType(t)
	h.ok("task", "add", "load-git", "n=1", "--next-run", "2025-02-01")
	h.ok("task", "add", "load-git", "n=2", "--next-run", "2025-01-01")
	h.ok("task", "add", "load-git", "n=3", "--next-run", "2025-02-15", "--priority", "low")
	h.ok("task", "add", "load-git", "n=4", "--next-run", "2030-01-01")
	pending := h.jsonList("task", "list-pending", "load-git")
	ids := make([]float64, len(pending))
	for i, p := range pending {
		ids[i] = p["id"].(float64)
	}
	require.Equal(t, []float64{3, 2, 1}, ids, "priority first, then oldest next run")
	require.Len(t, h.jsonList("task", "list-pending", "load-git", "--before", "2025-01-15"), 1)
	require.Len(t, h.jsonList("task", "list-pending", "load-git", "--limit", "1"), 2, "one of each kind")
	require.Contains(t, h.fails(ExitUsage, "task", "list-pending", "load-git", "--limit", "0"),
		"--limit: must be between 1 and 100000, not 0")

	h.ok("task", "respawn", "4", "--next-run", "2025-01-02")
	require.Len(t, h.jsonList("task", "list-pending", "load-git"), 4)
	require.Contains(t, h.fails(ExitError, "task", "respawn", "4", "99"), "task 99 not found")
	require.Contains(t, h.fails(ExitUsage, "task", "respawn", "x"), `"x" is not a task id`)

	// Runs, recorded directly in the store, list with --runs.
	st := h.store()
	_, err := st.TaskRunsSchedule(context.Background(), []revisit.NewTaskRun{{TaskID: 1, BackendID: "m1"}, {TaskID: 2, BackendID: "m2"}})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	runs := h.jsonList("task", "list", "--runs", "--policy", "recurring")
	require.Len(t, runs, 2)
	require.Equal(t, "m1", runs[0]["backend_id"])
	require.Equal(t, "scheduled", runs[0]["status"])
}

// store opens the harness's store directly, at testNow.
func (h *harness) store() store.Store {
	h.t.Helper()
	st, err := store.Open(context.Background(), h.url, store.Options{Clock: func() time.Time { return testNow }})
	require.NoError(h.t, err)
	return st
}

func TestTaskArchive(t *testing.T) {
	t.Parallel()
	h := withGitType(t)
	h.ok("task", "add", "load-git", "n=1", "--policy", "oneshot", "--next-run", "2025-01-01")
	h.ok("task", "add", "load-git", "n=2", "--next-run", "2025-01-01")
	h.ok("task", "add", "load-git", "n=3", "--policy", "oneshot", "--next-run", "2025-02-27")
	st := h.store()
	ctx := context.Background()
	_, err := st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: 1, BackendID: "a", Scheduled: testNow.Add(-60 * 24 * time.Hour)},
		{TaskID: 2, BackendID: "b"}, {TaskID: 3, BackendID: "c"}})
	require.NoError(t, err)
	for _, e := range []revisit.TaskRunEnd{{BackendID: "a", Status: revisit.RunEventful, Ended: testNow.Add(-50 * 24 * time.Hour)},
		{BackendID: "b", Status: revisit.RunFailed, Ended: testNow.Add(-40 * 24 * time.Hour)},
		{BackendID: "c", Status: revisit.RunEventful, Ended: testNow.Add(-time.Hour)}} {
		_, err := st.TaskRunEnd(ctx, e)
		require.NoError(t, err)
	}
	require.NoError(t, st.Close())

	require.Contains(t, h.fails(ExitError, "task", "archive", "--older-than", "30d", "--to", "/dev/full"), "archive to /dev/full")
	require.Len(t, h.jsonList("task", "list", "--runs"), 3, "a failed write deletes nothing")

	to := filepath.Join(h.dir, "archive.jsonl")
	require.Equal(t, "archived 2 task run(s) and 1 task(s) to "+to+"\n", h.ok("task", "archive", "--older-than", "30d", "--to", to))
	data, err := os.ReadFile(to)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 3)
	var first, last map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &last))
	require.Equal(t, "task_run", first["kind"])
	require.Equal(t, "a", first["backend_id"])
	require.Equal(t, "task", last["kind"])
	require.Equal(t, 1.0, last["id"])
	require.Equal(t, "completed", last["status"])

	require.Len(t, h.jsonList("task", "list", "--runs"), 1)
	require.Len(t, h.jsonList("task", "list"), 2)
	require.Equal(t, "archived 0 task run(s) and 0 task(s) to "+to+"\n", h.ok("task", "archive", "--older-than", "30d", "--to", to))
	require.Contains(t, h.fails(ExitUsage, "task", "archive", "--to", to), "--older-than")
}
