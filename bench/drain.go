package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
)

// DrainConfig configures RunDrain.
type DrainConfig struct {
	// URL is the store; the reference data set of Origins origins is
	// loaded unless a previous run left it there.
	URL     string
	Origins int
	// Workers take git visits from the embedded broker's queue of
	// QueueLength messages, together at Rate visits a second, for
	// Duration after the queue first filled.
	Workers     int
	Rate        float64
	QueueLength int
	Duration    time.Duration
	Progress    io.Writer
}

// DrainReport is what RunDrain measured.
type DrainReport struct {
	URL     string  `json:"store"`
	Workers int     `json:"workers"`
	Rate    float64 `json:"rate_per_s"`
	Queue   int     `json:"queue_length"`
	Seconds float64 `json:"seconds"`
	// Visits counts the visits the workers completed, at PerSecond.
	Visits    int64   `json:"visits"`
	PerSecond float64 `json:"visits_per_s"`
	// Idle is the fraction of the workers' time spent finding the queue
	// empty while origins were due (every origin of the data set is).
	Idle float64 `json:"idle_fraction"`
	// Rounds counts the orchestrator's rounds that published.
	Rounds int64 `json:"rounds"`
}

// DrainTarget is the largest idle fraction allowed (issue 53): the queue
// is refilled ahead of the workers.
const DrainTarget = 0.01

// drainPoll is how long a worker that found the queue empty waits before
// it asks again: its idle time is counted to the microsecond.
const drainPoll = 5 * time.Millisecond

// RunDrain runs the real orchestrator, with its default waits, into the
// embedded broker over the store, while workers take its visits at a set
// rate, and measures how much of their time the workers find the queue
// empty although origins are due: what the orchestrator's refill leaves
// them idle.
func RunDrain(ctx context.Context, cfg DrainConfig) (DrainReport, error) {
	rep := DrainReport{URL: store.Redact(cfg.URL), Workers: cfg.Workers, Rate: cfg.Rate, Queue: cfg.QueueLength}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	b := embedded.New(se, embedded.Config{Clock: se.clk.Now})
	defer b.Close()
	queue := "revisit.bench." + uuid.NewString()[:8]
	defer b.DeleteQueue(context.WithoutCancel(ctx), queue)
	tt := revisit.TaskType{Type: "load-git", BackendName: queue, MaxQueueLength: cfg.QueueLength}
	if err := se.prepareGit(ctx, tt); err != nil {
		return rep, err
	}

	reg := prometheus.NewRegistry()
	metrics := orchestrator.NewMetrics(reg)
	o, err := orchestrator.New(se, b, orchestrator.Config{VisitTypes: []string{"git"}, Owner: "bench",
		Metrics: metrics, Clock: se.clk.Now})
	if err != nil {
		return rep, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- o.Run(runCtx) }()
	stopped := func(err error) (DrainReport, error) {
		stop()
		if oerr := <-done; err == nil {
			err = oerr
		}
		return rep, err
	}

	// The queue fills once before the workers start.
	for {
		depth, err := b.Depth(ctx, queue)
		if err != nil && !errors.Is(err, revisit.ErrNotFound) {
			return stopped(err)
		}
		if depth >= int64(cfg.QueueLength)*9/10 {
			break
		}
		select {
		case err := <-done:
			return rep, fmt.Errorf("the orchestrator stopped: %v", err)
		case <-ctx.Done():
			return stopped(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	roundsBefore := publishedRounds(reg)

	var (
		visits atomic.Int64
		idle   atomic.Int64 // µs
		wg     sync.WaitGroup
	)
	workCtx, endWork := context.WithTimeout(ctx, cfg.Duration)
	defer endWork()
	each := time.Duration(float64(cfg.Workers) / cfg.Rate * float64(time.Second))
	start := time.Now()
	errs := make(chan error, cfg.Workers)
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := drainWorker(workCtx, b, queue, fmt.Sprintf("bench-%d", w), each, &visits, &idle); err != nil &&
				workCtx.Err() == nil {
				errs <- err
			}
		}()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for workCtx.Err() == nil {
		select {
		case <-workCtx.Done():
		case <-tick.C:
			elapsed := time.Since(start).Seconds()
			progress(cfg.Progress, "%d visits, %.0f/s, workers idle %.2f%%", visits.Load(), float64(visits.Load())/elapsed,
				100*float64(idle.Load())/1e6/(elapsed*float64(cfg.Workers)))
		}
	}
	wg.Wait()
	rep.Seconds = time.Since(start).Seconds()
	close(errs)
	for err := range errs {
		return stopped(err)
	}
	rep.Visits = visits.Load()
	rep.PerSecond = float64(rep.Visits) / rep.Seconds
	rep.Idle = float64(idle.Load()) / 1e6 / (rep.Seconds * float64(cfg.Workers))
	rep.Rounds = publishedRounds(reg) - roundsBefore
	return stopped(nil)
}

// drainWorker takes one visit at a time from queue and completes it, each
// taking a visit from when it is taken (its result included), until ctx
// ends; the time from finding the queue empty to taking a visit adds to
// idle (µs).
func drainWorker(ctx context.Context, b *embedded.Broker, queue, name string, each time.Duration,
	visits, idle *atomic.Int64) error {
	var emptySince time.Time
	for ctx.Err() == nil {
		tasks, err := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: name, Max: 1, LeaseFor: time.Hour})
		if err != nil {
			return err
		}
		if len(tasks) == 0 {
			if emptySince.IsZero() {
				emptySince = time.Now()
			}
			select {
			case <-ctx.Done():
			case <-time.After(drainPoll):
			}
			continue
		}
		took := time.Now()
		if !emptySince.IsZero() {
			idle.Add(took.Sub(emptySince).Microseconds())
			emptySince = time.Time{}
		}
		if _, err := b.Complete(ctx, embedded.Result{ID: tasks[0].ID, Worker: name, Status: celery.VisitUneventful}); err != nil {
			return err
		}
		visits.Add(1)
		select { // the visit's work, its lease and result included
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(took.Add(each))):
		}
	}
	if !emptySince.IsZero() {
		idle.Add(time.Since(emptySince).Microseconds())
	}
	return nil
}

// publishedRounds is the count of the orchestrator's rounds that
// published, from its metrics.
func publishedRounds(reg *prometheus.Registry) int64 {
	families, err := reg.Gather()
	if err != nil {
		return 0
	}
	for _, f := range families {
		if f.GetName() == "revisit_round_duration_seconds" {
			var n uint64
			for _, m := range f.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
			return int64(n)
		}
	}
	return 0
}
