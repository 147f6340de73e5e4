package retention_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/retention"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

// engines runs body on a migrated store of each engine.
func engines(t *testing.T, body func(t *testing.T, st store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "revisit.db"), store.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		body(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		s, err := postgres.Open(context.Background(), pgtest.URL(t), store.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		require.NoError(t, s.Migrate(context.Background()))
		body(t, s)
	})
}

var now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// history is what a test store holds: old is how many oneshot tasks ended
// 50 days ago (more than a page), plus a recurring task whose run ended 40
// days ago and a oneshot task whose run ended an hour ago.
type history struct {
	recurring, recent               int64
	archivableRuns, archivableTasks int
}

func addHistory(t *testing.T, st store.Store, old int) history {
	ctx := context.Background()
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-forge", BackendName: "swh.lister.forge",
		DefaultInterval: day}))
	news := make([]revisit.NewTask, old+2)
	for i := range old {
		news[i] = revisit.NewTask{Type: "list-forge", Policy: revisit.TaskOneshot, NextRun: now.Add(-60 * day),
			Arguments: revisit.TaskArguments{Kwargs: map[string]any{"n": i}}}
	}
	news[old] = revisit.NewTask{Type: "list-forge", Policy: revisit.TaskRecurring, NextRun: now.Add(-60 * day),
		Arguments: revisit.TaskArguments{Kwargs: map[string]any{"n": "recurring"}}}
	news[old+1] = revisit.NewTask{Type: "list-forge", Policy: revisit.TaskOneshot, NextRun: now.Add(-2 * time.Hour),
		Arguments: revisit.TaskArguments{Kwargs: map[string]any{"n": "recent"}}}
	tasks, err := st.TasksCreate(ctx, news)
	require.NoError(t, err)
	runs := make([]revisit.NewTaskRun, len(tasks))
	ends := make([]revisit.TaskRunEnd, len(tasks))
	for i, task := range tasks {
		id := fmt.Sprint("run-", task.ID)
		ended := now.Add(-50 * day)
		switch i {
		case old:
			ended = now.Add(-40 * day)
		case old + 1:
			ended = now.Add(-time.Hour)
		}
		runs[i] = revisit.NewTaskRun{TaskID: task.ID, BackendID: id, Scheduled: ended.Add(-time.Minute)}
		ends[i] = revisit.TaskRunEnd{BackendID: id, Status: revisit.RunEventful, Ended: ended}
	}
	_, err = st.TaskRunsSchedule(ctx, runs)
	require.NoError(t, err)
	for _, e := range ends {
		_, err := st.TaskRunEnd(ctx, e)
		require.NoError(t, err)
	}
	return history{recurring: tasks[old].ID, recent: tasks[old+1].ID,
		archivableRuns: old + 1, archivableTasks: old}
}

// taskIDs returns the ids of every task and of every task with a run.
func taskIDs(t *testing.T, st store.Store) (tasks, withRuns []int64) {
	ctx := context.Background()
	f := revisit.TaskFilter{Limit: 1000}
	for {
		page, err := st.TasksGet(ctx, f)
		require.NoError(t, err)
		for _, task := range page.Tasks {
			tasks = append(tasks, task.ID)
		}
		if f.PageToken = page.NextPageToken; f.PageToken == "" {
			break
		}
	}
	runs, err := st.TaskRunsGet(ctx, tasks)
	require.NoError(t, err)
	for _, r := range runs {
		withRuns = append(withRuns, r.TaskID)
	}
	return tasks, withRuns
}

// encoder writes the kind and the id of each row.
type encoder struct{}

func (encoder) TaskRun(r revisit.TaskRun) ([]byte, error) {
	return json.Marshal(map[string]any{"kind": "task_run", "id": r.ID, "task": r.TaskID})
}

func (encoder) Task(t revisit.Task) ([]byte, error) {
	return json.Marshal(map[string]any{"kind": "task", "id": t.ID})
}

