package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// activity runs ActivityByMinute over [since, until) and requires success.
func (f *fixture) activity(since, until time.Time) []revisit.MinuteCount {
	f.t.Helper()
	got, err := f.s.ActivityByMinute(f.ctx, since, until)
	require.NoError(f.t, err)
	for i := range got {
		require.Equal(f.t, time.UTC, got[i].Minute.Location(), "minutes are in UTC")
	}
	return got
}

// minuteCount is the MinuteCount of an event of kind at the minute d after base.
func minuteCount(visitType string, kind revisit.ActivityKind, label string, d time.Duration, n int64) revisit.MinuteCount {
	return revisit.MinuteCount{VisitType: visitType, Kind: kind, Label: label, Minute: at(d), Count: n}
}

func exerciseActivity(t *testing.T, newStore NewStore) {
	parallel(t, "Activity/ByMinuteFromVisitsAndStats", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(4)
		f.clock.Set(at(70 * time.Second))
		vs := f.dispatch(3, nil)
		require.Equal(t, []string{"o0", "o1", "o2"}, visitNames(vs))
		_, err := f.s.VisitsSent(f.ctx, visitIDs(vs), at(80*time.Second))
		require.NoError(t, err)

		// o0 and o1 end with a result: the visit stats keep when they were
		// scheduled and their outcome, their visits' records go.
		result := func(name string, d time.Duration, status revisit.VisitStatus) revisit.VisitStatsWrite {
			s := revisit.NewVisitStats(revisit.OriginKey{URL: url(name), VisitType: "git"})
			s.LastVisit, s.LastVisitStatus = atp(d), stp(status)
			return revisit.VisitStatsWrite{Stats: s, Guarded: true}
		}
		f.clock.Set(at(4 * time.Minute))
		_, err = f.s.VisitStatsWrite(f.ctx, []revisit.VisitStatsWrite{
			result("o0", 3*time.Minute+5*time.Second, revisit.VisitSuccessful),
			result("o1", 4*time.Minute, revisit.VisitFailed)})
		require.NoError(t, err)
		_, err = f.s.VisitsClose(f.ctx, visitIDs(vs[:2]))
		require.NoError(t, err)
		// o2's visit is lost: its record stays, with its policy.
		f.clock.Set(at(2*time.Hour + 30*time.Second))
		n, err := f.s.VisitsExpire(f.ctx, "git", at(2*time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		// Stats written by other means count too; those outside the window
		// do not.
		f.upsert(revisit.VisitStats{URL: url("h"), VisitType: "hg", LastScheduled: atp(4 * time.Minute),
			LastVisit: atp(5*time.Minute + 59*time.Second), LastVisitStatus: stp(revisit.VisitNotFound),
			NextPositionOffset: 4, SuccessiveVisits: 1},
			revisit.VisitStats{URL: url("old"), VisitType: "hg", LastScheduled: atp(-2 * time.Hour),
				LastVisit: atp(-time.Hour), LastVisitStatus: stp(revisit.VisitSuccessful),
				NextPositionOffset: 4, SuccessiveVisits: 1})

		policy := string(revisit.OldestScheduledFirst)
		require.Equal(t, []revisit.MinuteCount{
			minuteCount("git", revisit.ActivityLost, "", 2*time.Hour, 1),
			minuteCount("git", revisit.ActivityResult, "failed", 4*time.Minute, 1),
			minuteCount("git", revisit.ActivityResult, "successful", 3*time.Minute, 1),
			minuteCount("git", revisit.ActivityScheduled, "", time.Minute, 2),
			minuteCount("git", revisit.ActivityScheduled, policy, time.Minute, 1),
			minuteCount("hg", revisit.ActivityResult, "not_found", 5*time.Minute, 1),
			minuteCount("hg", revisit.ActivityScheduled, "", 4*time.Minute, 1),
		}, f.activity(base, at(3*time.Hour)), "by visit type, kind, label and minute")

		require.Equal(t, []revisit.MinuteCount{
			minuteCount("git", revisit.ActivityScheduled, "", time.Minute, 2),
			minuteCount("git", revisit.ActivityScheduled, policy, time.Minute, 1),
		}, f.activity(base, at(3*time.Minute+5*time.Second)), "the window's end is left out")
		require.Empty(t, f.activity(at(3*time.Hour), at(3*time.Hour)), "an empty window")

		_, err = f.s.ActivityByMinute(f.ctx, at(time.Hour), base)
		requireInvalid(t, err, "until")
	})
}

func exerciseActivityResults(t *testing.T, newStore NewStore) {
	parallel(t, "Activity/ResultsKeptWithTheStats", func(t *testing.T) {
		f := newFixture(t, newStore)
		// Three results of one origin in the window, one before it; a
		// second origin whose stats were written without their results
		// since its last kept one (its last visit counts too), a third
		// with no results kept (its last visit alone).
		kept := func(d time.Duration, status revisit.VisitStatus, eventful bool) revisit.RecentResult {
			return revisit.RecentResult{Date: at(d), Status: status, Eventful: eventful}
		}
		stats := func(name string, last time.Duration, status revisit.VisitStatus, rs ...revisit.RecentResult) revisit.VisitStats {
			return revisit.VisitStats{URL: url(name), VisitType: "git", LastVisit: atp(last), LastVisitStatus: stp(status),
				NextPositionOffset: 4, SuccessiveVisits: 1, Recent: rs}
		}
		f.upsert(
			stats("a", 10*time.Minute, revisit.VisitFailed, kept(10*time.Minute, revisit.VisitFailed, false),
				kept(3*time.Minute+30*time.Second, revisit.VisitSuccessful, true),
				kept(3*time.Minute, revisit.VisitSuccessful, false), kept(-time.Hour, revisit.VisitNotFound, false)),
			stats("b", 20*time.Minute, revisit.VisitNotFound, kept(3*time.Minute, revisit.VisitSuccessful, true)),
			stats("c", 10*time.Minute, revisit.VisitSuccessful))
		require.Equal(t, []revisit.MinuteCount{
			minuteCount("git", revisit.ActivityResult, "failed", 10*time.Minute, 1),
			minuteCount("git", revisit.ActivityResult, "not_found", 20*time.Minute, 1),
			minuteCount("git", revisit.ActivityResult, "successful", 3*time.Minute, 3),
			minuteCount("git", revisit.ActivityResult, "successful", 10*time.Minute, 1),
		}, f.activity(base, at(time.Hour)), "every result kept, and last visits not among them")
		require.Equal(t, []revisit.MinuteCount{
			minuteCount("git", revisit.ActivityResult, "successful", 3*time.Minute, 3),
		}, f.activity(base, at(4*time.Minute)), "the window bounds each result")
	})
}
