package postgres

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/browse"
	"github.com/revisit-sched/revisit/store/internal/grabsql"
)

// TestGrabPlans checks that the candidate query of every policy can be
// answered by walking the policy's index in order: with sorts and
// sequential scans priced out, the plan must be a scan of that index with
// no sort step (docs/store.md). So must the query that also sets its picks
// aside (setAsideInQuery).
func TestGrabPlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	lister := uuid.New()
	resumed, err := grabsql.ResumedPlanCases(dialect, lister)
	require.NoError(t, err)
	for _, c := range append(grabsql.PlanCases(lister), resumed...) {
		t.Run(c.Name, func(t *testing.T) {
			q, err := dialect.Build(c.Params)
			require.NoError(t, err)
			args := append(slices.Clip(q.Args), 1000)
			for _, plan := range []string{
				explainSQL(t, ctx, s, q.SQL, args...),
				explainSQL(t, ctx, s, setAsideInQuery(q.SQL, len(args)+1, false, 0), append(args, time.Now())...),
				explainSQL(t, ctx, s, setAsideInQuery(q.SQL, len(args)+1, true, len(args)+2),
					append(args, time.Now(), c.Params.VisitType)...),
			} {
				if !strings.Contains(plan, "Index Scan using "+c.Index+" ") {
					t.Errorf("plan does not walk %s:\n%s", c.Index, plan)
				}
				if scans := listedScan.FindAllString(plan, -1); slices.ContainsFunc(scans, func(scan string) bool {
					return !strings.Contains(scan, "Scan using "+c.Index+" ")
				}) {
					t.Errorf("a scan of listed_origin does not walk %s:\n%s", c.Index, plan)
				}
				if strings.Contains(plan, "Sort") {
					t.Errorf("plan sorts:\n%s", plan)
				}
			}
		})
	}
}

// listedScan matches the scans of listed_origin in a plan (aliased
// listed_origin_N when a statement reads it more than once).
var listedScan = regexp.MustCompile(`\S*Scan[^\n]* on listed_origin(?: listed_origin_\d+)? `)

// TestSetAsideProbePlan checks that the candidate queries leave the picks
// set aside out by probing listed_origin_picked's key once per candidate,
// when its statistics, taken while it was empty, are far from its size: as
// an anti-join, the planner read every pick once and compared each
// candidate with all of them.
func TestSetAsideProbePlan(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	s.aside.close()
	recordGitOrigins(t, s, 8000)
	require.NoError(t, s.Maintain(ctx))
	require.Len(t, gitGrab(t, s, 5000, s.now(), nil), 5000)
	for _, c := range grabsql.PlanCases(uuid.New()) {
		t.Run(c.Name, func(t *testing.T) {
			q, err := dialectAside.Build(c.Params)
			require.NoError(t, err)
			plan := explainWith(t, ctx, s, "", q.SQL, append(q.Args, 1000)...)
			require.Contains(t, plan, "Index Only Scan using listed_origin_picked_pkey on listed_origin_picked k")
			require.Contains(t, plan, "Index Cond: (id = listed_origin.id)")
			require.NotContains(t, plan, "Materialize")
			require.NotContains(t, plan, "Hash")
		})
	}
}

// TestVisitPlans checks that expiry walks the visits not yet lost only, and
// forgetting the lost ones only: each round's expiry must not read the lost
// visits kept for the lost retention.
func TestVisitPlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	now := s.now()
	for name, c := range map[string]struct {
		sql, index string
		args       []any
	}{
		"expire": {expireChunk, "visit_in_flight_open", []any{"git", now, 1000, now}},
		"forget": {forgetChunk, "visit_in_flight_lost", []any{"git", now, 1000}},
	} {
		t.Run(name, func(t *testing.T) {
			plan := explainSQL(t, ctx, s, c.sql, c.args...)
			if !strings.Contains(plan, "Index Scan using "+c.index+" ") {
				t.Errorf("plan does not walk %s:\n%s", c.index, plan)
			}
			// The chunk's visits are found by address, each once.
			if !strings.Contains(plan, "TID Cond: (ctid = c.tid)") {
				t.Errorf("plan does not find the chunk's visits by address:\n%s", plan)
			}
		})
	}
}

