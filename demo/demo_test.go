package demo

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/simulate/world"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/worker"
)

var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// seeded returns a demo of n origins seeded into st, on testNow.
func seeded(t *testing.T, st store.Store, n int) *Demo {
	t.Helper()
	d := New(st, Config{Origins: n, Clock: func() time.Time { return testNow }})
	require.NoError(t, d.Seed(context.Background()))
	return d
}

// listed returns every origin of the demo's lister.
func listed(t *testing.T, d *Demo) []revisit.ListedOrigin {
	t.Helper()
	page, err := d.st.ListedOriginsGet(context.Background(), revisit.ListedOriginFilter{ListerID: &d.lister.ID,
		Enabled: revisit.AnyEnabled, Limit: 10_000})
	require.NoError(t, err)
	return page.Origins
}

func TestSeed(t *testing.T) {
	t.Parallel()
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		d := seeded(t, st, 600)

		tts, err := st.TaskTypeList(ctx)
		require.NoError(t, err)
		require.Len(t, tts, 3)
		for _, tt := range tts {
			require.Equal(t, QueueLength, tt.MaxQueueLength, tt.Type)
		}
		require.Equal(t, []string{"git", "hg", "pypi"}, d.types)
		require.Equal(t, "swh.loader.git.tasks.UpdateGitRepository", d.queues["git"])

		origins := listed(t, d)
		require.Len(t, origins, 600)
		byType := map[string]int{}
		keys := make([]revisit.OriginKey, len(origins))
		unknown := 0
		for i, o := range origins {
			byType[o.VisitType]++
			keys[i] = o.Key()
			if o.LastUpdate == nil {
				unknown++
				continue
			}
			require.Equal(t, world.NewOrigin(o.URL, o.VisitType).LastUpdate(testNow), o.LastUpdate.UTC(), o.URL)
		}
		require.Equal(t, map[string]int{"git": 200, "hg": 200, "pypi": 200}, byType)
		require.InDelta(t, UnknownUpdateShare*600, unknown, 30)

		stats, err := st.VisitStatsGet(ctx, keys)
		require.NoError(t, err)
		require.InDelta(t, VisitedShare*600, len(stats), 40, "origins visited before the demo")
		for _, s := range stats {
			require.NotNil(t, s.LastSuccessful)
			require.WithinRange(t, *s.LastSuccessful, testNow.Add(-visitedBefore), testNow.Add(-visitedAfter))
			o := world.NewOrigin(s.URL, s.VisitType)
			require.Equal(t, o.Snapshot(*s.LastSuccessful), s.LastSnapshot, "the world's snapshot of that date")
		}

		ms, err := st.MetricsGet(ctx, &d.lister.ID, "")
		require.NoError(t, err)
		require.Len(t, ms, 3, "the lister's scheduler metrics, by visit type")
		require.EqualValues(t, 200, ms[0].OriginsKnown)
	})
}

// TestOutcomes visits every origin of a seeded demo at its start, then
// again a second later: the outcomes are those of the world, with a few
// origins gone.
func TestOutcomes(t *testing.T) {
	t.Parallel()
	d := seeded(t, teststore.SQLite(t), 3000)
	first, again := map[string]int{}, map[string]int{}
	for _, o := range listed(t, d) {
		took, res := d.archive.visit(o.Key(), testNow)
		require.GreaterOrEqual(t, took, MinVisit)
		require.LessOrEqual(t, took, MaxVisit)
		first[res.Status]++
		switch res.Status {
		case "eventful", "uneventful":
			require.Len(t, res.Snapshot, 40)
		case "failed":
			require.Contains(t, res.Error, "visit cut after 2h0m0s")
		}
		_, res = d.archive.visit(o.Key(), testNow.Add(time.Second))
		again[res.Status]++
	}
	require.Greater(t, first["eventful"], 3000/2, "%v", first)
	require.Positive(t, first["uneventful"], "%v", first)
	require.InDelta(t, 300, first["failed"], 200, "some visits are cut: %v", first)
	require.InDelta(t, GoneShare*3000, first["not_found"], 30, "%v", first)
	require.Equal(t, first["not_found"], again["not_found"], "gone origins stay gone")
	require.Greater(t, again["uneventful"], again["eventful"], "a second later, most origins did not change: %v", again)
}

func TestDemoDuration(t *testing.T) {
	t.Parallel()
	require.Equal(t, MinVisit, demoDuration(world.MinRunTime))
	require.Equal(t, MinVisit, demoDuration(time.Millisecond))
	require.InDelta(t, float64(MaxVisit), float64(demoDuration(world.MaxRunTime)), float64(time.Microsecond))
	prev := MinVisit
	for d := world.MinRunTime; d <= world.MaxRunTime; d *= 2 {
		got := demoDuration(d)
		require.GreaterOrEqual(t, got, prev, "longer world visits take longer: %s", d)
		prev = got
	}
}

func TestVisitor(t *testing.T) {
	t.Parallel()
	d := seeded(t, teststore.SQLite(t), 3)
	visit := d.visitor("git")
	_, err := visit(context.Background(), worker.Task{Kwargs: json.RawMessage(`{"lister_name": "demo"}`)})
	require.ErrorContains(t, err, "no origin url")

	o := listed(t, d)[0]
	kwargs, err := json.Marshal(map[string]string{"url": o.URL})
	require.NoError(t, err)
	start := time.Now()
	res, err := visit(context.Background(), worker.Task{Kwargs: kwargs})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), MinVisit, "a visit takes its time")
	require.Contains(t, []string{"eventful", "uneventful", "failed", "not_found"}, res.Status)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = visit(ctx, worker.Task{Kwargs: kwargs})
	require.ErrorIs(t, err, context.Canceled, "a visit stops with its lease")
}

func TestLister(t *testing.T) {
	t.Parallel()
	st := teststore.SQLite(t)
	d := New(st, Config{Origins: 30, ListEvery: 10 * time.Millisecond})
	require.NoError(t, d.Seed(context.Background()))
	seeded := map[string]time.Time{}
	for _, o := range listed(t, d) {
		seeded[o.URL] = o.LastSeen
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	d.list(ctx)
	origins := listed(t, d)
	require.Greater(t, len(origins), 30, "the lister lists more origins")
	again := 0
	for _, o := range origins {
		if at, ok := seeded[o.URL]; ok && o.LastSeen.After(at) && (o.LastUpdate == nil || !o.LastUpdate.Before(at)) {
			again++
		}
	}
	require.Greater(t, again, 10, "the lister lists again origins whose forge changed, with a last update of then")
	ms, err := st.MetricsGet(context.Background(), &d.lister.ID, "")
	require.NoError(t, err)
	known := int64(0)
	for _, m := range ms {
		known += m.OriginsKnown
	}
	require.Greater(t, known, int64(30), "the scheduler metrics follow the listings")
}

func TestRunBeforeSeed(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, New(nil, Config{}).Run(context.Background(), "http://127.0.0.1:1"), "Run before Seed")
}
