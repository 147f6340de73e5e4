package swhimport

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/swhimport/upstreamdb"
)

// SchemaVersion is the version of upstream's schema this package reads
// (its dbversion table).
const SchemaVersion = upstreamdb.Version

// source reads upstream's database.
type source struct {
	conn *pgx.Conn
}

// connect opens the source and checks its schema version.
func connect(ctx context.Context, url string) (*source, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("the source database: %w", err)
	}
	var version int
	err = conn.QueryRow(ctx, "SELECT max(version) FROM dbversion").Scan(&version)
	switch {
	case err != nil:
		conn.Close(ctx)
		return nil, fmt.Errorf("the source database has no Software Heritage scheduler schema (dbversion: %w)", err)
	case version != SchemaVersion:
		conn.Close(ctx)
		return nil, fmt.Errorf("the source database's scheduler schema is version %d; this import reads version %d", version, SchemaVersion)
	}
	return &source{conn: conn}, nil
}

func (s *source) close() { s.conn.Close(context.Background()) }

// estimate is the planner's estimate of a table's rows (0 when unknown).
func (s *source) estimate(ctx context.Context, table string) int64 {
	var n float64
	if err := s.conn.QueryRow(ctx, "SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)", table).Scan(&n); err != nil || n < 0 {
		return 0
	}
	return int64(n)
}

func (s *source) taskTypes(ctx context.Context) ([]revisit.TaskType, error) {
	rows, _ := s.conn.Query(ctx, `SELECT type, description, backend_name, default_interval, min_interval, max_interval,
		backoff_factor, max_queue_length, num_retries, retry_delay FROM task_type ORDER BY type`)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.TaskType, error) {
		var (
			t                  revisit.TaskType
			def, lo, hi, retry pgtype.Interval
			backoff            pgtype.Float8
			maxQueue, retries  pgtype.Int8
		)
		err := row.Scan(&t.Type, &t.Description, &t.BackendName, &def, &lo, &hi, &backoff, &maxQueue, &retries, &retry)
		t.DefaultInterval, t.MinInterval, t.MaxInterval, t.RetryDelay = duration(def), duration(lo), duration(hi), duration(retry)
		t.BackoffFactor, t.MaxQueueLength, t.NumRetries = backoff.Float64, int(maxQueue.Int64), int(retries.Int64)
		return t, err
	})
}

func (s *source) listers(ctx context.Context) ([]revisit.Lister, error) {
	rows, _ := s.conn.Query(ctx, `SELECT id, name, instance_name, created, updated, current_state::text,
		last_listing_finished_at, first_visits_queue_prefix, first_visits_scheduled_at FROM listers ORDER BY created, id`)
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.Lister, error) {
		var (
			l     revisit.Lister
			state string
		)
		err := row.Scan(&l.ID, &l.Name, &l.InstanceName, &l.Created, &l.Updated, &state, &l.LastListingFinishedAt,
			&l.FirstVisitsQueuePrefix, &l.FirstVisitsScheduledAt)
		l.CurrentState = json.RawMessage(state)
		return l, err
	})
}

// originColumns selects the listed origin columns scanOrigin reads.
const originColumns = `SELECT lister_id, url, visit_type, extra_loader_arguments::text, enabled, first_seen, last_seen,
	last_update, is_fork, forked_from_url FROM listed_origins`

// originKey is where a copy of listed origins resumes.
type originKey struct {
	ListerID  uuid.UUID `json:"lister_id"`
	URL       string    `json:"url"`
	VisitType string    `json:"visit_type"`
}

// listedOrigins reads, in key order, the listed origins after the key after
// (nil: from the start), those seen since since when it is not zero.
func (s *source) listedOrigins(ctx context.Context, after *originKey, since time.Time) *rowStream[revisit.ListedOrigin] {
	const changed = " WHERE ($1::timestamptz IS NULL OR last_seen >= $1) "
	const order = " ORDER BY lister_id, url, visit_type"
	if after == nil {
		return query(ctx, s, scanOrigin, since, originColumns+changed+order, nullTime(since))
	}
	return query(ctx, s, scanOrigin, since, originColumns+changed+"AND (lister_id, url, visit_type) > ($2, $3, $4)"+order,
		nullTime(since), after.ListerID, after.URL, after.VisitType)
}

// statsKey is where a copy of visit stats resumes.
type statsKey struct {
	URL       string `json:"url"`
	VisitType string `json:"visit_type"`
}

// visitStats reads, in key order, the visit stats after the key after
// (nil: from the start), those visited, scheduled or successful since
// since when it is not zero.
func (s *source) visitStats(ctx context.Context, after *statsKey, since time.Time) *rowStream[revisit.VisitStats] {
	const columns = `SELECT url, visit_type, last_successful, last_visit, last_visit_status::text, last_scheduled,
		last_snapshot, next_visit_queue_position, next_position_offset, successive_visits FROM origin_visit_stats
		WHERE ($1::timestamptz IS NULL OR greatest(last_visit, last_scheduled, last_successful) >= $1) `
	const order = " ORDER BY url, visit_type"
	if after == nil {
		return query(ctx, s, scanStats, since, columns+order, nullTime(since))
	}
	return query(ctx, s, scanStats, since, columns+"AND (url, visit_type) > ($2, $3)"+order, nullTime(since), after.URL, after.VisitType)
}

