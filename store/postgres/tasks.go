package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
	"github.com/revisit-sched/revisit/store/internal/tasksql"
)

// TaskTypesLock takes the transaction-scoped advisory lock of each task
// type, in the order given (front.TaskStatements).
func (x statements) TaskTypesLock(ctx context.Context, names []string) error {
	for _, n := range names {
		if _, err := x.q.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('revisit.task.' || $1, 0))", n); err != nil {
			return err
		}
	}
	return nil
}

// TasksActiveLike reads the first active task like t
// (front.TaskStatements).
func (x statements) TasksActiveLike(ctx context.Context, t revisit.Task, args []byte) ([]revisit.Task, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE type = $1 AND "+tasksql.Active+
		` AND md5(arguments::text) = md5($2::jsonb::text) AND arguments = $2::jsonb
		AND policy = $3 AND priority IS NOT DISTINCT FROM $4 AND (policy = 'recurring' OR next_run = $5)
		ORDER BY id LIMIT 1`, t.Type, string(args), t.Policy, nullPriority(t.Priority), t.NextRun)
	return pgx.CollectRows(rows, scanTask)
}

// TasksIdentical reads the tasks identical to t (front.TaskStatements).
func (x statements) TasksIdentical(ctx context.Context, t revisit.Task, args []byte, sameNextRun bool) ([]revisit.Task, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Columns+` FROM task WHERE type = $1 AND status = $7
		AND md5(arguments::text) = md5($2::jsonb::text) AND arguments = $2::jsonb
		AND policy = $3 AND priority IS NOT DISTINCT FROM $4
		AND (CASE WHEN $6 OR policy = 'oneshot' THEN next_run = $5 ELSE true END)
		ORDER BY id`, t.Type, string(args), t.Policy, nullPriority(t.Priority), t.NextRun, sameNextRun, t.Status)
	return pgx.CollectRows(rows, scanTask)
}

