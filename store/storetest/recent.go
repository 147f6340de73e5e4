package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/store"
)

// requireRecent requires got to be want, dates at microsecond precision.
func requireRecent(t *testing.T, want, got []revisit.RecentResult, msgAndArgs ...any) {
	t.Helper()
	require.Len(t, got, len(want), msgAndArgs...)
	for i := range want {
		requireTime(t, want[i].Date, got[i].Date, msgAndArgs...)
		require.Equal(t, time.UTC, got[i].Date.Location(), msgAndArgs...)
		require.Equal(t, want[i].Status, got[i].Status, msgAndArgs...)
		require.Equal(t, want[i].Eventful, got[i].Eventful, msgAndArgs...)
	}
}

// An origin's recent results, as result processing (feedback.Process)
// writes them: the five newest, newest first, each eventful or not; a
// late result leaves them, and so does a write of stats without them.
func exerciseRecentResults(t *testing.T, newStore NewStore) {
	parallel(t, "VisitStats/RecentResults", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.record(origin(l.ID, "a", "git"))
		snapshot := func(b byte) []byte {
			s := make([]byte, revisit.SnapshotIDLength)
			s[0] = b
			return s
		}
		result := func(hours int, status string, snap []byte) feedback.VisitStatus {
			return feedback.VisitStatus{Origin: url("a"), VisitType: "git", Status: status,
				Date: at(time.Duration(hours)*time.Hour - day + 1500*time.Nanosecond), Snapshot: snap}
		}
		process := func(results ...feedback.VisitStatus) feedback.Result {
			t.Helper()
			res, err := feedback.Process(f.ctx, f.s, results, nil, feedback.Horizon{Clock: f.clock.Now})
			require.NoError(t, err)
			return res
		}
		saysEventful := result(4, feedback.StatusPartial, nil)
		saysEventful.Eventful = bp(true)
		// Seven results, the first three alone, the other four in a batch.
		process(result(1, feedback.StatusFull, snapshot(1)))
		process(result(2, feedback.StatusFull, snapshot(1)))
		process(result(3, feedback.StatusFailed, nil))
		process(saysEventful, result(5, feedback.StatusNotFound, nil), result(6, feedback.StatusFull, snapshot(1)),
			result(7, feedback.StatusFull, snapshot(2)))
		date := func(hours int) time.Time { return result(hours, "", nil).Date }
		want := []revisit.RecentResult{
			{Date: date(7), Status: revisit.VisitSuccessful, Eventful: true},
			{Date: date(6), Status: revisit.VisitSuccessful},
			{Date: date(5), Status: revisit.VisitNotFound},
			{Date: date(4), Status: revisit.VisitSuccessful, Eventful: true},
			{Date: date(3), Status: revisit.VisitFailed},
		}
		requireRecent(t, want, f.stats("a", "git").Recent, "the five newest of seven, newest first")

		// A late result, and the newest again: ignored, nothing added.
		res := process(result(5, feedback.StatusFailed, nil), result(7, feedback.StatusFull, snapshot(3)))
		require.Equal(t, 2, res.Late)
		requireRecent(t, want, f.stats("a", "git").Recent, "a late result adds nothing")

		// Stats written without results (the Software Heritage RPC's
		// upsert) keep them; a write with results replaces them.
		partial := revisit.NewVisitStats(revisit.OriginKey{URL: url("a"), VisitType: "git"})
		partial.LastScheduled = atp(time.Hour)
		f.upsert(partial)
		got := f.stats("a", "git")
		requireTime(t, at(time.Hour), *got.LastScheduled)
		requireRecent(t, want, got.Recent, "an upsert without results keeps them")
		partial.Recent = want[:1]
		f.upsert(partial)
		requireRecent(t, want[:1], f.stats("a", "git").Recent, "an upsert with results writes them")

		// Stats never written with results have none.
		f.upsert(revisit.NewVisitStats(revisit.OriginKey{URL: url("b"), VisitType: "git"}))
		require.Nil(t, f.stats("b", "git").Recent)
	})

	parallel(t, "VisitStats/RecentResultsChecked", func(t *testing.T) {
		f := newFixture(t, newStore)
		ok := revisit.RecentResult{Date: at(0), Status: revisit.VisitFailed}
		for _, c := range []struct {
			recent []revisit.RecentResult
			field  string
		}{
			{[]revisit.RecentResult{ok, ok, ok, ok, ok, ok}, "stats[1].recent"},
			{[]revisit.RecentResult{ok, {Date: at(0), Status: "partial"}}, "stats[1].recent[1].status"},
			{[]revisit.RecentResult{{Status: revisit.VisitFailed}}, "stats[1].recent[0].date"},
			{[]revisit.RecentResult{{Date: at(0), Status: revisit.VisitFailed, Eventful: true}}, "stats[1].recent[0].eventful"},
		} {
			good := revisit.NewVisitStats(revisit.OriginKey{URL: url("good"), VisitType: "git"})
			bad := revisit.NewVisitStats(revisit.OriginKey{URL: url("bad"), VisitType: "git"})
			bad.Recent = c.recent
			err := f.s.VisitStatsUpsert(f.ctx, []revisit.VisitStats{good, bad})
			requireInvalid(t, err, c.field)
			require.Nil(t, f.stats("good", "git"), "nothing of a refused batch is written")
		}
	})
}

// MigratedStore is a store whose schema migrations a test drives.
type MigratedStore interface {
	store.Store
	store.Migrator
}

// RecentResultsMigration checks migration 00024 on s, a migrated store of
// no other test, which down takes back to a schema version: the stats of
// an origin, written with recent results, keep every other field through
// a return to version 23 and a new migration, and have no recent results.
func RecentResultsMigration(t *testing.T, s MigratedStore, down func(ctx context.Context, version int64) error) {
	t.Helper()
	ctx := context.Background()
	written := revisit.VisitStats{URL: url("a"), VisitType: "git", LastSuccessful: atp(-day), LastVisit: atp(-time.Hour),
		LastVisitStatus: stp(revisit.VisitFailed), LastScheduled: atp(-2 * time.Hour), LastSnapshot: make([]byte, 20),
		NextVisitQueuePosition: ip(4242), NextPositionOffset: 6, SuccessiveVisits: 2,
		Recent: []revisit.RecentResult{{Date: at(-time.Hour), Status: revisit.VisitFailed},
			{Date: at(-day), Status: revisit.VisitSuccessful, Eventful: true}}}
	require.NoError(t, s.VisitStatsUpsert(ctx, []revisit.VisitStats{written}))
	require.NoError(t, down(ctx, 23))
	current, _, err := s.SchemaVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(23), current)
	require.NoError(t, s.Migrate(ctx))
	got, err := s.VisitStatsGet(ctx, []revisit.OriginKey{written.Key()})
	require.NoError(t, err)
	require.Len(t, got, 1)
	want := written
	want.Recent = nil
	requireStats(t, want, got[0])
}
