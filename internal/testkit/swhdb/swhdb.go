// Package swhdb builds, for tests, a database in the schema of the Software
// Heritage scheduler that a deployment runs before it switches to revisit
// (schema version 38), in a fresh PostgreSQL schema, and fills it with the
// cases an import must bring over exactly.
package swhdb

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/swhimport/upstreamdb"
)

// New creates an empty upstream scheduler database in a fresh schema,
// dropped when the test ends, and returns a URL whose connections use it.
func New(t testing.TB) string {
	t.Helper()
	url := pgtest.URL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("swhdb: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, upstreamdb.Schema); err != nil {
		t.Fatalf("swhdb: creating the upstream schema: %v", err)
	}
	return url
}

// The ids of the listers Fill creates.
const (
	GitHub = "3f2c6a8e-7d1b-4c59-9e0a-1b2c3d4e5f60"
	GitLab = "8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	Mirror = "c0ffee00-1111-4222-8333-444455556666"
)

// fill is every case an import must bring over exactly: listers with
// nested unicode states, microsecond times and first-visits fields; a URL
// two listers list with their own arguments; URLs that are not URLs;
// disabled and forked origins; stats of every status, of an origin no
// lister lists, with snapshots and queue positions; task types with and
// without a queue length; tasks of every status, policy and priority;
// runs of every status, with and without metadata or backend id.
var fill = `
INSERT INTO task_type VALUES
	('load-git', 'Update a git repository', 'swh.loader.git.tasks.UpdateGitRepository',
		'64 days', '12:00:00', '64 days', 2.5, 5000, 3, '01:30:00'),
	('load-svn', 'Load a subversion repository', 'swh.loader.svn.tasks.LoadSvnRepository',
		'1 day 00:00:00.000007', NULL, NULL, NULL, NULL, NULL, NULL),
	('list-gitlab-incremental', 'Incrementally list a GitLab', 'swh.lister.gitlab.tasks.IncrementalGitLabLister',
		'1 mon', NULL, NULL, NULL, 1000, 0, NULL);

INSERT INTO listers (id, name, instance_name, created, current_state, updated, last_listing_finished_at,
	first_visits_queue_prefix, first_visits_scheduled_at) VALUES
	('` + GitHub + `', 'github', 'github', '2019-01-02 03:04:05.123456+00',
		'{"last_seen_id": 123456789, "nested": {"ünïcode": "✓ 日本", "list": [1, 2.5, null, true]}}',
		'2026-11-01 10:00:00.000001+00', '2026-10-31 23:59:59.999999+00', NULL, NULL),
	('` + GitLab + `', 'gitlab', 'gitlab.gnome.org', '2020-05-06 07:08:09.000007+00',
		'{}', '2026-11-02 11:11:11.111111+00', '2026-11-02 11:00:00+00', 'add_forge_now', '2026-11-02 11:05:00.5+00'),
	('` + Mirror + `', 'mirror', '', '2021-01-01 00:00:00+00',
		'{"page": 7}', '2026-11-03 00:00:00.000003+00', NULL, 'add_forge_now', NULL);

INSERT INTO listed_origins VALUES
	('` + GitHub + `', 'https://github.com/o/shared', 'git', '{"from": "github", "n": [1, {"x": "é"}]}',
		true, '2019-01-02 03:04:05.000001+00', '2026-11-01 09:00:00.000009+00', '2026-10-30 08:00:00+00', false, NULL),
	('` + Mirror + `', 'https://github.com/o/shared', 'git', '{"from": "mirror"}',
		true, '2021-02-02 00:00:00+00', '2026-11-02 00:00:00+00', NULL, NULL, NULL),
	('` + GitHub + `', 'https://github.com/o/fork', 'git', '{}',
		true, '2020-01-01 00:00:00+00', '2026-11-01 00:00:00+00', '2026-01-01 00:00:00+00', true, 'https://github.com/o/shared'),
	('` + GitHub + `', 'https://github.com/o/gone', 'git', '{}',
		false, '2020-01-01 00:00:00+00', '2025-01-01 00:00:00+00', NULL, NULL, NULL),
	('` + GitLab + `', 'foo', 'git', '{}',
		true, '2015-06-01 00:00:00+00', '2026-11-02 00:00:00+00', NULL, NULL, NULL),
	('` + GitLab + `', 'svn+ssh://old host/repo with spaces', 'svn', '{"svn_paths": ["trunk"]}',
		true, '2016-06-01 00:00:00+00', '2026-11-02 00:00:00+00', NULL, NULL, NULL);

INSERT INTO origin_visit_stats VALUES
	('https://github.com/o/shared', 'git', '2026-11-01 01:00:00.000001+00', '2026-11-01 01:00:00.000001+00', 'successful',
		'2026-11-01 00:59:00+00', '\x0102030405060708090a0b0c0d0e0f1011121314', 123456, 6, 3),
	('https://github.com/o/fork', 'git', NULL, '2026-11-01 02:00:00+00', 'failed', '2026-11-01 01:59:00+00', NULL, NULL, 4, 1),
	('foo', 'git', NULL, '2026-10-01 02:00:00+00', 'not_found', NULL, NULL, 0, 4, 1),
	('https://visited.on.demand/only', 'git', '2026-09-01 00:00:00+00', '2026-09-01 00:00:00+00', 'successful', NULL,
		'\xffffffffffffffffffffffffffffffffffffffff', 99, 0, 12),
	('https://github.com/o/gone', 'git', NULL, NULL, NULL, '2026-11-01 00:00:00+00', NULL, NULL, 4, 1);

INSERT INTO visit_scheduler_queue_position VALUES ('git', 123456), ('svn', 0);

INSERT INTO task (id, type, arguments, next_run, current_interval, status, policy, retries_left, priority) VALUES
	(10, 'list-gitlab-incremental', '{"args": [], "kwargs": {"url": "https://gitlab.gnome.org/api/v4/"}}',
		'2026-11-04 00:00:00.000001+00', '1 day', 'next_run_scheduled', 'recurring', 0, NULL),
	(11, 'load-git', '{"args": ["https://github.com/o/saved"], "kwargs": {}}',
		'2026-11-03 12:00:00+00', NULL, 'next_run_not_scheduled', 'oneshot', 3, 'high'),
	(12, 'load-git', '{"args": [], "kwargs": {"url": "https://github.com/o/done", "n": 1.5}}',
		'2026-11-01 00:00:00+00', NULL, 'completed', 'oneshot', 0, 'normal'),
	(13, 'load-svn', '{"args": [], "kwargs": {"url": "svn://x"}}',
		'2026-11-01 00:00:00+00', '1 day', 'disabled', 'recurring', 0, 'low');
SELECT setval('task_id_seq', 13);

INSERT INTO task_run (id, task, backend_id, scheduled, started, ended, metadata, status) VALUES
	(100, 10, 'celery-a', '2026-11-03 00:00:00+00', '2026-11-03 00:00:01+00', '2026-11-03 00:10:00+00', '{"worker": "w1"}', 'eventful'),
	(101, 10, 'celery-b', '2026-11-04 00:00:00+00', '2026-11-04 00:00:01+00', NULL, '{}', 'started'),
	(102, 12, 'celery-c', '2026-11-01 00:00:00+00', NULL, '2026-11-01 00:05:00+00', NULL, 'uneventful'),
	(103, 13, NULL, '2026-10-01 00:00:00+00', NULL, NULL, NULL, 'lost'),
	(104, 13, 'celery-e', '2026-10-02 00:00:00+00', '2026-10-02 00:00:01+00', '2026-10-02 00:01:00+00',
		'{"exception": "Boom ✗"}', 'permfailed'),
	(105, 11, 'celery-f', '2026-11-03 12:00:01+00', NULL, NULL, '{"queue": "save_code_now:x"}', 'scheduled'),
	(106, 12, 'celery-g', '2026-10-31 00:00:00+00', NULL, '2026-10-31 00:00:09+00', '{}', 'failed');
SELECT setval('task_run_id_seq', 106);
`

