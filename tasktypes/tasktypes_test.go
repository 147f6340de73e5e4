package tasktypes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/examples"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

func TestParseExamples(t *testing.T) {
	t.Parallel()
	ts, err := Parse("task-types.yaml", examples.TaskTypes)
	require.NoError(t, err)
	require.Len(t, ts, 3)
	require.Equal(t, revisit.TaskType{Type: "load-git", Description: "Update a git repository",
		BackendName: "swh.loader.git.tasks.UpdateGitRepository", DefaultInterval: 64 * 24 * time.Hour,
		MinInterval: 12 * time.Hour, MaxInterval: 64 * 24 * time.Hour, BackoffFactor: 2, MaxQueueLength: 5000}, ts[0])
	require.Equal(t, revisit.DefaultMaxQueueLength, ts[1].MaxQueueLength, "an entry without max_queue_length")
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		"- type: load-git\n  backend_name: x\n- type: load-hg\n  backend: y\n": `f.yaml: entry 2 (line 3): unknown key "backend" (line 4)`,
		"- type: load-git\n": `f.yaml: entry 1 (load-git, line 1): backend_name: missing`,
		"type: load-git\n":   `f.yaml: want a list of task types (- type: load-git ...), line 1`,
		"- {type: load-git, backend_name: x}\n- {type: load-git, backend_name: y}\n": `task type load-git is also entry 1`,
		"":    `f.yaml: no task types`,
		"- [": `f.yaml: not valid YAML`,
	} {
		_, err := Parse("f.yaml", []byte(data))
		require.ErrorContains(t, err, want, "%q", data)
	}
	_, err := Read(filepath.Join(t.TempDir(), "none.yaml"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestRegister(t *testing.T) {
	t.Parallel()
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		ts, err := Parse("task-types.yaml", examples.TaskTypes)
		require.NoError(t, err)
		created, updated, err := Register(ctx, st, ts)
		require.NoError(t, err)
		require.Equal(t, [2]int{3, 0}, [2]int{created, updated})

		ts[0].MaxQueueLength = 50
		created, updated, err = Register(ctx, st, ts)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, 3}, [2]int{created, updated})
		got, err := st.TaskTypeGet(ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, ts[0], got, "an existing task type takes the file's entry")
	})
}
