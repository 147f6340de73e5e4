package history

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/livequeue"
)

// t0 is a whole minute: the tests' times are relative to it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// newTest returns a history started at start on a clock the test sets.
func newTest(cfg Config, start time.Time) (*History, *clock) {
	c := &clock{t: start}
	cfg.Clock = c.now
	return New(cfg), c
}

// values reads a window's values as numbers, -1 for a minute without one.
func values(vs Values) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = -1
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

var git = Key{VisitType: "git", Series: Lost}

func TestMinutesRollOverAndTheWindowEndsAtTheLastWholeMinute(t *testing.T) {
	h, c := newTest(Config{}, t0)
	h.Add(git, t0, 2)
	h.Add(git, t0.Add(30*time.Second), 3)
	h.Add(git, t0.Add(time.Minute), 4)
	h.Set(Key{VisitType: "git", Series: QueueDepth}, t0.Add(time.Minute), 7)
	h.Set(Key{VisitType: "git", Series: QueueDepth}, t0.Add(time.Minute+50*time.Second), 9)

	c.set(t0.Add(time.Minute + 10*time.Second))
	w := h.Window(3)
	require.Equal(t, t0.Add(-2*time.Minute), w.Start, "three minutes up to the last whole one")
	require.Equal(t, 3, w.Minutes)
	require.Len(t, w.VisitTypes, 1)
	require.Equal(t, []float64{-1, -1, 5}, values(w.VisitTypes[0].Lost), "the minute in progress is not shown")

	c.set(t0.Add(2 * time.Minute))
	w = h.Window(3)
	require.Equal(t, []float64{-1, 5, 4}, values(w.VisitTypes[0].Lost))
	require.Equal(t, []float64{-1, -1, 9}, values(w.VisitTypes[0].QueueDepth), "a measure is the minute's last")
	require.Equal(t, []float64{-1, -1, -1}, values(w.VisitTypes[0].FreeSlots), "a series never sampled has no value")
	require.Equal(t, int64(9), w.VisitTypes[0].Last24h.Lost)
}

func TestKeepsTwentyFourHoursAtMost(t *testing.T) {
	h, c := newTest(Config{}, t0)
	h.Add(git, t0, 1)
	h.Add(git, t0.Add(time.Hour), 2)
	c.set(t0.Add(24 * time.Hour))
	h.Add(git, t0.Add(24*time.Hour), 3)
	w := h.Window(Minutes)
	require.Len(t, w.VisitTypes[0].Lost, Minutes)
	require.Equal(t, t0, w.Start, "24 h up to the last whole minute")
	lost := values(w.VisitTypes[0].Lost)
	require.Equal(t, -1.0, lost[0], "t0's minute fell out: its slot holds the minute in progress")
	require.Equal(t, 2.0, lost[60], "t0 + 1 h is still kept")
	require.Equal(t, int64(5), w.VisitTypes[0].Last24h.Lost, "the totals count the minute in progress")

	h.Add(git, t0, 100) // older than the ring: ignored
	c.set(t0.Add(24*time.Hour + time.Minute))
	require.Equal(t, int64(5), h.Window(10).VisitTypes[0].Last24h.Lost)

	c.set(t0.Add(72 * time.Hour))
	h.Add(git, t0.Add(72*time.Hour), 1)
	c.set(t0.Add(72*time.Hour + time.Minute))
	require.Equal(t, int64(1), h.Window(60).VisitTypes[0].Last24h.Lost, "two days later nothing old is left")
	require.Equal(t, 1, h.Window(0).Minutes, "minutes are bounded")
	require.Equal(t, Minutes, h.Window(5000).Minutes)
}

func TestSeriesAreBounded(t *testing.T) {
	h, c := newTest(Config{MaxSeries: 2}, t0)
	h.Add(git, t0, 1)
	h.Add(Key{VisitType: "hg", Series: Lost}, t0, 1)
	h.Add(Key{VisitType: "svn", Series: Lost}, t0, 1)
	h.Add(Key{VisitType: "svn", Series: Lost}, t0, 1)
	c.set(t0.Add(time.Minute))
	w := h.Window(1)
	require.Len(t, w.VisitTypes, 2)
	require.Equal(t, "git", w.VisitTypes[0].VisitType)
	require.Equal(t, "hg", w.VisitTypes[1].VisitType)
	require.Equal(t, 2, w.DroppedSeries)
}

