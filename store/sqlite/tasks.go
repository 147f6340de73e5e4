package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/tasksql"
)

// TaskTypesLock does nothing: the single writer makes creations take
// turns (front.TaskStatements).
func (x statements) TaskTypesLock(context.Context, []string) error { return nil }

// TasksActiveLike reads the first active task like t
// (front.TaskStatements).
func (x statements) TasksActiveLike(ctx context.Context, t revisit.Task, args []byte) ([]revisit.Task, error) {
	return scanTasks(x.query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE type = ?1 AND "+tasksql.Active+
		` AND arguments = ?2 AND policy = ?3 AND priority IS ?4 AND (policy = 'recurring' OR next_run = ?5)
		ORDER BY id LIMIT 1`, t.Type, string(args), string(t.Policy), priorityOrNull(t.Priority), micro(t.NextRun)))
}

// TasksIdentical reads the tasks identical to t (front.TaskStatements).
func (x statements) TasksIdentical(ctx context.Context, t revisit.Task, args []byte, sameNextRun bool) ([]revisit.Task, error) {
	return scanTasks(x.query(ctx, "SELECT "+tasksql.Columns+` FROM task WHERE type = ?1
		AND status = ?7 AND arguments = ?2 AND policy = ?3 AND priority IS ?4
		AND (CASE WHEN ?6 OR policy = 'oneshot' THEN next_run = ?5 ELSE 1 END)
		ORDER BY id`, t.Type, string(args), string(t.Policy), priorityOrNull(t.Priority), micro(t.NextRun), sameNextRun,
		string(t.Status)))
}

