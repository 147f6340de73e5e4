package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/tasksql"
)

// TasksCreate creates tasks, returning the active identical task instead of
// a duplicate. A transaction-scoped advisory lock per task type makes
// concurrent creations of identical tasks create one.
func (s *Store) TasksCreate(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error) {
	out := make([]revisit.Task, len(tasks))
	if len(tasks) == 0 {
		return out, nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ts, args, err := newTasksLocked(ctx, tx, tasks)
		if err != nil {
			return err
		}
		for i, t := range ts {
			rows, _ := tx.Query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE type = $1 AND "+tasksql.Active+
				` AND md5(arguments::text) = md5($2::jsonb::text) AND arguments = $2::jsonb
				AND policy = $3 AND priority IS NOT DISTINCT FROM $4 AND (policy = 'recurring' OR next_run = $5)
				ORDER BY id LIMIT 1`, t.Type, string(args[i]), t.Policy, nullPriority(t.Priority), t.NextRun)
			found, err := pgx.CollectRows(rows, scanTask)
			if err != nil {
				return err
			}
			if len(found) > 0 {
				out[i] = found[0]
				continue
			}
			rows, _ = tx.Query(ctx, `INSERT INTO task (type, arguments, next_run, current_interval, status, policy, retries_left, priority)
				VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8) RETURNING `+tasksql.Columns,
				t.Type, string(args[i]), t.NextRun, interval(t.CurrentInterval), t.Status, t.Policy, t.RetriesLeft, nullPriority(t.Priority))
			if out[i], err = pgx.CollectExactlyOneRow(rows, scanTask); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, translate(wrap(err, "create %d tasks", len(tasks)))
	}
	return out, nil
}

// newTasksLocked checks tasks and applies their types' defaults
// (batch.NewTasks), then takes the advisory lock of each of their types,
// in name order, so that concurrent creations of identical tasks take
// turns.
func newTasksLocked(ctx context.Context, tx pgx.Tx, tasks []revisit.NewTask) ([]revisit.Task, [][]byte, error) {
	names := batch.TaskTypeNames(tasks)
	types, err := taskTypesIn(ctx, tx, names)
	if err != nil {
		return nil, nil, err
	}
	ts, args, err := batch.NewTasks(tasks, types)
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(names)
	for _, n := range names {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('revisit.task.' || $1, 0))", n); err != nil {
			return nil, nil, err
		}
	}
	return ts, args, nil
}

// taskTypesIn reads the task types of those names that exist.
func taskTypesIn(ctx context.Context, q pgx.Tx, names []string) (map[string]revisit.TaskType, error) {
	rows, _ := q.Query(ctx, "SELECT "+taskTypeColumns+" FROM task_type WHERE type = ANY($1)", names)
	ts, err := pgx.CollectRows(rows, scanTaskType)
	if err != nil {
		return nil, err
	}
	m := make(map[string]revisit.TaskType, len(ts))
	for _, t := range ts {
		m[t.Type] = t
	}
	return m, nil
}

// taskDialect renders the task search for PostgreSQL.
var taskDialect = tasksql.Dialect{
	Placeholder:   func(n int) string { return fmt.Sprintf("$%d", n) },
	IDsIn:         func(p string) string { return "id = ANY(" + p + ")" },
	IDs:           func(ids []int64) any { return ids },
	NullSafeEqual: "IS NOT DISTINCT FROM",
	Priority:      func(p revisit.TaskPriority) any { return nullPriority(p) },
	Time:          func(t time.Time) any { return t },
}

// TasksGet returns one page of the tasks f selects, in id order.
func (s *Store) TasksGet(ctx context.Context, f revisit.TaskFilter) (revisit.TaskPage, error) {
	q, args, limit, err := taskDialect.Search(f)
	if err != nil {
		return revisit.TaskPage{}, err
	}
	rows, _ := s.pool.Query(ctx, q, args...)
	ts, err := pgx.CollectRows(rows, scanTask)
	if err != nil {
		return revisit.TaskPage{}, translate(wrap(err, "get tasks"))
	}
	return batch.TaskPage(ts, limit), nil
}

