// Package history keeps, in memory and at minute resolution, the last 24
// hours of the figures the console charts, per visit type: the visits
// scheduled by policy, the results by outcome and the visits lost (per
// minute), the queue's depth and free slots and the grab latency (per
// minute's last measure). The process samples its own metrics into it
// (Sampler), never a browser, and at start it recalls from the store what
// the store keeps of the last 24 hours (Rebuild). docs/history.md says
// which series survive a restart.
//
// Memory is bounded: a series takes 5,760 bytes (a float32 a minute), and
// a History keeps at most MaxSeries of them.
package history

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/livequeue"
)

// Series is one figure of a visit type.
type Series string

// The series of a visit type. Counts are per minute; the others are the
// last measure of the minute.
const (
	// Scheduled counts the visits scheduled, labelled by policy ("" for
	// those the store recalls without their policy).
	Scheduled Series = "scheduled"
	// Results counts the results, labelled by outcome (successful, failed,
	// not_found, unreadable).
	Results Series = "results"
	// Lost counts the visits declared lost.
	Lost Series = "lost"
	// QueueDepth is the messages waiting in the queue.
	QueueDepth Series = "queue_depth"
	// FreeSlots is what the queue still takes.
	FreeSlots Series = "free_slots"
	// GrabP95 and GrabMean are the 95th percentile and the mean of the
	// grabs' latency in the minute, in seconds.
	GrabP95  Series = "grab_p95_seconds"
	GrabMean Series = "grab_mean_seconds"
)

// Key names one series: a visit type's figure and its label (a policy,
// an outcome), if any.
type Key struct {
	VisitType string
	Series    Series
	Label     string
}

// DefaultMaxSeries bounds the series of a History unless configured: a
// visit type has about 17 (6 policies, 4 outcomes, 7 others), so 1,024
// serve some 60 visit types, in 5.6 MiB at most.
const DefaultMaxSeries = 1024

// DefaultEvery is how often a History samples the metrics unless
// configured.
const DefaultEvery = 10 * time.Second

// Config configures a History.
type Config struct {
	// Store is what the history recalls the last 24 hours from at start;
	// nil recalls nothing.
	Store Recall
	// Metrics are the process's metrics, sampled every Every (the
	// orchestrator's and the listener's counters, the grab latency); nil
	// samples none.
	Metrics prometheus.Gatherer
	// Queues measures the queues (depth, free slots); nil measures none.
	Queues func(context.Context) ([]livequeue.Queue, error)
	// Every is how often the metrics and queues are sampled (DefaultEvery).
	Every time.Duration
	// MaxSeries bounds the series kept (DefaultMaxSeries).
	MaxSeries int
	// Clock is the time of the samples; nil is time.Now.
	Clock revisit.Clock
	// Logger hears of samples and recalls that failed; nil discards.
	Logger *slog.Logger
}

// History is the minute series of the last Minutes minutes. It is safe for
// concurrent use.
type History struct {
	cfg Config
	now revisit.Clock
	log *slog.Logger
	// started is when the history began: the store is recalled up to
	// then, the metrics sampled from then.
	started time.Time

	mu     sync.Mutex
	series map[Key]*ring
	// dropped counts the series refused once MaxSeries were kept.
	dropped int
}

// New returns an empty history, started now; Run fills it.
func New(cfg Config) *History {
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = DefaultMaxSeries
	}
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &History{cfg: cfg, now: cfg.Clock, log: cfg.Logger, started: cfg.Clock.Now(), series: map[Key]*ring{}}
}

// minuteOf returns the minute of t, counted from the Unix epoch.
func minuteOf(t time.Time) int64 { return t.Unix() / 60 }

// timeOf returns the start of minute m.
func timeOf(m int64) time.Time { return time.Unix(m*60, 0).UTC() }

// ring returns the series of k, created if there is room; nil otherwise.
// Call it with h.mu held.
func (h *History) ring(k Key) *ring {
	if r, ok := h.series[k]; ok {
		return r
	}
	if len(h.series) >= h.cfg.MaxSeries {
		if h.dropped == 0 {
			h.log.Warn("history: series limit reached; new series are not kept",
				"max_series", h.cfg.MaxSeries, "series", k.VisitType+" "+string(k.Series)+" "+k.Label)
		}
		h.dropped++
		return nil
	}
	r := newRing(minuteOf(h.now.Now()))
	h.series[k] = r
	return r
}

// Add adds n to the minute of t in the series of k.
func (h *History) Add(k Key, t time.Time, n float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.ring(k); r != nil {
		r.add(minuteOf(t), n)
	}
}

// Set sets the minute of t to v in the series of k.
func (h *History) Set(k Key, t time.Time, v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.ring(k); r != nil {
		r.set(minuteOf(t), v)
	}
}

// Known gives a value of 0 to the minutes of [from, to) of the series of
// k that have none: its events over that time were counted.
func (h *History) Known(k Key, from, to time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.ring(k); r != nil {
		r.known(minuteOf(from), minuteOf(to))
	}
}
