package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// TestVisitStatsGetProbesPendingOrigins checks that reading stats finds the
// pending origins' marks through the hash index of listed_origin_pending
// whatever the planner's costs. On the 10M bench, with statistics taken
// while nothing was pending and a thousand origins pending since, the
// planner scanned the whole pending table once per key: 71 ms for a batch
// of 1000 results (docs/store.md, "Pending origins"). Here a high
// random_page_cost prices the probes out the same way.
func TestVisitStatsGetProbesPendingOrigins(t *testing.T) {
	ctx := context.Background()
	// One connection: the scans counted are the ones VisitStatsGet ran.
	s, err := Open(ctx, pgtest.URL(t)+"&pool_max_conns=1&random_page_cost=1000", store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))
	recordGitOrigins(t, s, 6000)
	require.NoError(t, s.Maintain(ctx))
	picked, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 2000,
		Policy: revisit.OldestScheduledFirst})
	require.NoError(t, err)
	keys := make([]revisit.OriginKey, 1000)
	for i := range keys {
		keys[i] = picked[2*i].Key()
	}

	before := pendingSequentialScans(t, s)
	stats, err := s.VisitStatsGet(ctx, keys)
	require.NoError(t, err)
	require.Len(t, stats, len(keys))
	require.Equal(t, before, pendingSequentialScans(t, s), "sequential scans of listed_origin_pending")
}

// pendingSequentialScans returns how many sequential scans of
// listed_origin_pending the server has counted, once the connection's own
// counts are flushed.
func pendingSequentialScans(t *testing.T, s *Store) int64 {
	t.Helper()
	ctx := context.Background()
	_, err := s.pool.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	require.NoError(t, err)
	var n int64
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT seq_scan FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname = 'listed_origin_pending'`).Scan(&n))
	return n
}