// explainSQL returns the plan of a statement with sorts, sequential and
// bitmap scans priced out.
func explainSQL(t *testing.T, ctx context.Context, s *Store, sql string, args ...any) string {
	t.Helper()
	return explainWith(t, ctx, s, "SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off",
		sql, args...)
}

// explainWith returns the plan of a statement under the settings of
// setup, statements run first in the same transaction ("" for none).
func explainWith(t *testing.T, ctx context.Context, s *Store, setup, sql string, args ...any) string {
	t.Helper()
	var plan strings.Builder
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if setup != "" {
			if _, err := tx.Exec(ctx, setup); err != nil {
				return err
			}
		}
		rows, _ := tx.Query(ctx, "EXPLAIN "+sql, args...)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		plan.WriteString(strings.Join(lines, "\n"))
		return err
	})
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, sql)
	}
	return plan.String()
}

// TestMovePlan checks that a grab's move reaches each picked row by its
// address and the other rows of a shared origin through the hash index of
// their URL, never by scanning listed_origin, once the table outgrows a few
// pages. The lookup names the URL only: a visit type there would let the
// planner AND the probe with a policy index's scan of the whole visit type.
func TestMovePlan(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 5000)
	var (
		tids []pgtype.TID
		urls []string
	)
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT array_agg(ctid), array_agg(url) FROM (SELECT ctid, url FROM listed_origin ORDER BY id DESC LIMIT 3) r").
		Scan(&tids, &urls))
	now := s.now()
	plan := explainWith(t, ctx, s, "", movePicks, tids, urls, []string{"git", "git", "git"}, []bool{false, true, false},
		[]time.Time{now, now, now})
	for _, want := range []string{"TID Cond: (ctid = p_1.tid)", "Index Scan using listed_origin_url "} {
		require.Contains(t, plan, want)
	}
	require.NotContains(t, plan, "Seq Scan on listed_origin")
}

// TestFlushPlan checks that the flusher's move, which reads its picks out
// of listed_origin_picked in the same statement, reaches them as a grab's
// move does, by address, even when the statistics of the picks' table say
// it holds thousands: the planner counts the picks from the array of ids
// it takes, not from the table (a move planned from the table's size
// hashed all of listed_origin, 2 s a move).
func TestFlushPlan(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 5000)
	_, err := s.pool.Exec(ctx, `INSERT INTO listed_origin_picked (id, tid, url, visit_type, scheduled_at)
		SELECT id, ctid, url, visit_type, now() FROM listed_origin`)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, "ANALYZE listed_origin_picked")
	require.NoError(t, err)
	plan := explainWith(t, ctx, s, strings.Join(indexScansOnly, "; "), flushAll)
	for _, want := range []string{"TID Cond: (ctid = p.tid)", "Index Scan using listed_origin_url "} {
		require.Contains(t, plan, want)
	}
	require.NotContains(t, plan, "Seq Scan on listed_origin")
	require.NotContains(t, plan, "Hash Join")
}

// TestPendingLookupPlans checks that the statements that find pending
// origins by URL (a result's, a released visit's, recording's) probe the
// hash index of listed_origin_pending, as they run in production
// (withIndexScans), on a store without statistics. A released visit's
// probe used (visit_type, last_scheduled) here, a key that every visit of
// a dispatch shares.
func TestPendingLookupPlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	statements := urlLookups()
	statements["recording"] = statement{`SELECT (` + pendingMark("b") + `) FROM (SELECT $1::text AS url, $2::text AS visit_type) b`,
		[]any{"https://example.org/a", "git"}}
	for name, c := range statements {
		t.Run(name, func(t *testing.T) {
			plan := explainSQL(t, ctx, s, c.sql, c.args...)
			require.Contains(t, plan, "Index Scan using listed_origin_pending_url ")
			require.NotContains(t, plan, "Seq Scan on listed_origin_pending")
		})
	}
}

