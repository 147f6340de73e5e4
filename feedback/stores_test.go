package feedback_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
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
		snapshot := snapshotID

		batch := []feedback.VisitStatus{
			{Origin: gone.URL, VisitType: "git", Status: feedback.StatusNotFound, Date: day(1)},
			{Origin: alive.URL, VisitType: "git", Status: feedback.StatusFull, Date: day(1), Snapshot: snapshot('E')},
			{Origin: gone.URL, VisitType: "git", Status: feedback.StatusNotFound, Date: day(2)},
			{Origin: alive.URL, VisitType: "git", Status: feedback.StatusPartial, Date: day(2), Snapshot: snapshot('A')},
			{Origin: gone.URL, VisitType: "git", Status: feedback.StatusNotFound, Date: day(3)},
			{Origin: alive.URL, VisitType: "git", Status: feedback.StatusFull, Date: day(3), Snapshot: snapshot('D')},
		}
		_, err = feedback.Process(ctx, st, batch, fixed, feedback.Horizon{})
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
		res, err := feedback.Process(ctx, st, batch, fixed, feedback.Horizon{})
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

// Results processed by many concurrent callers, on both stores: no result
// is lost to another caller's write (each origin ends at its latest visit)
// and each is counted once.
func TestConcurrentProcessLosesNoResult(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		l, err := st.ListerGetOrCreate(ctx, "forge", "")
		require.NoError(t, err)
		const origins, perOrigin, callers = 4, 30, 6
		var listed []revisit.ListedOrigin
		for i := range origins {
			listed = append(listed, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://forge.example/%d", i),
				VisitType: "git", Enabled: true})
		}
		_, err = st.ListedOriginsRecord(ctx, listed)
		require.NoError(t, err)
		// Their visits are in flight: results also bring pending origins back.
		grabbed, err := st.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: origins,
			Policy: revisit.OldestScheduledFirst})
		require.NoError(t, err)
		require.Len(t, grabbed, origins)

		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var statuses []feedback.VisitStatus
		for i := range perOrigin {
			for _, o := range listed {
				statuses = append(statuses, feedback.VisitStatus{Origin: o.URL, VisitType: "git", Status: feedback.StatusFull,
					Date: start.Add(time.Duration(i) * time.Hour), Snapshot: snapshotID(byte(i))})
			}
		}
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(statuses), func(i, j int) { statuses[i], statuses[j] = statuses[j], statuses[i] })

		var (
			wg          sync.WaitGroup
			mu          sync.Mutex
			counted     int
			next        int
			firstFailed error
		)
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					lo := next
					next = min(next+3, len(statuses))
					mu.Unlock()
					if lo == len(statuses) {
						return
					}
					res, err := feedback.Process(ctx, st, statuses[lo:min(lo+3, len(statuses))], func() float64 { return 0.5 }, feedback.Horizon{})
					mu.Lock()
					counted += res.Processed + res.Late
					if err != nil && firstFailed == nil {
						firstFailed = err
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.NoError(t, firstFailed)
		require.Equal(t, len(statuses), counted, "every result processed or found late, once")

		latest := start.Add((perOrigin - 1) * time.Hour)
		keys := make([]revisit.OriginKey, len(listed))
		for i, o := range listed {
			keys[i] = revisit.OriginKey{URL: o.URL, VisitType: "git"}
		}
		stats, err := st.VisitStatsGet(ctx, keys)
		require.NoError(t, err)
		require.Len(t, stats, origins)
		for _, s := range stats {
			require.Equal(t, latest, *s.LastVisit, "%s: the latest visit survives every other caller's write", s.URL)
			require.Equal(t, snapshotID(perOrigin-1), s.LastSnapshot, s.URL)
		}
		page, err := st.ListedOriginsGet(ctx, revisit.ListedOriginFilter{ListerID: &l.ID})
		require.NoError(t, err)
		require.Len(t, page.Origins, origins, "every origin still listed and enabled")
	})
}

// Results close the visits in flight of their origins, on both stores:
// sent and lost visits scheduled at or before the result, not a pending
// one, and not one scheduled after the result's date.
func TestProcessClosesVisitsInFlight(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		l, err := st.ListerGetOrCreate(ctx, "forge", "")
		require.NoError(t, err)
		var listed []revisit.ListedOrigin
		for _, name := range []string{"sent", "before", "lost", "pending"} {
			listed = append(listed, revisit.ListedOrigin{ListerID: l.ID, URL: "https://forge.example/" + name,
				VisitType: "git", Enabled: true})
		}
		_, err = st.ListedOriginsRecord(ctx, listed)
		require.NoError(t, err)
		vs, err := st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{
			VisitType: "git", Count: len(listed), Policy: revisit.OldestScheduledFirst}})
		require.NoError(t, err)
		require.Len(t, vs, len(listed))
		byURL := map[string]revisit.Visit{}
		for _, v := range vs {
			byURL[v.Origin.URL] = v
		}
		visit := func(name string) revisit.Visit { return byURL["https://forge.example/"+name] }
		scheduled := vs[0].ScheduledAt
		// lost: sent when scheduled, then past its timeout.
		_, err = st.VisitsSent(ctx, []string{visit("lost").ID}, scheduled)
		require.NoError(t, err)
		n, err := st.VisitsExpire(ctx, "git", scheduled.Add(time.Microsecond))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		_, err = st.VisitsSent(ctx, []string{visit("sent").ID, visit("before").ID}, scheduled.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Pending: 1, Sent: 2, Lost: 1}}, counts(t, st))

		after := scheduled.Add(time.Minute)
		status := func(name, s string, date time.Time) feedback.VisitStatus {
			return feedback.VisitStatus{Origin: "https://forge.example/" + name, VisitType: "git", Status: s, Date: date}
		}
		res, err := feedback.Process(ctx, st, []feedback.VisitStatus{
			status("sent", feedback.StatusOngoing, after),
			status("before", feedback.StatusFailed, scheduled.Add(-time.Microsecond)),
			status("lost", feedback.StatusNotFound, after),
			status("pending", feedback.StatusFull, after),
		}, nil, feedback.Horizon{})
		require.NoError(t, err)
		require.Equal(t, 3, res.Processed)
		require.Equal(t, 1, res.Closed, "the lost visit; an ongoing status ends no visit")
		got, err := st.VisitsGet(ctx, []string{visit("lost").ID})
		require.NoError(t, err)
		require.Empty(t, got)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Pending: 1, Sent: 2}}, counts(t, st),
			"a result dated before its origin's visit was scheduled is not its result; a pending visit stays")

		res, err = feedback.Process(ctx, st, []feedback.VisitStatus{status("sent", feedback.StatusFull, after)}, nil, feedback.Horizon{})
		require.NoError(t, err)
		require.Equal(t, 1, res.Closed)
		got, err = st.VisitsGet(ctx, []string{visit("sent").ID})
		require.NoError(t, err)
		require.Empty(t, got)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Pending: 1, Sent: 1}}, counts(t, st))
	})
}

// counts returns the store's VisitsCount.
func counts(t *testing.T, st store.Store) []revisit.VisitCounts {
	t.Helper()
	cs, err := st.VisitsCount(context.Background())
	require.NoError(t, err)
	return cs
}

// snapshotID returns a snapshot id of 20 bytes of b.
func snapshotID(b byte) []byte { return bytes.Repeat([]byte{b}, revisit.SnapshotIDLength) }
