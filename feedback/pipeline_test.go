package feedback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/feedback"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// A pipeline of several workers gives every origin the stats that
// processing its statuses in input order gives: the same sequences, fed
// once through the pipeline and once batch after batch, end equal, and
// none of the pipeline's statuses is taken for a late one.
func TestPipelineKeepsEachOriginsOrder(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		l, err := st.ListerGetOrCreate(ctx, "forge", "")
		require.NoError(t, err)
		const origins = 24
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		// Each origin's history: eventful and uneventful successes, a
		// failure, and for every third origin three not_found in a row to
		// end with (disabled).
		history := func(i int) []feedback.VisitStatus {
			full := func(snap byte) feedback.VisitStatus {
				return feedback.VisitStatus{Status: feedback.StatusFull, Snapshot: append(bytes.Repeat([]byte{snap}, revisit.SnapshotIDLength-1), byte(i))}
			}
			h := []feedback.VisitStatus{full(1), full(1), {Status: feedback.StatusFailed}, full(2), full(3)}
			if i%3 == 0 {
				notFound := feedback.VisitStatus{Status: feedback.StatusNotFound}
				h = append(h, notFound, notFound, notFound)
			}
			return h
		}
		// stream interleaves the histories of the origins named prefix-i,
		// dated in order, so that each origin's statuses spread over
		// several batches.
		stream := func(prefix string) ([]feedback.VisitStatus, []revisit.OriginKey) {
			var out []feedback.VisitStatus
			var keys []revisit.OriginKey
			var listed []revisit.ListedOrigin
			for i := range origins {
				url := fmt.Sprintf("https://forge.example/%s-%d", prefix, i)
				keys = append(keys, revisit.OriginKey{URL: url, VisitType: "git"})
				listed = append(listed, revisit.ListedOrigin{ListerID: l.ID, URL: url, VisitType: "git", Enabled: true})
			}
			_, err := st.ListedOriginsRecord(ctx, listed)
			require.NoError(t, err)
			for step := range 8 {
				for i := range origins {
					if h := history(i); step < len(h) {
						v := h[step]
						v.Origin, v.VisitType, v.Date = keys[i].URL, "git", start.Add(time.Duration(step)*time.Hour)
						out = append(out, v)
					}
				}
			}
			return out, keys
		}
		fixed := func() float64 { return 0.5 }
		const batch = 7

		inOrder, orderKeys := stream("in-order")
		disabled := 0
		for lo := 0; lo < len(inOrder); lo += batch {
			res, err := feedback.Process(ctx, st, inOrder[lo:min(lo+batch, len(inOrder))], fixed, feedback.Horizon{})
			require.NoError(t, err)
			disabled += res.Disabled
		}
		require.Equal(t, origins/3, disabled)

		piped, pipedKeys := stream("piped")
		var reported atomic.Int64
		p := feedback.NewPipeline(ctx, st, feedback.PipelineConfig{Workers: 4, BatchSize: batch, Rand: fixed,
			Done: func(n int, _ feedback.Result) { reported.Add(int64(n)) }})
		for _, v := range piped {
			require.NoError(t, p.Add(v))
		}
		require.NoError(t, p.Close())
		n, res := p.Processed()
		require.Equal(t, len(piped), n)
		require.EqualValues(t, n, reported.Load(), "every batch reported")
		require.Zero(t, res.Late, "no status of an origin overtook an earlier one")
		require.Equal(t, origins/3, res.Disabled)

		want, err := st.VisitStatsGet(ctx, orderKeys)
		require.NoError(t, err)
		got, err := st.VisitStatsGet(ctx, pipedKeys)
		require.NoError(t, err)
		require.Len(t, got, origins)
		for i := range want {
			w, g := want[i], got[i]
			w.URL, g.URL = "", ""
			require.Equal(t, w, g, "origin %d", i)
		}
	})
}

// failingStore fails every read of visit stats.
type failingStore struct{ store.Store }

func (failingStore) VisitStatsGet(context.Context, []revisit.OriginKey) ([]revisit.VisitStats, error) {
	return nil, errors.New("database down")
}

// A failing batch stops the pipeline: Add, then Close, return its error.
func TestPipelineStopsAtFirstError(t *testing.T) {
	p := feedback.NewPipeline(context.Background(), failingStore{}, feedback.PipelineConfig{Workers: 2, BatchSize: 2})
	var err error
	for i := 0; i < 10_000 && err == nil; i++ {
		err = p.Add(feedback.VisitStatus{Origin: fmt.Sprintf("https://forge.example/%d", i), VisitType: "git",
			Status: feedback.StatusFull, Date: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	}
	require.ErrorContains(t, err, "database down")
	require.ErrorContains(t, p.Close(), "database down")
	n, _ := p.Processed()
	require.Zero(t, n)
}