// TestPendingStatsLookupPlan checks that, with thousands of origins of one
// visit type pending and statistics that say so, looking a pending
// origin's mark up (VisitStatsGet, recording; bitmap scans allowed) is one
// probe of the hash index on url, with no BitmapAnd. On the 10M bench,
// with (visit_type, last_scheduled) still indexed, the planner ANDed that
// probe with a bitmap scan of every pending row of the visit type: 725 ms
// for 1000 keys; migration 00013 left no index of the table leading with
// visit_type. At this size the planner does not choose that
// plan either way; TestPendingIndexesLeadWithoutVisitType keeps the cause
// out.
func TestPendingStatsLookupPlan(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 6000)
	_, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 5000, Policy: revisit.OldestScheduledFirst})
	require.NoError(t, err)
	flushAside(t, s)
	_, err = s.pool.Exec(ctx, "ANALYZE listed_origin_pending")
	require.NoError(t, err)
	plan := explainWith(t, ctx, s, "", `SELECT (`+pendingMark("k")+`)
		FROM unnest($1::text[], $2::text[]) AS k(url, visit_type)`,
		[]string{"https://forge.example/1", "https://forge.example/2"}, []string{"git", "git"})
	require.Contains(t, plan, "Index Scan using listed_origin_pending_url ")
	require.NotContains(t, plan, "BitmapAnd")
}

// TestPendingIndexesLeadWithoutVisitType checks that no index of
// listed_origin_pending starts with visit_type: the planner may AND such an
// index, which matches every pending row of a visit type, with each probe
// of the hash index on url (see TestPendingStatsLookupPlan).
func TestPendingIndexesLeadWithoutVisitType(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	rows, err := s.pool.Query(ctx, `SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid, 1, false)
		FROM pg_index WHERE indrelid = 'listed_origin_pending'::regclass`)
	require.NoError(t, err)
	leading := map[string]string{}
	for rows.Next() {
		var name, first string
		require.NoError(t, rows.Scan(&name, &first))
		leading[name] = first
	}
	require.NoError(t, rows.Err())
	require.Equal(t, "url", leading["listed_origin_pending_url"])
	for name, first := range leading {
		require.NotEqual(t, "visit_type", first, "index %s leads with visit_type", name)
	}
}

// TestURLLookupPlans checks that, with statistics (ensureStatistics), the
// statements that find an origin's listed rows by (url, visit_type) (a
// result's copy and disabling, a released visit's restore) reach
// listed_origin through the hash index of url only. Without statistics
// every equality looks equally selective, and the planner took
// listed_origin_oldest_scheduled, whose visit_type prefix lists every
// origin of the visit type.
func TestURLLookupPlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 5000)
	for name, c := range urlLookups() {
		t.Run(name, func(t *testing.T) {
			plan := explainSQL(t, ctx, s, c.sql, c.args...)
			scans := 0
			for _, line := range strings.Split(plan, "\n") {
				if strings.Contains(line, "Scan") && strings.Contains(line, " on listed_origin ") {
					scans++
					require.Contains(t, line, "Index Scan using listed_origin_url ", plan)
				}
			}
			require.NotZero(t, scans, plan)
		})
	}
}

// statement is a statement to plan, with arguments of the right types.
type statement struct {
	sql  string
	args []any
}

// urlLookups are the statements that look origins up by URL in both
// listed tables: a result's write, a released visit's restore and the
// flagging of origins that several listers list.
func urlLookups() map[string]statement {
	release := `WITH gone AS (DELETE FROM visit_in_flight WHERE id = ANY($1) AND state = 'pending'
		RETURNING url, visit_type, scheduled_at, prev_scheduled)` + restoreEligibility
	return map[string]statement{
		"result":   {writeListedStats, make([]any, 14)},
		"unlisted": {writeUnlistedStats, make([]any, 14)},
		"settle":   {takeOriginStats, []any{[]string{"https://example.org/a"}, []string{"git"}}},
		"release":  {release, []any{[]uuid.UUID{uuid.New()}}},
		"shared":   {shareListedRows, []any{[]string{"https://example.org/a"}, []string{"git"}}},
	}
}

