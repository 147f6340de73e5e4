package runner

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the task runner's Prometheus metrics (semantics.md §9).
type Metrics struct {
	dispatched    *prometheus.CounterVec
	publishFailed *prometheus.CounterVec
	wedged        *prometheus.CounterVec
	recovered     *prometheus.CounterVec
	depth         *prometheus.GaugeVec
	waits         *prometheus.CounterVec
	restarts      *prometheus.CounterVec
	healthy       *prometheus.GaugeVec
}

// NewMetrics creates the task runner's metrics and registers them with reg
// (nil: not registered, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	tp := []string{"task_type", "priority"}
	tt := []string{"task_type"}
	loop := []string{"loop"}
	m := &Metrics{
		dispatched: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_runner_dispatched_total",
			Help: "Task messages the broker confirmed, by task type and whether the tasks had a priority."}, tp),
		publishFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_runner_publish_failures_total",
			Help: "Task messages the broker did not confirm; their runs ended as lost."}, tp),
		wedged: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_runner_wedged_runs_ended_total",
			Help: "Task runs without news beyond their type's run timeout, ended as lost."}, tt),
		recovered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_runner_tasks_recovered_total",
			Help: "Tasks a stopped runner left claimed without a run, or with a run whose confirm it never recorded, made due again."}, tt),
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_runner_queue_depth",
			Help: "Messages waiting in the task type's queue, as last measured."}, tt),
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_runner_loop_waits_total",
			Help: "Rounds skipped because a dependency was unavailable, a queue missing or its depth unknown."},
			[]string{"loop", "reason"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_runner_loop_restarts_total",
			Help: "Times a loop of the task runner failed and was restarted."}, loop),
		healthy: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_runner_loop_healthy",
			Help: "1 while the loop is healthy, 0 after repeated failures."}, loop),
	}
	if reg != nil {
		reg.MustRegister(m.dispatched, m.publishFailed, m.wedged, m.recovered, m.depth, m.waits, m.restarts, m.healthy)
	}
	return m
}
