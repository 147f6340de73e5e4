package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func TestRunnerNeedsTaskTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	require.Contains(t, h.fails(ExitError, "runner"), "no task type to dispatch")
	require.Contains(t, h.fails(ExitUsage, "runner", "extra"), "want 0 argument(s)")
}

func TestRunnerDispatchesUntilInterrupted(t *testing.T) {
	t.Parallel()
	ch := rabbit(t)
	h := newHarness(t)
	queue := "revisit.test.cli.runner." + uuid.NewString()[:8]
	// A load-git task of priority high (save code now) goes out too, with
	// no flag naming its type, to the priority queue of load-git's.
	loads := "revisit.test.cli.runner.load." + uuid.NewString()[:8]
	saved := "save_code_now:" + loads
	for _, q := range []string{queue, loads, saved} {
		_, err := ch.QueueDeclare(q, true, false, false, false, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = ch.QueueDelete(q, false, false, false) })
	}
	h.ok("task-type", "add", "list-gitlab", "--backend-name", queue, "--default-interval", "1d")
	h.ok("task", "add", "list-gitlab", "url=https://gitlab.example", "--next-run", "2025-02-01")
	h.ok("task-type", "add", "load-git", "--backend-name", loads, "--default-interval", "1d")
	h.ok("task", "add", "load-git", "url=https://github.com/o/saved", "--next-run", "2025-02-01", "--policy", "oneshot",
		"--priority", "high")

	// An unknown task type is an error naming it.
	require.Contains(t, h.fails(ExitError, "--broker", testBrokerURL, "runner", "--task-type", "list-nope"), "list-nope")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	env := Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Clock: func() time.Time { return testNow }}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, []string{"--store", h.url, "--broker", testBrokerURL, "runner",
			"--grace-period", "2s", "--poll-interval", "50ms"})
	}()
	deadline := time.Now().Add(15 * time.Second)
	for _, name := range []string{queue, saved} {
		for {
			q, err := ch.QueueDeclarePassive(name, true, false, false, false, nil)
			require.NoError(t, err)
			if q.Messages == 1 {
				break
			}
			require.True(t, time.Now().Before(deadline), "no message in %s; stderr: %s", name, errb.String())
			time.Sleep(50 * time.Millisecond)
		}
	}
	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not stop")
	}

	msg, ok, err := ch.Get(queue, true)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, queue, msg.Headers["task"])
	var body []json.RawMessage
	require.NoError(t, json.Unmarshal(msg.Body, &body))
	require.JSONEq(t, `{"url": "https://gitlab.example"}`, string(body[1]))
	runs := h.jsonList("task", "list", "--runs", "--type", "list-gitlab")
	require.Len(t, runs, 1)
	require.Equal(t, msg.CorrelationId, runs[0]["backend_id"], "%v", runs[0])
	msg, ok, err = ch.Get(saved, true)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, json.Unmarshal(msg.Body, &body))
	require.JSONEq(t, `{"url": "https://github.com/o/saved"}`, string(body[1]))
}

func TestRunnerRetention(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("task-type", "add", "list-gitlab", "--backend-name", "swh.lister.gitlab.tasks.FullGitLabRelister", "--default-interval", "1d")
	h.ok("task", "add", "list-gitlab", "n=1", "--policy", "oneshot", "--next-run", "2025-01-01")
	st := h.store()
	ctx := context.Background()
	_, err := st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: 1, BackendID: "a", Scheduled: testNow.Add(-60 * 24 * time.Hour)}})
	require.NoError(t, err)
	_, err = st.TaskRunEnd(ctx, revisit.TaskRunEnd{BackendID: "a", Status: revisit.RunEventful, Ended: testNow.Add(-50 * 24 * time.Hour)})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	missing := h.file("missing.yaml", "retention: {older_than: 30d, archive_dir: "+filepath.Join(h.dir, "nowhere")+"}\n")
	require.Contains(t, h.fails(ExitError, "--config", missing, "runner"), "retention: archive directory: stat ")

	dir := filepath.Join(h.dir, "archive")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cfg := h.file("revisit.yaml", "retention: {older_than: 30d, interval: 1h, archive_dir: "+dir+"}\n")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out, errb bytes.Buffer
	env := Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Clock: func() time.Time { return testNow }}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, []string{"--store", h.url, "--config", cfg, "runner", "--grace-period", "2s"})
	}()
	name := filepath.Join(dir, "tasks-2025-03-01.jsonl")
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(name)
		return err == nil && strings.Count(string(data), "\n") == 2
	}, 15*time.Second, 20*time.Millisecond, "the first pass archives at start")
	// The pass writes the archive, then removes what it archived: wait for
	// both before stopping the runner.
	require.Eventually(t, func() bool {
		return len(h.jsonList("task", "list", "--runs")) == 0 && len(h.jsonList("task", "list")) == 0
	}, 15*time.Second, 50*time.Millisecond, "the first pass removes what it archived")
	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not stop")
	}
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var run, task map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &run))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &task))
	require.Equal(t, "task_run", run["kind"])
	require.Equal(t, "a", run["backend_id"], "the lines of revisit task archive")
	require.Equal(t, "task", task["kind"])
	require.Equal(t, "completed", task["status"])
}
