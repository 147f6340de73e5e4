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
	Progress io.Writer
}

// FeedbackReport is what RunFeedback measured.
type FeedbackReport struct {
	Statuses int `json:"statuses"`
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
// after every visit the data set knows.
func RunFeedback(ctx context.Context, cfg FeedbackConfig) (FeedbackReport, error) {
	rep := FeedbackReport{Statuses: cfg.Statuses}
	se, err := openSession(ctx, cfg.URL, cfg.Origins, cfg.Progress)
	if err != nil {
		return rep, err
	}
	defer se.Close()
	rng := rand.New(rand.NewPCG(uint64(se.now.Unix()), 4))
	batch := make([]feedback.VisitStatus, 0, cfg.Batch)
	var elapsed time.Duration
	for done := 0; done < cfg.Statuses; done += len(batch) {
		batch = batch[:0]
		for k := done; k < min(done+cfg.Batch, cfg.Statuses); k++ {
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
			batch = append(batch, v)
		}
		start := time.Now()
		res, err := feedback.Process(ctx, se, batch, rng.Float64)
		elapsed += time.Since(start)
		if err != nil {
			return rep, err
		}
		rep.Changed += len(res.Stats)
		rep.Ignored += res.Ignored
		rep.Disabled += res.Disabled
	}
	rep.PerSecond = float64(cfg.Statuses) / elapsed.Seconds()
	return rep, nil
}
