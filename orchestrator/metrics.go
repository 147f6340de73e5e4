package orchestrator

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/livequeue"
)

// Metrics are the orchestrator's Prometheus metrics (semantics.md §9).
type Metrics struct {
	// queues are the gauges of the queues, measured when scraped.
	queues        *queueGauges
	requested     *prometheus.CounterVec
	fetched       *prometheus.CounterVec
	published     *prometheus.CounterVec
	publishFailed *prometheus.CounterVec
	roundSeconds  *prometheus.HistogramVec
	grabSeconds   *prometheus.HistogramVec
	restarts      *prometheus.CounterVec
	waits         *prometheus.CounterVec
	lost          *prometheus.CounterVec
	recovered     *prometheus.CounterVec
	healthy       *prometheus.GaugeVec
	owner         *prometheus.GaugeVec
}

// NewMetrics creates the orchestrator's metrics and registers them with reg
// (nil: not registered, for tests and benchmarks).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	vt := []string{"visit_type"}
	vtp := []string{"visit_type", "policy"}
	m := &Metrics{
		queues: newQueueGauges(),
		requested: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visits_requested_total",
			Help: "Origins asked of each policy."}, vtp),
		fetched: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visits_fetched_total",
			Help: "Origins each policy returned."}, vtp),
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visits_published_total",
			Help: "Visit messages the broker confirmed."}, vt),
		publishFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_publish_failures_total",
			Help: "Visit messages the broker did not confirm; their origins were released."}, vt),
		roundSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "revisit_round_duration_seconds",
			Help: "Duration of scheduling rounds that published.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, vt),
		grabSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "revisit_grab_duration_seconds",
			Help: "Latency of one policy's grab (select, mark, in-flight record).", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}, vtp),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_loop_restarts_total",
			Help: "Times a visit type's loop failed and was restarted."}, vt),
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_loop_waits_total",
			Help: "Rounds skipped because a dependency was unavailable or the queue depth unknown."}, []string{"visit_type", "reason"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visits_lost_total",
			Help: "Visits without a result within the visit type's timeout; their origins were offered again."}, vt),
		recovered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visits_recovered_total",
			Help: "Pending visits left by a crash or a failed round, released at recovery."}, vt),
		healthy: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_loop_healthy",
			Help: "1 while the visit type's loop is healthy, 0 after repeated failures."}, vt),
		owner: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_loop_owner",
			Help: "1 while this process holds the visit type's lease and drives it."}, vt),
	}
	if reg != nil {
		reg.MustRegister(m.queues, m.requested, m.fetched, m.published, m.publishFailed,
			m.roundSeconds, m.grabSeconds, m.restarts, m.waits, m.lost, m.recovered, m.healthy, m.owner)
	}
	return m
}

// scrapeTimeout bounds the measure of the queues for one scrape.
const scrapeTimeout = 5 * time.Second

// queueGauges is the collector of the gauges that describe the queues:
// their depth, free slots and visits in flight, measured when scraped
// (livequeue shares a measure for a second between scrapes and the API).
// It collects nothing until an orchestrator gives it its queues.
type queueGauges struct {
	live                     atomic.Pointer[livequeue.Live]
	depth, freeSlots, flight *prometheus.Desc
}

func newQueueGauges() *queueGauges {
	vt := []string{"visit_type"}
	return &queueGauges{
		depth: prometheus.NewDesc("revisit_queue_depth",
			"Messages waiting in the visit type's queue, measured when scraped.", vt, nil),
		freeSlots: prometheus.NewDesc("revisit_queue_free_slots",
			"Free slots of the visit type's queue: max_queue_length - depth - messages being published.", vt, nil),
		flight: prometheus.NewDesc("revisit_visits_in_flight",
			"In-flight visit records by state (pending, sent, lost).", []string{"visit_type", "state"}, nil),
	}
}

// Describe sends the gauges' descriptions.
func (g *queueGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.depth
	ch <- g.freeSlots
	ch <- g.flight
}

// Collect measures the queues and sends their gauges; a queue whose depth
// is unknown has no depth nor free slots, and a failed measure sends
// nothing.
func (g *queueGauges) Collect(ch chan<- prometheus.Metric) {
	live := g.live.Load()
	if live == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	qs, err := live.Queues(ctx)
	if err != nil {
		return
	}
	for _, q := range qs {
		if q.Depth != nil {
			ch <- prometheus.MustNewConstMetric(g.depth, prometheus.GaugeValue, float64(*q.Depth), q.VisitType)
			ch <- prometheus.MustNewConstMetric(g.freeSlots, prometheus.GaugeValue, float64(*q.FreeSlots), q.VisitType)
		}
		for state, n := range map[revisit.VisitState]int64{revisit.VisitPending: q.Pending,
			revisit.VisitSent: q.Sent, revisit.VisitLost: q.Lost} {
			ch <- prometheus.MustNewConstMetric(g.flight, prometheus.GaugeValue, float64(n), q.VisitType, string(state))
		}
	}
}