// TestAnySetAsidePlan checks that the requeue step asks whether a visit
// type has picks set aside through the table's key, under its index-scan
// settings: with no index to serve it, the table was read whole.
func TestAnySetAsidePlan(t *testing.T) {
	s := OpenMigrated(t, nil)
	plan := explainWith(t, context.Background(), s, "SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off",
		anySetAside, "git")
	require.Contains(t, plan, "Index Scan using listed_origin_picked_pkey")
	require.NotContains(t, plan, "Seq Scan")
}

// TestCooldownsSkippedInIndex checks that a grab skips the origins in the
// failed and not-found cooldowns inside the policy's index, without
// reading their rows: with the first 600 origins of the stop_after_success
// order in those cooldowns, the candidate query reads exactly the rows it
// returns, and returns those after them.
func TestCooldownsSkippedInIndex(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	recordGitOrigins(t, s, 1000)
	now := s.now()
	at := now.Add(-time.Hour)
	stats := make([]revisit.VisitStats, 600)
	for i := range stats {
		status := revisit.VisitFailed
		if i%2 == 1 {
			status = revisit.VisitNotFound
		}
		stats[i] = revisit.VisitStats{URL: fmt.Sprintf("https://forge.example/%d", i), VisitType: "git",
			LastVisit: &at, LastVisitStatus: &status,
			NextPositionOffset: revisit.DefaultNextPositionOffset, SuccessiveVisits: revisit.DefaultSuccessiveVisits}
	}
	require.NoError(t, s.VisitStatsUpsert(ctx, stats))
	require.NoError(t, s.Maintain(ctx))
	p := grabsql.Params{VisitType: "git", Policy: revisit.StopAfterSuccess, Now: now, Cooldowns: revisit.DefaultCooldowns()}
	q, err := dialect.Build(p)
	require.NoError(t, err)
	plan := explainSQL(t, ctx, s, "(ANALYZE, TIMING OFF, COSTS OFF) "+q.SQL, append(q.Args, 100)...)
	require.Contains(t, plan, "Index Scan using listed_origin_stop_after_success on listed_origin (actual rows=100 ")
	require.Contains(t, plan, "CASE last_visit_status WHEN 'failed'::text THEN last_visit")
	require.Contains(t, plan, "CASE last_visit_status WHEN 'not_found'::text THEN last_visit")
	require.NotContains(t, plan, "Rows Removed by Filter")

	got, err := s.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 100, Policy: revisit.StopAfterSuccess,
		Now: now, DryRun: true})
	require.NoError(t, err)
	require.Len(t, got, 100)
	require.Equal(t, "https://forge.example/600", got[0].URL)
}

// TestBrowsePlans checks that every statement of a browse, each view
// either way, reads its index in order (docs/store.md, "Browsing
// origins").
func TestBrowsePlans(t *testing.T) {
	ctx := context.Background()
	s := OpenMigrated(t, nil)
	listerID, err := browse.SeedPlanWorld(ctx, s)
	require.NoError(t, err)
	for _, c := range browse.PlanCases(listerID) {
		t.Run(c.Name, func(t *testing.T) {
			q := &browse.CheckingQuerier{Next: browser{s}, Check: func(ctx context.Context, sql string, args []any) {
				plan := explainSQL(t, ctx, s, sql, args...)
				if !strings.Contains(plan, " using "+c.Index+" on listed_origin") {
					t.Errorf("plan does not read %s:\n%s", c.Index, plan)
				}
				if strings.Contains(plan, "Sort") {
					t.Errorf("plan sorts:\n%s", plan)
				}
			}}
			require.NoError(t, browse.Pages(ctx, q, dialectAside, c.Browse))
			require.GreaterOrEqual(t, q.Statements, 2)
		})
	}
}