// TasksSetStatus sets the status of tasks, all or none.
func (s *Store) TasksSetStatus(ctx context.Context, ids []int64, status revisit.TaskStatus) error {
	if !status.Valid() {
		return revisit.Invalidf("status", "%q is not a task status", status)
	}
	return s.updateTasks(ctx, ids, "set status of tasks", "UPDATE task SET status = $2 WHERE id = ANY($1) RETURNING id", status)
}

// TasksUpdateStatus sets the status (and next_run) of the tasks among u.IDs
// that exist, in one statement.
func (s *Store) TasksUpdateStatus(ctx context.Context, u revisit.TaskStatusUpdate) (int, error) {
	if err := u.Validate(); err != nil || len(u.IDs) == 0 {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE task SET status = $2, next_run = coalesce($3, next_run)
		WHERE id = ANY($1) AND NOT ($4 AND status = 'completed')`,
		u.IDs, u.Status, revisit.MicrosecondPtr(u.NextRun), u.ExceptCompleted)
	if err != nil {
		return 0, translate(wrap(err, "set status of tasks"))
	}
	return int(tag.RowsAffected()), nil
}

// TasksRespawn makes tasks due again, all or none.
func (s *Store) TasksRespawn(ctx context.Context, ids []int64, nextRun *time.Time) error {
	return s.updateTasks(ctx, ids, "respawn tasks", `UPDATE task t SET status = 'next_run_not_scheduled',
		next_run = coalesce($2, t.next_run), retries_left = coalesce(tt.num_retries, 0)
		FROM task_type tt WHERE tt.type = t.type AND t.id = ANY($1) RETURNING t.id`, revisit.MicrosecondPtr(nextRun))
}

// updateTasks runs an UPDATE of the tasks with ids ($1, then args) that
// returns the ids it changed, and rolls it back unless it changed them all.
func (s *Store) updateTasks(ctx context.Context, ids []int64, op, sql string, args ...any) error {
	if err := batch.IDs(ids); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, sql, append([]any{ids}, args...)...)
		found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		return batch.MissingID(ids, found)
	})
	return translate(wrap(err, "%s", op))
}

// TasksPeekReady returns the tasks due, without changing them.
func (s *Store) TasksPeekReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE "+taskDialect.Ready(p), taskDialect.ReadyArgs(p, s.now())...)
	ts, err := pgx.CollectRows(rows, scanTask)
	if err != nil {
		return nil, translate(wrap(err, "peek ready tasks of %s", p.Type))
	}
	return ts, nil
}

// TasksGrabReady returns the tasks due and marks them scheduled; rows
// locked by a concurrent grab are skipped.
func (s *Store) TasksGrabReady(ctx context.Context, p revisit.ReadyTasksParams) ([]revisit.Task, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var ts []revisit.Task
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `WITH picked AS (SELECT id FROM task WHERE `+taskDialect.Ready(p)+` FOR UPDATE SKIP LOCKED)
			UPDATE task t SET status = 'next_run_scheduled' FROM picked WHERE t.id = picked.id
			RETURNING `+prefixed("t.", tasksql.Columns), taskDialect.ReadyArgs(p, s.now())...)
		var err error
		ts, err = pgx.CollectRows(rows, scanTask)
		return err
	})
	if err != nil {
		return nil, translate(wrap(err, "grab ready tasks of %s", p.Type))
	}
	batch.SortReady(ts)
	return ts, nil
}

// prefixed qualifies each of a list of columns with prefix.
func prefixed(prefix, columns string) string {
	return prefix + strings.ReplaceAll(columns, ", ", ", "+prefix)
}

// TasksMarkScheduled marks scheduled the tasks of unfinished runs. The
// runs are share-locked first, so that an end event committing meanwhile
// is seen and its task left alone.
func (s *Store) TasksMarkScheduled(ctx context.Context, backendIDs []string) (int, error) {
	if len(backendIDs) == 0 {
		return 0, nil
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `WITH r AS (SELECT task FROM task_run WHERE backend_id = ANY($1) AND ended IS NULL FOR SHARE)
			UPDATE task t SET status = 'next_run_scheduled' FROM r
			WHERE t.id = r.task AND t.status = 'next_run_not_scheduled'`, backendIDs)
		n = int(tag.RowsAffected())
		return err
	})
	return n, translate(wrap(err, "mark %d tasks scheduled", len(backendIDs)))
}

// TaskRunsSchedule records runs in status scheduled.
func (s *Store) TaskRunsSchedule(ctx context.Context, runs []revisit.NewTaskRun) ([]revisit.TaskRun, error) {
	if err := batch.ValidateRuns(runs); err != nil {
		return nil, err
	}
	n := len(runs)
	taskIDs, backendIDs, metadata := make([]int64, n), make([]string, n), make([]string, n)
	scheduled, confirmed := make([]time.Time, n), make([]*time.Time, n)
	now := s.now()
	for i, r := range runs {
		m, err := batch.EncodeMetadata(fmt.Sprintf("runs[%d].metadata", i), r.Metadata)
		if err != nil {
			return nil, err
		}
		taskIDs[i], backendIDs[i], metadata[i] = r.TaskID, r.BackendID, string(m)
		scheduled[i] = now
		if !r.Scheduled.IsZero() {
			scheduled[i] = revisit.Microsecond(r.Scheduled)
		}
		if !r.Unconfirmed {
			confirmed[i] = &scheduled[i]
		}
	}
	out := make([]revisit.TaskRun, n)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "SELECT id FROM task WHERE id = ANY($1)", taskIDs)
		found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if err := missingRunTask(runs, found); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, "SELECT backend_id FROM task_run WHERE backend_id = ANY($1)", backendIDs)
		dups, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if err := duplicateBackendID(runs, dups); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `INSERT INTO task_run (task, backend_id, scheduled, confirmed, metadata, status)
			SELECT task, backend_id, scheduled, confirmed, metadata, 'scheduled'
			FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::jsonb[])
				AS u(task, backend_id, scheduled, confirmed, metadata)
			RETURNING `+tasksql.RunColumns, taskIDs, backendIDs, scheduled, confirmed, metadata)
		got, err := pgx.CollectRows(rows, scanTaskRun)
		if err != nil {
			return err
		}
		for _, r := range got {
			out[slices.Index(backendIDs, r.BackendID)] = r
		}
		return nil
	})
	if isUniqueViolation(err) {
		return nil, revisit.Errorf(revisit.CodeConflict, "schedule task runs: a backend id is recorded already")
	}
	if err != nil {
		return nil, translate(wrap(err, "schedule %d task runs", n))
	}
	return out, nil
}

// missingRunTask returns the not-found error of the first run whose task
// is not among found.
func missingRunTask(runs []revisit.NewTaskRun, found []int64) error {
	for i, r := range runs {
		if !slices.Contains(found, r.TaskID) {
			return &revisit.Error{Code: revisit.CodeNotFound, Field: fmt.Sprintf("runs[%d].task_id", i),
				Message: fmt.Sprintf("task %d not found", r.TaskID)}
		}
	}
	return nil
}

// duplicateBackendID returns the conflict error of the first run whose
// backend id is among recorded.
func duplicateBackendID(runs []revisit.NewTaskRun, recorded []string) error {
	for i, r := range runs {
		if slices.Contains(recorded, r.BackendID) {
			return &revisit.Error{Code: revisit.CodeConflict, Field: fmt.Sprintf("runs[%d].backend_id", i),
				Message: fmt.Sprintf("a run with backend id %q is recorded already", r.BackendID)}
		}
	}
	return nil
}

// TaskRunsConfirm confirms the unconfirmed runs among backendIDs.
func (s *Store) TaskRunsConfirm(ctx context.Context, backendIDs []string, at time.Time) (int, error) {
	if err := batch.BackendIDs(backendIDs); err != nil {
		return 0, err
	}
	if len(backendIDs) == 0 {
		return 0, nil
	}
	if at.IsZero() {
		at = s.now()
	}
	tag, err := s.pool.Exec(ctx, "UPDATE task_run SET confirmed = $2 WHERE backend_id = ANY($1) AND confirmed IS NULL",
		backendIDs, revisit.Microsecond(at))
	if err != nil {
		return 0, translate(wrap(err, "confirm %d task runs", len(backendIDs)))
	}
	return int(tag.RowsAffected()), nil
}

// TaskRunsRecoverUnconfirmed deletes the unconfirmed runs of a task type
// that neither started nor ended and makes their tasks due again. The
// runs are locked as they are deleted, so that a start or end event
// committing meanwhile is seen: its run is then kept, its task left alone.
func (s *Store) TaskRunsRecoverUnconfirmed(ctx context.Context, taskType string) (int, error) {
	if err := batch.TaskType(taskType); err != nil {
		return 0, err
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `WITH gone AS (
				DELETE FROM task_run r USING task t
				WHERE t.id = r.task AND t.type = $1 AND r.confirmed IS NULL AND r.status = 'scheduled'
				RETURNING r.task),
			released AS (
				UPDATE task t SET status = 'next_run_not_scheduled'
				WHERE t.id IN (SELECT task FROM gone) AND t.status = 'next_run_scheduled')
			SELECT count(*) FROM gone`, taskType).Scan(&n)
	})
	return n, translate(wrap(err, "recover unconfirmed task runs of %s", taskType))
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
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if run, err = lockRun(ctx, tx, backendID); err != nil || run.Status != revisit.RunScheduled {
			return err
		}
		run.Status, run.Started = revisit.RunStarted, revisit.MicrosecondPtr(&started)
		run.Metadata = revisit.MergeMetadata(run.Metadata, metadata)
		if run.Confirmed == nil {
			run.Confirmed = run.Started
		}
		_, err = tx.Exec(ctx, "UPDATE task_run SET status = $2, started = $3, confirmed = $4, metadata = $5 WHERE id = $1",
			run.ID, run.Status, run.Started, run.Confirmed, run.Metadata)
		return err
	})
	return run, translate(wrap(err, "start task run %s", backendID))
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
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if run, err = lockRun(ctx, tx, e.BackendID); err != nil || run.Status.Final() {
			return err
		}
		run, err = endRun(ctx, tx, run, e)
		return err
	})
	return run, translate(wrap(err, "end task run %s", e.BackendID))
}

// lockRun reads and locks the run of a backend id.
func lockRun(ctx context.Context, tx pgx.Tx, backendID string) (revisit.TaskRun, error) {
	rows, _ := tx.Query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE backend_id = $1 FOR UPDATE", backendID)
	run, err := pgx.CollectExactlyOneRow(rows, scanTaskRun)
	if err == pgx.ErrNoRows {
		return run, &revisit.Error{Code: revisit.CodeNotFound, Field: "backend_id",
			Message: fmt.Sprintf("no task run with backend id %q", backendID)}
	}
	return run, err
}

// endRun ends a locked run in flight and updates its task by the
// end-of-run rules.
func endRun(ctx context.Context, tx pgx.Tx, run revisit.TaskRun, e revisit.TaskRunEnd) (revisit.TaskRun, error) {
	rows, _ := tx.Query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE id = $1 FOR UPDATE", run.TaskID)
	task, err := pgx.CollectExactlyOneRow(rows, scanTask)
	if err != nil {
		return run, err
	}
	rows, _ = tx.Query(ctx, "SELECT "+taskTypeColumns+" FROM task_type WHERE type = $1", task.Type)
	tt, err := pgx.CollectExactlyOneRow(rows, scanTaskType)
	if err != nil {
		return run, err
	}
	run = revisit.EndTaskRun(run, e)
	if _, err := tx.Exec(ctx, "UPDATE task_run SET status = $2, ended = $3, metadata = $4 WHERE id = $1",
		run.ID, run.Status, run.Ended, run.Metadata); err != nil {
		return run, err
	}
	task = revisit.EndRun(task, tt, run.Status, *run.Ended)
	_, err = tx.Exec(ctx, "UPDATE task SET status = $2, next_run = $3, current_interval = $4, retries_left = $5 WHERE id = $1",
		task.ID, task.Status, task.NextRun, interval(task.CurrentInterval), task.RetriesLeft)
	return run, err
}

// TaskRunsGet returns the runs of tasks, by task and run id.
func (s *Store) TaskRunsGet(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error) {
	rows, _ := s.pool.Query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE task = ANY($1) ORDER BY task, id", taskIDs)
	runs, err := pgx.CollectRows(rows, scanTaskRun)
	if err != nil {
		return nil, translate(wrap(err, "get task runs"))
	}
	return runs, nil
}

// TaskRunsEndWedged ends as lost the runs silent beyond their type's
// timeout, a page per transaction; runs locked by a concurrent call are
// left to it.
func (s *Store) TaskRunsEndWedged(ctx context.Context, now time.Time) ([]revisit.TaskRun, error) {
	if now.IsZero() {
		now = s.now()
	}
	now = revisit.Microsecond(now)
	ended := []revisit.TaskRun{}
	for {
		var page []revisit.TaskRun
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			page = page[:0]
			rows, _ := tx.Query(ctx, "SELECT "+prefixed("r.", tasksql.RunColumns)+` FROM task_run r
				JOIN task t ON t.id = r.task JOIN task_type tt ON tt.type = t.type
				WHERE r.status IN ('scheduled', 'started')
				AND coalesce(r.started, r.scheduled) + coalesce(tt.run_timeout, $2) < $1
				ORDER BY r.id LIMIT $3 FOR UPDATE OF r SKIP LOCKED`,
				now, interval(revisit.DefaultRunTimeout), tasksql.WedgedPage)
			runs, err := pgx.CollectRows(rows, scanTaskRun)
			if err != nil {
				return err
			}
			for _, r := range runs {
				r, err = endRun(ctx, tx, r, revisit.TaskRunEnd{BackendID: r.BackendID, Status: revisit.RunLost, Ended: now})
				if err != nil {
					return err
				}
				page = append(page, r)
			}
			return nil
		})
		if err != nil {
			return ended, translate(wrap(err, "end wedged task runs"))
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
	rows, _ := s.pool.Query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE ended < $1 AND id > $2 ORDER BY id LIMIT $3",
		f.Before, after, limit+1)
	runs, err := pgx.CollectRows(rows, scanTaskRun)
	if err != nil {
		return revisit.TaskRunPage{}, translate(wrap(err, "archivable task runs"))
	}
	return batch.TaskRunPage(runs, limit), nil
}

// TaskRunsDelete deletes ended runs.
func (s *Store) TaskRunsDelete(ctx context.Context, ids []int64) (int, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM task_run WHERE id = ANY($1) AND ended IS NOT NULL", ids)
	if err != nil {
		return 0, translate(wrap(err, "delete task runs"))
	}
	return int(tag.RowsAffected()), nil
}

// TasksArchivable returns a page of the finished oneshot tasks older than
// f.Before.
func (s *Store) TasksArchivable(ctx context.Context, f revisit.ArchiveFilter) (revisit.TaskPage, error) {
	limit, after, err := archivePage(f)
	if err != nil {
		return revisit.TaskPage{}, err
	}
	rows, _ := s.pool.Query(ctx, "SELECT "+tasksql.Columns+` FROM task t
		WHERE policy = 'oneshot' AND status IN ('completed', 'disabled') AND next_run < $1 AND id > $2
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id AND (r.ended IS NULL OR r.ended >= $1))
		ORDER BY id LIMIT $3`, f.Before, after, limit+1)
	ts, err := pgx.CollectRows(rows, scanTask)
	if err != nil {
		return revisit.TaskPage{}, translate(wrap(err, "archivable tasks"))
	}
	return batch.TaskPage(ts, limit), nil
}

// TasksDelete deletes finished oneshot tasks without runs.
func (s *Store) TasksDelete(ctx context.Context, ids []int64) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM task t WHERE id = ANY($1)
		AND policy = 'oneshot' AND status IN ('completed', 'disabled')
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id)`, ids)
	if err != nil {
		return 0, translate(wrap(err, "delete tasks"))
	}
	return int(tag.RowsAffected()), nil
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

