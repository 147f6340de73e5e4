package postgres

import (
	"context"
	"slices"
	"testing"
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
	want := []string{"listed_origin", "listed_origin_pending", "lister", "visit_in_flight", "visit_stats"}
	if !slices.Equal(maintained, want) {
		t.Fatalf("vacuumed and analyzed: %v, want %v", maintained, want)
	}
}
