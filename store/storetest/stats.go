package storetest

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// requireStats requires got to equal want, times at microsecond precision.
func requireStats(t *testing.T, want, got revisit.VisitStats) {
	t.Helper()
	require.Equal(t, want.URL, got.URL)
	require.Equal(t, want.VisitType, got.VisitType)
	requireTimePtr(t, want.LastSuccessful, got.LastSuccessful, "last_successful")
	requireTimePtr(t, want.LastVisit, got.LastVisit, "last_visit")
	requireTimePtr(t, want.LastScheduled, got.LastScheduled, "last_scheduled")
	require.Equal(t, want.LastVisitStatus, got.LastVisitStatus, "last_visit_status")
	require.Equal(t, want.LastSnapshot, got.LastSnapshot, "last_snapshot")
	require.Equal(t, want.NextVisitQueuePosition, got.NextVisitQueuePosition, "next_visit_queue_position")
	require.Equal(t, want.NextPositionOffset, got.NextPositionOffset, "next_position_offset")
	require.Equal(t, want.SuccessiveVisits, got.SuccessiveVisits, "successive_visits")
	requireRecent(t, want.Recent, got.Recent, "recent")
}

func exerciseStats(t *testing.T, newStore NewStore) {
	parallel(t, "VisitStats/GetMissing", func(t *testing.T) {
		f := newFixture(t, newStore)
		got, err := f.s.VisitStatsGet(f.ctx, []revisit.OriginKey{{URL: url("a"), VisitType: "git"}})
		require.NoError(t, err)
		require.Empty(t, got)
		got, err = f.s.VisitStatsGet(f.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
		// Recording an origin creates no stats by itself... or empty ones:
		// either way, nothing is known.
		l := f.lister("gitlab", "gitlab.com")
		f.record(origin(l.ID, "a", "git"))
		if s := f.stats("a", "git"); s != nil {
			require.Nil(t, s.LastScheduled)
			require.Nil(t, s.LastSuccessful)
			require.Nil(t, s.LastVisit)
		}
	})

	parallel(t, "VisitStats/RoundTrip", func(t *testing.T) {
		f := newFixture(t, newStore)
		full := revisit.VisitStats{
			URL: url("a"), VisitType: "git",
			LastSuccessful:         atp(-3*day + 1500*time.Nanosecond),
			LastVisit:              atp(-2*day + 2*time.Microsecond),
			LastVisitStatus:        stp(revisit.VisitFailed),
			LastScheduled:          atp(-day + 999*time.Nanosecond),
			LastSnapshot:           []byte{0x00, 0xff, 0x10, 0x80, 0x7f, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f},
			NextVisitQueuePosition: ip(1 << 40),
			NextPositionOffset:     7,
			SuccessiveVisits:       3,
			Recent: []revisit.RecentResult{{Date: at(-2*day + 2*time.Microsecond), Status: revisit.VisitFailed},
				{Date: at(-3*day + 1500*time.Nanosecond), Status: revisit.VisitSuccessful, Eventful: true}},
		}
		other := revisit.NewVisitStats(revisit.OriginKey{URL: url("a"), VisitType: "hg"})
		other.LastVisitStatus = stp(revisit.VisitNotFound)
		other.NextPositionOffset = 0
		third := revisit.NewVisitStats(revisit.OriginKey{URL: url("b"), VisitType: "git"})
		third.LastVisitStatus = stp(revisit.VisitSuccessful)
		third.NextVisitQueuePosition = ip(0)
		f.upsert(full, other, third)

		got, err := f.s.VisitStatsGet(f.ctx, []revisit.OriginKey{
			{URL: url("a"), VisitType: "git"}, {URL: url("zz"), VisitType: "git"},
			{URL: url("a"), VisitType: "hg"}, {URL: url("b"), VisitType: "git"}, {URL: url("b"), VisitType: "hg"}})
		require.NoError(t, err)
		require.Len(t, got, 3, "only the existing keys")
		sort.Slice(got, func(i, j int) bool { return got[i].URL+got[i].VisitType < got[j].URL+got[j].VisitType })
		requireStats(t, full, got[0])
		requireStats(t, other, got[1])
		requireStats(t, third, got[2])
	})

	parallel(t, "VisitStats/NullNeverOverwrites", func(t *testing.T) {
		f := newFixture(t, newStore)
		full := revisit.VisitStats{
			URL: url("a"), VisitType: "git",
			LastSuccessful:         atp(-3 * day),
			LastVisit:              atp(-2 * day),
			LastVisitStatus:        stp(revisit.VisitSuccessful),
			LastScheduled:          atp(-day),
			LastSnapshot:           []byte("0123456789abcdefghij"),
			NextVisitQueuePosition: ip(12345),
			NextPositionOffset:     6,
			SuccessiveVisits:       2,
			Recent:                 []revisit.RecentResult{{Date: at(-2 * day), Status: revisit.VisitSuccessful}},
		}
		f.upsert(full)

		// Only last_visit and the counters change; the nil fields keep theirs.
		partial := revisit.NewVisitStats(full.Key())
		partial.LastVisit = atp(-time.Hour)
		partial.NextPositionOffset = 2
		partial.SuccessiveVisits = 5
		f.upsert(partial)
		want := full
		want.LastVisit = partial.LastVisit
		want.NextPositionOffset = 2
		want.SuccessiveVisits = 5
		requireStats(t, want, *f.stats("a", "git"))

		// Non-nil values do overwrite, earlier times included.
		over := want
		over.LastScheduled = atp(-10 * day)
		over.LastVisitStatus = stp(revisit.VisitNotFound)
		over.LastSnapshot = []byte("other")
		over.NextVisitQueuePosition = ip(7)
		over.Recent = []revisit.RecentResult{{Date: at(-time.Hour), Status: revisit.VisitNotFound}}
		f.upsert(over)
		requireStats(t, over, *f.stats("a", "git"))
	})

	parallel(t, "QueuePosition/GetSet", func(t *testing.T) {
		f := newFixture(t, newStore)
		pos, err := f.s.QueuePositionGet(f.ctx, "git")
		require.NoError(t, err)
		require.Zero(t, pos, "unset is 0")
		require.NoError(t, f.s.QueuePositionSet(f.ctx, "git", 1<<40+3))
		pos, err = f.s.QueuePositionGet(f.ctx, "git")
		require.NoError(t, err)
		require.Equal(t, int64(1<<40+3), pos)
		pos, err = f.s.QueuePositionGet(f.ctx, "hg")
		require.NoError(t, err)
		require.Zero(t, pos, "per visit type")
		require.NoError(t, f.s.QueuePositionSet(f.ctx, "git", 10))
		pos, err = f.s.QueuePositionGet(f.ctx, "git")
		require.NoError(t, err)
		require.Equal(t, int64(10), pos, "set sets, lower too")
	})

	parallel(t, "QueuePosition/All", func(t *testing.T) {
		f := newFixture(t, newStore)
		all, err := f.s.QueuePositions(f.ctx)
		require.NoError(t, err)
		require.NotNil(t, all)
		require.Empty(t, all, "none stored")
		require.NoError(t, f.s.QueuePositionSet(f.ctx, "git", 1<<40+3))
		require.NoError(t, f.s.QueuePositionSet(f.ctx, "hg", 0))
		require.NoError(t, f.s.QueuePositionSet(f.ctx, "pypi", -5))
		all, err = f.s.QueuePositions(f.ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"git": 1<<40 + 3, "hg": 0, "pypi": -5}, all)
		require.NoError(t, f.s.QueuePositionSet(f.ctx, "git", 7))
		all, err = f.s.QueuePositions(f.ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"git": 7, "hg": 0, "pypi": -5}, all)
	})
}
