package feedback_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/internal/teststore"
	"github.com/revisit-sched/revisit/store"
)

// The test vectors of semantics.md §7, through Process, on both stores.
func TestVectorsOnBothStores(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		l, err := st.ListerGetOrCreate(ctx, "gitlab", "")
		require.NoError(t, err)
		gone := revisit.OriginKey{URL: "https://forge.example/gone", VisitType: "git"}
		alive := revisit.OriginKey{URL: "https://forge.example/alive", VisitType: "git"}
		_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
			{ListerID: l.ID, URL: gone.URL, VisitType: "git", Enabled: true},
			{ListerID: l.ID, URL: alive.URL, VisitType: "git", Enabled: true}})
		require.NoError(t, err)
		day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
		fixed := func() float64 { return 0.5 } // u = 0: exact positions
		snapshot := func(c byte) []byte { return []byte{c, c, c, c} }

		batch := []feedback.VisitStatus{
			{Origin: gone.URL, VisitType: "git", Status: feedback.StatusNotFound, Date: day(1)},
			{Origin: alive.URL, VisitType: "git", Status: feedback.StatusFull, Date: day(1), Snapshot: snapshot('E')},
			{Origin: gone.URL, VisitType: "git", Status: feedback.StatusNotFound, Date: day(2)},
			{Origin: alive.URL, VisitType: "git", Status: feedback.StatusPartial, Date: day(2), Snapshot: snapshot('A')},
			{Origin: gone.URL, VisitType: "git", Status: feedback.StatusNotFound, Date: day(3)},
			{Origin: alive.URL, VisitType: "git", Status: feedback.StatusFull, Date: day(3), Snapshot: snapshot('D')},
		}
		_, err = feedback.Process(ctx, st, batch, fixed)
		require.NoError(t, err)
		stats, err := st.VisitStatsGet(ctx, []revisit.OriginKey{gone, alive})
		require.NoError(t, err)
		require.Len(t, stats, 2)
		by := map[revisit.OriginKey]revisit.VisitStats{stats[0].Key(): stats[0], stats[1].Key(): stats[1]}

		g := by[gone]
		require.Equal(t, 6, g.NextPositionOffset, "three not_found: offset 4 → 5 → 6")
		require.Equal(t, 3, g.SuccessiveVisits)
		require.Equal(t, revisit.VisitNotFound, *g.LastVisitStatus)
		a := by[alive]
		require.Equal(t, 0, a.NextPositionOffset, "eventful thrice: 4 → 2 → 0")
		require.Equal(t, 3, a.SuccessiveVisits)
		require.Equal(t, day(3), *a.LastSuccessful)
		require.Equal(t, snapshot('D'), a.LastSnapshot)
		// From the visit type's position 0, u = 0: 2 days (offset 4), 2 days
		// (offset 2), 1 day (offset 0).
		require.Equal(t, int64((2+2+1)*86400), *a.NextVisitQueuePosition)

		page, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{URLs: []string{gone.URL}, Enabled: revisit.AnyEnabled})
		require.NoError(t, err)
		require.False(t, page.Origins[0].Enabled, "three not_found disable the origin")

		// The same messages again: ignored.
		res, err := feedback.Process(ctx, st, batch, fixed)
		require.NoError(t, err)
		require.Zero(t, res.Processed)
		again, err := st.VisitStatsGet(ctx, []revisit.OriginKey{alive})
		require.NoError(t, err)
		require.Equal(t, a, again[0])

		// A later listing re-enables it.
		_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: l.ID, URL: gone.URL, VisitType: "git", Enabled: true}})
		require.NoError(t, err)
		page, err = st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{URLs: []string{gone.URL}, Enabled: revisit.AnyEnabled})
		require.NoError(t, err)
		require.True(t, page.Origins[0].Enabled)
	})
}
