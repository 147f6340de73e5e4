package orchestrator

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// countingStore counts the calls to VisitsCount.
type countingStore struct {
	store.Store
	calls atomic.Int32
}

func (s *countingStore) VisitsCount(ctx context.Context) ([]revisit.VisitCounts, error) {
	s.calls.Add(1)
	return s.Store.VisitsCount(ctx)
}

// gauge returns the value of the sample of the registry's metric name
// for git (and the label state, if given); -1 if absent.
func gauge(t *testing.T, reg *prometheus.Registry, name string, state ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["visit_type"] == "git" && (len(state) == 0 || labels["state"] == state[0]) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func TestGaugesDescribeThePresentBetweenRounds(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100)
		w.add(neverVisited, 300)
		b := newFakeBroker()
		reg := prometheus.NewRegistry()
		cfg := idleConfig()
		logs := &logRecords{}
		cfg.QueuePollInterval, cfg.LeaseTTL, cfg.Metrics, cfg.Logger = time.Minute, time.Minute, NewMetrics(reg),
			slog.New(logs)
		start(t, st, b, cfg)
		require.Eventually(t, func() bool { return w.counts().Sent == 100 }, waitFor, tick)
		require.Eventually(t, func() bool { return len(logs.find("queue full")) > 0 }, waitFor, tick,
			"the loop found the queue full and waits for it to drain")
		require.Eventually(t, func() bool {
			return gauge(t, reg, "revisit_queue_depth") == 100 &&
				gauge(t, reg, "revisit_queue_free_slots") == 0 &&
				gauge(t, reg, "revisit_visits_in_flight", "sent") == 100
		}, waitFor, tick)

		// Workers take 30 messages and report 20 results while the loop
		// waits for the queue to drain (it measures it once a minute).
		taken := b.take(gitTask, 30)
		ids := make([]string, 20)
		for i, m := range taken[:20] {
			ids[i] = m.Properties.CorrelationID
		}
		_, err := st.VisitsClose(w.ctx, ids)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return gauge(t, reg, "revisit_queue_depth") == 70 &&
				gauge(t, reg, "revisit_queue_free_slots") == 30 &&
				gauge(t, reg, "revisit_visits_in_flight", "sent") == 80
		}, waitFor, tick, "the gauges follow the queue and the results without a round (a count of the "+
			"visits in flight serves for a second, or ten times as long as it took)")
		require.Len(t, b.published(), 100, "no round ran meanwhile")
	})
}

func TestScrapesShareOneCountOfTheVisitsInFlight(t *testing.T) {
	st := &countingStore{Store: teststore.SQLite(t)}
	w := newWorld(t, st, 100)
	for _, vt := range []string{"hg", "pypi"} {
		require.NoError(t, st.TaskTypeCreate(w.ctx, revisit.TaskType{Type: "load-" + vt, BackendName: "load." + vt}))
	}
	cfg := testConfig("a")
	cfg.Metrics = NewMetrics(prometheus.NewRegistry())
	_, err := New(st, newFakeBroker(), cfg)
	require.NoError(t, err)
	for range 5 {
		require.Equal(t, 3*(3+2), testutil.CollectAndCount(cfg.Metrics.queues),
			"three states, depth and free slots for each of git, hg and pypi")
	}
	require.Equal(t, int32(1), st.calls.Load(), "scrapes within a second share one count")
}
