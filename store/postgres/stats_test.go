package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/storetest"
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

// TestRecentResultsMigration: migration 00024 keeps the stats it finds,
// down and up again.
func TestRecentResultsMigration(t *testing.T) {
	s := OpenMigrated(t, nil)
	storetest.RecentResultsMigration(t, s, func(ctx context.Context, version int64) error {
		p, db, err := s.provider(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = p.DownTo(ctx, version)
		return err
	})
}

// TestUndecodableRecentResults: stored recent results that do not decode
// fail the read of the stats with an error naming the origin.
func TestUndecodableRecentResults(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	k := revisit.OriginKey{URL: "https://forge.example/a", VisitType: "git"}
	require.NoError(t, s.VisitStatsUpsert(ctx, []revisit.VisitStats{revisit.NewVisitStats(k)}))
	_, err := s.pool.Exec(ctx, `UPDATE visit_stats SET recent = '\x010203'`)
	require.NoError(t, err)
	_, err = s.VisitStatsGet(ctx, []revisit.OriginKey{k})
	require.ErrorContains(t, err, "the recent results stored for https://forge.example/a (git) do not decode: 3 bytes")
	require.Equal(t, revisit.CodeInternal, revisit.Code(err))
}

// TestResultsUpdateStatsInPlace: a result rewrites its origin's stats row,
// recent results included, as a HOT update (no index entry written), as
// docs/store.md says.
func TestResultsUpdateStatsInPlace(t *testing.T) {
	ctx := context.Background()
	// One connection: the updates counted are the ones the writes made.
	s, err := Open(ctx, pgtest.URL(t)+"&pool_max_conns=1", store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))
	k := revisit.OriginKey{URL: "https://forge.example/a", VisitType: "git"}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 20 {
		var read *time.Time
		if i > 0 {
			read = new(t0.Add(time.Duration(i-1) * time.Hour))
		}
		st := revisit.NewVisitStats(k)
		st.LastVisit, st.LastVisitStatus = new(t0.Add(time.Duration(i)*time.Hour)), new(revisit.VisitFailed)
		for j := range min(i+1, revisit.RecentResultsKept) {
			st.Recent = append(st.Recent, revisit.RecentResult{Date: t0.Add(time.Duration(i-j) * time.Hour),
				Status: revisit.VisitFailed})
		}
		res, err := s.VisitStatsWrite(ctx, []revisit.VisitStatsWrite{{Stats: st, Guarded: true, IfLastVisit: read}})
		require.NoError(t, err)
		require.Empty(t, res.Stale)
	}
	stats, err := s.VisitStatsGet(ctx, []revisit.OriginKey{k})
	require.NoError(t, err)
	require.Len(t, stats[0].Recent, revisit.RecentResultsKept)
	_, err = s.pool.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	require.NoError(t, err)
	var updates, hot int64
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname = 'visit_stats'`).Scan(&updates, &hot))
	require.Equal(t, [2]int64{19, 19}, [2]int64{updates, hot}, "updates of visit_stats, HOT ones")
}

// TestListedStatsMigration: migration 00032 moves the stats of listed
// origins onto their listed rows (pending or not, of every lister) and
// keeps those of the others in visit_stats; down and up again, every
// origin reads the same stats, and a pending origin's visit still gives
// back, released, the mark its stats had before it.
func TestListedStatsMigration(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	one, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	two, err := s.ListerGetOrCreate(ctx, "gitlab", "other")
	require.NoError(t, err)
	key := func(name string) revisit.OriginKey {
		return revisit.OriginKey{URL: "https://forge.example/" + name, VisitType: "git"}
	}
	listed := func(l revisit.Lister, name string) revisit.ListedOrigin {
		return revisit.ListedOrigin{ListerID: l.ID, URL: key(name).URL, VisitType: "git", Enabled: true}
	}
	_, err = s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{listed(one, "visited"), listed(one, "pending"),
		listed(one, "fresh"), listed(one, "shared"), listed(two, "shared")})
	require.NoError(t, err)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var written []revisit.VisitStats
	for i, name := range []string{"visited", "pending", "shared", "unlisted"} {
		st := revisit.NewVisitStats(key(name))
		st.LastVisit, st.LastVisitStatus = new(t0.Add(time.Duration(i)*time.Hour)), new(revisit.VisitSuccessful)
		st.LastSuccessful, st.LastScheduled, st.LastSnapshot = st.LastVisit, new(t0), []byte{byte(i)}
		st.Recent = []revisit.RecentResult{{Date: *st.LastVisit, Status: revisit.VisitSuccessful, Eventful: true}}
		written = append(written, st)
	}
	require.NoError(t, s.VisitStatsUpsert(ctx, written))
	v, err := s.VisitsDispatchOrigin(ctx, revisit.OriginDispatchParams{Key: key("pending"), Owner: "operator",
		Now: t0.Add(48 * time.Hour)})
	require.NoError(t, err)
	keys := []revisit.OriginKey{key("visited"), key("pending"), key("fresh"), key("shared"), key("unlisted")}
	before, err := s.VisitStatsGet(ctx, keys)
	require.NoError(t, err)
	require.Len(t, before, 4, "every origin but the fresh one")
	statsRows := func() int {
		var n int
		require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM visit_stats").Scan(&n))
		return n
	}
	require.Equal(t, 1, statsRows(), "the origin that no lister lists")

	p, db, err := s.provider(ctx)
	require.NoError(t, err)
	defer db.Close()
	_, err = p.DownTo(ctx, 31)
	require.NoError(t, err)
	require.Equal(t, 4, statsRows(), "a row an origin with stats")
	var scheduled time.Time
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT last_scheduled FROM visit_stats WHERE url = $1",
		key("pending").URL).Scan(&scheduled))
	require.True(t, scheduled.Equal(t0), "the pending origin's stats keep their mark from before the visit")

	require.NoError(t, s.Migrate(ctx))
	require.Equal(t, 1, statsRows())
	after, err := s.VisitStatsGet(ctx, keys)
	require.NoError(t, err)
	require.Equal(t, before, after)
	_, err = s.VisitsRelease(ctx, []string{v.ID}, false)
	require.NoError(t, err)
	released, err := s.VisitStatsGet(ctx, []revisit.OriginKey{key("pending")})
	require.NoError(t, err)
	require.True(t, released[0].LastScheduled.Equal(t0), "released, the visit gives the mark back")
}

// TestResultsAndFirstListingsAtOnce: results of origins that no lister
// lists, written while a recording lists them for the first time, end on
// the listed rows, whichever commits first, and leave no visit_stats row
// behind (VisitStatsWrite, settleNewOrigins).
func TestResultsAndFirstListingsAtOnce(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	const n = 40
	visit := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	keys := make([]revisit.OriginKey, n)
	for i := range keys {
		keys[i] = revisit.OriginKey{URL: fmt.Sprintf("https://forge.example/%d", i), VisitType: "git"}
		st := revisit.NewVisitStats(keys[i])
		st.LastVisit, st.LastVisitStatus = new(visit), new(revisit.VisitFailed)
		var g errgroup.Group
		g.Go(func() error { return s.VisitStatsUpsert(ctx, []revisit.VisitStats{st}) })
		g.Go(func() error {
			_, err := s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: l.ID, URL: keys[i].URL,
				VisitType: "git", Enabled: true}})
			return err
		})
		require.NoError(t, g.Wait())
	}
	stats, err := s.VisitStatsGet(ctx, keys)
	require.NoError(t, err)
	require.Len(t, stats, n)
	for _, st := range stats {
		require.NotNil(t, st.LastVisit, st.URL)
	}
	var left int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM visit_stats").Scan(&left))
	require.Zero(t, left, "visit_stats rows of listed origins")
}
