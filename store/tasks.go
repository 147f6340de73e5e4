package store

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit"
)

// TaskStore persists generic tasks and their runs (semantics.md §8). Every
// method that writes does so in one transaction: on error nothing is
// written.
type TaskStore interface {
	// TasksCreate creates tasks and returns one task per input, in input
	// order. An input identical to an active task (next_run_not_scheduled
	// or next_run_scheduled) of the same type, arguments, policy and
	// priority, and for oneshot tasks the same next_run, is not created
	// again: that task is returned (inputs identical to each other share
	// one task). CurrentInterval defaults to the type's default_interval,
	// RetriesLeft to its num_retries. An unknown task type is ErrNotFound
	// naming it; bad input is ErrInvalid naming tasks[i].field.
	TasksCreate(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error)
	// TasksGet returns one page of the tasks f selects, in id order.
	TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error)
	// TasksSetStatus sets the status of the tasks with those ids;
	// ErrNotFound naming the first missing id, and then nothing changes.
	TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error
	// TasksUpdateStatus sets status (and next_run) of the tasks among IDs that exist
	// (unknown ids are ignored, as upstream's set_status_tasks does) and returns how many changed:
	// those it set, whatever their status was. With u.ExceptCompleted, completed tasks
	// are left alone and not counted. An invalid status is ErrInvalid naming status;
	// no ids is 0.
	TasksUpdateStatus(ctx context.Context, u revisit.TaskStatusUpdate) (int, error)
	// TasksRespawn makes the tasks with those ids due again: status
	// next_run_not_scheduled, retries_left back to the type's num_retries,
	// and next_run set to nextRun when given. ErrNotFound naming the first
	// missing id, and then nothing changes.
	TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error
	// TasksPeekReady returns the tasks due (status next_run_not_scheduled,
	// next_run <= p.Now) without changing them: without p.Priority the
	// tasks without priority, oldest next_run first; with it the tasks
	// with a priority, high before normal before low, then oldest next_run.
	TasksPeekReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error)
	// TasksGrabReady is TasksPeekReady that marks the tasks it returns
	// next_run_scheduled in the same atomic step. Concurrent callers never
	// receive the same task.
	TasksGrabReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error)
	// TasksMarkScheduled marks next_run_scheduled the tasks of the runs with
	// those backend ids, except those that finished meanwhile: a task is
	// marked only if it is next_run_not_scheduled and that run has not
	// ended. It returns how many tasks it marked.
	TasksMarkScheduled(ctx context.Context, backendIDs []string) (int, error)

	// TaskRunsSchedule records runs in status scheduled, before their
	// messages are published, and returns them in input order: confirmed
	// at their scheduled time, or unconfirmed (Confirmed nil) when
	// NewTaskRun.Unconfirmed says so. An unknown task is ErrNotFound, a
	// backend id already recorded ErrConflict.
	TaskRunsSchedule(ctx context.Context, runs []revisit.NewTaskRun) ([]revisit.TaskRun, error)
	// TaskRunsConfirm records that the broker confirmed the messages of
	// the runs with those backend ids, at `at` (zero: the store's clock),
	// and returns how many runs it confirmed. Runs confirmed already
	// (or started) keep their time, unknown ids are ignored: calling it
	// again changes nothing. An empty backend id is ErrInvalid naming
	// backend_ids[i].
	TaskRunsConfirm(ctx context.Context, backendIDs []string, at time.Time) (int, error)
	// TaskRunsRecoverUnconfirmed undoes what a dispatcher of taskType left
	// when it died between recording runs unconfirmed and recording their
	// confirms: in one transaction it deletes the unconfirmed runs of the
	// type's tasks that neither started nor ended (a started run counts
	// as confirmed; an ended one is history), and makes their tasks due
	// again (next_run_not_scheduled) if they are still
	// next_run_scheduled. It returns how many runs it deleted. It is meant
	// for the start of the type's only dispatcher: a run another process
	// recorded an instant before is deleted too. An empty taskType is
	// ErrInvalid naming task_type.
	TaskRunsRecoverUnconfirmed(ctx context.Context, taskType string) (int, error)
	// TaskRunStart marks the run of that backend id started at started
	// (zero: now), confirmed at started if it was not, and merges metadata
	// into its own. A run already started or ended is returned unchanged;
	// an unknown one is ErrNotFound.
	TaskRunStart(ctx context.Context, backendID string, started time.Time, metadata map[string]any) (revisit.TaskRun, error)
	// TaskRunEnd ends the run of e.BackendID and applies revisit.EndRun to
	// its task in the same transaction. A run already ended is returned
	// unchanged (a duplicate end event changes nothing); an unknown one is
	// ErrNotFound.
	TaskRunEnd(ctx context.Context, e revisit.TaskRunEnd) (revisit.TaskRun, error)
	// TaskRunsGet returns the runs of those tasks, by task and run id.
	TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error)
	// TaskRunsEndWedged ends as lost, at now (zero: the store's clock), the
	// runs scheduled or started whose last news (start, else schedule) is
	// older than their task type's run timeout, applying the end-of-run
	// rules, and returns them. Unconfirmed runs are no exception: the rule
	// is the backstop when no recovery removes them. It works in short transactions of bounded
	// size, and is meant for start-up and periodic calls.
	TaskRunsEndWedged(ctx context.Context, now time.Time) ([]revisit.TaskRun, error)

	// TaskRunsArchivable returns one page, in id order, of the runs that
	// ended before f.Before.
	TaskRunsArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskRunPage, error)
	// TaskRunsDelete deletes the ended runs among ids and returns how many.
	TaskRunsDelete(ctx context.Context, ids []int64) (int, error)
	// TasksArchivable returns one page, in id order, of the finished
	// (completed or disabled) oneshot tasks whose next_run is before
	// f.Before and whose runs all ended before f.Before.
	TasksArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskPage, error)
	// TasksDelete deletes, among ids, the finished oneshot tasks that have
	// no run left (delete their runs first), and returns how many.
	TasksDelete(ctx context.Context, ids []int64) (int, error)
	// TasksImport writes tasks as they are, ids included (a task of
	// that id is replaced), and makes new ids follow the largest: tasks
	// brought over from another scheduler's database, whose workers' runs
	// name them. Bad input is ErrInvalid, an unknown task type ErrNotFound,
	// each naming tasks[i].field.
	TasksImport(ctx context.Context, tasks []revisit.Task) error
	// TaskRunsImport writes task runs as they are, ids included, as
	// TasksImport does; a run without a confirm time counts as confirmed
	// when scheduled (or started). An unknown task is ErrNotFound, a
	// backend id another run holds ErrConflict, each naming runs[i].field.
	TaskRunsImport(ctx context.Context, runs []revisit.TaskRun) error
	// TasksCreateUnlessWaiting creates tasks as Software Heritage's
	// create_tasks does: a task of every input unless a task identical to
	// was there before the call (the same type, arguments, policy,
	// priority and status, next_run_not_scheduled unless the input says,
	// and for oneshot tasks the same next_run), identical inputs each
	// creating one; it returns, in id order and each once, the tasks
	// identical to an input and due at its next_run. Defaults and errors
	// are those of TasksCreate.
	TasksCreateUnlessWaiting(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error)
	// TaskRunsToArchive returns one page, by task then run id, of the runs
	// f selects (revisit.TaskArchiveFilter): Software Heritage's
	// filter_task_to_archive.
	TaskRunsToArchive(ctx context.Context, f revisit.TaskArchiveFilter) (revisit.TaskRunPage, error)
	// TasksDeleteArchived deletes, in one transaction, the runs of runIDs
	// whatever their state, then the tasks of taskIDs left without runs
	// whatever their policy and status: Software Heritage's
	// delete_archived_tasks.
	TasksDeleteArchived(ctx context.Context, taskIDs, runIDs []int64) error
}
