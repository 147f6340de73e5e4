package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/revisit-sched/revisit"
)

func TestMaintainVacuumsAndAnalyzes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	if err := s.Maintain(ctx); err != nil {
		t.Fatal(err)
	}
	var maintained []string
	err := s.pool.QueryRow(ctx, `SELECT array_agg(relname ORDER BY relname) FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND last_vacuum IS NOT NULL AND last_analyze IS NOT NULL`).Scan(&maintained)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"listed_origin", "listed_origin_pending", "listed_origin_picked", "lister", "origin_url", "origin_url_backlog",
		"visit_in_flight", "visit_stats"}
	if !slices.Equal(maintained, want) {
		t.Fatalf("vacuumed and analyzed: %v, want %v", maintained, want)
	}
}

// A fresh store gets planner statistics with its first recorded origins, so
// that recording probes an origin's own key by the primary key rather than
// by an index that lists every origin of the lister.
func TestRecordingAnalyzesAFreshStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	if got := keyStatistics(t, s); len(got) != 0 {
		t.Fatalf("a fresh store has statistics of %v", got)
	}
	recordGitOrigins(t, s, 50)
	if got, want := keyStatistics(t, s), []string{"lister_id", "url", "visit_type"}; !slices.Equal(got, want) {
		t.Fatalf("statistics after the first batch: %v, want %v", got, want)
	}
	var plan []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			rows, _ := tx.Query(ctx, `EXPLAIN SELECT FROM listed_origin
				WHERE lister_id = (SELECT id FROM lister LIMIT 1) AND url = 'https://forge.example/7' AND visit_type = 'git'`)
			var err error
			plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The lister's own index matches more columns of the probe only if
	// the planner takes every equality for equally selective.
	if !slices.ContainsFunc(plan, func(line string) bool {
		return strings.Contains(line, "Index Cond") && strings.Contains(line, "url = ")
	}) {
		t.Fatalf("an origin's own key is probed without its URL as an index condition:\n%s", strings.Join(plan, "\n"))
	}
}

// A store restored from a dump (or filled by another process) holds listed
// origins without statistics: the first result written gets them before
// its copy onto listed_origin is planned, so that the copy looks rows up by
// the hash index of their URL rather than by a policy index that lists
// every origin of the visit type.
func TestResultsAnalyzeAnUnanalyzedStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO listed_origin (lister_id, url, visit_type, first_seen, last_seen)
		SELECT $1, 'https://forge.example/' || i, 'git', now(), now() FROM generate_series(1, 50) i`, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := keyStatistics(t, s); len(got) != 0 {
		t.Fatalf("statistics before any result: %v", got)
	}
	at, status := s.now(), revisit.VisitSuccessful
	err = s.VisitStatsUpsert(ctx, []revisit.VisitStats{{URL: "https://forge.example/7", VisitType: "git",
		LastVisit: &at, LastSuccessful: &at, LastVisitStatus: &status,
		NextPositionOffset: revisit.DefaultNextPositionOffset, SuccessiveVisits: revisit.DefaultSuccessiveVisits}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keyStatistics(t, s), []string{"lister_id", "url", "visit_type"}; !slices.Equal(got, want) {
		t.Fatalf("statistics after the first result: %v, want %v", got, want)
	}
}

// keyStatistics returns the columns of listed_origin's key that have planner
// statistics.
func keyStatistics(t *testing.T, s *Store) []string {
	t.Helper()
	var columns []string
	err := s.pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(attname::text ORDER BY attname), '{}')
		FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'listed_origin'
			AND attname IN ('lister_id', 'url', 'visit_type')`).Scan(&columns)
	if err != nil {
		t.Fatal(err)
	}
	return columns
}
