package storetest

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// ListerVisitOutcomes counts a lister's enabled origins by the status of
// their last visit, wherever their rows sit (waiting for a visit or not)
// and whenever their stats were written.
func exerciseOutcomes(t *testing.T, newStore NewStore) {
	parallel(t, "ListedOrigins/ListerVisitOutcomes", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "a")
		b := f.lister("gitlab", "b")
		status := func(name, vt string, s revisit.VisitStatus) revisit.VisitStats {
			st := revisit.NewVisitStats(revisit.OriginKey{URL: url(name), VisitType: vt})
			st.LastVisit, st.LastVisitStatus = atp(-day), stp(s)
			if s == revisit.VisitSuccessful {
				st.LastSuccessful = atp(-day)
			}
			return st
		}
		// Stats before their origins are listed, and after.
		f.upsert(status("ok-before", "git", revisit.VisitSuccessful), status("failed", "git", revisit.VisitFailed))
		disabled := origin(a.ID, "disabled", "git")
		disabled.Enabled = false
		f.record(origin(a.ID, "ok-before", "git"), origin(a.ID, "failed", "git"), origin(a.ID, "ok-after", "hg"),
			origin(a.ID, "gone", "git"), origin(a.ID, "never", "git"), origin(a.ID, "no-status", "git"), disabled,
			origin(b.ID, "ok-before", "git"), origin(b.ID, "only-b", "git"))
		noStatus := revisit.NewVisitStats(revisit.OriginKey{URL: url("no-status"), VisitType: "git"})
		noStatus.LastScheduled = atp(-day)
		f.upsert(status("ok-after", "hg", revisit.VisitSuccessful), status("gone", "git", revisit.VisitNotFound),
			status("disabled", "git", revisit.VisitSuccessful), noStatus, status("only-b", "git", revisit.VisitFailed))

		outcomes := func(l uuid.UUID) revisit.VisitOutcomes {
			t.Helper()
			o, err := f.s.ListerVisitOutcomes(f.ctx, l)
			require.NoError(t, err)
			require.Equal(t, o.Enabled, o.Successful+o.Failed+o.NotFound+o.NeverVisited, "%+v", o)
			return o
		}
		want := revisit.VisitOutcomes{Enabled: 6, Successful: 2, Failed: 1, NotFound: 1, NeverVisited: 2}
		require.Equal(t, want, outcomes(a.ID))
		require.Equal(t, revisit.VisitOutcomes{Enabled: 2, Successful: 1, Failed: 1}, outcomes(b.ID))
		require.Equal(t, revisit.VisitOutcomes{}, outcomes(uuid.New()), "an unknown lister has no origins")

		// Origins waiting for their visits still count, as they were.
		require.Len(t, f.dispatch(2, noCooldowns()), 2)
		require.Len(t, f.grab(revisit.GrabParams{VisitType: "git", Count: 2, Policy: revisit.OldestScheduledFirst,
			Cooldowns: noCooldowns(), Now: f.clock.Now()}), 2)
		require.Equal(t, want, outcomes(a.ID), "with visits pending")

		// A result moves its origin to its new status.
		f.clock.Advance(time.Hour)
		_, err := f.s.VisitStatsWrite(f.ctx, []revisit.VisitStatsWrite{{Stats: status("failed", "git", revisit.VisitSuccessful)},
			{Stats: status("never", "git", revisit.VisitNotFound)}})
		require.NoError(t, err)
		want = revisit.VisitOutcomes{Enabled: 6, Successful: 3, NotFound: 2, NeverVisited: 1}
		require.Equal(t, want, outcomes(a.ID), "after results")
	})
}
