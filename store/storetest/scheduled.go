package storetest

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// Origins waiting for the result of their visit (grabbed, no result yet)
// stay listed, recordable and countable like any other, whatever the store
// does with them to keep its grabs fast.
func exerciseScheduled(t *testing.T, newStore NewStore) {
	parallel(t, "Scheduled/OriginsStayListedAndRecordable", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "a")
		b := f.lister("gitlab", "b")
		f.record(origin(a.ID, "o1", "git"), origin(a.ID, "o2", "git"))
		oldest := revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst}
		require.Equal(t, []string{"o1"}, f.grabNames(oldest))

		require.Len(t, f.all(revisit.ListedOriginFilter{VisitType: "git"}), 2, "a scheduled origin is still listed")
		require.Equal(t, []string{"git"}, f.listerVisitTypes(a))
		requireTimePtr(t, &base, f.stats("o1", "git").LastScheduled, "stats show the mark")

		// A new listing updates the scheduled row; a second lister's new row
		// of the same origin shares its mark.
		f.clock.Advance(time.Hour)
		relisted := origin(a.ID, "o1", "git")
		relisted.LastUpdate = atp(-day)
		require.Equal(t, revisit.RecordResult{Updated: 1}, f.record(relisted))
		requireTimePtr(t, relisted.LastUpdate, f.get(a.ID, "o1", "git").LastUpdate)
		require.Equal(t, revisit.RecordResult{Inserted: 1}, f.record(origin(b.ID, "o1", "git")))
		require.Equal(t, []string{"o2"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 5,
			Policy: revisit.OldestScheduledFirst}), "o1 is scheduled, under either lister")

		metrics, err := f.s.MetricsUpdate(f.ctx, &a.ID, f.clock.Now())
		require.NoError(t, err)
		require.Len(t, metrics, 1)
		require.Equal(t, int64(2), metrics[0].OriginsKnown, "scheduled origins are counted")

		// The result brings every row back with its stats; the mark stays.
		f.upsert(revisit.VisitStats{URL: url("o1"), VisitType: "git", LastVisit: atp(2 * time.Hour),
			LastVisitStatus: stp(revisit.VisitSuccessful), LastSuccessful: atp(2 * time.Hour),
			NextPositionOffset: 4, SuccessiveVisits: 1})
		st := f.stats("o1", "git")
		requireTimePtr(t, &base, st.LastScheduled, "the result keeps the grab's mark")
		requireTimePtr(t, atp(2*time.Hour), st.LastVisit)
		f.clock.Set(at(3 * time.Hour))
		got := f.grab(revisit.GrabParams{VisitType: "git", Count: 5, Policy: revisit.OldestScheduledFirst,
			Cooldowns: &revisit.Cooldowns{Scheduled: 7 * day}})
		require.Len(t, got, 1, "o2 and o1 were both scheduled; o1 has its result, o2 not")
		require.Equal(t, url("o1"), got[0].URL)
		require.Equal(t, a.ID, got[0].ListerID, "ties go to the row listed first")
	})
}

// An origin that several listers list is grabbed once, whichever way its
// rows were recorded (in one batch, one lister after the other), and none of
// its rows is grabbed again while its visit is pending.
func exerciseSharedOrigins(t *testing.T, newStore NewStore) {
	parallel(t, "Scheduled/SharedOriginsMoveTogether/Record", func(t *testing.T) {
		sharedOriginsMoveTogether(t, newFixture(t, newStore), func(f *fixture, batch ...revisit.ListedOrigin) {
			f.record(batch...)
		})
	})
	parallel(t, "Scheduled/SharedOriginsMoveTogether/RecordReturning", func(t *testing.T) {
		sharedOriginsMoveTogether(t, newFixture(t, newStore), func(f *fixture, batch ...revisit.ListedOrigin) {
			f.recordReturning(batch...)
		})
	})
}

func sharedOriginsMoveTogether(t *testing.T, f *fixture, record func(f *fixture, batch ...revisit.ListedOrigin)) {
	a := f.lister("gitlab", "a")
	b := f.lister("gitlab", "b")
	record(f, origin(a.ID, "together", "git"), origin(b.ID, "together", "git"))
	record(f, origin(a.ID, "later", "git"), origin(a.ID, "solo", "git"))
	record(f, origin(b.ID, "later", "git"))
	p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst,
		Cooldowns: &revisit.Cooldowns{Scheduled: day}}

	for round := range 2 {
		got := f.grabNames(p)
		sort.Strings(got)
		require.Equal(t, []string{"later", "solo", "together"}, got, "round %d: each origin once", round)
		require.Empty(t, f.grabNames(p), "round %d: no row of a pending origin is left to grab", round)
		require.Len(t, f.all(revisit.ListedOriginFilter{VisitType: "git"}), 5, "round %d: every row stays listed", round)

		f.clock.Advance(time.Hour)
		for _, name := range got {
			f.upsert(revisit.VisitStats{URL: url(name), VisitType: "git", LastVisit: atp(f.clock.Now().Sub(base)),
				LastVisitStatus: stp(revisit.VisitSuccessful), LastSuccessful: atp(f.clock.Now().Sub(base)),
				NextPositionOffset: 4, SuccessiveVisits: 1})
		}
		f.clock.Advance(2 * day)
	}
}

// listerVisitTypes returns the visit types of lister l's origins.
func (f *fixture) listerVisitTypes(l revisit.Lister) []string {
	f.t.Helper()
	vts, err := f.s.ListerVisitTypes(f.ctx, l.ID)
	require.NoError(f.t, err)
	return vts
}
