package front

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/tasksql"
)

// TaskRunStatements read and write task runs.
type TaskRunStatements interface {
	// TaskRunsInsert records runs in status scheduled (Scheduled set,
	// Confirmed set unless unconfirmed; metadata their metadata's JSON)
	// and returns them in input order.
	TaskRunsInsert(ctx context.Context, runs []revisit.TaskRun, metadata [][]byte) ([]revisit.TaskRun, error)
	// BackendIDsRecorded returns the backend ids among ids that runs
	// hold, with the ids of those runs.
	BackendIDsRecorded(ctx context.Context, ids []string) (map[string]int64, error)
	// TaskRunsConfirmOf sets confirmed to at on the unconfirmed runs among
	// backendIDs and returns how many.
	TaskRunsConfirmOf(ctx context.Context, backendIDs []string, at time.Time) (int, error)
	// TaskRunsDeleteUnconfirmed deletes the unconfirmed runs of
	// taskType's tasks still scheduled, makes those tasks
	// next_run_not_scheduled if they are next_run_scheduled, and returns
	// how many runs it deleted; a run starting or ending meanwhile is
	// kept.
	TaskRunsDeleteUnconfirmed(ctx context.Context, taskType string) (int, error)
	// TaskRunLock reads the run of that backend id and locks it until the
	// transaction ends; false if absent.
	TaskRunLock(ctx context.Context, backendID string) (revisit.TaskRun, bool, error)
	// TaskRunStarted writes r's status, started, confirmed and metadata.
	TaskRunStarted(ctx context.Context, r revisit.TaskRun) error
	// TaskRunEnded writes r's status, ended and metadata.
	TaskRunEnded(ctx context.Context, r revisit.TaskRun) error
	// TaskRunsOf reads the runs of those tasks, by task and run id.
	TaskRunsOf(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error)
	// TaskRunsWedged reads and locks, in id order, up to n runs in flight
	// whose last news is older than their type's run timeout at now,
	// skipping those a concurrent call holds.
	TaskRunsWedged(ctx context.Context, now time.Time, n int) ([]revisit.TaskRun, error)
	// TaskRunsEndedAfter reads, in id order, up to n runs with an id
	// after after that ended before before.
	TaskRunsEndedAfter(ctx context.Context, before time.Time, after int64, n int) ([]revisit.TaskRun, error)
	// TaskRunsDeleteEnded deletes the ended runs among ids and returns how
	// many.
	TaskRunsDeleteEnded(ctx context.Context, ids []int64) (int, error)
	// TaskRunsOfArchived reads, by task then run id, up to n runs of
	// archived tasks (tasksql.Archived) after (task, run) whose last news
	// is in [f.After, f.Before).
	TaskRunsOfArchived(ctx context.Context, f revisit.TaskArchiveFilter, task, run int64, n int) ([]revisit.TaskRun, error)
	// TaskRunsWrite writes runs (metadata their metadata's JSON) as they
	// are, replacing the runs of their ids, and makes new ids follow the
	// largest.
	TaskRunsWrite(ctx context.Context, runs []revisit.TaskRun, metadata [][]byte) error
}