func nullPriority(p revisit.TaskPriority) pgtype.Text {
	return pgtype.Text{String: string(p), Valid: p != revisit.PriorityNone}
}

func scanTask(row pgx.CollectableRow) (revisit.Task, error) {
	var (
		t        revisit.Task
		args     []byte
		iv       pgtype.Interval
		priority pgtype.Text
		status   string
		policy   string
	)
	if err := row.Scan(&t.ID, &t.Type, &args, &t.NextRun, &iv, &status, &policy, &t.RetriesLeft, &priority); err != nil {
		return t, err
	}
	t.NextRun, t.CurrentInterval = t.NextRun.UTC(), duration(iv)
	t.Status, t.Policy, t.Priority = revisit.TaskStatus(status), revisit.TaskPolicy(policy), revisit.TaskPriority(priority.String)
	var err error
	t.Arguments, err = batch.DecodeArguments(args)
	return t, err
}

func scanTaskRun(row pgx.CollectableRow) (revisit.TaskRun, error) {
	var (
		r        revisit.TaskRun
		metadata []byte
		status   string
	)
	if err := row.Scan(&r.ID, &r.TaskID, &r.BackendID, &r.Scheduled, &r.Confirmed, &r.Started, &r.Ended, &metadata, &status); err != nil {
		return r, err
	}
	r.Scheduled, r.Confirmed, r.Started, r.Ended = utcPtr(r.Scheduled), utcPtr(r.Confirmed), utcPtr(r.Started), utcPtr(r.Ended)
	r.Status = revisit.TaskRunStatus(status)
	var err error
	r.Metadata, err = batch.DecodeMetadata(metadata)
	return r, err
}