// gatherer is a registry with the metrics the sampler reads.
type gatherer struct {
	reg             *prometheus.Registry
	fetched, result *prometheus.CounterVec
	grab            *prometheus.HistogramVec
}

func newGatherer() *gatherer {
	g := &gatherer{reg: prometheus.NewRegistry(),
		fetched: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visits_fetched_total"},
			[]string{"visit_type", "policy"}),
		result: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revisit_visit_results_total"},
			[]string{"visit_type", "status"}),
		grab: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "revisit_grab_duration_seconds",
			Buckets: []float64{0.01, 0.1, 1}}, []string{"visit_type", "policy"})}
	g.reg.MustRegister(g.fetched, g.result, g.grab)
	return g
}

func TestCountersBecomeRatesAndAResetIsNoNegativeRate(t *testing.T) {
	g := newGatherer()
	h, c := newTest(Config{Metrics: g.reg}, t0)
	s := newSampler(h)
	ctx := context.Background()
	never := g.fetched.WithLabelValues("git", "never_visited_oldest_update_first")

	never.Add(5)
	require.NoError(t, s.sample(ctx, t0.Add(10*time.Second)))
	never.Add(3)
	require.NoError(t, s.sample(ctx, t0.Add(20*time.Second)))
	never.Add(4)
	require.NoError(t, s.sample(ctx, t0.Add(time.Minute+10*time.Second)))
	require.NoError(t, s.sample(ctx, t0.Add(2*time.Minute+10*time.Second)))

	// The process's counters start again from 0 (a restarted role):
	// the increase is the new counter's whole value.
	g2 := newGatherer()
	h.cfg.Metrics = g2.reg
	g2.fetched.WithLabelValues("git", "never_visited_oldest_update_first").Add(2)
	require.NoError(t, s.sample(ctx, t0.Add(3*time.Minute+10*time.Second)))

	c.set(t0.Add(4 * time.Minute))
	w := h.Window(4)
	require.Equal(t, []float64{8, 4, 0, 2}, values(w.VisitTypes[0].Scheduled["never_visited_oldest_update_first"]))
	require.Equal(t, int64(14), w.VisitTypes[0].Last24h.Scheduled)
}

func TestResultsShareTheOutcomesOfTheVisitStats(t *testing.T) {
	g := newGatherer()
	h, c := newTest(Config{Metrics: g.reg}, t0)
	for status, n := range map[string]float64{"full": 3, "partial": 1, "failed": 2, "not_found": 1, "unreadable": 1} {
		g.result.WithLabelValues("git", status).Add(n)
	}
	require.NoError(t, newSampler(h).sample(context.Background(), t0))
	c.set(t0.Add(time.Minute))
	require.Equal(t, map[string]int64{"successful": 4, "failed": 2, "not_found": 1, "unreadable": 1},
		h.Window(1).VisitTypes[0].Last24h.Results)
}

func TestGrabLatencyIsTheMinutes(t *testing.T) {
	g := newGatherer()
	h, c := newTest(Config{Metrics: g.reg}, t0)
	s := newSampler(h)
	ctx := context.Background()
	for range 100 {
		g.grab.WithLabelValues("git", "a").Observe(0.5)
	}
	require.NoError(t, s.sample(ctx, t0))
	// The next minute, 95 fast grabs and 5 slow ones, over two policies.
	for range 90 {
		g.grab.WithLabelValues("git", "a").Observe(0.005)
	}
	require.NoError(t, s.sample(ctx, t0.Add(time.Minute)))
	for range 5 {
		g.grab.WithLabelValues("git", "b").Observe(0.005)
	}
	for range 5 {
		g.grab.WithLabelValues("git", "b").Observe(0.05)
	}
	require.NoError(t, s.sample(ctx, t0.Add(time.Minute+30*time.Second)))

	c.set(t0.Add(2 * time.Minute))
	w := h.Window(2).VisitTypes[0]
	p95 := values(w.GrabP95Seconds)
	require.InDelta(t, 0.955, p95[0], 1e-6, "all in (0.1, 1]: interpolated in that bucket")
	require.InDelta(t, 0.01, p95[1], 1e-6, "95 of 100 in the first bucket: its bound")
	mean := values(w.GrabMeanSeconds)
	require.InDelta(t, 0.5, mean[0], 1e-6)
	require.InDelta(t, (95*0.005+5*0.05)/100, mean[1], 1e-6)
}

