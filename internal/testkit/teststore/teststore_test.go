package teststore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// TestEmptyPostgres empties a store that holds a task type, a lister and
// tasks: a store opened on it afterwards finds none of them, numbers its
// tasks from 1 again and searches origins by URL, as a store just
// migrated.
func TestEmptyPostgres(t *testing.T) {
	ctx := context.Background()
	first, url := Postgres(t)
	tt := revisit.TaskType{Type: "load-git", Description: "git", BackendName: "swh.loader.git.tasks.UpdateGitRepository",
		DefaultInterval: 24 * time.Hour}
	fill := func(st store.Store) []revisit.Task {
		require.NoError(t, st.TaskTypeCreate(ctx, tt))
		_, err := st.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
		require.NoError(t, err)
		tasks, err := st.TasksCreate(ctx, []revisit.NewTask{
			{Type: "load-git", Arguments: revisit.TaskArguments{Args: []any{"a"}}, NextRun: time.Now(), Policy: revisit.TaskOneshot},
			{Type: "load-git", Arguments: revisit.TaskArguments{Args: []any{"b"}}, NextRun: time.Now(), Policy: revisit.TaskOneshot},
		})
		require.NoError(t, err)
		return tasks
	}
	before := fill(first)

	EmptyPostgres(t, url)
	second := OpenPostgres(t, url, store.Options{})
	types, err := second.TaskTypeList(ctx)
	require.NoError(t, err)
	require.Empty(t, types)
	listers, err := second.ListerList(ctx)
	require.NoError(t, err)
	require.Empty(t, listers)
	after := fill(second)
	require.Equal(t, []int64{before[0].ID, before[1].ID}, []int64{after[0].ID, after[1].ID})
	require.Equal(t, int64(1), after[0].ID)
	_, err = second.OriginsSearch(ctx, revisit.OriginSearch{})
	require.NoError(t, err, "the URL search is on, as migrated")
}
