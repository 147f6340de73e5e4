// Package urlindex keeps a store's backlog of URLs to index for search
// short (store.URLIndexer): every few seconds it indexes what waits, in
// batches, until a batch comes back short.
package urlindex

import (
	"context"
	"log/slog"
	"time"

	"github.com/revisit-sched/revisit/store"
)

// DefaultBatch is how many URLs a call indexes by default: ~0.7 s at 10M
// origins.
const DefaultBatch = 50_000

// Config configures Run.
type Config struct {
	// Every is how long Run waits after emptying the backlog (default 5 s).
	Every time.Duration
	// Batch is how many URLs one call indexes at most (default
	// DefaultBatch).
	Batch  int
	Logger *slog.Logger
}

// Run indexes the backlog until ctx ends. A failure is logged and the
// backlog is tried again at the next tick: the URLs wait meanwhile, and a
// search indexes some of them itself.
func Run(ctx context.Context, ix store.URLIndexer, cfg Config) error {
	every, batch, log := cfg.Every, cfg.Batch, cfg.Logger
	if every <= 0 {
		every = 5 * time.Second
	}
	if batch <= 0 {
		batch = DefaultBatch
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		total, err := Drain(ctx, ix, batch)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("indexing recorded URLs for search", "err", err, "indexed", total)
		case total > 0:
			log.Debug("indexed recorded URLs for search", "urls", total)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Drain indexes the backlog, batch URLs a call, until a call indexes fewer,
// and returns how many it indexed, also on error.
func Drain(ctx context.Context, ix store.URLIndexer, batch int) (int, error) {
	total := 0
	for {
		n, err := ix.IndexOriginURLs(ctx, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}
