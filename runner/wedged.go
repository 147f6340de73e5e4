package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// wedgedLoop is the supervise.Loop that ends as lost, at start and every
// WedgedCheckInterval, the runs silent beyond their type's run timeout.
func (r *Runner) wedgedLoop(stop, hard context.Context, healthy func()) error {
	for {
		wait := r.cfg.WedgedCheckInterval
		if err := supervise.Classify(r.endWedged(hard)); err != nil {
			var werr *supervise.WaitError
			if !errors.As(err, &werr) {
				return err
			}
			r.metrics.waits.WithLabelValues("wedged", werr.Reason).Inc()
			r.log.Warn("wedged-run check: dependency unavailable", "reason", werr.Reason, "err", werr.Err)
			wait = min(wait, r.cfg.DependencyBackoff)
		} else {
			healthy()
		}
		if !supervise.Sleep(stop, wait+supervise.Jitter(r.cfg.RoundJitter)) {
			return nil
		}
	}
}

// endWedged ends the wedged runs of every task type and counts them by
// task type.
func (r *Runner) endWedged(ctx context.Context) error {
	runs, err := r.store.TaskRunsEndWedged(ctx, r.cfg.Clock.Now())
	if err != nil {
		return fmt.Errorf("end wedged task runs: %w", err)
	}
	if len(runs) == 0 {
		return nil
	}
	byType := map[string]int{}
	for start := 0; start < len(runs); start += recoverPage {
		ids := make([]int64, 0, recoverPage)
		for _, run := range runs[start:min(start+recoverPage, len(runs))] {
			ids = append(ids, run.TaskID)
		}
		page, err := r.store.TasksGet(ctx, revisit.TaskFilter{IDs: ids, Limit: len(ids)})
		if err != nil {
			return fmt.Errorf("task types of %d wedged runs: %w", len(runs), err)
		}
		for _, t := range page.Tasks {
			byType[t.Type]++
		}
	}
	for tt, n := range byType {
		r.metrics.wedged.WithLabelValues(tt).Add(float64(n))
	}
	r.log.Warn("runs without news beyond their type's run timeout ended as lost", "runs", len(runs), "by_type", byType)
	return nil
}
