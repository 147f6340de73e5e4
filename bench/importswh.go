package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhimport"
	"github.com/revisit-sched/revisit/swhimport/upstreamdb"
)

// P12's targets (performance.md): a whole import of the reference upstream
// database in ImportTarget, a catch-up of 1 % changed rows in
// CatchUpTarget, in at most ImportRSSTarget of memory.
const (
	ImportTarget    = 15 * time.Minute
	CatchUpTarget   = time.Minute
	ImportRSSTarget = 200 << 20
)

// ImportConfig configures RunImport.
type ImportConfig struct {
	// Source is a PostgreSQL database where the run builds the upstream
	// database, in a schema of its own dropped at the end.
	Source string
	// Store is the revisit store the run imports into; it must be empty.
	Store string
	// Origins, Stats and Tasks are the sizes of the upstream database;
	// there is a run for every other task.
	Origins, Stats, Tasks int
	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

// ImportReport is what RunImport measured.
type ImportReport struct {
	Origins int `json:"origins"`
	Stats   int `json:"stats"`
	Tasks   int `json:"tasks"`
	Runs    int `json:"runs"`
	// Copy is a bare COPY of the same tables on the same server, each
	// streamed out of the source into a table of its own: the ceiling.
	Copy time.Duration `json:"copy_ns"`
	// Import is the whole import; CatchUp a catch-up after 1 % of the
	// origins and stats changed, which copied CatchUpRows rows.
	Import      time.Duration `json:"import_ns"`
	CatchUp     time.Duration `json:"catch_up_ns"`
	CatchUpRows int64         `json:"catch_up_rows"`
	// MaxRSS is this process's peak resident memory over the run.
	MaxRSS int64 `json:"max_rss_bytes"`
}

// RunImport builds an upstream scheduler database of the configured size
// in a new schema of cfg.Source, copies its tables with a bare COPY (the
// ceiling), imports it into cfg.Store, changes 1 % of its origins and
// stats and catches up, and reports the times.
func RunImport(ctx context.Context, cfg ImportConfig) (ImportReport, error) {
	rep := ImportReport{Origins: cfg.Origins, Stats: cfg.Stats, Tasks: cfg.Tasks, Runs: cfg.Tasks / 2}
	if cfg.Stats > cfg.Origins {
		return rep, revisit.Invalidf("stats", "%d stats for %d origins: at most one an origin", cfg.Stats, cfg.Origins)
	}
	say := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	source, drop, err := upstreamSchema(ctx, cfg.Source)
	if err != nil {
		return rep, err
	}
	defer drop()
	conn, err := pgx.Connect(ctx, source)
	if err != nil {
		return rep, err
	}
	defer conn.Close(ctx)
	start := time.Now()
	if err := fillUpstream(ctx, conn, cfg); err != nil {
		return rep, fmt.Errorf("building the upstream database: %w", err)
	}
	say("upstream database built in %s", time.Since(start).Round(time.Second))

	if rep.Copy, err = bareCopy(ctx, conn, source); err != nil {
		return rep, fmt.Errorf("the bare COPY: %w", err)
	}
	say("bare COPY: %s", rep.Copy.Round(time.Millisecond))

	if _, _, err := store.Migrate(ctx, cfg.Store); err != nil {
		return rep, err
	}
	st, err := store.Open(ctx, cfg.Store, store.Options{})
	if err != nil {
		return rep, err
	}
	defer st.Close()
	dir, err := os.MkdirTemp("", "revisit-bench-import-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	stateFile := filepath.Join(dir, "state.json")
	progress := func(p swhimport.TableProgress) {
		if p.Done {
			say("%s: %d rows in %s", p.Table, p.Rows, time.Since(p.Started).Round(time.Millisecond))
		}
	}
	start = time.Now()
	if _, err := swhimport.Run(ctx, swhimport.Config{From: source, Target: st, StateFile: stateFile, Progress: progress}); err != nil {
		return rep, err
	}
	rep.Import = time.Since(start)

	// 1 % of the origins listed again and of the stats visited again.
	for _, table := range []string{"listed_origins SET last_seen", "origin_visit_stats SET last_visit"} {
		if _, err := conn.Exec(ctx, "UPDATE "+table+" = now() WHERE split_part(url, '/', 5)::bigint % 100 = 0"); err != nil {
			return rep, err
		}
	}
	start = time.Now()
	state, err := swhimport.Run(ctx, swhimport.Config{From: source, Target: st, StateFile: stateFile, CatchUp: true,
		Progress: progress})
	if err != nil {
		return rep, err
	}
	rep.CatchUp = time.Since(start)
	for _, ts := range state.Tables {
		rep.CatchUpRows += ts.Rows
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		rep.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return rep, nil
}

// upstreamSchema creates a schema of its own in the database at base, with
// upstream's tables, and returns a URL whose connections use it and how to
// drop it.
func upstreamSchema(ctx context.Context, base string) (string, func(), error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "revisit_bench_upstream_" + hex.EncodeToString(b[:])
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("the source server: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return "", nil, err
	}
	drop := func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(context.Background())
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	conn, err := pgx.Connect(ctx, u.String())
	if err == nil {
		_, err = conn.Exec(ctx, upstreamdb.Schema)
		conn.Close(ctx)
	}
	if err != nil {
		drop()
		return "", nil, err
	}
	return u.String(), drop, nil
}

// fillUpstream writes the reference upstream database: ten listers, the
// origins spread over them (one in a hundred listed by two), the stats of
// the first origins, recurring tasks and a run for every other one.
func fillUpstream(ctx context.Context, conn *pgx.Conn, cfg ImportConfig) error {
	for _, st := range []struct {
		sql  string
		args []any
	}{
		{sql: `INSERT INTO task_type VALUES ('load-git', 'Update a git repository', 'swh.loader.git.tasks.UpdateGitRepository',
			'64 days', '12:00:00', '64 days', 2, 1000, 3, '01:00:00')`},
		{sql: `INSERT INTO listers (name, instance_name, current_state, updated)
			SELECT 'lister', 'instance-' || i, jsonb_build_object('page', i), now() FROM generate_series(1, 10) AS i`},
		{sql: `INSERT INTO listed_origins (lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen, last_update)
			SELECT (SELECT id FROM listers WHERE instance_name = 'instance-' || (1 + i % 10)),
				'https://forge' || (i % 10) || '.example.org/project/' || i, 'git', '{}', i % 50 <> 0,
				now() - interval '3 years' + i * interval '1 second', now() - interval '1 day',
				CASE WHEN i % 4 = 0 THEN NULL ELSE now() - i * interval '1 second' END
			FROM generate_series(1, $1) AS i`, args: []any{cfg.Origins}},
		{sql: `INSERT INTO listed_origins (lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen)
			SELECT (SELECT id FROM listers WHERE instance_name = 'instance-' || (1 + (i + 1) % 10)),
				'https://forge' || (i % 10) || '.example.org/project/' || i, 'git', '{"mirror": true}', true,
				now() - interval '1 year', now() - interval '1 day'
			FROM generate_series(100, $1, 100) AS i`, args: []any{cfg.Origins}},
		{sql: `INSERT INTO origin_visit_stats (url, visit_type, last_successful, last_visit, last_visit_status, last_scheduled,
				last_snapshot, next_visit_queue_position, next_position_offset, successive_visits)
			SELECT 'https://forge' || (i % 10) || '.example.org/project/' || i, 'git',
				CASE WHEN i % 5 <> 0 THEN now() - interval '2 days' END, now() - interval '2 days',
				(CASE WHEN i % 5 <> 0 THEN 'successful' ELSE 'failed' END)::last_visit_status, now() - interval '3 days',
				CASE WHEN i % 5 <> 0 THEN sha256(i::text::bytea)::bytea END, i * 17, 4 + i % 3, 1 + i % 7
			FROM generate_series(1, $1) AS i`, args: []any{cfg.Stats}},
		{sql: `INSERT INTO visit_scheduler_queue_position VALUES ('git', 123456789)`},
		{sql: `INSERT INTO task (type, arguments, next_run, current_interval, status, policy, retries_left)
			SELECT 'load-git', jsonb_build_object('args', '[]'::jsonb, 'kwargs',
				jsonb_build_object('url', 'https://forge' || (i % 10) || '.example.org/project/' || i)),
				now() + i * interval '1 second', '64 days', 'next_run_not_scheduled', 'recurring', 3
			FROM generate_series(1, $1) AS i`, args: []any{cfg.Tasks}},
		{sql: `INSERT INTO task_run (task, backend_id, scheduled, started, ended, metadata, status)
			SELECT id, gen_random_uuid()::text, now() - interval '1 day', now() - interval '1 day',
				now() - interval '23 hours', '{"worker": "w"}', 'eventful'
			FROM task WHERE id % 2 = 0`},
		{sql: `ANALYZE`},
	} {
		if _, err := conn.Exec(ctx, st.sql, st.args...); err != nil {
			return err
		}
	}
	return nil
}

// bareCopy streams each table the import reads out of the source with
// COPY TO and into an empty table of the same shape with COPY FROM, on a
// second connection, and returns the time it took: what the server alone
// does to move the same rows.
func bareCopy(ctx context.Context, conn *pgx.Conn, source string) (time.Duration, error) {
	into, err := pgx.Connect(ctx, source)
	if err != nil {
		return 0, err
	}
	defer into.Close(ctx)
	for _, t := range swhimport.Tables {
		if _, err := conn.Exec(ctx, "CREATE TABLE bare_"+t+" (LIKE "+t+")"); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	for _, t := range swhimport.Tables {
		r, w := io.Pipe()
		done := make(chan error, 1)
		go func() {
			_, err := into.PgConn().CopyFrom(ctx, r, "COPY bare_"+t+" FROM STDIN")
			r.CloseWithError(err)
			done <- err
		}()
		_, err := conn.PgConn().CopyTo(ctx, w, "COPY "+t+" TO STDOUT")
		w.CloseWithError(err)
		if err := <-done; err != nil {
			return 0, err
		}
		if err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
