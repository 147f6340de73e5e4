package journal

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The outcomes of the messages a Consumer reads
// (revisit_journal_messages_total{outcome}).
const (
	// OutcomeFolded: a final status folded into its origin's stats.
	OutcomeFolded = "folded"
	// OutcomeIgnored: created, ongoing, late and duplicate statuses.
	OutcomeIgnored = "ignored"
	// OutcomeUntyped: a status without visit type whose origin is not
	// listed with exactly one visit type.
	OutcomeUntyped = "untyped"
	// OutcomeMalformed: a value that cannot be processed (counted by kind
	// in revisit_journal_malformed_total).
	OutcomeMalformed = "malformed"
	// OutcomeTombstone: a record without value.
	OutcomeTombstone = "tombstone"
)

// Metrics are a Consumer's Prometheus metrics.
type Metrics struct {
	messages  *prometheus.CounterVec
	malformed *prometheus.CounterVec
	lag       *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them in reg (nil: nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_journal_messages_total",
			Help: "Journal messages read, by outcome: folded, ignored, untyped, malformed, tombstone."}, []string{"outcome"}),
		malformed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_journal_malformed_total",
			Help: "Journal messages skipped as malformed, by kind."}, []string{"kind"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "revisit_journal_lag",
			Help: "Messages of a partition not yet processed, as of the last batch (high watermark - next offset)."},
			[]string{"topic", "partition"}),
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.malformed, m.lag)
	}
	return m
}

func (m *Metrics) count(outcome string, n int) {
	if n > 0 {
		m.messages.WithLabelValues(outcome).Add(float64(n))
	}
}

func (m *Metrics) setLag(topic string, partition int32, lag int64) {
	m.lag.WithLabelValues(topic, strconv.Itoa(int(partition))).Set(float64(lag))
}

func (m *Metrics) forgetLag(topic string, partition int32) {
	m.lag.DeleteLabelValues(topic, strconv.Itoa(int(partition)))
}
