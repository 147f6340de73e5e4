package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// runnerBatch is the runner's default cap on the tasks of one round.
const runnerBatch = 10_000

// TestRunnerKillNine kills the task runner with SIGKILL at random points of
// its rounds (grab, run records, publishing, confirms), restarts it, then
// lets it finish. A runner records its runs unconfirmed before publishing
// and confirms them once the broker has; at start it removes the
// unconfirmed runs a killed runner left (their messages may or may not be
// in the queue) and makes their tasks due again, as it does for tasks
// grabbed without a run. So in the end, with no worker consuming:
//
//   - every task is next_run_scheduled with exactly one run, in flight and
//     confirmed: no task waits for the run timeout, and the wedged-run rule
//     plays no part;
//   - the messages in the queue include the message of every run, once;
//   - the others are duplicates (a message of a removed run: its task has
//     a run and a message besides), at most one round per kill.
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
	args := []string{"--config", cfg, "runner", "--task-type", taskType, "--poll-interval", "100ms", "--grace-period", "10s",
		"--lease-ttl", "300ms"}

	// Each runner is killed at a random instant of its first second and a
	// half of work (rounds of up to 10,000 tasks take about that long), so
	// that most kills land mid-round: grabbing, recording, publishing or
	// confirming.
	const kills = 6
	for i := range kills {
		p := startRevisit(t, args...)
		celerytest.WaitFor(t, 30*time.Second, "the runner started", func() bool {
			return strings.Contains(p.stderr.String(), "task runner starting")
		})
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
		p.kill9(t)
		t.Logf("kill %d: %d messages so far", i+1, depth(t, ch, queue))
	}
	p := startRevisit(t, args...)
	celerytest.WaitFor(t, 120*time.Second, "every task dispatched, its run confirmed", func() bool {
		_, runs := taskHistory(t, st, taskType)
		confirmed := map[int64]bool{}
		for _, r := range runs {
			if r.Confirmed == nil {
				return false // recovery or a round not over yet
			}
			confirmed[r.TaskID] = true
		}
		return len(confirmed) == n && strings.Contains(p.stderr.String(), "task runner starting")
	})
	code, took := p.interrupt(t, 15*time.Second)
	require.Equal(t, 0, code, "SIGTERM exits 0")
	require.Less(t, took, 10*time.Second)

	messages := map[string]int{}  // by message id
	urlOf := map[string]string{}  // message id → url kwarg
	published := map[string]int{} // by url kwarg
	for {
		msg, ok, err := ch.Get(queue, true)
		require.NoError(t, err)
		if !ok {
			break
		}
		var body []json.RawMessage
		require.NoError(t, json.Unmarshal(msg.Body, &body))
		var kw struct{ URL string }
		require.NoError(t, json.Unmarshal(body[1], &kw))
		messages[msg.CorrelationId]++
		urlOf[msg.CorrelationId] = kw.URL
		published[kw.URL]++
	}
	tasks, runs := taskHistory(t, st, taskType)
	require.Len(t, tasks, n)
	runsOf := map[int64][]revisit.TaskRun{}
	for _, r := range runs {
		runsOf[r.TaskID] = append(runsOf[r.TaskID], r)
	}
	runOfMessage := map[string]bool{}
	for _, task := range tasks {
		require.Equal(t, revisit.TaskNextRunScheduled, task.Status, "task %d", task.ID)
		rs := runsOf[task.ID]
		require.Len(t, rs, 1, "task %d has one run", task.ID)
		r := rs[0]
		require.Nil(t, r.Ended, "run %s is in flight", r.BackendID)
		require.Equal(t, revisit.RunScheduled, r.Status, "run %s", r.BackendID)
		require.NotNil(t, r.Confirmed, "run %s is confirmed", r.BackendID)
		require.Equal(t, 1, messages[r.BackendID], "the message of run %s is in the queue once", r.BackendID)
		require.Equal(t, task.Arguments.Kwargs["url"], urlOf[r.BackendID], "run %s carries its task", r.BackendID)
		runOfMessage[r.BackendID] = true
	}
	duplicates := 0
	for id, count := range messages {
		require.Equal(t, 1, count, "message %s published %d times", id, count)
		if !runOfMessage[id] {
			// A message of a run recovered after a kill: its task was
			// dispatched again, so its url is in the queue twice or more.
			duplicates++
			require.GreaterOrEqual(t, published[urlOf[id]], 2, "message %s (%s) duplicates a task", id, urlOf[id])
		}
	}
	require.Len(t, published, n, "every task is in the queue")
	require.Equal(t, n+duplicates, len(messages))
	t.Logf("%d kills: %d messages, %d of them duplicates of a task (a message published by a runner killed before recording its confirm)",
		kills, len(messages), duplicates)
	require.LessOrEqual(t, duplicates, kills*runnerBatch, "at most the round in flight at each kill")
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
