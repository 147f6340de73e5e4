package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/tasksql"
)

// TasksCreate creates tasks, returning the active identical task instead of
// a duplicate; the single writer makes de-duplication race-free.
func (s *Store) TasksCreate(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error) {
	out := make([]revisit.Task, len(tasks))
	if len(tasks) == 0 {
		return out, nil
	}
	err := s.write(ctx, fmt.Sprintf("create %d tasks", len(tasks)), func(tx *sql.Tx) error {
		ts, args, err := s.newTasks(ctx, tx, tasks)
		if err != nil {
			return err
		}
		for i, t := range ts {
			found, err := scanTasks(tx.QueryContext(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE type = ?1 AND "+tasksql.Active+
				` AND arguments = ?2 AND policy = ?3 AND priority IS ?4 AND (policy = 'recurring' OR next_run = ?5)
				ORDER BY id LIMIT 1`, t.Type, string(args[i]), string(t.Policy), priorityOrNull(t.Priority), micro(t.NextRun)))
			if err != nil {
				return err
			}
			if len(found) > 0 {
				out[i] = found[0]
				continue
			}
			if t.ID, err = s.insertTask(ctx, tx, t, args[i]); err != nil {
				return err
			}
			t.Arguments, err = batch.DecodeArguments(args[i])
			out[i] = t
			if err != nil {
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
// (batch.NewTasks).
func (s *Store) newTasks(ctx context.Context, tx *sql.Tx, tasks []revisit.NewTask) ([]revisit.Task, [][]byte, error) {
	types, err := s.taskTypesIn(ctx, tx, batch.TaskTypeNames(tasks))
	if err != nil {
		return nil, nil, err
	}
	return batch.NewTasks(tasks, types)
}

// insertTask stores t, whose arguments' JSON is args, and returns its id.
func (s *Store) insertTask(ctx context.Context, tx *sql.Tx, t revisit.Task, args []byte) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO task (type, arguments, next_run, current_interval, status, policy, retries_left, priority)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`, t.Type, string(args), micro(t.NextRun), durationOrNull(t.CurrentInterval),
		string(t.Status), string(t.Policy), t.RetriesLeft, priorityOrNull(t.Priority))
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// taskTypesIn reads the task types of those names that exist.
func (s *Store) taskTypesIn(ctx context.Context, tx *sql.Tx, names []string) (map[string]revisit.TaskType, error) {
	ts, err := scanTaskTypes(tx.QueryContext(ctx, "SELECT "+taskTypeColumns+" FROM task_type WHERE type IN (SELECT value FROM json_each(?))", jsonArray(names)))
	if err != nil {
		return nil, err
	}
	m := make(map[string]revisit.TaskType, len(ts))
	for _, t := range ts {
		m[t.Type] = t
	}
	return m, nil
}

// taskDialect renders the task search for SQLite.
var taskDialect = tasksql.Dialect{
	Placeholder:   func(n int) string { return fmt.Sprintf("?%d", n) },
	IDsIn:         func(p string) string { return "id IN (SELECT value FROM json_each(" + p + "))" },
	IDs:           func(ids []int64) any { return jsonArray(ids) },
	NullSafeEqual: "IS",
	Priority:      priorityOrNull,
	Time:          func(t time.Time) any { return micro(t) },
}

// TasksGet returns one page of the tasks f selects, in id order.
func (s *Store) TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error) {
	q, args, limit, err := taskDialect.Search(f)
	if err != nil {
		return revisit.TaskPage{}, err
	}
	ts, err := query(ctx, s, scanTasks, q, args...)
	if err != nil {
		return revisit.TaskPage{}, translate("get tasks", err)
	}
	return batch.TaskPage(ts, limit), nil
}

// TasksSetStatus sets the status of tasks, all or none.
func (s *Store) TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error {
	if !status.Valid() {
		return revisit.Invalidf("status", "%q is not a task status", status)
	}
	return s.updateTasks(ctx, ids, "set status of tasks",
		"UPDATE task SET status = ?2 WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id", string(status))
}

// TasksUpdateStatus sets the status (and next_run) of the tasks among u.IDs
// that exist, in one write transaction.
func (s *Store) TasksUpdateStatus(ctx context.Context, u revisit.TaskStatusUpdate) (int, error) {
	if err := u.Validate(); err != nil || len(u.IDs) == 0 {
		return 0, err
	}
	var n int64
	err := s.write(ctx, "set status of tasks", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE task SET status = ?2, next_run = coalesce(?3, next_run)
			WHERE id IN (SELECT value FROM json_each(?1)) AND NOT (?4 AND status = 'completed')`,
			jsonArray(u.IDs), string(u.Status), microPtr(u.NextRun), u.ExceptCompleted)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// TasksRespawn makes tasks due again, all or none.
func (s *Store) TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error {
	return s.updateTasks(ctx, ids, "respawn tasks", `UPDATE task SET status = 'next_run_not_scheduled',
		next_run = coalesce(?2, next_run),
		retries_left = coalesce((SELECT num_retries FROM task_type tt WHERE tt.type = task.type), 0)
		WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id`, microPtr(nextRun))
}

// updateTasks runs an UPDATE of the tasks with ids (?1, then args) that
// returns the ids it changed, and rolls it back unless it changed them all.
func (s *Store) updateTasks(ctx context.Context, ids []int64, op, query string, args ...any) error {
	if err := batch.IDs(ids); err != nil {
		return err
	}
	return s.write(ctx, op, func(tx *sql.Tx) error {
		found, err := scanIDs(tx.QueryContext(ctx, query, append([]any{jsonArray(ids)}, args...)...))
		if err != nil {
			return err
		}
		return batch.MissingID(ids, found)
	})
}

// TasksPeekReady returns the tasks due, without changing them.
func (s *Store) TasksPeekReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ts, err := query(ctx, s, scanTasks, "SELECT "+tasksql.Columns+" FROM task WHERE "+taskDialect.Ready(p), taskDialect.ReadyArgs(p, s.now())...)
	if err != nil {
		return nil, translate("peek ready tasks of "+p.Type, err)
	}
	return ts, nil
}

// TasksGrabReady returns the tasks due and marks them scheduled, in one
// write transaction: the single writer serializes grabs.
func (s *Store) TasksGrabReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var ts []revisit.Task
	err := s.write(ctx, "grab ready tasks of "+p.Type, func(tx *sql.Tx) error {
		var err error
		if ts, err = scanTasks(tx.QueryContext(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE "+taskDialect.Ready(p), taskDialect.ReadyArgs(p, s.now())...)); err != nil {
			return err
		}
		ids := make([]int64, len(ts))
		for i := range ts {
			ids[i] = ts[i].ID
			ts[i].Status = revisit.TaskNextRunScheduled
		}
		_, err = tx.ExecContext(ctx, "UPDATE task SET status = 'next_run_scheduled' WHERE id IN (SELECT value FROM json_each(?))", jsonArray(ids))
		return err
	})
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// TasksMarkScheduled marks scheduled the tasks of unfinished runs.
func (s *Store) TasksMarkScheduled(ctx context.Context, backendIDs []string) (int, error) {
	if len(backendIDs) == 0 {
		return 0, nil
	}
	var n int64
	err := s.write(ctx, "mark tasks scheduled", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE task SET status = 'next_run_scheduled'
			WHERE status = 'next_run_not_scheduled' AND id IN (SELECT task FROM task_run
				WHERE backend_id IN (SELECT value FROM json_each(?)) AND ended IS NULL)`, jsonArray(backendIDs))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// TaskRunsSchedule records runs in status scheduled.
func (s *Store) TaskRunsSchedule(ctx context.Context, runs []revisit.NewTaskRun) ([]revisit.TaskRun, error) {
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
	out := make([]revisit.TaskRun, len(runs))
	err := s.write(ctx, fmt.Sprintf("schedule %d task runs", len(runs)), func(tx *sql.Tx) error {
		now := s.now()
		for i, r := range runs {
			var exists bool
			if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM task WHERE id = ?)", r.TaskID).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return &revisit.Error{Code: revisit.CodeNotFound, Field: fmt.Sprintf("runs[%d].task_id", i),
					Message: fmt.Sprintf("task %d not found", r.TaskID)}
			}
			if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM task_run WHERE backend_id = ?)", r.BackendID).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return &revisit.Error{Code: revisit.CodeConflict, Field: fmt.Sprintf("runs[%d].backend_id", i),
					Message: fmt.Sprintf("a run with backend id %q is recorded already", r.BackendID)}
			}
			scheduled := now
			if !r.Scheduled.IsZero() {
				scheduled = revisit.Microsecond(r.Scheduled)
			}
			var confirmed *time.Time
			if !r.Unconfirmed {
				confirmed = &scheduled
			}
			got, err := scanTaskRuns(tx.QueryContext(ctx, `INSERT INTO task_run (task, backend_id, scheduled, confirmed, metadata, status)
				VALUES (?, ?, ?, ?, ?, 'scheduled') RETURNING `+tasksql.RunColumns,
				r.TaskID, r.BackendID, micro(scheduled), microPtr(confirmed), string(metadata[i])))
			if err != nil {
				return err
			}
			out[i] = got[0]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TaskRunsConfirm confirms the unconfirmed runs among backendIDs.
func (s *Store) TaskRunsConfirm(ctx context.Context, backendIDs []string, at time.Time) (int, error) {
	if err := batch.BackendIDs(backendIDs); err != nil {
		return 0, err
	}
	if len(backendIDs) == 0 {
		return 0, nil
	}
	var n int64
	err := s.write(ctx, fmt.Sprintf("confirm %d task runs", len(backendIDs)), func(tx *sql.Tx) error {
		if at.IsZero() {
			at = s.now()
		}
		res, err := tx.ExecContext(ctx, `UPDATE task_run SET confirmed = ?2
			WHERE backend_id IN (SELECT value FROM json_each(?1)) AND confirmed IS NULL`, jsonArray(backendIDs), micro(at))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// TaskRunsRecoverUnconfirmed deletes the unconfirmed runs of a task type
// that neither started nor ended and makes their tasks due again, in one
// write transaction: the single writer orders it with start and end
// events.
func (s *Store) TaskRunsRecoverUnconfirmed(ctx context.Context, taskType string) (int, error) {
	if err := batch.TaskType(taskType); err != nil {
		return 0, err
	}
	var n int
	err := s.write(ctx, "recover unconfirmed task runs of "+taskType, func(tx *sql.Tx) error {
		tasks, err := scanIDs(tx.QueryContext(ctx, `DELETE FROM task_run
			WHERE confirmed IS NULL AND status = 'scheduled'
			AND task IN (SELECT id FROM task WHERE type = ?) RETURNING task`, taskType))
		if err != nil {
			return err
		}
		n = len(tasks)
		_, err = tx.ExecContext(ctx, `UPDATE task SET status = 'next_run_not_scheduled'
			WHERE id IN (SELECT value FROM json_each(?)) AND status = 'next_run_scheduled'`, jsonArray(tasks))
		return err
	})
	return n, err
}

// TaskRunStart marks a scheduled run started.
func (s *Store) TaskRunStart(ctx context.Context, backendID string, started time.Time, metadata map[string]any) (revisit.TaskRun, error) {
	if backendID == "" {
		return revisit.TaskRun{}, revisit.Invalidf("backend_id", "missing")
	}
	if _, err := batch.EncodeMetadata("metadata", metadata); err != nil {
		return revisit.TaskRun{}, err
	}
	if started.IsZero() {
		started = s.now()
	}
	var run revisit.TaskRun
	err := s.write(ctx, "start task run "+backendID, func(tx *sql.Tx) error {
		var err error
		if run, err = runByBackendID(ctx, tx, backendID); err != nil || run.Status != revisit.RunScheduled {
			return err
		}
		run.Status, run.Started = revisit.RunStarted, revisit.MicrosecondPtr(&started)
		run.Metadata = revisit.MergeMetadata(run.Metadata, metadata)
		m, err := batch.EncodeMetadata("metadata", run.Metadata)
		if err != nil {
			return err
		}
		if run.Confirmed == nil {
			run.Confirmed = run.Started
		}
		_, err = tx.ExecContext(ctx, "UPDATE task_run SET status = ?2, started = ?3, confirmed = ?4, metadata = ?5 WHERE id = ?1",
			run.ID, string(run.Status), microPtr(run.Started), microPtr(run.Confirmed), string(m))
		return err
	})
	return run, err
}

// TaskRunEnd ends a run and applies the end-of-run rules to its task.
func (s *Store) TaskRunEnd(ctx context.Context, e revisit.TaskRunEnd) (revisit.TaskRun, error) {
	if err := e.Validate(); err != nil {
		return revisit.TaskRun{}, err
	}
	if _, err := batch.EncodeMetadata("metadata", e.Metadata); err != nil {
		return revisit.TaskRun{}, err
	}
	if e.Ended.IsZero() {
		e.Ended = s.now()
	}
	var run revisit.TaskRun
	err := s.write(ctx, "end task run "+e.BackendID, func(tx *sql.Tx) error {
		var err error
		if run, err = runByBackendID(ctx, tx, e.BackendID); err != nil || run.Status.Final() {
			return err
		}
		run, err = s.endRun(ctx, tx, run, e)
		return err
	})
	return run, err
}

// runByBackendID reads the run of a backend id.
func runByBackendID(ctx context.Context, tx *sql.Tx, backendID string) (revisit.TaskRun, error) {
	runs, err := scanTaskRuns(tx.QueryContext(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE backend_id = ?", backendID))
	if err != nil {
		return revisit.TaskRun{}, err
	}
	if len(runs) == 0 {
		return revisit.TaskRun{}, &revisit.Error{Code: revisit.CodeNotFound, Field: "backend_id",
			Message: fmt.Sprintf("no task run with backend id %q", backendID)}
	}
	return runs[0], nil
}

// endRun ends a run in flight and updates its task by the end-of-run rules.
func (s *Store) endRun(ctx context.Context, tx *sql.Tx, run revisit.TaskRun, e revisit.TaskRunEnd) (revisit.TaskRun, error) {
	tasks, err := scanTasks(tx.QueryContext(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE id = ?", run.TaskID))
	if err != nil {
		return run, err
	}
	if len(tasks) == 0 {
		return run, notFound("task %d of run %s not found", run.TaskID, run.BackendID)
	}
	task := tasks[0]
	types, err := s.taskTypesIn(ctx, tx, []string{task.Type})
	if err != nil {
		return run, err
	}
	run = revisit.EndTaskRun(run, e)
	m, err := batch.EncodeMetadata("metadata", run.Metadata)
	if err != nil {
		return run, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE task_run SET status = ?2, ended = ?3, metadata = ?4 WHERE id = ?1",
		run.ID, string(run.Status), microPtr(run.Ended), string(m)); err != nil {
		return run, err
	}
	task = revisit.EndRun(task, types[task.Type], run.Status, *run.Ended)
	_, err = tx.ExecContext(ctx, "UPDATE task SET status = ?2, next_run = ?3, current_interval = ?4, retries_left = ?5 WHERE id = ?1",
		task.ID, string(task.Status), micro(task.NextRun), durationOrNull(task.CurrentInterval), task.RetriesLeft)
	return run, err
}

// TaskRunsGet returns the runs of tasks, by task and run id.
func (s *Store) TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error) {
	runs, err := query(ctx, s, scanTaskRuns, "SELECT "+tasksql.RunColumns+
		" FROM task_run WHERE task IN (SELECT value FROM json_each(?)) ORDER BY task, id", jsonArray(taskIDs))
	if err != nil {
		return nil, translate("get task runs", err)
	}
	return runs, nil
}

// TaskRunsEndWedged ends as lost the runs silent beyond their type's
// timeout, a page per write transaction.
func (s *Store) TaskRunsEndWedged(ctx context.Context, now time.Time) ([]revisit.TaskRun, error) {
	if now.IsZero() {
		now = s.now()
	}
	now = revisit.Microsecond(now)
	ended := []revisit.TaskRun{}
	for {
		var page []revisit.TaskRun
		err := s.write(ctx, "end wedged task runs", func(tx *sql.Tx) error {
			page = page[:0]
			runs, err := scanTaskRuns(tx.QueryContext(ctx, "SELECT r."+strings.ReplaceAll(tasksql.RunColumns, ", ", ", r.")+` FROM task_run r
				JOIN task t ON t.id = r.task JOIN task_type tt ON tt.type = t.type
				WHERE r.status IN ('scheduled', 'started')
				AND coalesce(r.started, r.scheduled) + coalesce(tt.run_timeout, ?2) < ?1
				ORDER BY r.id LIMIT ?3`, micro(now), revisit.DefaultRunTimeout.Microseconds(), tasksql.WedgedPage))
			if err != nil {
				return err
			}
			for _, r := range runs {
				if r, err = s.endRun(ctx, tx, r, revisit.TaskRunEnd{BackendID: r.BackendID, Status: revisit.RunLost, Ended: now}); err != nil {
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
func (s *Store) TaskRunsArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskRunPage, error) {
	limit, after, err := archivePage(f)
	if err != nil {
		return revisit.TaskRunPage{}, err
	}
	runs, err := query(ctx, s, scanTaskRuns, "SELECT "+tasksql.RunColumns+
		" FROM task_run WHERE ended < ? AND id > ? ORDER BY id LIMIT ?", micro(f.Before), after, limit+1)
	if err != nil {
		return revisit.TaskRunPage{}, translate("archivable task runs", err)
	}
	return batch.TaskRunPage(runs, limit), nil
}

// TaskRunsDelete deletes ended runs.
func (s *Store) TaskRunsDelete(ctx context.Context, ids []int64) (int, error) {
	return s.deleteIDs(ctx, "delete task runs",
		"DELETE FROM task_run WHERE id IN (SELECT value FROM json_each(?)) AND ended IS NOT NULL", ids)
}

// TasksArchivable returns a page of the finished oneshot tasks older than
// f.Before.
func (s *Store) TasksArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskPage, error) {
	limit, after, err := archivePage(f)
	if err != nil {
		return revisit.TaskPage{}, err
	}
	ts, err := query(ctx, s, scanTasks, "SELECT "+tasksql.Columns+` FROM task t
		WHERE policy = 'oneshot' AND status IN ('completed', 'disabled') AND next_run < ?1 AND id > ?2
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id AND (r.ended IS NULL OR r.ended >= ?1))
		ORDER BY id LIMIT ?3`, micro(f.Before), after, limit+1)
	if err != nil {
		return revisit.TaskPage{}, translate("archivable tasks", err)
	}
	return batch.TaskPage(ts, limit), nil
}

// TasksDelete deletes finished oneshot tasks without runs.
func (s *Store) TasksDelete(ctx context.Context, ids []int64) (int, error) {
	return s.deleteIDs(ctx, "delete tasks", `DELETE FROM task WHERE id IN (SELECT value FROM json_each(?))
		AND policy = 'oneshot' AND status IN ('completed', 'disabled')
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = task.id)`, ids)
}

// deleteIDs runs a DELETE of the rows among ids and returns how many went.
func (s *Store) deleteIDs(ctx context.Context, op, query string, ids []int64) (int, error) {
	var n int64
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, jsonArray(ids))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
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

// priorityOrNull returns the stored form of a priority (NULL for none).
func priorityOrNull(p revisit.TaskPriority) any {
	if p == revisit.PriorityNone {
		return nil
	}
	return string(p)
}

// scanIDs reads a query returning one integer column.
func scanIDs(rows *sql.Rows, err error) ([]int64, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (id int64, err error) {
		err = rows.Scan(&id)
		return id, err
	})
}

// scanTasks reads a query returning tasksql.Columns.
func scanTasks(rows *sql.Rows, err error) ([]revisit.Task, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (revisit.Task, error) {
		var (
			t              revisit.Task
			args           string
			status, policy string
			priority       sql.NullString
		)
		if err := rows.Scan(&t.ID, &t.Type, &args, timeCol{&t.NextRun}, durationCol{&t.CurrentInterval},
			&status, &policy, &t.RetriesLeft, &priority); err != nil {
			return t, err
		}
		t.Status, t.Policy, t.Priority = revisit.TaskStatus(status), revisit.TaskPolicy(policy), revisit.TaskPriority(priority.String)
		var err error
		t.Arguments, err = batch.DecodeArguments([]byte(args))
		return t, err
	})
}

// scanTaskRuns reads a query returning tasksql.RunColumns.
func scanTaskRuns(rows *sql.Rows, err error) ([]revisit.TaskRun, error) {
	return collect(rows, err, nil, func(rows *sql.Rows) (revisit.TaskRun, error) {
		var (
			r        revisit.TaskRun
			metadata string
			status   string
		)
		if err := rows.Scan(&r.ID, &r.TaskID, &r.BackendID, timePtrCol{&r.Scheduled}, timePtrCol{&r.Confirmed}, timePtrCol{&r.Started},
			timePtrCol{&r.Ended}, &metadata, &status); err != nil {
			return r, err
		}
		r.Status = revisit.TaskRunStatus(status)
		var err error
		r.Metadata, err = batch.DecodeMetadata([]byte(metadata))
		return r, err
	})
}

// TasksCreateUnlessWaiting creates tasks as Software Heritage's
// create_tasks does (store.TaskStore).
func (s *Store) TasksCreateUnlessWaiting(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error) {
	if len(tasks) == 0 {
		return []revisit.Task{}, nil
	}
	var out []revisit.Task
	err := s.write(ctx, fmt.Sprintf("create %d tasks", len(tasks)), func(tx *sql.Tx) error {
		ts, args, err := s.newTasks(ctx, tx, tasks)
		if err != nil {
			return err
		}
		out, err = batch.CreateUnlessWaiting(ts, func(i int, sameNextRun bool) ([]revisit.Task, error) {
			t := ts[i]
			return scanTasks(tx.QueryContext(ctx, "SELECT "+tasksql.Columns+` FROM task WHERE type = ?1
				AND status = ?7 AND arguments = ?2 AND policy = ?3 AND priority IS ?4
				AND (CASE WHEN ?6 OR policy = 'oneshot' THEN next_run = ?5 ELSE 1 END)
				ORDER BY id`, t.Type, string(args[i]), string(t.Policy), priorityOrNull(t.Priority), micro(t.NextRun), sameNextRun,
				string(t.Status)))
		}, func(i int) error {
			_, err := s.insertTask(ctx, tx, ts[i], args[i])
			return err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// TaskRunsToArchive returns one page of the runs of archived tasks
// (store.TaskStore).
func (s *Store) TaskRunsToArchive(ctx context.Context, f revisit.TaskArchiveFilter) (revisit.TaskRunPage, error) {
	limit, task, run, err := batch.TaskArchivePage(f)
	if err != nil {
		return revisit.TaskRunPage{}, err
	}
	runs, err := query(ctx, s, scanTaskRuns, "SELECT "+tasksql.RunColumnsOf("r")+` FROM task_run r JOIN task t ON t.id = r.task
		WHERE `+tasksql.Archived+` AND (r.task, r.id) > (?3, ?4)
		AND coalesce(r.started, r.scheduled) >= ?1 AND coalesce(r.started, r.scheduled) < ?2
		ORDER BY r.task, r.id LIMIT ?5`, micro(f.After), micro(f.Before), task, run, limit+1)
	if err != nil {
		return revisit.TaskRunPage{}, translate("task runs to archive", err)
	}
	return batch.TaskArchiveRuns(runs, limit), nil
}

// TasksDeleteArchived deletes archived runs, then their tasks left without
// runs (store.TaskStore).
func (s *Store) TasksDeleteArchived(ctx context.Context, taskIDs, runIDs []int64) error {
	return s.write(ctx, "delete archived tasks", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM task_run WHERE id IN (SELECT value FROM json_each(?))", jsonArray(runIDs)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM task WHERE id IN (SELECT value FROM json_each(?))
			AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = task.id)`, jsonArray(taskIDs))
		return err
	})
}