// TaskInsert stores a new task (front.TaskStatements).
func (x statements) TaskInsert(ctx context.Context, t revisit.Task, args []byte) (revisit.Task, error) {
	res, err := x.tx.ExecContext(ctx, `INSERT INTO task (type, arguments, next_run, current_interval, status, policy, retries_left, priority)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`, t.Type, string(args), micro(t.NextRun), durationOrNull(t.CurrentInterval),
		string(t.Status), string(t.Policy), t.RetriesLeft, priorityOrNull(t.Priority))
	if err != nil {
		return t, err
	}
	if t.ID, err = res.LastInsertId(); err != nil {
		return t, err
	}
	t.Arguments, err = batch.DecodeArguments(args)
	return t, err
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

// TasksSearch reads one page of the tasks f selects (front.TaskStatements).
func (x statements) TasksSearch(ctx context.Context, f revisit.TaskFilter) ([]revisit.Task, int, error) {
	q, args, limit, err := taskDialect.Search(f)
	if err != nil {
		return nil, 0, err
	}
	ts, err := scanTasks(x.query(ctx, q, args...))
	return ts, limit, err
}

// TasksSetStatusOf sets the status of tasks (front.TaskStatements).
func (x statements) TasksSetStatusOf(ctx context.Context, ids []int64, status revisit.TaskStatus) ([]int64, error) {
	return scanIDs(x.query(ctx, "UPDATE task SET status = ?2 WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id",
		jsonArray(ids), string(status)))
}

// TasksRespawnOf makes tasks due again (front.TaskStatements).
func (x statements) TasksRespawnOf(ctx context.Context, ids []int64, nextRun *time.Time) ([]int64, error) {
	return scanIDs(x.query(ctx, `UPDATE task SET status = 'next_run_not_scheduled',
		next_run = coalesce(?2, next_run),
		retries_left = coalesce((SELECT num_retries FROM task_type tt WHERE tt.type = task.type), 0)
		WHERE id IN (SELECT value FROM json_each(?1)) RETURNING id`, jsonArray(ids), microPtr(nextRun)))
}

// TasksUpdateStatusOf applies u (front.TaskStatements).
func (x statements) TasksUpdateStatusOf(ctx context.Context, u revisit.TaskStatusUpdate) (int, error) {
	n, err := x.changed(ctx, `UPDATE task SET status = ?2, next_run = coalesce(?3, next_run)
		WHERE id IN (SELECT value FROM json_each(?1)) AND NOT (?4 AND status = 'completed')`,
		jsonArray(u.IDs), string(u.Status), microPtr(u.NextRun), u.ExceptCompleted)
	return int(n), err
}

// TasksReady reads the tasks due (front.TaskStatements).
func (x statements) TasksReady(ctx context.Context, p revisit.ReadyTasksParams, now time.Time) ([]revisit.Task, error) {
	return scanTasks(x.query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE "+taskDialect.Ready(p), taskDialect.ReadyArgs(p, now)...))
}

// TasksGrab reads the tasks due and marks them scheduled: the single
// writer serializes grabs (front.TaskStatements).
func (x statements) TasksGrab(ctx context.Context, p revisit.ReadyTasksParams, now time.Time) ([]revisit.Task, error) {
	ts, err := x.TasksReady(ctx, p, now)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(ts))
	for i := range ts {
		ids[i] = ts[i].ID
		ts[i].Status = revisit.TaskNextRunScheduled
	}
	_, err = x.tx.ExecContext(ctx, "UPDATE task SET status = 'next_run_scheduled' WHERE id IN (SELECT value FROM json_each(?))", jsonArray(ids))
	return ts, err
}

// TasksMarkScheduledOf marks scheduled the tasks of unfinished runs
// (front.TaskStatements).
func (x statements) TasksMarkScheduledOf(ctx context.Context, backendIDs []string) (int, error) {
	n, err := x.changed(ctx, `UPDATE task SET status = 'next_run_scheduled'
		WHERE status = 'next_run_not_scheduled' AND id IN (SELECT task FROM task_run
			WHERE backend_id IN (SELECT value FROM json_each(?)) AND ended IS NULL)`, jsonArray(backendIDs))
	return int(n), err
}

// TaskLock reads a task; the single writer's transaction keeps it
// (front.TaskStatements).
func (x statements) TaskLock(ctx context.Context, id int64) (revisit.Task, bool, error) {
	return first(scanTasks(x.query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE id = ?", id)))
}

// TaskUpdateAfterRun writes what the end of a run changed of its task
// (front.TaskStatements).
func (x statements) TaskUpdateAfterRun(ctx context.Context, t revisit.Task) error {
	_, err := x.tx.ExecContext(ctx, "UPDATE task SET status = ?2, next_run = ?3, current_interval = ?4, retries_left = ?5 WHERE id = ?1",
		t.ID, string(t.Status), micro(t.NextRun), durationOrNull(t.CurrentInterval), t.RetriesLeft)
	return err
}

// TasksExisting returns the ids that are tasks (front.TaskStatements).
func (x statements) TasksExisting(ctx context.Context, ids []int64) ([]int64, error) {
	return scanIDs(x.query(ctx, "SELECT id FROM task WHERE id IN (SELECT value FROM json_each(?))", jsonArray(ids)))
}

// TasksArchivableAfter reads a page of the finished oneshot tasks older
// than before (front.TaskStatements).
func (x statements) TasksArchivableAfter(ctx context.Context, before time.Time, after int64, n int) ([]revisit.Task, error) {
	return scanTasks(x.query(ctx, "SELECT "+tasksql.Columns+` FROM task t
		WHERE policy = 'oneshot' AND status IN ('completed', 'disabled') AND next_run < ?1 AND id > ?2
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id AND (r.ended IS NULL OR r.ended >= ?1))
		ORDER BY id LIMIT ?3`, micro(before), after, n))
}

// TasksDeleteFinished deletes finished oneshot tasks without runs
// (front.TaskStatements).
func (x statements) TasksDeleteFinished(ctx context.Context, ids []int64) (int, error) {
	n, err := x.changed(ctx, `DELETE FROM task WHERE id IN (SELECT value FROM json_each(?))
		AND policy = 'oneshot' AND status IN ('completed', 'disabled')
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = task.id)`, jsonArray(ids))
	return int(n), err
}

// TasksDeleteArchivedOf deletes archived runs, then their tasks left
// without runs (front.TaskStatements).
func (x statements) TasksDeleteArchivedOf(ctx context.Context, taskIDs, runIDs []int64) error {
	if _, err := x.tx.ExecContext(ctx, "DELETE FROM task_run WHERE id IN (SELECT value FROM json_each(?))", jsonArray(runIDs)); err != nil {
		return err
	}
	_, err := x.tx.ExecContext(ctx, `DELETE FROM task WHERE id IN (SELECT value FROM json_each(?))
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = task.id)`, jsonArray(taskIDs))
	return err
}

// TasksWrite writes tasks as they are; SQLite's next ids follow the
// largest (front.TaskStatements).
func (x statements) TasksWrite(ctx context.Context, ts []revisit.Task, args [][]byte) error {
	for i, t := range ts {
		if _, err := x.tx.ExecContext(ctx, `INSERT INTO task (id, type, arguments, next_run, current_interval, status, policy,
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
}

// TaskRunsInsert records runs, one statement each
// (front.TaskRunStatements).
func (x statements) TaskRunsInsert(ctx context.Context, runs []revisit.TaskRun, metadata [][]byte) ([]revisit.TaskRun, error) {
	out := make([]revisit.TaskRun, len(runs))
	for i, r := range runs {
		got, err := scanTaskRuns(x.query(ctx, `INSERT INTO task_run (task, backend_id, scheduled, confirmed, metadata, status)
			VALUES (?, ?, ?, ?, ?, 'scheduled') RETURNING `+tasksql.RunColumns,
			r.TaskID, r.BackendID, microPtr(r.Scheduled), microPtr(r.Confirmed), string(metadata[i])))
		if err != nil {
			return nil, err
		}
		out[i] = got[0]
	}
	return out, nil
}

// BackendIDsRecorded returns the runs holding backend ids
// (front.TaskRunStatements).
func (x statements) BackendIDsRecorded(ctx context.Context, ids []string) (map[string]int64, error) {
	held := make(map[string]int64)
	rows, err := x.query(ctx, "SELECT backend_id, id FROM task_run WHERE backend_id IN (SELECT value FROM json_each(?))", jsonArray(ids))
	_, err = collect(rows, err, nil, func(rows *sql.Rows) (struct{}, error) {
		var (
			backendID string
			id        int64
		)
		err := rows.Scan(&backendID, &id)
		held[backendID] = id
		return struct{}{}, err
	})
	return held, err
}

// TaskRunsConfirmOf confirms unconfirmed runs (front.TaskRunStatements).
func (x statements) TaskRunsConfirmOf(ctx context.Context, backendIDs []string, at time.Time) (int, error) {
	n, err := x.changed(ctx, `UPDATE task_run SET confirmed = ?2
		WHERE backend_id IN (SELECT value FROM json_each(?1)) AND confirmed IS NULL`, jsonArray(backendIDs), micro(at))
	return int(n), err
}

// TaskRunsDeleteUnconfirmed deletes a type's unconfirmed runs still
// scheduled and releases their tasks; the single writer orders it with
// start and end events (front.TaskRunStatements).
func (x statements) TaskRunsDeleteUnconfirmed(ctx context.Context, taskType string) (int, error) {
	tasks, err := scanIDs(x.query(ctx, `DELETE FROM task_run
		WHERE confirmed IS NULL AND status = 'scheduled'
		AND task IN (SELECT id FROM task WHERE type = ?) RETURNING task`, taskType))
	if err != nil {
		return 0, err
	}
	_, err = x.tx.ExecContext(ctx, `UPDATE task SET status = 'next_run_not_scheduled'
		WHERE id IN (SELECT value FROM json_each(?)) AND status = 'next_run_scheduled'`, jsonArray(tasks))
	return len(tasks), err
}

// TaskRunLock reads a run; the single writer's transaction keeps it
// (front.TaskRunStatements).
func (x statements) TaskRunLock(ctx context.Context, backendID string) (revisit.TaskRun, bool, error) {
	return first(scanTaskRuns(x.query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE backend_id = ?", backendID)))
}

// TaskRunStarted writes a run's start (front.TaskRunStatements).
func (x statements) TaskRunStarted(ctx context.Context, r revisit.TaskRun) error {
	m, err := batch.EncodeMetadata("metadata", r.Metadata)
	if err != nil {
		return err
	}
	_, err = x.tx.ExecContext(ctx, "UPDATE task_run SET status = ?2, started = ?3, confirmed = ?4, metadata = ?5 WHERE id = ?1",
		r.ID, string(r.Status), microPtr(r.Started), microPtr(r.Confirmed), string(m))
	return err
}

// TaskRunEnded writes a run's end (front.TaskRunStatements).
func (x statements) TaskRunEnded(ctx context.Context, r revisit.TaskRun) error {
	m, err := batch.EncodeMetadata("metadata", r.Metadata)
	if err != nil {
		return err
	}
	_, err = x.tx.ExecContext(ctx, "UPDATE task_run SET status = ?2, ended = ?3, metadata = ?4 WHERE id = ?1",
		r.ID, string(r.Status), microPtr(r.Ended), string(m))
	return err
}

// TaskRunsOf reads the runs of tasks (front.TaskRunStatements).
func (x statements) TaskRunsOf(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error) {
	return scanTaskRuns(x.query(ctx, "SELECT "+tasksql.RunColumns+
		" FROM task_run WHERE task IN (SELECT value FROM json_each(?)) ORDER BY task, id", jsonArray(taskIDs)))
}

// TaskRunsWedged reads a page of wedged runs (front.TaskRunStatements).
func (x statements) TaskRunsWedged(ctx context.Context, now time.Time, n int) ([]revisit.TaskRun, error) {
	return scanTaskRuns(x.query(ctx, "SELECT "+tasksql.Qualified("r", tasksql.RunColumns)+` FROM task_run r
		JOIN task t ON t.id = r.task JOIN task_type tt ON tt.type = t.type
		WHERE r.status IN ('scheduled', 'started')
		AND coalesce(r.started, r.scheduled) + coalesce(tt.run_timeout, ?2) < ?1
		ORDER BY r.id LIMIT ?3`, micro(now), revisit.DefaultRunTimeout.Microseconds(), n))
}

// TaskRunsEndedAfter reads a page of the runs ended before before
// (front.TaskRunStatements).
func (x statements) TaskRunsEndedAfter(ctx context.Context, before time.Time, after int64, n int) ([]revisit.TaskRun, error) {
	return scanTaskRuns(x.query(ctx, "SELECT "+tasksql.RunColumns+
		" FROM task_run WHERE ended < ? AND id > ? ORDER BY id LIMIT ?", micro(before), after, n))
}

// TaskRunsDeleteEnded deletes ended runs (front.TaskRunStatements).
func (x statements) TaskRunsDeleteEnded(ctx context.Context, ids []int64) (int, error) {
	n, err := x.changed(ctx, "DELETE FROM task_run WHERE id IN (SELECT value FROM json_each(?)) AND ended IS NOT NULL", jsonArray(ids))
	return int(n), err
}

// TaskRunsOfArchived reads a page of the runs of archived tasks
// (front.TaskRunStatements).
func (x statements) TaskRunsOfArchived(ctx context.Context, f revisit.TaskArchiveFilter, task, run int64, n int) ([]revisit.TaskRun, error) {
	return scanTaskRuns(x.query(ctx, "SELECT "+tasksql.Qualified("r", tasksql.RunColumns)+` FROM task_run r JOIN task t ON t.id = r.task
		WHERE `+tasksql.Archived+` AND (r.task, r.id) > (?3, ?4)
		AND coalesce(r.started, r.scheduled) >= ?1 AND coalesce(r.started, r.scheduled) < ?2
		ORDER BY r.task, r.id LIMIT ?5`, micro(f.After), micro(f.Before), task, run, n))
}

// TaskRunsWrite writes runs as they are, one statement each
// (front.TaskRunStatements).
func (x statements) TaskRunsWrite(ctx context.Context, runs []revisit.TaskRun, metadata [][]byte) error {
	for i, r := range runs {
		if _, err := x.tx.ExecContext(ctx, `INSERT INTO task_run (id, task, backend_id, scheduled, confirmed, started, ended,
			metadata, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
			ON CONFLICT (id) DO UPDATE SET task = excluded.task, backend_id = excluded.backend_id,
				scheduled = excluded.scheduled, confirmed = excluded.confirmed, started = excluded.started,
				ended = excluded.ended, metadata = excluded.metadata, status = excluded.status`,
			r.ID, r.TaskID, r.BackendID, nullMicro(r.Scheduled), nullMicro(r.Confirmed), nullMicro(r.Started),
			nullMicro(r.Ended), string(metadata[i]), string(r.Status)); err != nil {
			return err
		}
	}
	return nil
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
