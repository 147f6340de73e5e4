package front

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// TaskStatements read and write tasks; args are the canonical JSON of a
// task's arguments (revisit.TaskArguments.JSON).
type TaskStatements interface {
	// TaskTypesLock makes concurrent creations of tasks of those types,
	// sorted, take turns until the transaction ends (nothing to do for an
	// engine with one writer).
	TaskTypesLock(ctx context.Context, names []string) error
	// TasksActiveLike reads the first active task (next_run_not_scheduled
	// or next_run_scheduled) of t's
	// type, arguments, policy and priority, and for a oneshot t its
	// next_run.
	TasksActiveLike(ctx context.Context, t revisit.Task, args []byte) ([]revisit.Task, error)
	// TasksIdentical reads, in id order, the tasks of t's type,
	// arguments, policy, priority and status, with its next_run too when
	// sameNextRun or t is oneshot.
	TasksIdentical(ctx context.Context, t revisit.Task, args []byte, sameNextRun bool) ([]revisit.Task, error)
	// TaskInsert stores a new task and returns it with its id.
	TaskInsert(ctx context.Context, t revisit.Task, args []byte) (revisit.Task, error)
	// TasksSearch checks f and reads one page of the tasks it selects
	// and the row after it (tasksql.Dialect.Search).
	TasksSearch(ctx context.Context, f revisit.TaskFilter) (tasks []revisit.Task, limit int, err error)
	// TasksSetStatusOf sets the status of the tasks among ids and returns
	// the ids it set.
	TasksSetStatusOf(ctx context.Context, ids []int64, status revisit.TaskStatus) ([]int64, error)
	// TasksRespawnOf makes the tasks among ids due again (status
	// next_run_not_scheduled, next_run nextRun unless nil, retries_left
	// their type's num_retries) and returns the ids it changed.
	TasksRespawnOf(ctx context.Context, ids []int64, nextRun *time.Time) ([]int64, error)
	// TasksUpdateStatusOf applies u (validated, with ids) and returns how
	// many tasks it changed.
	TasksUpdateStatusOf(ctx context.Context, u revisit.TaskStatusUpdate) (int, error)
	// TasksReady reads the tasks p selects (tasksql.Dialect.Ready), now
	// standing for a zero p.Now.
	TasksReady(ctx context.Context, p revisit.ReadyTasksParams, now time.Time) ([]revisit.Task, error)
	// TasksGrab marks next_run_scheduled the tasks TasksReady would
	// read, except those a concurrent grab holds, and returns them.
	TasksGrab(ctx context.Context, p revisit.ReadyTasksParams, now time.Time) ([]revisit.Task, error)
	// TasksMarkScheduledOf marks next_run_scheduled the tasks
	// next_run_not_scheduled of the runs among backendIDs that have not
	// ended, and returns how many.
	TasksMarkScheduledOf(ctx context.Context, backendIDs []string) (int, error)
	// TaskLock reads the task of that id and locks it until the
	// transaction ends; false if absent.
	TaskLock(ctx context.Context, id int64) (revisit.Task, bool, error)
	// TaskUpdateAfterRun writes t's status, next_run, current_interval
	// and retries_left.
	TaskUpdateAfterRun(ctx context.Context, t revisit.Task) error
	// TasksExisting returns the ids among ids that are tasks.
	TasksExisting(ctx context.Context, ids []int64) ([]int64, error)
	// TasksArchivableAfter reads, in id order, up to n of the finished
	// oneshot tasks with an id after after, next_run before before, and
	// all their runs ended before before.
	TasksArchivableAfter(ctx context.Context, before time.Time, after int64, n int) ([]revisit.Task, error)
	// TasksDeleteFinished deletes the finished oneshot tasks without runs
	// among ids and returns how many.
	TasksDeleteFinished(ctx context.Context, ids []int64) (int, error)
	// TasksDeleteArchivedOf deletes the runs of runIDs, then the tasks of
	// taskIDs without runs.
	TasksDeleteArchivedOf(ctx context.Context, taskIDs, runIDs []int64) error
	// TasksWrite writes ts (args their arguments' JSON) as they are,
	// replacing the tasks of their ids, and makes new ids follow the
	// largest.
	TasksWrite(ctx context.Context, ts []revisit.Task, args [][]byte) error
}

