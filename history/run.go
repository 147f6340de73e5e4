package history

import (
	"context"
	"time"

	"github.com/revisit-sched/revisit/internal/service/supervise"
)

// recallRetryMax caps the wait between two attempts to recall the store.
const recallRetryMax = time.Minute

// Run fills the history until ctx ends, and then returns nil: it recalls
// the last 24 hours from the store beside (trying again while the store
// is unavailable), and samples the metrics and queues every Every.
func (h *History) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.recall(ctx)
	}()
	defer func() { <-done }()
	s := newSampler(h)
	t := time.NewTicker(h.cfg.Every)
	defer t.Stop()
	failing := ""
	for {
		err := s.sample(ctx, h.now.Now())
		switch {
		case err != nil && err.Error() != failing && ctx.Err() == nil:
			h.log.Warn("history: sampling failed; the minute keeps what was sampled", "err", err)
			failing = err.Error()
		case err == nil:
			failing = ""
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// recall rebuilds the history from the store, trying again with backoff
// until it succeeds or ctx ends.
func (h *History) recall(ctx context.Context) {
	if h.cfg.Store == nil {
		return
	}
	backoff := supervise.Backoff{Max: recallRetryMax}
	for {
		err := h.rebuild(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		wait := backoff.Next()
		h.log.Warn("history: cannot recall the last 24 h from the store; trying again", "err", err, "retry", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
