package orchestrator

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/teststore"
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

func TestLoopsShareOneCountOfTheVisitsInFlight(t *testing.T) {
	st := &countingStore{Store: teststore.SQLite(t)}
	w := newWorld(t, st, 100)
	for _, vt := range []string{"hg", "pypi"} {
		require.NoError(t, st.TaskTypeCreate(w.ctx, revisit.TaskType{Type: "load-" + vt, BackendName: "load." + vt}))
	}
	w.add(neverVisited, 10)
	b := newFakeBroker()
	cfg := testConfig("a")
	cfg.Metrics = NewMetrics(prometheus.NewRegistry())
	start(t, st, b, cfg)
	require.Eventually(t, func() bool { return len(b.published()) == 10 }, waitFor, tick)
	// Every loop has set its gauges (a round counts before it grabs) …
	require.Eventually(t, func() bool { return testutil.CollectAndCount(cfg.Metrics.inFlight) == 9 }, waitFor, tick,
		"three states for each of git, hg and pypi")
	// … from a single count: each loop used to count every visit type for
	// itself.
	require.Equal(t, int32(1), st.calls.Load())
	require.Equal(t, 0.0, testutil.ToFloat64(cfg.Metrics.inFlight.WithLabelValues("hg", string(revisit.VisitSent))))
}