// TasksCreate creates tasks, returning the active identical task instead of
// a duplicate (store.TaskStore).
func (f *Front) TasksCreate(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error) {
	out := make([]revisit.Task, len(tasks))
	if len(tasks) == 0 {
		return out, nil
	}
	err := f.d.Write(ctx, fmt.Sprintf("create %d tasks", len(tasks)), func(x Statements) error {
		ts, args, err := newTasks(ctx, x, tasks)
		if err != nil {
			return err
		}
		for i, t := range ts {
			found, err := x.TasksActiveLike(ctx, t, args[i])
			if err != nil {
				return err
			}
			if len(found) > 0 {
				out[i] = found[0]
				continue
			}
			if out[i], err = x.TaskInsert(ctx, t, args[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// newTasks checks tasks and applies their types' defaults
// (batch.NewTasks), then locks their types (TaskTypesLock), so that
// concurrent creations of identical tasks take turns.
func newTasks(ctx context.Context, x Statements, tasks []revisit.NewTask) ([]revisit.Task, [][]byte, error) {
	names := batch.TaskTypeNames(tasks)
	types, err := taskTypesIn(ctx, x, names)
	if err != nil {
		return nil, nil, err
	}
	ts, args, err := batch.NewTasks(tasks, types)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	return ts, args, x.TaskTypesLock(ctx, names)
}

// TasksCreateUnlessWaiting creates tasks as Software Heritage's
// create_tasks does (store.TaskStore).
func (f *Front) TasksCreateUnlessWaiting(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error) {
	if len(tasks) == 0 {
		return []revisit.Task{}, nil
	}
	var out []revisit.Task
	err := f.d.Write(ctx, fmt.Sprintf("create %d tasks", len(tasks)), func(x Statements) error {
		ts, args, err := newTasks(ctx, x, tasks)
		if err != nil {
			return err
		}
		out, err = batch.CreateUnlessWaiting(ts, func(i int, sameNextRun bool) ([]revisit.Task, error) {
			return x.TasksIdentical(ctx, ts[i], args[i], sameNextRun)
		}, func(i int) error {
			_, err := x.TaskInsert(ctx, ts[i], args[i])
			return err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TasksGet returns one page of the tasks f selects, in id order.
func (f *Front) TasksGet(ctx context.Context, filter revisit.TaskFilter) (revisit.TaskPage, error) {
	var limit int
	ts, err := value(ctx, f.d.Read, "get tasks", func(x Statements) (ts []revisit.Task, err error) {
		ts, limit, err = x.TasksSearch(ctx, filter)
		return ts, err
	})
	if err != nil {
		return revisit.TaskPage{}, err
	}
	return batch.TaskPage(ts, limit), nil
}

// TasksSetStatus sets the status of tasks, all or none.
func (f *Front) TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error {
	if !status.Valid() {
		return revisit.Invalidf("status", "%q is not a task status", status)
	}
	return f.updateTasks(ctx, ids, "set status of tasks", func(x Statements) ([]int64, error) {
		return x.TasksSetStatusOf(ctx, ids, status)
	})
}

// TasksRespawn makes tasks due again, all or none.
func (f *Front) TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error {
	return f.updateTasks(ctx, ids, "respawn tasks", func(x Statements) ([]int64, error) {
		return x.TasksRespawnOf(ctx, ids, revisit.MicrosecondPtr(nextRun))
	})
}

// updateTasks runs update, which changes the tasks among ids and returns
// those it changed, and rolls it back unless it changed them all.
func (f *Front) updateTasks(ctx context.Context, ids []int64, op string, update func(Statements) ([]int64, error)) error {
	if err := batch.IDs(ids); err != nil {
		return err
	}
	return f.d.Write(ctx, op, func(x Statements) error {
		found, err := update(x)
		if err != nil {
			return err
		}
		return batch.MissingID(ids, found)
	})
}

// TasksUpdateStatus sets the status (and next_run) of the tasks among u.IDs
// that exist.
func (f *Front) TasksUpdateStatus(ctx context.Context, u revisit.TaskStatusUpdate) (int, error) {
	if err := u.Validate(); err != nil || len(u.IDs) == 0 {
		return 0, err
	}
	u.NextRun = revisit.MicrosecondPtr(u.NextRun)
	return value(ctx, f.d.WriteOne, "set status of tasks", func(x Statements) (int, error) {
		return x.TasksUpdateStatusOf(ctx, u)
	})
}

// TasksPeekReady returns the tasks due, without changing them.
func (f *Front) TasksPeekReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ts, err := value(ctx, f.d.Read, "peek ready tasks of "+p.Type, func(x Statements) ([]revisit.Task, error) {
		return x.TasksReady(ctx, p, f.d.Now())
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// TasksGrabReady returns the tasks due and marks them scheduled, in the
// order peek takes them.
func (f *Front) TasksGrabReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ts, err := value(ctx, f.d.Write, "grab ready tasks of "+p.Type, func(x Statements) ([]revisit.Task, error) {
		return x.TasksGrab(ctx, p, f.d.Now())
	})
	if err != nil {
		return nil, err
	}
	batch.SortReady(ts)
	return ts, nil
}

// TasksMarkScheduled marks scheduled the tasks of unfinished runs.
func (f *Front) TasksMarkScheduled(ctx context.Context, backendIDs []string) (int, error) {
	if len(backendIDs) == 0 {
		return 0, nil
	}
	return value(ctx, f.d.Write, fmt.Sprintf("mark %d tasks scheduled", len(backendIDs)), func(x Statements) (int, error) {
		return x.TasksMarkScheduledOf(ctx, backendIDs)
	})
}

// TasksArchivable returns a page of the finished oneshot tasks older than
// f.Before.
func (f *Front) TasksArchivable(ctx context.Context, filter revisit.ArchiveFilter) (revisit.TaskPage, error) {
	limit, after, err := archivePage(filter)
	if err != nil {
		return revisit.TaskPage{}, err
	}
	ts, err := value(ctx, f.d.Read, "archivable tasks", func(x Statements) ([]revisit.Task, error) {
		return x.TasksArchivableAfter(ctx, filter.Before, after, limit+1)
	})
	if err != nil {
		return revisit.TaskPage{}, err
	}
	return batch.TaskPage(ts, limit), nil
}

// archivePage checks an archive filter and returns its page size and the
// id it resumes after.
func archivePage(f revisit.ArchiveFilter) (limit int, after int64, err error) {
	if err := f.Validate(); err != nil {
		return 0, 0, err
	}
	if limit, err = batch.PageLimit(f.Limit); err != nil {
		return 0, 0, err
	}
	after, err = batch.AfterID(f.PageToken)
	return limit, after, err
}

// TasksDelete deletes finished oneshot tasks without runs.
func (f *Front) TasksDelete(ctx context.Context, ids []int64) (int, error) {
	return value(ctx, f.d.WriteOne, "delete tasks", func(x Statements) (int, error) {
		return x.TasksDeleteFinished(ctx, ids)
	})
}

// TasksDeleteArchived deletes archived runs, then their tasks left without
// runs (store.TaskStore).
func (f *Front) TasksDeleteArchived(ctx context.Context, taskIDs, runIDs []int64) error {
	return f.d.Write(ctx, "delete archived tasks", func(x Statements) error {
		return x.TasksDeleteArchivedOf(ctx, taskIDs, runIDs)
	})
}

// TasksImport writes tasks as they are, ids included (store.TaskStore).
func (f *Front) TasksImport(ctx context.Context, ts []revisit.Task) error {
	args, err := batch.ImportedTasks(ts)
	if err != nil || len(ts) == 0 {
		return err
	}
	return f.d.Write(ctx, fmt.Sprintf("import %d tasks", len(ts)), func(x Statements) error {
		known, err := taskTypesIn(ctx, x, batch.TypesOfTasks(ts))
		if err != nil {
			return err
		}
		if err := batch.UnknownTaskType(ts, known); err != nil {
			return err
		}
		return x.TasksWrite(ctx, ts, args)
	})
}
