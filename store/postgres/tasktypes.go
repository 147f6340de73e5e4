package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
)

const taskTypeColumns = "type, description, backend_name, default_interval, min_interval, max_interval, " +
	"backoff_factor, max_queue_length, num_retries, retry_delay, run_timeout"

// TaskTypeInsert stores t unless a task type of its name exists
// (front.TaskTypeStatements).
func (x statements) TaskTypeInsert(ctx context.Context, t revisit.TaskType) (bool, error) {
	tag, err := x.q.Exec(ctx, "INSERT INTO task_type ("+taskTypeColumns+") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) "+
		"ON CONFLICT (type) DO NOTHING", taskTypeArgs(t)...)
	return tag.RowsAffected() > 0, err
}

// TaskTypeReplace replaces the task type of t's name
// (front.TaskTypeStatements).
func (x statements) TaskTypeReplace(ctx context.Context, t revisit.TaskType) (bool, error) {
	tag, err := x.q.Exec(ctx, "UPDATE task_type SET ("+taskTypeColumns+") = ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) WHERE type = $1",
		taskTypeArgs(t)...)
	return tag.RowsAffected() > 0, err
}

// TaskTypesNamed reads the task types of those names
// (front.TaskTypeStatements).
func (x statements) TaskTypesNamed(ctx context.Context, names []string) ([]revisit.TaskType, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+taskTypeColumns+" FROM task_type WHERE type = ANY($1) ORDER BY type", names)
	return pgx.CollectRows(rows, scanTaskType)
}

// TaskTypesAll reads every task type (front.TaskTypeStatements).
func (x statements) TaskTypesAll(ctx context.Context) ([]revisit.TaskType, error) {
	rows, _ := x.q.Query(ctx, "SELECT "+taskTypeColumns+" FROM task_type ORDER BY type")
	return pgx.CollectRows(rows, scanTaskType)
}

func taskTypeArgs(t revisit.TaskType) []any {
	maxQueue := pgtype.Int8{Int64: int64(t.MaxQueueLength), Valid: t.MaxQueueLength != 0}
	return []any{t.Type, t.Description, t.BackendName, interval(t.DefaultInterval), interval(t.MinInterval),
		interval(t.MaxInterval), nullFloat(t.BackoffFactor), maxQueue, t.NumRetries, interval(t.RetryDelay),
		interval(t.RunTimeout)}
}

func scanTaskType(row pgx.CollectableRow) (revisit.TaskType, error) {
	var (
		t                    revisit.TaskType
		def, lo, hi, retry   pgtype.Interval
		timeout              pgtype.Interval
		backoff              pgtype.Float8
		maxQueue, numRetries pgtype.Int8
	)
	err := row.Scan(&t.Type, &t.Description, &t.BackendName, &def, &lo, &hi, &backoff, &maxQueue, &numRetries, &retry, &timeout)
	t.DefaultInterval, t.MinInterval, t.MaxInterval, t.RetryDelay = duration(def), duration(lo), duration(hi), duration(retry)
	t.RunTimeout = duration(timeout)
	t.BackoffFactor = backoff.Float64
	t.MaxQueueLength, t.NumRetries = int(maxQueue.Int64), int(numRetries.Int64)
	return t, err
}

// interval encodes a duration, zero meaning null.
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Valid: d != 0}
}

// duration decodes an interval, months counting 30 days.
func duration(i pgtype.Interval) time.Duration {
	if !i.Valid {
		return 0
	}
	return time.Duration(i.Months)*30*24*time.Hour + time.Duration(i.Days)*24*time.Hour +
		time.Duration(i.Microseconds)*time.Microsecond
}

func nullFloat(f float64) pgtype.Float8 { return pgtype.Float8{Float64: f, Valid: f != 0} }

// wrap adds context to a non-nil error.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("postgres: "+format+": %w", append(args, err)...)
}