// TaskRunsSchedule records runs in status scheduled.
func (f *Front) TaskRunsSchedule(ctx context.Context, runs []revisit.NewTaskRun) ([]revisit.TaskRun, error) {
	if err := batch.ValidateRuns(runs); err != nil {
		return nil, err
	}
	metadata := make([][]byte, len(runs))
	for i, r := range runs {
		var err error
		if metadata[i], err = batch.EncodeMetadata(fmt.Sprintf("runs[%d].metadata", i), r.Metadata); err != nil {
			return nil, err
		}
	}
	var out []revisit.TaskRun
	err := f.d.Write(ctx, fmt.Sprintf("schedule %d task runs", len(runs)), func(x Statements) error {
		taskIDs, backendIDs := make([]int64, len(runs)), make([]string, len(runs))
		for i, r := range runs {
			taskIDs[i], backendIDs[i] = r.TaskID, r.BackendID
		}
		found, err := x.TasksExisting(ctx, taskIDs)
		if err != nil {
			return err
		}
		if err := batch.MissingTask(taskIDs, found); err != nil {
			return err
		}
		recorded, err := x.BackendIDsRecorded(ctx, backendIDs)
		if err != nil {
			return err
		}
		if err := duplicateBackendID(runs, recorded); err != nil {
			return err
		}
		out, err = x.TaskRunsInsert(ctx, scheduledRuns(runs, f.d.Now()), metadata)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scheduledRuns are the runs to record: scheduled now unless they say,
// confirmed then unless unconfirmed.
func scheduledRuns(runs []revisit.NewTaskRun, now time.Time) []revisit.TaskRun {
	out := make([]revisit.TaskRun, len(runs))
	for i, r := range runs {
		scheduled := now
		if !r.Scheduled.IsZero() {
			scheduled = revisit.Microsecond(r.Scheduled)
		}
		out[i] = revisit.TaskRun{TaskID: r.TaskID, BackendID: r.BackendID, Scheduled: &scheduled,
			Metadata: r.Metadata, Status: revisit.RunScheduled}
		if !r.Unconfirmed {
			out[i].Confirmed = &scheduled
		}
	}
	return out
}

// duplicateBackendID returns the conflict error of the first run whose
// backend id is among recorded.
func duplicateBackendID(runs []revisit.NewTaskRun, recorded map[string]int64) error {
	for i, r := range runs {
		if _, ok := recorded[r.BackendID]; ok {
			return &revisit.Error{Code: revisit.CodeConflict, Field: fmt.Sprintf("runs[%d].backend_id", i),
				Message: fmt.Sprintf("a run with backend id %q is recorded already", r.BackendID)}
		}
	}
	return nil
}

// TaskRunsConfirm confirms the unconfirmed runs among backendIDs.
func (f *Front) TaskRunsConfirm(ctx context.Context, backendIDs []string, at time.Time) (int, error) {
	if err := batch.BackendIDs(backendIDs); err != nil || len(backendIDs) == 0 {
		return 0, err
	}
	if at.IsZero() {
		at = f.d.Now()
	}
	return value(ctx, f.d.WriteOne, fmt.Sprintf("confirm %d task runs", len(backendIDs)), func(x Statements) (int, error) {
		return x.TaskRunsConfirmOf(ctx, backendIDs, revisit.Microsecond(at))
	})
}

// TaskRunsRecoverUnconfirmed deletes the unconfirmed runs of a task type
// that neither started nor ended and makes their tasks due again.
func (f *Front) TaskRunsRecoverUnconfirmed(ctx context.Context, taskType string) (int, error) {
	if err := batch.TaskType(taskType); err != nil {
		return 0, err
	}
	return value(ctx, f.d.Write, "recover unconfirmed task runs of "+taskType, func(x Statements) (int, error) {
		return x.TaskRunsDeleteUnconfirmed(ctx, taskType)
	})
}

// TaskRunStart marks a scheduled run started.
func (f *Front) TaskRunStart(ctx context.Context, backendID string, started time.Time, metadata map[string]any) (revisit.TaskRun, error) {
	if backendID == "" {
		return revisit.TaskRun{}, revisit.Invalidf("backend_id", "missing")
	}
	if _, err := batch.EncodeMetadata("metadata", metadata); err != nil {
		return revisit.TaskRun{}, err
	}
	if started.IsZero() {
		started = f.d.Now()
	}
	return value(ctx, f.d.Write, "start task run "+backendID, func(x Statements) (revisit.TaskRun, error) {
		run, err := lockRun(ctx, x, backendID)
		if err != nil || run.Status != revisit.RunScheduled {
			return run, err
		}
		run.Status, run.Started = revisit.RunStarted, revisit.MicrosecondPtr(&started)
		run.Metadata = revisit.MergeMetadata(run.Metadata, metadata)
		if run.Confirmed == nil {
			run.Confirmed = run.Started
		}
		return run, x.TaskRunStarted(ctx, run)
	})
}

// TaskRunEnd ends a run and applies the end-of-run rules to its task.
func (f *Front) TaskRunEnd(ctx context.Context, e revisit.TaskRunEnd) (revisit.TaskRun, error) {
	if err := e.Validate(); err != nil {
		return revisit.TaskRun{}, err
	}
	if _, err := batch.EncodeMetadata("metadata", e.Metadata); err != nil {
		return revisit.TaskRun{}, err
	}
	if e.Ended.IsZero() {
		e.Ended = f.d.Now()
	}
	return value(ctx, f.d.Write, "end task run "+e.BackendID, func(x Statements) (revisit.TaskRun, error) {
		run, err := lockRun(ctx, x, e.BackendID)
		if err != nil || run.Status.Final() {
			return run, err
		}
		return endRun(ctx, x, run, e)
	})
}

// lockRun reads and locks the run of a backend id; ErrNotFound if absent.
func lockRun(ctx context.Context, x Statements, backendID string) (revisit.TaskRun, error) {
	run, found, err := x.TaskRunLock(ctx, backendID)
	if err == nil && !found {
		err = &revisit.Error{Code: revisit.CodeNotFound, Field: "backend_id",
			Message: fmt.Sprintf("no task run with backend id %q", backendID)}
	}
	return run, err
}

// endRun ends a locked run in flight and updates its task by the
// end-of-run rules.
func endRun(ctx context.Context, x Statements, run revisit.TaskRun, e revisit.TaskRunEnd) (revisit.TaskRun, error) {
	task, found, err := x.TaskLock(ctx, run.TaskID)
	if err != nil {
		return run, err
	}
	if !found {
		return run, revisit.Errorf(revisit.CodeNotFound, "task %d of run %s not found", run.TaskID, run.BackendID)
	}
	types, err := taskTypesIn(ctx, x, []string{task.Type})
	if err != nil {
		return run, err
	}
	run = revisit.EndTaskRun(run, e)
	if err := x.TaskRunEnded(ctx, run); err != nil {
		return run, err
	}
	return run, x.TaskUpdateAfterRun(ctx, revisit.EndRun(task, types[task.Type], run.Status, *run.Ended))
}

// TaskRunsGet returns the runs of tasks, by task and run id.
func (f *Front) TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error) {
	runs, err := value(ctx, f.d.Read, "get task runs", func(x Statements) ([]revisit.TaskRun, error) {
		return x.TaskRunsOf(ctx, taskIDs)
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// TaskRunsEndWedged ends as lost the runs silent beyond their type's
// timeout, a page (tasksql.WedgedPage) per transaction.
func (f *Front) TaskRunsEndWedged(ctx context.Context, now time.Time) ([]revisit.TaskRun, error) {
	if now.IsZero() {
		now = f.d.Now()
	}
	now = revisit.Microsecond(now)
	ended := []revisit.TaskRun{}
	for {
		var page []revisit.TaskRun
		err := f.d.Write(ctx, "end wedged task runs", func(x Statements) error {
			page = page[:0]
			runs, err := x.TaskRunsWedged(ctx, now, tasksql.WedgedPage)
			if err != nil {
				return err
			}
			for _, r := range runs {
				if r, err = endRun(ctx, x, r, revisit.TaskRunEnd{BackendID: r.BackendID, Status: revisit.RunLost, Ended: now}); err != nil {
					return err
				}
				page = append(page, r)
			}
			return nil
		})
		if err != nil {
			return ended, err
		}
		ended = append(ended, page...)
		if len(page) < tasksql.WedgedPage {
			return ended, nil
		}
	}
}

// TaskRunsArchivable returns a page of the runs ended before f.Before.
func (f *Front) TaskRunsArchivable(ctx context.Context, filter revisit.ArchiveFilter) (revisit.TaskRunPage, error) {
	limit, after, err := archivePage(filter)
	if err != nil {
		return revisit.TaskRunPage{}, err
	}
	runs, err := value(ctx, f.d.Read, "archivable task runs", func(x Statements) ([]revisit.TaskRun, error) {
		return x.TaskRunsEndedAfter(ctx, filter.Before, after, limit+1)
	})
	if err != nil {
		return revisit.TaskRunPage{}, err
	}
	return batch.TaskRunPage(runs, limit), nil
}

// TaskRunsDelete deletes ended runs.
func (f *Front) TaskRunsDelete(ctx context.Context, ids []int64) (int, error) {
	return value(ctx, f.d.WriteOne, "delete task runs", func(x Statements) (int, error) {
		return x.TaskRunsDeleteEnded(ctx, ids)
	})
}

// TaskRunsToArchive returns one page of the runs of archived tasks
// (store.TaskStore).
func (f *Front) TaskRunsToArchive(ctx context.Context, filter revisit.TaskArchiveFilter) (revisit.TaskRunPage, error) {
	limit, task, run, err := batch.TaskArchivePage(filter)
	if err != nil {
		return revisit.TaskRunPage{}, err
	}
	runs, err := value(ctx, f.d.Read, "task runs to archive", func(x Statements) ([]revisit.TaskRun, error) {
		return x.TaskRunsOfArchived(ctx, filter, task, run, limit+1)
	})
	if err != nil {
		return revisit.TaskRunPage{}, err
	}
	return batch.TaskArchiveRuns(runs, limit), nil
}

// TaskRunsImport writes task runs as they are, ids included
// (store.TaskStore); a run without a confirm time counts as confirmed
// when scheduled (or started).
func (f *Front) TaskRunsImport(ctx context.Context, runs []revisit.TaskRun) error {
	metadata, err := batch.ImportedRuns(runs)
	if err != nil || len(runs) == 0 {
		return err
	}
	rows := make([]revisit.TaskRun, len(runs))
	taskIDs, backendIDs := make([]int64, len(runs)), make([]string, len(runs))
	for i, r := range runs {
		r.Scheduled, r.Started, r.Ended = revisit.MicrosecondPtr(r.Scheduled), revisit.MicrosecondPtr(r.Started), revisit.MicrosecondPtr(r.Ended)
		r.Confirmed = cmp.Or(revisit.MicrosecondPtr(r.Confirmed), r.Scheduled, r.Started)
		rows[i], taskIDs[i], backendIDs[i] = r, r.TaskID, r.BackendID
	}
	return f.d.Write(ctx, fmt.Sprintf("import %d task runs", len(runs)), func(x Statements) error {
		found, err := x.TasksExisting(ctx, taskIDs)
		if err != nil {
			return err
		}
		if err := batch.MissingTask(taskIDs, found); err != nil {
			return err
		}
		holders, err := x.BackendIDsRecorded(ctx, backendIDs)
		if err != nil {
			return err
		}
		for i, r := range runs {
			if holder, taken := holders[r.BackendID]; taken && holder != r.ID {
				return batch.BackendIDTaken(i, r)
			}
		}
		return x.TaskRunsWrite(ctx, rows, metadata)
	})
}