// TasksCreateUnlessWaiting creates tasks as Software Heritage's
// create_tasks does (store.TaskStore). The advisory locks of TasksCreate
// make concurrent calls take turns.
func (s *Store) TasksCreateUnlessWaiting(ctx context.Context, tasks []revisit.NewTask) ([]revisit.Task, error) {
	if len(tasks) == 0 {
		return []revisit.Task{}, nil
	}
	var out []revisit.Task
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ts, args, err := newTasksLocked(ctx, tx, tasks)
		if err != nil {
			return err
		}
		out, err = batch.CreateUnlessWaiting(ts, func(i int, sameNextRun bool) ([]revisit.Task, error) {
			t := ts[i]
			rows, _ := tx.Query(ctx, "SELECT "+tasksql.Columns+` FROM task WHERE type = $1 AND status = $7
				AND md5(arguments::text) = md5($2::jsonb::text) AND arguments = $2::jsonb
				AND policy = $3 AND priority IS NOT DISTINCT FROM $4
				AND (CASE WHEN $6 OR policy = 'oneshot' THEN next_run = $5 ELSE true END)
				ORDER BY id`, t.Type, string(args[i]), t.Policy, nullPriority(t.Priority), t.NextRun, sameNextRun, t.Status)
			return pgx.CollectRows(rows, scanTask)
		}, func(i int) error {
			t := ts[i]
			_, err := tx.Exec(ctx, `INSERT INTO task (type, arguments, next_run, current_interval, status, policy, retries_left, priority)
				VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8)`,
				t.Type, string(args[i]), t.NextRun, interval(t.CurrentInterval), t.Status, t.Policy, t.RetriesLeft, nullPriority(t.Priority))
			return err
		})
		return err
	})
	if err != nil {
		return nil, translate(wrap(err, "create %d tasks", len(tasks)))
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
	rows, _ := s.pool.Query(ctx, "SELECT "+tasksql.RunColumnsOf("r")+` FROM task_run r JOIN task t ON t.id = r.task
		WHERE `+tasksql.Archived+` AND (r.task, r.id) > ($3, $4)
		AND coalesce(r.started, r.scheduled) >= $1 AND coalesce(r.started, r.scheduled) < $2
		ORDER BY r.task, r.id LIMIT $5`, f.After, f.Before, task, run, limit+1)
	runs, err := pgx.CollectRows(rows, scanTaskRun)
	if err != nil {
		return revisit.TaskRunPage{}, translate(wrap(err, "task runs to archive"))
	}
	return batch.TaskArchiveRuns(runs, limit), nil
}

