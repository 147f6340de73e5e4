package sqlite

import (
	"context"
	"database/sql"

	"github.com/revisit-sched/revisit"
)

const taskTypeColumns = "type, description, backend_name, default_interval, min_interval, max_interval, " +
	"backoff_factor, max_queue_length, num_retries, retry_delay, run_timeout"

// TaskTypeInsert stores t unless a task type of its name exists
// (front.TaskTypeStatements).
func (x statements) TaskTypeInsert(ctx context.Context, t revisit.TaskType) (bool, error) {
	n, err := x.changed(ctx, "INSERT INTO task_type ("+taskTypeColumns+
		") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (type) DO NOTHING", taskTypeArgs(t)...)
	return n > 0, err
}

// TaskTypeReplace replaces the task type of t's name
// (front.TaskTypeStatements).
func (x statements) TaskTypeReplace(ctx context.Context, t revisit.TaskType) (bool, error) {
	n, err := x.changed(ctx, `UPDATE task_type SET description = ?2, backend_name = ?3,
		default_interval = ?4, min_interval = ?5, max_interval = ?6, backoff_factor = ?7,
		max_queue_length = ?8, num_retries = ?9, retry_delay = ?10, run_timeout = ?11 WHERE type = ?1`, taskTypeArgs(t)...)
	return n > 0, err
}

// TaskTypesNamed reads the task types of those names
// (front.TaskTypeStatements).
func (x statements) TaskTypesNamed(ctx context.Context, names []string) ([]revisit.TaskType, error) {
	return scanTaskTypes(x.query(ctx, "SELECT "+taskTypeColumns+
		" FROM task_type WHERE type IN (SELECT value FROM json_each(?)) ORDER BY type", jsonArray(names)))
}

// TaskTypesAll reads every task type (front.TaskTypeStatements).
func (x statements) TaskTypesAll(ctx context.Context) ([]revisit.TaskType, error) {
	return scanTaskTypes(x.query(ctx, "SELECT "+taskTypeColumns+" FROM task_type ORDER BY type"))
}

// taskTypeArgs are the bind values of t, in taskTypeColumns order. A zero
// MaxQueueLength is stored as null: none given.
func taskTypeArgs(t revisit.TaskType) []any {
	var mql any
	if t.MaxQueueLength != 0 {
		mql = t.MaxQueueLength
	}
	var backoff any
	if t.BackoffFactor != 0 {
		backoff = t.BackoffFactor
	}
	return []any{t.Type, t.Description, t.BackendName,
		durationOrNull(t.DefaultInterval), durationOrNull(t.MinInterval), durationOrNull(t.MaxInterval),
		backoff, mql, t.NumRetries, durationOrNull(t.RetryDelay), durationOrNull(t.RunTimeout)}
}

// scanTaskTypes reads and closes rows of taskTypeColumns.
func scanTaskTypes(rows *sql.Rows, err error) ([]revisit.TaskType, error) {
	return collect(rows, err, []revisit.TaskType{}, func(rows *sql.Rows) (revisit.TaskType, error) {
		var (
			t       revisit.TaskType
			backoff sql.NullFloat64
			mql     sql.NullInt64
			retries sql.NullInt64
		)
		err := rows.Scan(&t.Type, &t.Description, &t.BackendName,
			durationCol{&t.DefaultInterval}, durationCol{&t.MinInterval}, durationCol{&t.MaxInterval},
			&backoff, &mql, &retries, durationCol{&t.RetryDelay}, durationCol{&t.RunTimeout})
		t.BackoffFactor = backoff.Float64
		t.MaxQueueLength = int(mql.Int64)
		t.NumRetries = int(retries.Int64)
		return t, err
	})
}
