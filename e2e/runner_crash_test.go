package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/celerytest"
	"github.com/revisit-sched/revisit/internal/teststore"
	"github.com/revisit-sched/revisit/store"
)

// runnerBatch is the runner's default cap on the tasks of one round.
const runnerBatch = 10_000

// TestRunnerKillNine kills the task runner with SIGKILL at random points of
// its rounds (grab, run records, publishing), restarts it, then lets it
// finish. Every message in the queue must have its task run (backend id =
// message id), no task may be dispatched twice, and no task may be left
// next_run_scheduled without a run in flight: a task grabbed but not yet
// recorded when the runner died is made due again by the next runner's
// recovery at start; a task whose run was recorded but whose message never
// left keeps its run in flight, which the wedged-run rule ends as lost
// after the type's run timeout (checked at the end by applying it).
func TestRunnerKillNine(t *testing.T) {
	t.Parallel()
	st, storeURL := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	ch := declaredQueue(t, queue)
	ctx := context.Background()
	const taskType = "list-forge"
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: taskType, BackendName: queue,
		DefaultInterval: 24 * time.Hour, MaxQueueLength: 1_000_000}))
	const n = 30_000
	due := time.Now().UTC().Add(-time.Hour)
	for start := 0; start < n; start += 1000 {
		news := make([]revisit.NewTask, 1000)
		for i := range news {
			news[i] = revisit.NewTask{Type: taskType, Policy: revisit.TaskRecurring, NextRun: due,
				Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": url(fmt.Sprint(start + i))}}}
		}
		_, err := st.TasksCreate(ctx, news)
		require.NoError(t, err)
	}
	cfg := filepath.Join(t.TempDir(), "revisit.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, "store: %q\nbroker: %q\n", storeURL, celerytest.URL()), 0o600))
	args := []string{"--config", cfg, "runner", "--task-type", taskType, "--poll-interval", "100ms", "--grace-period", "10s"}

	const kills = 6
	for i := range kills {
		p := startRevisit(t, args...)
		time.Sleep(time.Duration(500+rand.IntN(6000)) * time.Millisecond)
		p.kill9(t)
		t.Logf("kill %d: %d messages so far", i+1, depth(t, ch, queue))
	}
	p := startRevisit(t, args...)
	celerytest.WaitFor(t, 120*time.Second, "every task dispatched", func() bool {
		_, runs := taskHistory(t, st, taskType)
		dispatched := map[int64]bool{}
		for _, r := range runs {
			dispatched[r.TaskID] = true
		}
		return len(dispatched) == n && strings.Contains(p.stderr.String(), "task runner starting")
	})
	code, took := p.interrupt(t, 15*time.Second)
	require.Equal(t, 0, code, "SIGTERM exits 0")
	require.Less(t, took, 10*time.Second)

	messages := map[string]int{} // by message id
	for {
		msg, ok, err := ch.Get(queue, true)
		require.NoError(t, err)
		if !ok {
			break
		}
		messages[msg.CorrelationId]++
	}
	tasks, runs := taskHistory(t, st, taskType)
	require.Len(t, tasks, n)
	runOf := map[string]revisit.TaskRun{}
	runsOf := map[int64]int{}
	for _, r := range runs {
		runOf[r.BackendID] = r
		runsOf[r.TaskID]++
	}
	for id, count := range messages {
		require.Equal(t, 1, count, "message %s published %d times", id, count)
		_, ok := runOf[id]
		require.True(t, ok, "message %s has no task run", id)
	}
	unsent := 0
	for _, task := range tasks {
		require.Equal(t, revisit.TaskNextRunScheduled, task.Status, "task %d", task.ID)
		require.Equal(t, 1, runsOf[task.ID], "task %d dispatched once, with one run", task.ID)
	}
	for _, r := range runs {
		require.Nil(t, r.Ended, "run %s is in flight", r.BackendID)
		if messages[r.BackendID] == 0 {
			unsent++
		}
	}
	t.Logf("%d kills: %d messages, %d runs recorded whose message never left (left to the wedged-run rule)",
		kills, len(messages), unsent)
	require.Equal(t, n, len(messages)+unsent)
	require.LessOrEqual(t, unsent, kills*runnerBatch, "at most the round in flight at each kill")

	// None stays scheduled forever: past the run timeout the wedged-run
	// rule ends every silent run (no worker ran any) and the tasks are due
	// again after their retry delay.
	ended, err := st.TaskRunsEndWedged(ctx, time.Now().Add(revisit.DefaultRunTimeout+time.Minute))
	require.NoError(t, err)
	require.Len(t, ended, n)
	tasks, _ = taskHistory(t, st, taskType)
	for _, task := range tasks {
		require.Equal(t, revisit.TaskNextRunNotScheduled, task.Status, "task %d", task.ID)
	}
}

// taskHistory returns the tasks of a type and their runs.
func taskHistory(t *testing.T, st store.Store, taskType string) ([]revisit.Task, []revisit.TaskRun) {
	t.Helper()
	ctx := context.Background()
	var tasks []revisit.Task
	var runs []revisit.TaskRun
	f := revisit.TaskFilter{Type: taskType, Limit: 1000}
	for {
		page, err := st.TasksGet(ctx, f)
		require.NoError(t, err)
		ids := make([]int64, len(page.Tasks))
		for i, task := range page.Tasks {
			ids[i] = task.ID
		}
		rs, err := st.TaskRunsGet(ctx, ids)
		require.NoError(t, err)
		tasks, runs = append(tasks, page.Tasks...), append(runs, rs...)
		if f.PageToken = page.NextPageToken; f.PageToken == "" {
			return tasks, runs
		}
	}
}