// TasksImport writes tasks as they are, ids included (store.TaskStore);
// SQLite's next ids follow the largest.
func (s *Store) TasksImport(ctx context.Context, ts []revisit.Task) error {
	args, err := batch.ImportedTasks(ts)
	if err != nil || len(ts) == 0 {
		return err
	}
	return s.write(ctx, fmt.Sprintf("import %d tasks", len(ts)), func(tx *sql.Tx) error {
		known, err := s.taskTypesIn(ctx, tx, batch.TypesOfTasks(ts))
		if err != nil {
			return err
		}
		if err := batch.UnknownTaskType(ts, known); err != nil {
			return err
		}
		for i, t := range ts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO task (id, type, arguments, next_run, current_interval, status, policy,
				retries_left, priority) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
				ON CONFLICT (id) DO UPDATE SET type = excluded.type, arguments = excluded.arguments, next_run = excluded.next_run,
					current_interval = excluded.current_interval, status = excluded.status, policy = excluded.policy,
					retries_left = excluded.retries_left, priority = excluded.priority`,
				t.ID, t.Type, string(args[i]), micro(t.NextRun), durationOrNull(t.CurrentInterval), string(t.Status),
				string(t.Policy), t.RetriesLeft, priorityOrNull(t.Priority)); err != nil {
				return err
			}
		}
		return nil
	})
}

// TaskRunsImport writes task runs as they are, ids included
// (store.TaskStore).
func (s *Store) TaskRunsImport(ctx context.Context, runs []revisit.TaskRun) error {
	metadata, err := batch.ImportedRuns(runs)
	if err != nil || len(runs) == 0 {
		return err
	}
	tasks := make([]int64, len(runs))
	for i, r := range runs {
		tasks[i] = r.TaskID
	}
	return s.write(ctx, fmt.Sprintf("import %d task runs", len(runs)), func(tx *sql.Tx) error {
		found, err := scanIDs(tx.QueryContext(ctx, "SELECT id FROM task WHERE id IN (SELECT value FROM json_each(?))", jsonArray(tasks)))
		if err != nil {
			return err
		}
		if err := batch.MissingTask(runs, found); err != nil {
			return err
		}
		for i, r := range runs {
			scheduled, started := revisit.MicrosecondPtr(r.Scheduled), revisit.MicrosecondPtr(r.Started)
			confirmed := cmp.Or(revisit.MicrosecondPtr(r.Confirmed), scheduled, started)
			_, err := tx.ExecContext(ctx, `INSERT INTO task_run (id, task, backend_id, scheduled, confirmed, started, ended,
				metadata, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
				ON CONFLICT (id) DO UPDATE SET task = excluded.task, backend_id = excluded.backend_id,
					scheduled = excluded.scheduled, confirmed = excluded.confirmed, started = excluded.started,
					ended = excluded.ended, metadata = excluded.metadata, status = excluded.status`,
				r.ID, r.TaskID, r.BackendID, nullMicro(scheduled), nullMicro(confirmed), nullMicro(started),
				nullMicro(r.Ended), string(metadata[i]), string(r.Status))
			if isUniqueViolation(err) {
				return batch.BackendIDTaken(i, r)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}
