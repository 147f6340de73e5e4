package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

// counts returns how many rows listed_origin_picked and
// listed_origin_pending hold.
func counts(t *testing.T, s *Store) (aside, pending int) {
	t.Helper()
	require.NoError(t, s.pool.QueryRow(context.Background(),
		"SELECT (SELECT count(*) FROM listed_origin_picked), (SELECT count(*) FROM listed_origin_pending)").
		Scan(&aside, &pending))
	return aside, pending
}

// gitGrab grabs count git origins, oldest scheduled first, at now under
// cooldowns c (nil: the defaults), and returns their URLs.
func gitGrab(t *testing.T, s *Store, count int, now time.Time, c *revisit.Cooldowns) []string {
	t.Helper()
	got, err := s.GrabNextVisits(context.Background(), revisit.GrabParams{VisitType: "git", Count: count,
		Policy: revisit.OldestScheduledFirst, Now: now, Cooldowns: c})
	require.NoError(t, err)
	urls := make([]string, len(got))
	for i, o := range got {
		urls[i] = o.URL
	}
	return urls
}

// TestPicksSetAside stops the background flusher: a grab's picks wait in
// listed_origin_picked, the next grab leaves them out, the first statement
// that looks pending origins up moves them, with the grab's mark, and they
// survive the process that grabbed them.
func TestPicksSetAside(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := openMigratedAt(t, url, nil)
	s.aside.close()
	recordGitOrigins(t, s, 10)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

	first := gitGrab(t, s, 5, t0, nil)
	require.Len(t, first, 5)
	aside, pending := counts(t, s)
	require.Equal(t, [2]int{5, 0}, [2]int{aside, pending}, "picks aside, pending")

	// Another process sees them aside too.
	other := openMigratedAt(t, url, nil)
	other.aside.close()
	second := gitGrab(t, other, 10, t0.Add(time.Second), nil)
	require.Len(t, second, 5)
	require.Empty(t, intersect(first, second), "a pick set aside was grabbed again")

	stats, err := s.VisitStatsGet(ctx, []revisit.OriginKey{{URL: first[0], VisitType: "git"}})
	require.NoError(t, err)
	require.Len(t, stats, 1)
	require.Equal(t, t0, *stats[0].LastScheduled, "the grab's mark, read after the move")
	aside, pending = counts(t, s)
	require.Equal(t, [2]int{0, 10}, [2]int{aside, pending}, "picks aside, pending after a stats read")
	require.Empty(t, gitGrab(t, s, 10, t0.Add(2*time.Second), nil), "pending origins grabbed again")
}

// TestFlusherMovesPicks lets the background flusher run: it moves a
// grab's picks to the pending table soon after the grab returns.
func TestFlusherMovesPicks(t *testing.T) {
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 10)
	require.Len(t, gitGrab(t, s, 10, time.Now(), nil), 10)
	require.Eventually(t, func() bool {
		aside, pending := counts(t, s)
		return aside == 0 && pending == 10
	}, 10*time.Second, 10*time.Millisecond, "picks still aside")
}

