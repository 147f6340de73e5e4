package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func exerciseStatsWrite(t *testing.T, newStore NewStore) {
	parallel(t, "VisitStats/GuardedWriteAndDisable", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("gitlab", "framagit.org")
		f.record(origin(a.ID, "x", "git"), origin(a.ID, "y", "git"), origin(a.ID, "z", "git"))
		f.record(origin(b.ID, "x", "git"))
		visited := func(name string, d int, status revisit.VisitStatus) revisit.VisitStats {
			s := revisit.NewVisitStats(revisit.OriginKey{URL: url(name), VisitType: "git"})
			s.LastVisit, s.LastVisitStatus = atp(time.Duration(d)*time.Hour), stp(status)
			return s
		}
		write := func(ws ...revisit.VisitStatsWrite) revisit.VisitStatsWriteResult {
			t.Helper()
			res, err := f.s.VisitStatsWrite(f.ctx, ws)
			require.NoError(t, err)
			return res
		}

		// Guarded by "no visit": x has no stats, so the write happens.
		res := write(revisit.VisitStatsWrite{Stats: visited("x", 1, revisit.VisitFailed), Guarded: true})
		require.Empty(t, res.Stale)
		require.Equal(t, atp(1*time.Hour), f.stats("x", "git").LastVisit)

		// The same guard again: x was visited since, so the write is stale
		// and changes nothing; an unguarded write in the batch happens.
		res = write(revisit.VisitStatsWrite{Stats: visited("x", 2, revisit.VisitFailed), Guarded: true},
			revisit.VisitStatsWrite{Stats: visited("y", 2, revisit.VisitSuccessful)})
		require.Equal(t, []revisit.OriginKey{{URL: url("x"), VisitType: "git"}}, res.Stale)
		require.Equal(t, atp(1*time.Hour), f.stats("x", "git").LastVisit)
		require.Equal(t, atp(2*time.Hour), f.stats("y", "git").LastVisit)

		// Guarded by the visit it read, with a disable: written, and every
		// lister's row of x disabled in the same step; a stale write's
		// disable does not happen.
		res = write(revisit.VisitStatsWrite{Stats: visited("x", 3, revisit.VisitFailed), Guarded: true,
			IfLastVisit: atp(1 * time.Hour), Disable: true},
			revisit.VisitStatsWrite{Stats: visited("y", 3, revisit.VisitFailed), Guarded: true,
				IfLastVisit: atp(1 * time.Hour), Disable: true})
		require.Equal(t, []revisit.OriginKey{{URL: url("y"), VisitType: "git"}}, res.Stale)
		require.Equal(t, 2, res.Disabled, "both listers' rows of x")
		require.Equal(t, atp(3*time.Hour), f.stats("x", "git").LastVisit)
		require.False(t, f.get(a.ID, "x", "git").Enabled)
		require.False(t, f.get(b.ID, "x", "git").Enabled)
		require.True(t, f.get(a.ID, "y", "git").Enabled)

		// An origin whose visit is in flight: its result keeps the grab's
		// mark and can disable it.
		grabbed := f.grabNames(revisit.GrabParams{VisitType: "git", Count: 2, Policy: revisit.OldestScheduledFirst,
			Now: at(4 * time.Hour), Cooldowns: noCooldowns()})
		require.Equal(t, []string{"y", "z"}, grabbed)
		res = write(revisit.VisitStatsWrite{Stats: visited("z", 5, revisit.VisitNotFound), Guarded: true, Disable: true})
		require.Empty(t, res.Stale)
		require.Equal(t, 1, res.Disabled)
		z := f.stats("z", "git")
		require.Equal(t, atp(4*time.Hour), z.LastScheduled, "the grab's mark is folded in")
		require.Equal(t, atp(5*time.Hour), z.LastVisit)
		require.False(t, f.get(a.ID, "z", "git").Enabled)
		require.Equal(t, []string{"y"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst, Now: at(6 * time.Hour), Cooldowns: noCooldowns(), DryRun: true}),
			"disabled origins are not grabbed")

		// A bad write fails the whole batch, naming it.
		bad := visited("w", 7, revisit.VisitFailed)
		bad.URL = ""
		_, err := f.s.VisitStatsWrite(f.ctx, []revisit.VisitStatsWrite{
			{Stats: visited("y", 7, revisit.VisitSuccessful)}, {Stats: bad}})
		requireInvalid(t, err, "stats[1].url")
		require.Equal(t, atp(2*time.Hour), f.stats("y", "git").LastVisit, "nothing written")
	})
}