// TasksDeleteArchived deletes archived runs, then their tasks left without
// runs (store.TaskStore).
func (s *Store) TasksDeleteArchived(ctx context.Context, taskIDs, runIDs []int64) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM task_run WHERE id = ANY($1)", runIDs); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM task t WHERE id = ANY($1) AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id)", taskIDs)
		return err
	})
	return translate(wrap(err, "delete archived tasks"))
}

// TasksImport writes tasks as they are, ids included, and moves the id
// sequence past them (store.TaskStore).
func (s *Store) TasksImport(ctx context.Context, ts []revisit.Task) error {
	args, err := batch.ImportedTasks(ts)
	if err != nil || len(ts) == 0 {
		return err
	}
	n := len(ts)
	var (
		ids, retries       = make([]int64, n), make([]int64, n)
		types, jsons       = make([]string, n), make([]string, n)
		statuses, policies = make([]string, n), make([]string, n)
		nextRuns           = make([]time.Time, n)
		intervals          = make([]pgtype.Interval, n)
		priorities         = make([]pgtype.Text, n)
	)
	for i, t := range ts {
		ids[i], types[i], jsons[i], nextRuns[i] = t.ID, t.Type, string(args[i]), revisit.Microsecond(t.NextRun)
		intervals[i], statuses[i], policies[i] = interval(t.CurrentInterval), string(t.Status), string(t.Policy)
		retries[i], priorities[i] = int64(t.RetriesLeft), nullPriority(t.Priority)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		known, err := taskTypesIn(ctx, tx, batch.TypesOfTasks(ts))
		if err != nil {
			return err
		}
		if err := batch.UnknownTaskType(ts, known); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO task (id, type, arguments, next_run, current_interval, status, policy, retries_left, priority)
			OVERRIDING SYSTEM VALUE
			SELECT * FROM unnest($1::bigint[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::interval[], $6::text[],
				$7::text[], $8::bigint[], $9::text[])
			ON CONFLICT (id) DO UPDATE SET type = EXCLUDED.type, arguments = EXCLUDED.arguments, next_run = EXCLUDED.next_run,
				current_interval = EXCLUDED.current_interval, status = EXCLUDED.status, policy = EXCLUDED.policy,
				retries_left = EXCLUDED.retries_left, priority = EXCLUDED.priority`,
			ids, types, jsons, nextRuns, intervals, statuses, policies, retries, priorities); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SELECT setval(pg_get_serial_sequence('task', 'id'), (SELECT max(id) FROM task))")
		return err
	})
	return translate(wrap(err, "import %d tasks", n))
}

// TaskRunsImport writes task runs as they are, ids included, and moves the
// id sequence past them (store.TaskStore).
func (s *Store) TaskRunsImport(ctx context.Context, runs []revisit.TaskRun) error {
	metadata, err := batch.ImportedRuns(runs)
	if err != nil || len(runs) == 0 {
		return err
	}
	n := len(runs)
	var (
		ids, tasks                           = make([]int64, n), make([]int64, n)
		backendIDs, jsons, statuses          = make([]string, n), make([]string, n), make([]string, n)
		scheduled, confirmed, started, ended = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	)
	for i, r := range runs {
		ids[i], tasks[i], backendIDs[i], jsons[i], statuses[i] = r.ID, r.TaskID, r.BackendID, string(metadata[i]), string(r.Status)
		scheduled[i], started[i], ended[i] = revisit.MicrosecondPtr(r.Scheduled), revisit.MicrosecondPtr(r.Started), revisit.MicrosecondPtr(r.Ended)
		confirmed[i] = cmp.Or(revisit.MicrosecondPtr(r.Confirmed), scheduled[i], started[i])
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "SELECT id FROM task WHERE id = ANY($1)", tasks)
		found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if err := batch.MissingTask(runs, found); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, "SELECT id, backend_id FROM task_run WHERE backend_id = ANY($1)", backendIDs)
		taken, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
			ID        int64
			BackendID string
		}])
		if err != nil {
			return err
		}
		for _, t := range taken {
			if i := slices.Index(backendIDs, t.BackendID); ids[i] != t.ID {
				return batch.BackendIDTaken(i, runs[i])
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO task_run (id, task, backend_id, scheduled, confirmed, started, ended, metadata, status)
			OVERRIDING SYSTEM VALUE
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[],
				$6::timestamptz[], $7::timestamptz[], $8::jsonb[], $9::text[])
			ON CONFLICT (id) DO UPDATE SET task = EXCLUDED.task, backend_id = EXCLUDED.backend_id,
				scheduled = EXCLUDED.scheduled, confirmed = EXCLUDED.confirmed, started = EXCLUDED.started,
				ended = EXCLUDED.ended, metadata = EXCLUDED.metadata, status = EXCLUDED.status`,
			ids, tasks, backendIDs, scheduled, confirmed, started, ended, jsons, statuses); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "SELECT setval(pg_get_serial_sequence('task_run', 'id'), (SELECT max(id) FROM task_run))")
		return err
	})
	return translate(wrap(err, "import %d task runs", n))
}