func scanStats(row pgx.Row) (revisit.VisitStats, error) {
	var (
		v      revisit.VisitStats
		status *string
	)
	err := row.Scan(&v.URL, &v.VisitType, &v.LastSuccessful, &v.LastVisit, &status, &v.LastScheduled,
		&v.LastSnapshot, &v.NextVisitQueuePosition, &v.NextPositionOffset, &v.SuccessiveVisits)
	if status != nil {
		st := revisit.VisitStatus(*status)
		v.LastVisitStatus = &st
	}
	return v, err
}

func (s *source) queuePositions(ctx context.Context) (map[string]int64, error) {
	rows, _ := s.conn.Query(ctx, "SELECT visit_type, position FROM visit_scheduler_queue_position")
	out := map[string]int64{}
	var (
		vt  string
		pos int64
	)
	_, err := pgx.ForEachRow(rows, []any{&vt, &pos}, func() error {
		out[vt] = pos
		return nil
	})
	return out, err
}

// tasks reads the tasks after id after, in id order. With a changed since
// (not zero), only the tasks that may have changed since: those of ids
// above newAfter (created since) and those whose runs moved since
// (upstream moves a task when it schedules its run, and when the run
// ends).
func (s *source) tasks(ctx context.Context, after int64, changed time.Time, newAfter int64) *rowStream[revisit.Task] {
	return query(ctx, s, scanTask, changed, `SELECT id, type, arguments::text, next_run, current_interval, status::text, policy::text,
		retries_left, priority::text FROM task WHERE id > $1 AND ($2::timestamptz IS NULL OR id > $3
			OR EXISTS (SELECT FROM task_run r WHERE r.task = task.id AND greatest(r.scheduled, r.started, r.ended) >= $2))
		ORDER BY id`, after, nullTime(changed), newAfter)
}

func scanTask(row pgx.Row) (revisit.Task, error) {
	var (
		t                        revisit.Task
		args                     string
		interval                 pgtype.Interval
		status, policy, priority pgtype.Text
		retries                  int64
	)
	if err := row.Scan(&t.ID, &t.Type, &args, &t.NextRun, &interval, &status, &policy, &retries, &priority); err != nil {
		return t, err
	}
	t.CurrentInterval, t.RetriesLeft = duration(interval), int(retries)
	t.Status, t.Policy, t.Priority = revisit.TaskStatus(status.String), revisit.TaskPolicy(policy.String), revisit.TaskPriority(priority.String)
	if err := json.Unmarshal([]byte(args), &t.Arguments); err != nil {
		return t, fmt.Errorf("task %d: arguments: %w", t.ID, err)
	}
	return t, nil
}

// orphanBackendID names a run that upstream recorded without a backend id:
// no worker can report on it, and revisit keys runs by backend id.
func orphanBackendID(id int64) string { return fmt.Sprintf("swh-import:run-%d", id) }

// runColumns are the task run columns scanRun reads.
const runColumns = "SELECT id, task, backend_id, scheduled, started, ended, metadata::text, status::text FROM task_run"

// sinceRuns is the condition of the runs copied when runs-since is $n.
func sinceRuns(n int) string {
	return fmt.Sprintf("($%d::timestamptz IS NULL OR coalesce(started, scheduled, ended) >= $%d)", n, n)
}

// taskRuns reads the runs after id after, in id order, since runsSince
// (zero: all), and those scheduled, started or ended since changedSince
// when it is not zero.
func (s *source) taskRuns(ctx context.Context, after int64, runsSince, changedSince time.Time) *rowStream[revisit.TaskRun] {
	return query(ctx, s, scanRun, changedSince, runColumns+" WHERE id > $1 AND "+sinceRuns(2)+
		" AND ($3::timestamptz IS NULL OR greatest(scheduled, started, ended) >= $3) ORDER BY id",
		after, nullTime(runsSince), nullTime(changedSince))
}

// runsOf reads the runs of those tasks since since (zero: all).
func (s *source) runsOf(ctx context.Context, tasks []int64, since time.Time) ([]revisit.TaskRun, error) {
	rows, _ := s.conn.Query(ctx, runColumns+" WHERE task = ANY($1) AND "+sinceRuns(2)+" ORDER BY id", tasks, nullTime(since))
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (revisit.TaskRun, error) { return scanRun(row) })
}

func scanRun(row pgx.Row) (revisit.TaskRun, error) {
	var (
		r               revisit.TaskRun
		backendID, meta *string
		status          string
	)
	if err := row.Scan(&r.ID, &r.TaskID, &backendID, &r.Scheduled, &r.Started, &r.Ended, &meta, &status); err != nil {
		return r, err
	}
	r.Status, r.BackendID = revisit.TaskRunStatus(status), orphanBackendID(r.ID)
	if backendID != nil {
		r.BackendID = *backendID
	}
	if meta != nil && *meta != "null" {
		if err := json.Unmarshal([]byte(*meta), &r.Metadata); err != nil {
			return r, fmt.Errorf("task run %d: metadata: %w", r.ID, err)
		}
	}
	return r, nil
}

// duration is a PostgreSQL interval as a duration, a month counting 30
// days as PostgreSQL's own interval arithmetic does; null is zero.
func duration(iv pgtype.Interval) time.Duration {
	if !iv.Valid {
		return 0
	}
	return time.Duration(iv.Microseconds)*time.Microsecond + time.Duration(iv.Days)*24*time.Hour +
		time.Duration(iv.Months)*30*24*time.Hour
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