func TestQueuesAreMeasured(t *testing.T) {
	depth, free := int64(40), int64(60)
	h, c := newTest(Config{Queues: func(context.Context) ([]livequeue.Queue, error) {
		return []livequeue.Queue{{VisitType: "git", Depth: &depth, FreeSlots: &free}, {VisitType: "hg"}}, nil
	}}, t0)
	require.NoError(t, newSampler(h).sample(context.Background(), t0))
	c.set(t0.Add(time.Minute))
	w := h.Window(1)
	require.Len(t, w.VisitTypes, 1, "a queue of unknown depth has no measure")
	require.Equal(t, []float64{40}, values(w.VisitTypes[0].QueueDepth))
	require.Equal(t, []float64{60}, values(w.VisitTypes[0].FreeSlots))
}

// recall is a store that recalls counts, after failing a number of times.
type recall struct {
	mu          sync.Mutex
	fails       int
	since, till time.Time
	counts      []revisit.MinuteCount
}

func (r *recall) ActivityByMinute(_ context.Context, since, until time.Time) ([]revisit.MinuteCount, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.since, r.till = since, until
	if r.fails > 0 {
		r.fails--
		return nil, errors.New("database down")
	}
	return r.counts, nil
}

func TestRebuildsTheLastDayFromTheStore(t *testing.T) {
	start := t0.Add(30 * time.Second)
	st := &recall{fails: 1, counts: []revisit.MinuteCount{
		{VisitType: "git", Kind: revisit.ActivityScheduled, Label: "oldest_scheduled_first", Minute: t0.Add(-3 * time.Minute), Count: 4},
		{VisitType: "git", Kind: revisit.ActivityScheduled, Minute: t0.Add(-3 * time.Minute), Count: 6},
		{VisitType: "git", Kind: revisit.ActivityResult, Label: "failed", Minute: t0.Add(-2 * time.Minute), Count: 2},
		{VisitType: "git", Kind: revisit.ActivityResult, Label: "successful", Minute: t0, Count: 1},
	}}
	g := newGatherer()
	h, c := newTest(Config{Store: st, Metrics: g.reg, Every: 10 * time.Millisecond}, start)
	g.result.WithLabelValues("git", "full").Add(2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	require.Eventually(t, func() bool {
		w := h.Window(Minutes)
		return len(w.VisitTypes) == 1 && w.VisitTypes[0].Last24h.Scheduled == 10
	}, 5*time.Second, 10*time.Millisecond, "recalled once the store answers")
	cancel()
	require.NoError(t, <-done)
	st.mu.Lock()
	defer st.mu.Unlock()
	require.Zero(t, st.fails, "tried again after the failure")
	require.Equal(t, start, st.till, "recalled up to the start: the samples count from there")
	require.Equal(t, start.Add(-24*time.Hour), st.since)

	c.set(t0.Add(time.Minute))
	w := h.Window(5).VisitTypes[0]
	require.Equal(t, []float64{0, 4, 0, 0, -1}, values(w.Scheduled["oldest_scheduled_first"]),
		"minutes counted are known, the start's own minute is the samples'")
	require.Equal(t, []float64{0, 6, 0, 0, -1}, values(w.ScheduledWithoutPolicy))
	require.Equal(t, []float64{0, 0, 2, 0, -1}, values(w.Results["failed"]))
	require.Equal(t, []float64{0, 0, 0, 0, 3}, values(w.Results["successful"]), "recalled and sampled add up")
	require.Equal(t, []float64{0, 0, 0, 0, -1}, values(w.Lost), "no visit lost")
}