// Fill writes every case an import must bring over into the database at
// url (made by New), and n more listed origins of the github lister, with
// stats for every other one.
func Fill(t testing.TB, url string, n int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("swhdb: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fill); err != nil {
		t.Fatalf("swhdb: filling: %v", err)
	}
	if _, err := conn.Exec(ctx, `
		INSERT INTO listed_origins (lister_id, url, visit_type, extra_loader_arguments, enabled, first_seen, last_seen, last_update)
		SELECT $1, 'https://github.com/gen/r' || lpad(i::text, 7, '0'), 'git', '{}', i % 11 <> 0,
			'2020-01-01'::timestamptz + i * interval '1 second', '2026-11-01'::timestamptz + i * interval '1 microsecond',
			CASE WHEN i % 3 = 0 THEN NULL ELSE '2026-01-01'::timestamptz + i * interval '1 minute' END
		FROM generate_series(1, $2) AS i`, GitHub, n); err != nil {
		t.Fatalf("swhdb: filling origins: %v", err)
	}
	if _, err := conn.Exec(ctx, `
		INSERT INTO origin_visit_stats (url, visit_type, last_visit, last_visit_status, next_visit_queue_position, successive_visits)
		SELECT 'https://github.com/gen/r' || lpad(i::text, 7, '0'), 'git', '2026-10-01'::timestamptz + i * interval '1 second',
			(ARRAY['successful', 'failed', 'not_found'])[1 + i % 3]::last_visit_status, i, 1 + i % 5
		FROM generate_series(2, $1, 2) AS i`, n); err != nil {
		t.Fatalf("swhdb: filling stats: %v", err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatalf("swhdb: %v", err)
	}
}