// readArchive counts the lines of an archive file by kind.
func readArchive(t *testing.T, name string) map[string]int {
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct{ Kind string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		kinds[line.Kind]++
	}
	require.NoError(t, sc.Err())
	return kinds
}

func TestPeriodicArchivesThenDeletes(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		h := addHistory(t, st, 1005)
		dir := t.TempDir()
		p, err := retention.NewPeriodic(st, retention.Config{OlderThan: 30 * day, Interval: 20 * time.Millisecond,
			ArchiveDir: dir, Encoder: encoder{}, Clock: func() time.Time { return now }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		name := filepath.Join(dir, "tasks-2025-03-01.jsonl")
		require.Equal(t, filepath.Base(name), retention.FileName(now))
		require.Eventually(t, func() bool {
			tasks, _ := taskIDs(t, st)
			return len(tasks) == 2
		}, 30*time.Second, 20*time.Millisecond)
		time.Sleep(100 * time.Millisecond) // a few more passes, which find nothing
		cancel()
		require.NoError(t, <-done)

		require.Equal(t, map[string]int{"task_run": h.archivableRuns, "task": h.archivableTasks}, readArchive(t, name),
			"everything deleted was archived, once")
		tasks, withRuns := taskIDs(t, st)
		require.ElementsMatch(t, []int64{h.recurring, h.recent}, tasks, "recurring tasks and recent ones stay")
		require.Equal(t, []int64{h.recent}, withRuns, "the recent run stays")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1)
	})
}

func TestPeriodicWithoutArchive(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		h := addHistory(t, st, 3)
		p, err := retention.NewPeriodic(st, retention.Config{OlderThan: 30 * day, Interval: time.Hour,
			Clock: func() time.Time { return now }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		require.Eventually(t, func() bool {
			tasks, _ := taskIDs(t, st)
			return len(tasks) == 2
		}, 30*time.Second, 20*time.Millisecond, "the first pass runs at start")
		cancel()
		require.NoError(t, <-done)
		_, withRuns := taskIDs(t, st)
		require.Equal(t, []int64{h.recent}, withRuns)
	})
}

// failingSink accepts writes but fails to sync.
type failingSink struct{ writes int }

func (f *failingSink) Write(p []byte) (int, error) { f.writes++; return len(p), nil }
func (f *failingSink) Sync() error                 { return errors.New("disk gone") }

func TestArchiveDeletesNothingUnarchived(t *testing.T) {
	engines(t, func(t *testing.T, st store.Store) {
		addHistory(t, st, 3)
		sink := &failingSink{}
		c, err := retention.Archive(context.Background(), st, now.Add(-30*day), sink, encoder{})
		require.ErrorContains(t, err, "task runs: sync archive: disk gone")
		require.Equal(t, retention.Counts{}, c)
		require.Equal(t, 1, sink.writes, "the page was written whole, in one write")
		tasks, withRuns := taskIDs(t, st)
		require.Len(t, tasks, 5)
		require.Len(t, withRuns, 5, "nothing deleted")
	})
}

func TestPeriodicConfig(t *testing.T) {
	st := struct{ retention.Store }{}
	for _, c := range []struct {
		cfg  retention.Config
		want string
	}{
		{retention.Config{Interval: time.Hour}, "age 0s is not positive"},
		{retention.Config{OlderThan: day}, "interval 0s is not positive"},
		{retention.Config{OlderThan: day, Interval: time.Hour, ArchiveDir: "/tmp"}, "needs an encoder"},
	} {
		_, err := retention.NewPeriodic(st, c.cfg)
		require.ErrorContains(t, err, c.want)
	}
	_, err := retention.NewPeriodic(st, retention.Config{OlderThan: day, Interval: time.Hour,
		ArchiveDir: filepath.Join(t.TempDir(), "missing"), Encoder: encoder{}})
	require.ErrorContains(t, err, "retention: archive directory: stat ")
	require.ErrorIs(t, err, os.ErrNotExist)
}