// TaskInsert stores a new task (front.TaskStatements).
func (x statements) TaskInsert(ctx context.Context, t revisit.Task, args []byte) (revisit.Task, error) {
	rows, _ := x.q.Query(ctx, `INSERT INTO task (type, arguments, next_run, current_interval, status, policy, retries_left, priority)
		VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8) RETURNING `+tasksql.Columns,
		t.Type, string(args), t.NextRun, interval(t.CurrentInterval), t.Status, t.Policy, t.RetriesLeft, nullPriority(t.Priority))
	return pgx.CollectExactlyOneRow(rows, scanTask)
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

// TasksSearch reads one page of the tasks f selects (front.TaskStatements).
func (x statements) TasksSearch(ctx context.Context, f revisit.TaskFilter) ([]revisit.Task, int, error) {
	q, args, limit, err := taskDialect.Search(f)
	if err != nil {
		return nil, 0, err
	}
	rows, _ := x.q.Query(ctx, q, args...)
	ts, err := pgx.CollectRows(rows, scanTask)
	return ts, limit, err
}

// TasksSetStatusOf sets the status of tasks (front.TaskStatements).
func (x statements) TasksSetStatusOf(ctx context.Context, ids []int64, status revisit.TaskStatus) ([]int64, error) {
	rows, _ := x.q.Query(ctx, "UPDATE task SET status = $2 WHERE id = ANY($1) RETURNING id", ids, status)
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// TasksRespawnOf makes tasks due again (front.TaskStatements).
func (x statements) TasksRespawnOf(ctx context.Context, ids []int64, nextRun *time.Time) ([]int64, error) {
	rows, _ := x.q.Query(ctx, `UPDATE task t SET status = 'next_run_not_scheduled',
		next_run = coalesce($2, t.next_run), retries_left = coalesce(tt.num_retries, 0)
		FROM task_type tt WHERE tt.type = t.type AND t.id = ANY($1) RETURNING t.id`, ids, nextRun)
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// TasksUpdateStatusOf applies u in one statement (front.TaskStatements).
func (x statements) TasksUpdateStatusOf(ctx context.Context, u revisit.TaskStatusUpdate) (int, error) {
	tag, err := x.q.Exec(ctx, `UPDATE task SET status = $2, next_run = coalesce($3, next_run)
		WHERE id = ANY($1) AND NOT ($4 AND status = 'completed')`, u.IDs, u.Status, u.NextRun, u.ExceptCompleted)
	return int(tag.RowsAffected()), err
}

// TasksReady reads the tasks due (front.TaskStatements).
func (x statements) TasksReady(ctx context.Context, p revisit.ReadyTasksParams, now time.Time) ([]revisit.Task, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE "+taskDialect.Ready(p), taskDialect.ReadyArgs(p, now)...)
	return pgx.CollectRows(rows, scanTask)
}

// TasksGrab marks the tasks due scheduled; rows locked by a concurrent
// grab are skipped (front.TaskStatements).
func (x statements) TasksGrab(ctx context.Context, p revisit.ReadyTasksParams, now time.Time) ([]revisit.Task, error) {
	rows, _ := x.q.Query(ctx, `WITH picked AS (SELECT id FROM task WHERE `+taskDialect.Ready(p)+` FOR UPDATE SKIP LOCKED)
		UPDATE task t SET status = 'next_run_scheduled' FROM picked WHERE t.id = picked.id
		RETURNING `+tasksql.Qualified("t", tasksql.Columns), taskDialect.ReadyArgs(p, now)...)
	return pgx.CollectRows(rows, scanTask)
}

// TasksMarkScheduledOf marks scheduled the tasks of unfinished runs
// (front.TaskStatements). The runs are share-locked first, so that an end
// event committing meanwhile is seen and its task left alone.
func (x statements) TasksMarkScheduledOf(ctx context.Context, backendIDs []string) (int, error) {
	tag, err := x.q.Exec(ctx, `WITH r AS (SELECT task FROM task_run WHERE backend_id = ANY($1) AND ended IS NULL FOR SHARE)
		UPDATE task t SET status = 'next_run_scheduled' FROM r
		WHERE t.id = r.task AND t.status = 'next_run_not_scheduled'`, backendIDs)
	return int(tag.RowsAffected()), err
}

// TaskLock reads and locks a task (front.TaskStatements).
func (x statements) TaskLock(ctx context.Context, id int64) (revisit.Task, bool, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Columns+" FROM task WHERE id = $1 FOR UPDATE", id)
	return one(rows, scanTask)
}

// TaskUpdateAfterRun writes what the end of a run changed of its task
// (front.TaskStatements).
func (x statements) TaskUpdateAfterRun(ctx context.Context, t revisit.Task) error {
	_, err := x.q.Exec(ctx, "UPDATE task SET status = $2, next_run = $3, current_interval = $4, retries_left = $5 WHERE id = $1",
		t.ID, t.Status, t.NextRun, interval(t.CurrentInterval), t.RetriesLeft)
	return err
}

// TasksExisting returns the ids that are tasks (front.TaskStatements).
func (x statements) TasksExisting(ctx context.Context, ids []int64) ([]int64, error) {
	rows, _ := x.q.Query(ctx, "SELECT id FROM task WHERE id = ANY($1)", ids)
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// TasksArchivableAfter reads a page of the finished oneshot tasks older
// than before (front.TaskStatements).
func (x statements) TasksArchivableAfter(ctx context.Context, before time.Time, after int64, n int) ([]revisit.Task, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Columns+` FROM task t
		WHERE policy = 'oneshot' AND status IN ('completed', 'disabled') AND next_run < $1 AND id > $2
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id AND (r.ended IS NULL OR r.ended >= $1))
		ORDER BY id LIMIT $3`, before, after, n)
	return pgx.CollectRows(rows, scanTask)
}

// TasksDeleteFinished deletes finished oneshot tasks without runs
// (front.TaskStatements).
func (x statements) TasksDeleteFinished(ctx context.Context, ids []int64) (int, error) {
	tag, err := x.q.Exec(ctx, `DELETE FROM task t WHERE id = ANY($1)
		AND policy = 'oneshot' AND status IN ('completed', 'disabled')
		AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id)`, ids)
	return int(tag.RowsAffected()), err
}

// TasksDeleteArchivedOf deletes archived runs, then their tasks left
// without runs (front.TaskStatements).
func (x statements) TasksDeleteArchivedOf(ctx context.Context, taskIDs, runIDs []int64) error {
	if _, err := x.q.Exec(ctx, "DELETE FROM task_run WHERE id = ANY($1)", runIDs); err != nil {
		return err
	}
	_, err := x.q.Exec(ctx, "DELETE FROM task t WHERE id = ANY($1) AND NOT EXISTS (SELECT 1 FROM task_run r WHERE r.task = t.id)", taskIDs)
	return err
}

// TasksWrite writes tasks as they are in one statement, and moves the id
// sequence past them (front.TaskStatements).
func (x statements) TasksWrite(ctx context.Context, ts []revisit.Task, args [][]byte) error {
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
	if _, err := x.q.Exec(ctx, `INSERT INTO task (id, type, arguments, next_run, current_interval, status, policy, retries_left, priority)
		OVERRIDING SYSTEM VALUE
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::interval[], $6::text[],
			$7::text[], $8::bigint[], $9::text[])
		ON CONFLICT (id) DO UPDATE SET type = EXCLUDED.type, arguments = EXCLUDED.arguments, next_run = EXCLUDED.next_run,
			current_interval = EXCLUDED.current_interval, status = EXCLUDED.status, policy = EXCLUDED.policy,
			retries_left = EXCLUDED.retries_left, priority = EXCLUDED.priority`,
		ids, types, jsons, nextRuns, intervals, statuses, policies, retries, priorities); err != nil {
		return err
	}
	_, err := x.q.Exec(ctx, "SELECT setval(pg_get_serial_sequence('task', 'id'), (SELECT max(id) FROM task))")
	return err
}

// TaskRunsInsert records runs in one statement (front.TaskRunStatements).
func (x statements) TaskRunsInsert(ctx context.Context, runs []revisit.TaskRun, metadata [][]byte) ([]revisit.TaskRun, error) {
	n := len(runs)
	taskIDs, backendIDs, jsons := make([]int64, n), make([]string, n), make([]string, n)
	scheduled, confirmed := make([]*time.Time, n), make([]*time.Time, n)
	for i, r := range runs {
		taskIDs[i], backendIDs[i], jsons[i] = r.TaskID, r.BackendID, string(metadata[i])
		scheduled[i], confirmed[i] = r.Scheduled, r.Confirmed
	}
	rows, _ := x.q.Query(ctx, `INSERT INTO task_run (task, backend_id, scheduled, confirmed, metadata, status)
		SELECT task, backend_id, scheduled, confirmed, metadata, 'scheduled'
		FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::jsonb[])
			AS u(task, backend_id, scheduled, confirmed, metadata)
		RETURNING `+tasksql.RunColumns, taskIDs, backendIDs, scheduled, confirmed, jsons)
	got, err := pgx.CollectRows(rows, scanTaskRun)
	if err != nil {
		return nil, err
	}
	out := make([]revisit.TaskRun, n)
	for _, r := range got {
		out[slices.Index(backendIDs, r.BackendID)] = r
	}
	return out, nil
}

// BackendIDsRecorded returns the runs holding backend ids
// (front.TaskRunStatements).
func (x statements) BackendIDsRecorded(ctx context.Context, ids []string) (map[string]int64, error) {
	rows, _ := x.q.Query(ctx, "SELECT backend_id, id FROM task_run WHERE backend_id = ANY($1)", ids)
	return pairs[string, int64](rows)
}

// TaskRunsConfirmOf confirms unconfirmed runs (front.TaskRunStatements).
func (x statements) TaskRunsConfirmOf(ctx context.Context, backendIDs []string, at time.Time) (int, error) {
	tag, err := x.q.Exec(ctx, "UPDATE task_run SET confirmed = $2 WHERE backend_id = ANY($1) AND confirmed IS NULL",
		backendIDs, at)
	return int(tag.RowsAffected()), err
}

// TaskRunsDeleteUnconfirmed deletes a type's unconfirmed runs still
// scheduled and releases their tasks, in one statement
// (front.TaskRunStatements). The runs are locked as they are deleted, so
// that a start or end event committing meanwhile is seen: its run is then
// kept, its task left alone.
func (x statements) TaskRunsDeleteUnconfirmed(ctx context.Context, taskType string) (int, error) {
	var n int
	err := x.q.QueryRow(ctx, `WITH gone AS (
			DELETE FROM task_run r USING task t
			WHERE t.id = r.task AND t.type = $1 AND r.confirmed IS NULL AND r.status = 'scheduled'
			RETURNING r.task),
		released AS (
			UPDATE task t SET status = 'next_run_not_scheduled'
			WHERE t.id IN (SELECT task FROM gone) AND t.status = 'next_run_scheduled')
		SELECT count(*) FROM gone`, taskType).Scan(&n)
	return n, err
}

// TaskRunLock reads and locks a run (front.TaskRunStatements).
func (x statements) TaskRunLock(ctx context.Context, backendID string) (revisit.TaskRun, bool, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE backend_id = $1 FOR UPDATE", backendID)
	return one(rows, scanTaskRun)
}

// TaskRunStarted writes a run's start (front.TaskRunStatements).
func (x statements) TaskRunStarted(ctx context.Context, r revisit.TaskRun) error {
	_, err := x.q.Exec(ctx, "UPDATE task_run SET status = $2, started = $3, confirmed = $4, metadata = $5 WHERE id = $1",
		r.ID, r.Status, r.Started, r.Confirmed, r.Metadata)
	return err
}

// TaskRunEnded writes a run's end (front.TaskRunStatements).
func (x statements) TaskRunEnded(ctx context.Context, r revisit.TaskRun) error {
	_, err := x.q.Exec(ctx, "UPDATE task_run SET status = $2, ended = $3, metadata = $4 WHERE id = $1",
		r.ID, r.Status, r.Ended, r.Metadata)
	return err
}

// TaskRunsOf reads the runs of tasks (front.TaskRunStatements).
func (x statements) TaskRunsOf(ctx context.Context, taskIDs []int64) ([]revisit.TaskRun, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE task = ANY($1) ORDER BY task, id", taskIDs)
	return pgx.CollectRows(rows, scanTaskRun)
}

// TaskRunsWedged reads and locks a page of wedged runs; runs locked by a
// concurrent call are left to it (front.TaskRunStatements).
func (x statements) TaskRunsWedged(ctx context.Context, now time.Time, n int) ([]revisit.TaskRun, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Qualified("r", tasksql.RunColumns)+` FROM task_run r
		JOIN task t ON t.id = r.task JOIN task_type tt ON tt.type = t.type
		WHERE r.status IN ('scheduled', 'started')
		AND coalesce(r.started, r.scheduled) + coalesce(tt.run_timeout, $2) < $1
		ORDER BY r.id LIMIT $3 FOR UPDATE OF r SKIP LOCKED`,
		now, interval(revisit.DefaultRunTimeout), n)
	return pgx.CollectRows(rows, scanTaskRun)
}

// TaskRunsEndedAfter reads a page of the runs ended before before
// (front.TaskRunStatements).
func (x statements) TaskRunsEndedAfter(ctx context.Context, before time.Time, after int64, n int) ([]revisit.TaskRun, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.RunColumns+" FROM task_run WHERE ended < $1 AND id > $2 ORDER BY id LIMIT $3",
		before, after, n)
	return pgx.CollectRows(rows, scanTaskRun)
}

