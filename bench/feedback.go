package bench

import (
	"context"
	"io"
	"math/rand/v2"
	"time"

	"github.com/revisit-sched/revisit/feedback"
)

// FeedbackConfig configures RunFeedback.
type FeedbackConfig struct {
	URL      string
	Origins  int
	Statuses int
	Batch    int
	// Workers is how many batches are processed at once, as concurrent API
	// requests or `visit-status ingest --workers` do (1: one after the
	// other).
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
	// Cost is what processing cost the database per status.
	Cost DBCost `json:"cost"`
}

// FeedbackTarget is P4, in statuses/s.
const FeedbackTarget = 50_000

// RunFeedback processes visit statuses of random origins of the reference
// data set (loaded first if needed) in batches, as results arrive from
// workers: 90 % full with a new snapshot, 5 % failed, 5 % not_found, dated
// after every visit the data set knows. The statuses are drawn before the
// clock starts, then fed to a feedback.Pipeline of cfg.Workers workers, as
// `revisit visit-status ingest` does.
func RunFeedback(ctx context.Context, cfg FeedbackConfig) (FeedbackReport, error) {
	workers := max(cfg.Workers, 1)
	rep := FeedbackReport{Statuses: cfg.Statuses, Workers: workers}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	rng := rand.New(rand.NewPCG(uint64(se.now.Unix()), 4))
	statuses := make([]feedback.VisitStatus, cfg.Statuses)
	for k := range statuses {
		statuses[k] = randomStatus(rng, se, k)
	}

	db, err := sampleDB(ctx, se.Store)
	if err != nil {
		return rep, err
	}
	start := time.Now()
	p := feedback.NewPipeline(ctx, se, feedback.PipelineConfig{Workers: workers, BatchSize: cfg.Batch,
		Horizon: feedback.Horizon{Clock: se.clk.Now}})
	for _, v := range statuses {
		if err := p.Add(v); err != nil {
			return rep, err
		}
	}
	if err := p.Close(); err != nil {
		return rep, err
	}
	rep.PerSecond = float64(cfg.Statuses) / time.Since(start).Seconds()
	if rep.Cost, err = costSince(ctx, se.Store, db, int64(cfg.Statuses)); err != nil {
		return rep, err
	}
	_, res := p.Processed()
	rep.Changed, rep.Ignored, rep.Disabled = len(res.Stats), res.Ignored, res.Disabled
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
