package feedback

import (
	"context"
	"hash/maphash"
	"math/rand/v2"
	"sync"

	"golang.org/x/sync/errgroup"
)

// DefaultWorkers is the number of workers that revisit visit-status ingest
// runs a pipeline with unless told otherwise: on the 10M reference set on
// PostgreSQL, four workers process ~2.3× as many statuses a second as one
// (docs/performance.md, "Session 18").
const DefaultWorkers = 4

// PipelineConfig configures a Pipeline.
type PipelineConfig struct {
	// Workers is how many batches are processed at once; below 1, one.
	Workers int
	// BatchSize is how many statuses a worker gathers before it processes
	// them; below 1, 1000.
	BatchSize int
	// Rand is the random source of the revisit interval's spread, called
	// from every worker at once; nil uses math/rand/v2.
	Rand func() float64
	// Done, if set, is called after each batch is processed, with its size
	// and result, from the worker that processed it.
	Done func(statuses int, res Result)
}

// Pipeline processes a stream of visit statuses in batches, several
// batches at once. Each origin's statuses go to one worker, in the order
// they were added, so that none overtakes an earlier one (which would then
// be ignored as late). Origins do not depend on each other (Process reads,
// but does not write, the queue positions), and concurrent Process calls
// are safe (see Process). A worker's batches hold other statuses than
// those of the stream cut in order, which changes nothing: an origin's
// statuses keep their order, and Fold's outcome does not depend on where
// its stream is cut.
type Pipeline struct {
	cfg    PipelineConfig
	ctx    context.Context
	g      *errgroup.Group
	inputs []chan VisitStatus
	seed   maphash.Seed
	closed sync.Once

	mu    sync.Mutex
	total Result
	count int
}

// NewPipeline starts a pipeline's workers, which process into st until
// Close, or until ctx is done or a batch fails.
func NewPipeline(ctx context.Context, st Store, cfg PipelineConfig) *Pipeline {
	cfg.Workers = max(cfg.Workers, 1)
	if cfg.BatchSize < 1 {
		cfg.BatchSize = 1000
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	g, gctx := errgroup.WithContext(ctx)
	p := &Pipeline{cfg: cfg, ctx: gctx, g: g, seed: maphash.MakeSeed()}
	for range cfg.Workers {
		in := make(chan VisitStatus, cfg.BatchSize)
		p.inputs = append(p.inputs, in)
		g.Go(func() error { return p.work(st, in) })
	}
	return p
}

// Add queues a status for its origin's worker. It fails, with the first
// error of the pipeline, once a batch has failed or ctx is done. Statuses
// are added from one goroutine, and not after Close.
func (p *Pipeline) Add(v VisitStatus) error {
	h := maphash.Comparable(p.seed, v.Key())
	select {
	case p.inputs[h%uint64(len(p.inputs))] <- v:
		return nil
	case <-p.ctx.Done():
		return p.Close()
	}
}

// Close processes the statuses still gathered, waits for the workers and
// returns the first error. It may be called more than once.
func (p *Pipeline) Close() error {
	p.closed.Do(func() {
		for _, in := range p.inputs {
			close(in)
		}
	})
	return p.g.Wait()
}

// Processed returns how many statuses the pipeline has processed, and the
// sum of their results.
func (p *Pipeline) Processed() (int, Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count, p.total
}

// work gathers a worker's statuses into batches and processes them.
func (p *Pipeline) work(st Store, in <-chan VisitStatus) error {
	batch := make([]VisitStatus, 0, p.cfg.BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := Process(p.ctx, st, batch, p.cfg.Rand)
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.count += len(batch)
		p.total.add(res)
		p.mu.Unlock()
		if p.cfg.Done != nil {
			p.cfg.Done(len(batch), res)
		}
		batch = batch[:0]
		return nil
	}
	for {
		select {
		case v, ok := <-in:
			if !ok {
				return flush()
			}
			batch = append(batch, v)
			if len(batch) == p.cfg.BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
	}
}
