package bench

import (
	"context"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/revisit-sched/revisit/feedback"
)

// FeedbackConfig configures RunFeedback.
type FeedbackConfig struct {
	URL      string
	Origins  int
	Statuses int
	Batch    int
	// Workers is how many batches are processed at once, as concurrent API
	// requests or event consumers do (1: one after the other).
	Workers  int
	Progress io.Writer
}

// FeedbackReport is what RunFeedback measured.
type FeedbackReport struct {
	Statuses int `json:"statuses"`
	Workers  int `json:"workers"`
	Changed  int `json:"stats_changed"`
	Ignored  int `json:"ignored"`
	Disabled int `json:"disabled"`
	// PerSecond is P4: statuses processed per second.
	PerSecond float64 `json:"statuses_per_s"`
}

// FeedbackTarget is P4, in statuses/s.
const FeedbackTarget = 50_000

// RunFeedback processes visit statuses of random origins of the reference
// data set (loaded first if needed) in batches, as results arrive from
// workers: 90 % full with a new snapshot, 5 % failed, 5 % not_found, dated
// after every visit the data set knows. The batches are drawn before the
// clock starts; cfg.Workers goroutines process them, each taking the next.
func RunFeedback(ctx context.Context, cfg FeedbackConfig) (FeedbackReport, error) {
	workers := max(cfg.Workers, 1)
	rep := FeedbackReport{Statuses: cfg.Statuses, Workers: workers}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	rng := rand.New(rand.NewPCG(uint64(se.now.Unix()), 4))
	var batches [][]feedback.VisitStatus
	for done := 0; done < cfg.Statuses; done += cfg.Batch {
		batch := make([]feedback.VisitStatus, 0, cfg.Batch)
		for k := done; k < min(done+cfg.Batch, cfg.Statuses); k++ {
			batch = append(batch, randomStatus(rng, se, k))
		}
		batches = append(batches, batch)
	}

	var (
		mu   sync.Mutex
		next int
	)
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for w := range workers {
		rnd := rand.New(rand.NewPCG(uint64(se.now.Unix()), uint64(5+w))).Float64
		g.Go(func() error {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(batches) {
					return nil
				}
				res, err := feedback.Process(gctx, se, batches[i], rnd)
				if err != nil {
					return err
				}
				mu.Lock()
				rep.Changed += len(res.Stats)
				rep.Ignored += res.Ignored
				rep.Disabled += res.Disabled
				mu.Unlock()
			}
		})
	}
	if err := g.Wait(); err != nil {
		return rep, err
	}
	rep.PerSecond = float64(cfg.Statuses) / time.Since(start).Seconds()
	return rep, nil
}

// randomStatus returns the k-th status of the run: a result of a random
// origin of the data set.
func randomStatus(rng *rand.Rand, se *session, k int) feedback.VisitStatus {
	o := se.ds.Row(rng.IntN(se.ds.Origins)).Origin
	v := feedback.VisitStatus{Origin: o.URL, VisitType: o.VisitType, Status: feedback.StatusFull,
		Date: se.now.Add(time.Duration(k) * time.Millisecond)}
	switch p := rng.IntN(100); {
	case p < 5:
		v.Status = feedback.StatusFailed
	case p < 10:
		v.Status = feedback.StatusNotFound
	default:
		v.Snapshot = make([]byte, 20)
		for i := range v.Snapshot {
			v.Snapshot[i] = byte(rng.Uint32())
		}
	}
	return v
}