// TaskRunsDeleteEnded deletes ended runs (front.TaskRunStatements).
func (x statements) TaskRunsDeleteEnded(ctx context.Context, ids []int64) (int, error) {
	tag, err := x.q.Exec(ctx, "DELETE FROM task_run WHERE id = ANY($1) AND ended IS NOT NULL", ids)
	return int(tag.RowsAffected()), err
}

// TaskRunsOfArchived reads a page of the runs of archived tasks
// (front.TaskRunStatements).
func (x statements) TaskRunsOfArchived(ctx context.Context, f revisit.TaskArchiveFilter, task, run int64, n int) ([]revisit.TaskRun, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+tasksql.Qualified("r", tasksql.RunColumns)+` FROM task_run r JOIN task t ON t.id = r.task
		WHERE `+tasksql.Archived+` AND (r.task, r.id) > ($3, $4)
		AND coalesce(r.started, r.scheduled) >= $1 AND coalesce(r.started, r.scheduled) < $2
		ORDER BY r.task, r.id LIMIT $5`, f.After, f.Before, task, run, n)
	return pgx.CollectRows(rows, scanTaskRun)
}

// TaskRunsWrite writes runs as they are in one statement, and moves the
// id sequence past them (front.TaskRunStatements).
func (x statements) TaskRunsWrite(ctx context.Context, runs []revisit.TaskRun, metadata [][]byte) error {
	n := len(runs)
	var (
		ids, tasks                           = make([]int64, n), make([]int64, n)
		backendIDs, jsons, statuses          = make([]string, n), make([]string, n), make([]string, n)
		scheduled, confirmed, started, ended = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	)
	for i, r := range runs {
		ids[i], tasks[i], backendIDs[i], jsons[i], statuses[i] = r.ID, r.TaskID, r.BackendID, string(metadata[i]), string(r.Status)
		scheduled[i], confirmed[i], started[i], ended[i] = r.Scheduled, r.Confirmed, r.Started, r.Ended
	}
	if _, err := x.q.Exec(ctx, `INSERT INTO task_run (id, task, backend_id, scheduled, confirmed, started, ended, metadata, status)
		OVERRIDING SYSTEM VALUE
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[],
			$6::timestamptz[], $7::timestamptz[], $8::jsonb[], $9::text[])
		ON CONFLICT (id) DO UPDATE SET task = EXCLUDED.task, backend_id = EXCLUDED.backend_id,
			scheduled = EXCLUDED.scheduled, confirmed = EXCLUDED.confirmed, started = EXCLUDED.started,
			ended = EXCLUDED.ended, metadata = EXCLUDED.metadata, status = EXCLUDED.status`,
		ids, tasks, backendIDs, scheduled, confirmed, started, ended, jsons, statuses); err != nil {
		return err
	}
	_, err := x.q.Exec(ctx, "SELECT setval(pg_get_serial_sequence('task_run', 'id'), (SELECT max(id) FROM task_run))")
	return err
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
