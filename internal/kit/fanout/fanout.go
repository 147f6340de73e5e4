// Package fanout processes a stream of items in batches on several workers
// at once, every item of one key on the same worker, in the order the
// items were added.
//
// It is the shape of revisit's bulk writers (visit-status ingest, origin
// record): the items of one origin must not overtake each other, and items
// of different origins do not depend on each other, so they may be written
// side by side.
package fanout

import (
	"context"
	"hash/maphash"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Config configures a Batches.
type Config struct {
	// Workers is how many batches are processed at once; below 1, one.
	Workers int
	// BatchSize is how many items a worker gathers before it processes
	// them; below 1, 1000.
	BatchSize int
}

// Batches hands each item to the worker of its key, which gathers its items
// into batches and processes them in turn. A worker's batches are cut from
// its own items, not from the stream in order: an item's key, not its
// place in the stream, decides the batch it lands in.
type Batches[T any, K comparable] struct {
	ctx    context.Context
	g      *errgroup.Group
	key    func(T) K
	inputs []chan T
	seed   maphash.Seed
	closed sync.Once
}

// New starts the workers of a Batches, which call process with each batch
// until Close, or until ctx is done or a call fails. process is called
// from every worker at once, with a batch it must not keep.
func New[T any, K comparable](ctx context.Context, cfg Config, key func(T) K,
	process func(ctx context.Context, batch []T) error) *Batches[T, K] {
	workers := max(cfg.Workers, 1)
	size := cfg.BatchSize
	if size < 1 {
		size = 1000
	}
	g, gctx := errgroup.WithContext(ctx)
	b := &Batches[T, K]{ctx: gctx, g: g, key: key, seed: maphash.MakeSeed()}
	for range workers {
		in := make(chan T, size)
		b.inputs = append(b.inputs, in)
		g.Go(func() error { return work(gctx, in, size, process) })
	}
	return b
}

// Add queues an item for its key's worker. It fails, with the first error
// of the workers, once a batch has failed or ctx is done. Items are added
// from one goroutine, and not after Close.
func (b *Batches[T, K]) Add(v T) error {
	h := maphash.Comparable(b.seed, b.key(v))
	select {
	case b.inputs[h%uint64(len(b.inputs))] <- v:
		return nil
	case <-b.ctx.Done():
		return b.Close()
	}
}

// Close processes the items still gathered, waits for the workers and
// returns the first error. It may be called more than once.
func (b *Batches[T, K]) Close() error {
	b.closed.Do(func() {
		for _, in := range b.inputs {
			close(in)
		}
	})
	return b.g.Wait()
}

// work gathers one worker's items into batches of size and processes them.
func work[T any](ctx context.Context, in <-chan T, size int, process func(context.Context, []T) error) error {
	batch := make([]T, 0, size)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := process(ctx, batch)
		batch = batch[:0]
		return err
	}
	for {
		select {
		case v, ok := <-in:
			if !ok {
				return flush()
			}
			batch = append(batch, v)
			if len(batch) == size {
				if err := flush(); err != nil {
					return err
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
