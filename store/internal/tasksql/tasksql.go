// Package tasksql renders the task search of both stores (TasksGet) for
// one SQL dialect, so that the two cannot disagree on what a filter means.
package tasksql

import (
	"strings"
	"time"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/batch"
)

// The SQL both stores share for tasks and task runs.
const (
	// Columns are the task columns the stores scan, in order.
	Columns = "id, type, arguments, next_run, current_interval, status, policy, retries_left, priority"
	// RunColumns are the task run columns the stores scan, in order.
	RunColumns = "id, task, backend_id, scheduled, confirmed, started, ended, metadata, status"
	// Archived selects, of a task t, those an archive takes: oneshot
	// tasks completed or disabled, recurring tasks disabled.
	Archived = "((t.policy = 'oneshot' AND t.status IN ('completed', 'disabled')) OR (t.policy = 'recurring' AND t.status = 'disabled'))"
	// Active selects the tasks that may still run.
	Active = "status IN ('next_run_not_scheduled', 'next_run_scheduled')"
	// PriorityRank orders priorities high, normal, low.
	PriorityRank = "(CASE priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END)"
	// WedgedPage bounds the runs TaskRunsEndWedged ends per transaction.
	WedgedPage = 500
)

// Dialect is what differs between the SQL engines.
type Dialect struct {
	// Placeholder returns the n-th (1-based) bind parameter.
	Placeholder func(n int) string
	// IDsIn renders "id is one of the ids bound at placeholder p".
	IDsIn func(p string) string
	// IDs converts ids to the engine's bind value for IDsIn.
	IDs func(ids []int64) any
	// NullSafeEqual is the null-safe equality operator.
	NullSafeEqual string
	// Priority converts a priority to its bind value (NULL for none).
	Priority func(revisit.TaskPriority) any
	// Time converts a time to the engine's bind value.
	Time func(time.Time) any
}

// Search checks f and renders the query of one page of the tasks it
// selects, in id order, returning Columns. The
// query returns one row more than the page's limit, so that the caller
// knows whether a page follows (batch.TaskPage).
func (d Dialect) Search(f revisit.TaskFilter) (query string, args []any, limit int, err error) {
	if err := f.Validate(); err != nil {
		return "", nil, 0, err
	}
	if limit, err = batch.PageLimit(f.Limit); err != nil {
		return "", nil, 0, err
	}
	after, err := batch.AfterID(f.PageToken)
	if err != nil {
		return "", nil, 0, err
	}
	arg := func(v any) string { args = append(args, v); return d.Placeholder(len(args)) }
	where := []string{"id > " + arg(after)}
	if len(f.IDs) > 0 {
		where = append(where, d.IDsIn(arg(d.IDs(f.IDs))))
	}
	if f.Type != "" {
		where = append(where, "type = "+arg(f.Type))
	}
	if f.Status != "" {
		where = append(where, "status = "+arg(string(f.Status)))
	}
	if f.Priority != nil {
		where = append(where, "priority "+d.NullSafeEqual+" "+arg(d.Priority(*f.Priority)))
	}
	if f.Policy != "" {
		where = append(where, "policy = "+arg(string(f.Policy)))
	}
	if f.NextRunAfter != nil {
		where = append(where, "next_run >= "+arg(d.Time(*f.NextRunAfter)))
	}
	if f.NextRunBefore != nil {
		where = append(where, "next_run < "+arg(d.Time(*f.NextRunBefore)))
	}
	query = "SELECT " + Columns + " FROM task WHERE " + strings.Join(where, " AND ") +
		" ORDER BY id LIMIT " + arg(limit+1)
	return query, args, limit, nil
}

// Ready renders the WHERE clause, order and limit of the ready tasks of
// p, on the arguments ReadyArgs returns: due, not scheduled, with a
// priority (high, normal, low, then oldest next_run) or without one
// (oldest next_run first).
func (d Dialect) Ready(p revisit.ReadyTasksParams) string {
	cond := "type = " + d.Placeholder(1) + " AND status = 'next_run_not_scheduled' AND next_run <= " +
		d.Placeholder(2) + " AND "
	if p.Priority {
		return cond + "priority IS NOT NULL ORDER BY " + PriorityRank + ", next_run, id LIMIT " + d.Placeholder(3)
	}
	return cond + "priority IS NULL ORDER BY next_run, id LIMIT " + d.Placeholder(3)
}

// ReadyArgs returns the arguments of Ready's clause; now stands for a
// zero p.Now.
func (d Dialect) ReadyArgs(p revisit.ReadyTasksParams, now time.Time) []any {
	if !p.Now.IsZero() {
		now = p.Now
	}
	return []any{p.Type, d.Time(now), p.Limit}
}

// Qualified are columns (Columns, RunColumns) of the table named alias.
func Qualified(alias, columns string) string {
	return alias + "." + strings.ReplaceAll(columns, ", ", ", "+alias+".")
}
