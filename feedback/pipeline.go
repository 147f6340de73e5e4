package feedback

import (
	"context"
	"math/rand/v2"
	"sync"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/fanout"
)

// DefaultWorkers is the number of workers that revisit visit-status ingest
// runs a pipeline with unless told otherwise: on the 10M reference set on
// PostgreSQL, four workers process ~2.3× as many statuses a second as one
// (docs/performance.md, P4).
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
	// Horizon bounds the dates of the statuses (see Process).
	Horizon Horizon
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
	batches *fanout.Batches[VisitStatus, revisit.OriginKey]

	mu    sync.Mutex
	total Result
	count int
}

// NewPipeline starts a pipeline's workers, which process into st until
// Close, or until ctx is done or a batch fails.
func NewPipeline(ctx context.Context, st Store, cfg PipelineConfig) *Pipeline {
	random := cfg.Rand
	if random == nil {
		random = rand.Float64
	}
	p := &Pipeline{}
	p.batches = fanout.New(ctx, fanout.Config{Workers: cfg.Workers, BatchSize: cfg.BatchSize}, VisitStatus.Key,
		func(ctx context.Context, batch []VisitStatus) error {
			res, err := Process(ctx, st, batch, random, cfg.Horizon)
			if err != nil {
				return err
			}
			p.mu.Lock()
			p.count += len(batch)
			p.total.add(res)
			p.mu.Unlock()
			if cfg.Done != nil {
				cfg.Done(len(batch), res)
			}
			return nil
		})
	return p
}

// Add queues a status for its origin's worker. It fails, with the first
// error of the pipeline, once a batch has failed or ctx is done. Statuses
// are added from one goroutine, and not after Close.
func (p *Pipeline) Add(v VisitStatus) error { return p.batches.Add(v) }

// Close processes the statuses still gathered, waits for the workers and
// returns the first error. It may be called more than once.
func (p *Pipeline) Close() error { return p.batches.Close() }

// Processed returns how many statuses the pipeline has processed, and the
// sum of their results.
func (p *Pipeline) Processed() (int, Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count, p.total
}
