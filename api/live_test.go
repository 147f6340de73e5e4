package api_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
)

// metricValue returns the value of a sample in a Prometheus text
// exposition, -1 if absent.
func metricValue(text, sample string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// The queues' figures of /queues, the dashboard and /metrics are one
// measure of the present: workers leasing messages between two rounds show
// in all three at once.
func TestQueuesDashboardAndMetricsShowThePresent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "api.db"), store.Options{})
	require.NoError(t, err)
	b := embedded.New(st, embedded.Config{})
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: queue, MaxQueueLength: 100}))
	l, err := st.ListerGetOrCreate(ctx, "github", "github")
	require.NoError(t, err)
	var origins []revisit.ListedOrigin
	for i := range 30 {
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://github.com/o/%d", i),
			VisitType: "git", Enabled: true})
	}
	_, err = st.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	o, err := orchestrator.New(st, b, orchestrator.Config{Metrics: orchestrator.NewMetrics(reg), RoundJitter: time.Millisecond,
		QueueFullBackoff: time.Minute, QueuePollInterval: time.Minute, LeaseTTL: time.Minute})
	require.NoError(t, err)
	h := &dataHarness{t: t, st: st}
	h.srv = httptest.NewServer(api.New(api.Config{Store: st, Broker: b, Queues: b, Live: o.Queues(), Metrics: reg,
		Orchestrator: o}))
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- o.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		<-ran
		h.srv.Close()
		b.Close()
		st.Close()
	})

	figures := func() (depth, free []float64) {
		q := h.json("GET", "/api/v1/queues", "", 200)["queues"].([]any)[0].(map[string]any)
		d := h.json("GET", "/api/v1/dashboard", "", 200)["visit_types"].([]any)[0].(map[string]any)
		_, text := h.do("GET", "/metrics", "")
		return []float64{q["depth"].(float64), d["depth"].(float64),
				metricValue(string(text), `revisit_queue_depth{visit_type="git"}`)},
			[]float64{q["free_slots"].(float64), d["free_slots"].(float64),
				metricValue(string(text), `revisit_queue_free_slots{visit_type="git"}`)}
	}
	require.Eventually(t, func() bool {
		depth, free := figures()
		return fmt.Sprint(depth, free) == "[30 30 30] [70 70 70]"
	}, 5*time.Second, 20*time.Millisecond, "the orchestrator published every origin")

	leased, err := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: 12, LeaseFor: time.Minute})
	require.NoError(t, err)
	require.Len(t, leased, 12)
	require.Eventually(t, func() bool {
		depth, free := figures()
		return fmt.Sprint(depth, free) == "[18 18 18] [82 82 82]"
	}, 3*time.Second, 20*time.Millisecond, "a lease shows within the second everywhere, without a round")

	// Every origin went: the loop waits for eligible origins, and says
	// until when.
	var loop map[string]any
	require.Eventually(t, func() bool {
		d := h.json("GET", "/api/v1/dashboard", "", 200)["visit_types"].([]any)[0].(map[string]any)
		loop, _ = d["loop"].(map[string]any)
		return loop != nil && loop["state"] == "no_origins"
	}, 3*time.Second, 20*time.Millisecond, "the loop's state: %v", loop)
	next, err := time.Parse(time.RFC3339Nano, loop["next_round"].(string))
	require.NoError(t, err)
	require.InDelta(t, 20*60, time.Until(next).Seconds(), 10, "the next check is the no-origins backoff away")
	require.Nil(t, loop["check_every_seconds"])
}
