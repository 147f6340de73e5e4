package orchestrator

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the orchestrator's Prometheus metrics (semantics.md §9).
type Metrics struct {
	depth         *prometheus.GaugeVec
	freeSlots     *prometheus.GaugeVec
	requested     *prometheus.CounterVec
	fetched       *prometheus.CounterVec
	published     *prometheus.CounterVec
	publishFailed *prometheus.CounterVec
	roundSeconds  *prometheus.HistogramVec
	grabSeconds   *prometheus.HistogramVec
	restarts      *prometheus.CounterVec
	waits         *prometheus.CounterVec
	inFlight      *prometheus.GaugeVec
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
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_queue_depth",
			Help: "Messages waiting in the visit type's queue, as last measured."}, vt),
		freeSlots: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_queue_free_slots",
			Help: "Free slots of the visit type's queue at the last round (max_queue_length - depth, capped per round)."}, vt),
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
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_visits_in_flight",
			Help: "In-flight visit records by state (pending, sent, lost), counted at most every countInterval."},
			[]string{"visit_type", "state"}),
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
		reg.MustRegister(m.depth, m.freeSlots, m.requested, m.fetched, m.published, m.publishFailed,
			m.roundSeconds, m.grabSeconds, m.restarts, m.waits, m.inFlight, m.lost, m.recovered, m.healthy, m.owner)
	}
	return m
}