// TestFlusherVacuumsPicks: the background flusher vacuums the table of
// picks once it has moved vacuumPicksEvery of them.
func TestFlusherVacuumsPicks(t *testing.T) {
	every := vacuumPicksEvery
	t.Cleanup(func() { vacuumPicksEvery = every }) // after the store's close
	vacuumPicksEvery = 5
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 10)
	require.Len(t, gitGrab(t, s, 10, time.Now(), nil), 10)
	require.Eventually(t, func() bool {
		var vacuumed bool
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'listed_origin_picked'`).Scan(&vacuumed))
		return vacuumed
	}, 10*time.Second, 20*time.Millisecond, "listed_origin_picked not vacuumed")
}

// openWithTwoListers opens a migrated store, its background flusher
// stopped, with two listers of one forge.
func openWithTwoListers(t *testing.T) (s *Store, a, b revisit.Lister) {
	t.Helper()
	s = OpenMigrated(t, nil)
	s.aside.close()
	var err error
	a, err = s.ListerGetOrCreate(context.Background(), "gitlab", "a")
	require.NoError(t, err)
	b, err = s.ListerGetOrCreate(context.Background(), "gitlab", "b")
	require.NoError(t, err)
	return s, a, b
}

// TestSharedAndRevisitedPicksMoveAtOnce: the picks of an origin that two
// listers list, and of an origin visited after the grab's now (a clock set
// back), move to the pending table in the grab itself.
func TestSharedAndRevisitedPicksMoveAtOnce(t *testing.T) {
	ctx := context.Background()
	s, a, b := openWithTwoListers(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	shared, revisited, plain := "https://forge.example/shared", "https://forge.example/revisited", "https://forge.example/plain"
	_, err := s.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
		{ListerID: a.ID, URL: shared, VisitType: "git", Enabled: true},
		{ListerID: b.ID, URL: shared, VisitType: "git", Enabled: true},
		{ListerID: a.ID, URL: revisited, VisitType: "git", Enabled: true},
		{ListerID: a.ID, URL: plain, VisitType: "git", Enabled: true},
	})
	require.NoError(t, err)
	later := t0.Add(time.Hour)
	require.NoError(t, s.VisitStatsUpsert(ctx, []revisit.VisitStats{{URL: revisited, VisitType: "git", LastVisit: &later,
		NextPositionOffset: revisit.DefaultNextPositionOffset, SuccessiveVisits: revisit.DefaultSuccessiveVisits}}))

	require.ElementsMatch(t, []string{shared, revisited, plain}, gitGrab(t, s, 10, t0, &revisit.Cooldowns{}))
	var aside []string
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT array_agg(url) FROM listed_origin_picked").Scan(&aside))
	require.Equal(t, []string{plain}, aside)
	_, pending := counts(t, s)
	require.Equal(t, 3, pending, "both rows of the shared origin and the revisited one are pending")
}

// TestPicksSetAsideByTheCandidateQuery: a grab's candidate query records
// its picks in listed_origin_picked, unless two of the rows it read hold
// one origin (two listers list it); the grab then reads further and sets
// aside itself the picks of the origins one lister lists.
func TestPicksSetAsideByTheCandidateQuery(t *testing.T) {
	ctx := context.Background()
	s, a, b := openWithTwoListers(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var plain []string
	var origins []revisit.ListedOrigin
	for i := range 3 {
		plain = append(plain, fmt.Sprintf("https://forge.example/plain-%d", i))
		origins = append(origins, revisit.ListedOrigin{ListerID: a.ID, URL: plain[i], VisitType: "git", Enabled: true})
	}
	// Recorded after them, the shared origin's rows come last in the order.
	shared := "https://forge.example/shared"
	for _, batch := range [][]revisit.ListedOrigin{origins, {
		{ListerID: a.ID, URL: shared, VisitType: "git", Enabled: true},
		{ListerID: b.ID, URL: shared, VisitType: "git", Enabled: true},
	}} {
		_, err := s.ListedOriginsRecord(ctx, batch)
		require.NoError(t, err)
	}

	q, err := dialect.Build(grabsql.Params{VisitType: "git", Policy: revisit.OldestScheduledFirst, Now: t0})
	require.NoError(t, err)
	recorded := func(limit int, all bool) (n int) {
		t.Helper()
		args := append(slices.Clip(q.Args), limit)
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, setAsideInQuery(q.SQL, len(args)+1, all, 0), append(args, t0)...); err != nil {
				return err
			}
			n = -1 // rolled back: the error below
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM listed_origin_picked").Scan(&n); err != nil {
				return err
			}
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		return n
	}
	require.Equal(t, 3, recorded(3, false), "the plain origins")
	require.Equal(t, 3, recorded(4, false), "the plain origins, and not the shared one")
	require.Equal(t, 0, recorded(5, false), "with both rows of the shared origin")
	require.Equal(t, 3, recorded(3, true), "all or none: all")
	require.Equal(t, 0, recorded(4, true), "all or none: a shared origin's row cannot wait")

	require.ElementsMatch(t, append(plain, shared), gitGrab(t, s, 5, t0, nil))
	var aside []string
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT array_agg(url ORDER BY url) FROM listed_origin_picked").Scan(&aside))
	require.Equal(t, plain, aside)
	_, pending := counts(t, s)
	require.Equal(t, 2, pending, "both rows of the shared origin are pending")
}

// TestDuePicksComeBack: a grab whose cooldowns let picks still set aside
// be grabbed again returns them, as it would pending ones.
func TestDuePicksComeBack(t *testing.T) {
	s := OpenMigrated(t, nil)
	s.aside.close()
	recordGitOrigins(t, s, 4)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	hour := revisit.Cooldowns{Scheduled: time.Hour}
	require.Len(t, gitGrab(t, s, 10, t0, &hour), 4)
	require.Empty(t, gitGrab(t, s, 10, t0.Add(time.Minute), &hour), "within the cooldown")
	aside, _ := counts(t, s)
	require.Equal(t, 4, aside, "picks not due stay aside")
	require.Len(t, gitGrab(t, s, 10, t0.Add(2*time.Hour), &hour), 4, "after the cooldown")
	require.Len(t, gitGrab(t, s, 10, t0.Add(2*time.Hour+time.Second), &revisit.Cooldowns{}), 4, "without cooldowns")
}

// TestMigrationDownMovesPicks: going back to the schema before
// listed_origin_picked leaves no pick behind: they are pending, marked.
func TestMigrationDownMovesPicks(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	s.aside.close()
	recordGitOrigins(t, s, 6)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	require.Len(t, gitGrab(t, s, 4, t0, nil), 4)
	p, db, err := s.provider(ctx)
	require.NoError(t, err)
	defer db.Close()
	_, err = p.DownTo(ctx, 14)
	require.NoError(t, err)
	var pending, marked int
	require.NoError(t, s.pool.QueryRow(ctx,
		"SELECT count(*), count(*) FILTER (WHERE last_scheduled = $1) FROM listed_origin_pending", t0).
		Scan(&pending, &marked))
	require.Equal(t, [2]int{4, 4}, [2]int{pending, marked}, "pending, marked at the grab")
}

func intersect(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	var both []string
	for _, x := range b {
		if in[x] {
			both = append(both, x)
		}
	}
	return both
}

// TestRequeueTellsPicksSetAside: the requeue step tells a grab whether
// picks of its visit type wait set aside, which its candidate query must
// then leave out; without any, the query has no probe of the table.
func TestRequeueTellsPicksSetAside(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	s.aside.close()
	recordGitOrigins(t, s, 20)
	now := s.now()
	setAside := func(visitType string) bool {
		t.Helper()
		var aside bool
		require.NoError(t, pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			aside, _, err = lockAndRequeue(ctx, tx, &pgx.Batch{}, visitType, now, revisit.DefaultCooldowns(), func(*pgx.Batch) {})
			return err
		}))
		return aside
	}
	require.False(t, setAside("git"), "no grab yet")
	require.Len(t, gitGrab(t, s, 5, now, nil), 5)
	require.True(t, setAside("git"), "after a grab")
	require.False(t, setAside("hg"), "another visit type's picks")
	flushAside(t, s)
	require.False(t, setAside("git"), "after the picks moved")
}

// errRollback ends a test's transaction without committing it.
var errRollback = errors.New("rolled back")

// TestGrabAtOnce: a grab whose picks may all wait set aside marks them in
// its candidate query and commits with it (grabAtOnce), raising the queue
// position of an origins_without_last_update grab as markScheduled does.
// One with a shared origin's row among its picks commits nothing but its
// requeue step and grabs again, marking them as grab does; so do the next
// grabs of its visit type until one has only picks that may wait.
func TestGrabAtOnce(t *testing.T) {
	ctx := context.Background()
	s, a, b := openWithTwoListers(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	position := func(t *testing.T, visitType string) (p int64) {
		t.Helper()
		require.NoError(t, s.pool.QueryRow(ctx, "SELECT coalesce(max(position), -1) FROM queue_position WHERE visit_type = $1",
			visitType).Scan(&p))
		return p
	}
	record := func(t *testing.T, origins ...revisit.ListedOrigin) {
		t.Helper()
		_, err := s.ListedOriginsRecord(ctx, origins)
		require.NoError(t, err)
	}

	t.Run("marked by the candidate query", func(t *testing.T) {
		var origins []revisit.ListedOrigin
		for i := range 4 {
			origins = append(origins, revisit.ListedOrigin{ListerID: a.ID, URL: fmt.Sprintf("https://forge.example/hg-%d", i),
				VisitType: "hg", Enabled: true})
		}
		record(t, origins...)
		stats := make([]revisit.VisitStats, 4)
		for i := range stats {
			pos := int64(100 * (i + 1))
			stats[i] = revisit.VisitStats{URL: origins[i].URL, VisitType: "hg", NextVisitQueuePosition: &pos, SuccessiveVisits: 1}
		}
		require.NoError(t, s.VisitStatsUpsert(ctx, stats))
		p := revisit.GrabParams{VisitType: "hg", Count: 3, Policy: revisit.OriginsWithoutLastUpdate, Now: t0}
		p, c, err := p.Resolve(nil)
		require.NoError(t, err)
		picked, done, err := s.grabAtOnce(ctx, p, c)
		require.NoError(t, err)
		require.True(t, done)
		require.Len(t, picked, 3)
		aside, pending := counts(t, s)
		require.Equal(t, [2]int{3, 0}, [2]int{aside, pending}, "the picks are set aside, committed")
		require.Equal(t, int64(300), position(t, "hg"), "the largest of the picks' positions")
	})

	t.Run("a shared origin", func(t *testing.T) {
		shared := "https://forge.example/shared"
		record(t, revisit.ListedOrigin{ListerID: a.ID, URL: shared, VisitType: "git", Enabled: true},
			revisit.ListedOrigin{ListerID: b.ID, URL: shared, VisitType: "git", Enabled: true})
		_, before := counts(t, s)
		require.Equal(t, []string{shared}, gitGrab(t, s, 5, t0, nil))
		_, after := counts(t, s)
		require.Equal(t, before+2, after, "both rows of the shared origin moved at once")
		_, slow := s.aside.slowGrabs.Load("git")
		require.True(t, slow, "the next git grab marks its picks with grab")

		plain := "https://forge.example/plain"
		record(t, revisit.ListedOrigin{ListerID: a.ID, URL: plain, VisitType: "git", Enabled: true})
		asideBefore, _ := counts(t, s)
		require.Equal(t, []string{plain}, gitGrab(t, s, 5, t0.Add(time.Second), nil))
		asideAfter, _ := counts(t, s)
		require.Equal(t, asideBefore+1, asideAfter, "the plain pick is set aside")
		_, slow = s.aside.slowGrabs.Load("git")
		require.False(t, slow, "its picks could all wait: the next grab tries grabAtOnce again")
	})

	t.Run("a failed grab gives its connection back", func(t *testing.T) {
		gitGrab(t, s, 1, t0.Add(2*time.Second), nil)
		opened := s.pool.Stat().NewConnsCount()
		unknown := uuid.New()
		_, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 1,
			Policy: revisit.FirstVisitsAfterListing, ListerID: &unknown, Now: t0.Add(3 * time.Second)})
		require.Equal(t, revisit.CodeNotFound, revisit.Code(err), "%v", err)
		gitGrab(t, s, 1, t0.Add(4*time.Second), nil)
		require.Equal(t, opened, s.pool.Stat().NewConnsCount(), "the grabs after it reuse the pool's connection")
	})
}

// movedPicks records 5,000 git origins in a fresh store whose flusher is
// stopped, grabs 1,000 of them, and returns the store with those picks set
// aside, not moved yet.
func movedPicks(tb testing.TB) *Store {
	tb.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	s := OpenMigrated(tb, nil)
	s.aside.close()
	l, err := s.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(tb, err)
	rng := rand.New(rand.NewPCG(1, 2))
	origins := make([]revisit.ListedOrigin, 5000)
	for i := range origins {
		update := t0.Add(-time.Duration(rng.IntN(1_000_000)) * time.Minute)
		origins[i] = revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://forge.example/%d", i),
			VisitType: "git", Enabled: true, LastUpdate: &update}
	}
	_, err = s.ListedOriginsRecord(ctx, origins)
	require.NoError(tb, err)
	got, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 1000,
		Policy: revisit.NeverVisitedOldestUpdateFirst, Now: t0})
	require.NoError(tb, err)
	require.Len(tb, got, 1000)
	return s
}

// TestFlusherWarmsTheNextGrabUp: once the flusher has moved a grab's
// picks, it runs the grab's candidate query again (the warm-up), unless a
// grab is in progress, to which it gives way. What the warm-up saves the
// next grab depends on no other transaction of the server holding back
// the cleanup of dead rows, so BenchmarkFlusherWarmUp measures it instead.
func TestFlusherWarmsTheNextGrabUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := movedPicks(t)
	moved, warmed, err := s.aside.flush(ctx)
	require.NoError(t, err)
	require.Equal(t, 1000, moved, "picks moved")
	require.Equal(t, 1, warmed, "the grab's candidate query ran again")
	_, warmed, err = s.aside.flush(ctx)
	require.NoError(t, err)
	require.Zero(t, warmed, "no grab since the last warm-up: nothing to warm up")

	s = movedPicks(t)
	s.aside.grabbing.Add(1)
	moved, warmed, err = s.aside.flush(ctx)
	require.NoError(t, err)
	require.Equal(t, 1000, moved, "picks moved while a grab is in progress")
	require.Zero(t, warmed, "the warm-up gives way to the grab in progress")
}

// BenchmarkFlusherWarmUp reports how many buffers the first read of the
// head of the grab's order reads after the picks moved, with and without
// the warm-up, and the second read's. Without a warm-up, the first read
// visits the 1,000 moved rows in the heap to find them dead (~1 buffer a
// row more than the second); after it, the first read is as cheap as the
// second. Another transaction open on the server meanwhile keeps dead rows
// from being flagged, and both reads then cost the same:
//
//	go test ./store/postgres -run '^$' -bench FlusherWarmUp -benchtime 3x
func BenchmarkFlusherWarmUp(b *testing.B) {
	for _, warm := range []bool{false, true} {
		b.Run(fmt.Sprintf("warm=%t", warm), func(b *testing.B) {
			var first, second int
			for b.Loop() {
				s := movedPicks(b)
				if warm {
					_, _, err := s.aside.flush(context.Background())
					require.NoError(b, err)
				} else {
					flushAside(b, s)
				}
				first += headReads(b, s)
				second += headReads(b, s)
			}
			b.ReportMetric(float64(first)/float64(b.N), "first-read-buffers/op")
			b.ReportMetric(float64(second)/float64(b.N), "second-read-buffers/op")
		})
	}
}

// headReads returns how many buffers reading the head of git's
// never_visited_oldest_update_first order, 1000 rows, through its index
// reads.
func headReads(t testing.TB, s *Store) int {
	t.Helper()
	ctx := context.Background()
	var plan []struct {
		Plan struct {
			Hits  int `json:"Shared Hit Blocks"`
			Reads int `json:"Shared Read Blocks"`
		}
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return withIndexScans(ctx, tx, func() error {
			return tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT id FROM listed_origin
				WHERE visit_type = 'git' AND enabled AND last_successful IS NULL AND last_update IS NOT NULL
				ORDER BY visit_type, enabled, last_update, id LIMIT 1000`).Scan(&plan)
		})
	})
	require.NoError(t, err)
	require.Len(t, plan, 1)
	return plan[0].Plan.Hits + plan[0].Plan.Reads
}
