package sqlite

import (
	"context"
	"database/sql"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/wake"
)

const taskTypeColumns = "type, description, backend_name, default_interval, min_interval, max_interval, " +
	"backoff_factor, max_queue_length, num_retries, retry_delay, run_timeout"

// TaskTypeCreate stores a new task type; ErrConflict if it exists.
func (s *Store) TaskTypeCreate(ctx context.Context, t revisit.TaskType) error {
	if err := t.Validate(); err != nil {
		return err
	}
	err := s.write(ctx, "create task type "+t.Type, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO task_type ("+taskTypeColumns+
			") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", taskTypeArgs(t)...)
		return err
	})
	return s.notified(err, wake.OfTaskType(t))
}

// TaskTypeUpdate replaces an existing task type; ErrNotFound if absent.
func (s *Store) TaskTypeUpdate(ctx context.Context, t revisit.TaskType) error {
	if err := t.Validate(); err != nil {
		return err
	}
	err := s.write(ctx, "update task type "+t.Type, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE task_type SET description = ?2, backend_name = ?3,
			default_interval = ?4, min_interval = ?5, max_interval = ?6, backoff_factor = ?7,
			max_queue_length = ?8, num_retries = ?9, retry_delay = ?10, run_timeout = ?11 WHERE type = ?1`, taskTypeArgs(t)...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound("task type %q not found", t.Type)
		}
		return nil
	})
	return s.notified(err, wake.OfTaskType(t))
}

// TaskTypeGet returns one task type; ErrNotFound if absent.
func (s *Store) TaskTypeGet(ctx context.Context, name string) (revisit.TaskType, error) {
	ts, err := s.taskTypes(ctx, "get task type", " WHERE type = ?", name)
	if err != nil {
		return revisit.TaskType{}, err
	}
	if len(ts) == 0 {
		return revisit.TaskType{}, notFound("task type %q not found", name)
	}
	return ts[0], nil
}

// TaskTypeList returns every task type, by name.
func (s *Store) TaskTypeList(ctx context.Context) ([]revisit.TaskType, error) {
	return s.taskTypes(ctx, "list task types", "")
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

// taskTypes reads the task types that where (with args) selects, by name.
func (s *Store) taskTypes(ctx context.Context, op, where string, args ...any) ([]revisit.TaskType, error) {
	ts, err := query(ctx, s, scanTaskTypes, "SELECT "+taskTypeColumns+" FROM task_type"+where+" ORDER BY type", args...)
	return ts, translate(op, err)
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
