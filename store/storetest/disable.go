package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func exerciseDisable(t *testing.T, newStore NewStore) {
	parallel(t, "ListedOrigins/DisableExactKeyThenRelistEnables", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		f.record(origin(a.ID, "x", "git"), origin(a.ID, "x", "hg"), origin(a.ID, "y", "git"))
		f.record(origin(b.ID, "x", "git"))

		disable := func(names ...string) int {
			t.Helper()
			var ws []revisit.VisitStatsWrite
			for _, name := range names {
				st := revisit.NewVisitStats(revisit.OriginKey{URL: url(name), VisitType: "git"})
				st.LastVisit, st.LastVisitStatus = atp(0), stp(revisit.VisitNotFound)
				ws = append(ws, revisit.VisitStatsWrite{Stats: st, Disable: true})
			}
			res, err := f.s.VisitStatsWrite(f.ctx, ws)
			require.NoError(t, err)
			return res.Disabled
		}
		require.Equal(t, 2, disable("x"), "both listers' rows of (x, git)")
		require.False(t, f.get(a.ID, "x", "git").Enabled)
		require.False(t, f.get(b.ID, "x", "git").Enabled)
		require.True(t, f.get(a.ID, "x", "hg").Enabled, "another visit type of the same url stays enabled")
		require.True(t, f.get(a.ID, "y", "git").Enabled)

		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: at(0), DryRun: true}
		require.Equal(t, []string{"y"}, names(f.grab(p)), "a disabled origin is not grabbed")

		require.Equal(t, 0, disable("x", "nope"), "disabling again or an unknown origin changes nothing")

		f.record(origin(a.ID, "x", "git")) // the lister lists it again
		require.True(t, f.get(a.ID, "x", "git").Enabled, "a later listing re-enables it")
		require.False(t, f.get(b.ID, "x", "git").Enabled, "only the row that was listed again")
	})
}
