package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func gitTaskType() revisit.TaskType {
	return revisit.TaskType{
		Type:            "load-git",
		Description:     "Update a git repository",
		BackendName:     "swh.loader.git.tasks.UpdateGitRepository",
		DefaultInterval: 64 * day,
		MinInterval:     12 * time.Hour,
		MaxInterval:     64 * day,
		BackoffFactor:   2.5,
		MaxQueueLength:  5000,
		NumRetries:      3,
		RetryDelay:      90 * time.Minute,
		RunTimeout:      6 * time.Hour,
	}
}

func exerciseTaskTypes(t *testing.T, newStore NewStore) {
	parallel(t, "TaskType/CreateGetList", func(t *testing.T) {
		f := newFixture(t, newStore)
		git := gitTaskType()
		hg := revisit.TaskType{Type: "load-hg", BackendName: "swh.loader.mercurial.tasks.LoadMercurial"}
		list, err := f.s.TaskTypeList(f.ctx)
		require.NoError(t, err)
		require.Empty(t, list)

		require.NoError(t, f.s.TaskTypeCreate(f.ctx, hg))
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, git))

		got, err := f.s.TaskTypeGet(f.ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, git, got, "every field round-trips, 64 days included")

		gotHg, err := f.s.TaskTypeGet(f.ctx, "load-hg")
		require.NoError(t, err)
		require.Zero(t, gotHg.MaxQueueLength, "no max_queue_length reads back as none")
		require.Equal(t, revisit.DefaultMaxQueueLength, gotHg.MaxQueueLengthOrDefault())
		require.Equal(t, "swh.loader.mercurial.tasks.LoadMercurial", gotHg.BackendName)
		require.Zero(t, gotHg.DefaultInterval)
		require.Zero(t, gotHg.RetryDelay)

		list, err = f.s.TaskTypeList(f.ctx)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, "load-git", list[0].Type, "by name")
		require.Equal(t, "load-hg", list[1].Type)
		require.Equal(t, git, list[0])
	})

	parallel(t, "TaskType/CreateDuplicateConflict", func(t *testing.T) {
		f := newFixture(t, newStore)
		git := gitTaskType()
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, git))
		other := git
		other.Description = "changed"
		other.BackendName = "other.Backend"
		requireCode(t, f.s.TaskTypeCreate(f.ctx, other), revisit.ErrConflict, "")
		got, err := f.s.TaskTypeGet(f.ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, git, got, "the failed create changed nothing")
	})

	parallel(t, "TaskType/Update", func(t *testing.T) {
		f := newFixture(t, newStore)
		git := gitTaskType()
		require.NoError(t, f.s.TaskTypeCreate(f.ctx, git))
		upd := git
		upd.Description = "new description"
		upd.BackendName = "swh.loader.git.tasks.Other"
		upd.DefaultInterval = 2 * day
		upd.MaxQueueLength = 42
		upd.NumRetries = 0
		upd.BackoffFactor = 1.5
		upd.RetryDelay = time.Minute
		require.NoError(t, f.s.TaskTypeUpdate(f.ctx, upd))
		got, err := f.s.TaskTypeGet(f.ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, upd, got)

		upd.MaxQueueLength = 0
		require.NoError(t, f.s.TaskTypeUpdate(f.ctx, upd))
		got, err = f.s.TaskTypeGet(f.ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, upd, got, "max_queue_length back to none")
	})

	parallel(t, "TaskType/MissingNotFound", func(t *testing.T) {
		f := newFixture(t, newStore)
		_, err := f.s.TaskTypeGet(f.ctx, "load-nothing")
		requireCode(t, err, revisit.ErrNotFound, "")
		requireCode(t, f.s.TaskTypeUpdate(f.ctx, gitTaskType()), revisit.ErrNotFound, "")
		list, err := f.s.TaskTypeList(f.ctx)
		require.NoError(t, err)
		require.Empty(t, list, "update of a missing task type creates nothing")
	})

	parallel(t, "TaskType/InvalidNothingStored", func(t *testing.T) {
		f := newFixture(t, newStore)
		bad := gitTaskType()
		bad.BackendName = ""
		requireInvalid(t, f.s.TaskTypeCreate(f.ctx, bad), "backend_name")
		_, err := f.s.TaskTypeGet(f.ctx, "load-git")
		requireCode(t, err, revisit.ErrNotFound, "", "nothing stored")

		neg := gitTaskType()
		neg.Type = "load-neg"
		neg.RetryDelay = -time.Second
		requireInvalid(t, f.s.TaskTypeCreate(f.ctx, neg), "retry_delay")

		require.NoError(t, f.s.TaskTypeCreate(f.ctx, gitTaskType()))
		requireInvalid(t, f.s.TaskTypeUpdate(f.ctx, bad), "backend_name")
		got, err := f.s.TaskTypeGet(f.ctx, "load-git")
		require.NoError(t, err)
		require.Equal(t, gitTaskType(), got, "an invalid update changes nothing")

		list, err := f.s.TaskTypeList(f.ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
	})
}
