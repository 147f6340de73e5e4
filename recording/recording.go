// Package recording records listed origins into a store: it validates
// them, resolves the listers they name, and writes them in batches,
// several batches at once. The CLI's origin record, the API's
// POST /api/v1/listed-origins and the bench all record through it.
package recording

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/kit/fanout"
)

// Recorder writes a batch of listed origins, whole or not at all.
type Recorder interface {
	ListedOriginsRecord(ctx context.Context, origins []revisit.ListedOrigin) (revisit.RecordResult, error)
}

// ListerCreator returns the lister of a name and instance, created when
// missing.
type ListerCreator interface {
	ListerGetOrCreate(ctx context.Context, name, instanceName string) (revisit.Lister, error)
}

// ListerFinder returns the listers that exist among ids.
type ListerFinder interface {
	ListerGetByIDs(ctx context.Context, ids []uuid.UUID) ([]revisit.Lister, error)
}

// Store is everything recording uses of a store; store.Store and the API
// client (*client.Client) both implement it.
type Store interface {
	Recorder
	ListerCreator
	ListerFinder
}

// DefaultWriters is how many batches a Writer writes at once unless told
// otherwise: on the 10M reference set on PostgreSQL, two batches at once
// record ~1.5× as many origins a second as one, and more do not add to
// that on two cores (docs/performance.md, P3).
const DefaultWriters = 2

// Config configures a Writer.
type Config struct {
	// Writers is how many batches are written at once; below 1, one.
	Writers int
	// BatchSize is how many origins one call to the store writes; below
	// 1, 1000.
	BatchSize int
	// Written, if set, is called after each batch is written, with its
	// number of origins; calls do not overlap.
	Written func(origins int)
}

// Writer records a stream of listed origins in batches, several batches
// at once. Each origin (URL and visit type) goes to one writer, in the
// order it was added, so a later version of an origin is written after an
// earlier one: the last one added wins.
type Writer struct {
	batches *fanout.Batches[revisit.ListedOrigin, revisit.OriginKey]

	mu    sync.Mutex
	total revisit.RecordResult
}

// NewWriter starts a Writer's writers, which record into st until Close,
// or until ctx is done or a batch fails.
func NewWriter(ctx context.Context, st Recorder, cfg Config) *Writer {
	w := &Writer{}
	w.batches = fanout.New(ctx, fanout.Config{Workers: cfg.Writers, BatchSize: cfg.BatchSize},
		revisit.ListedOrigin.Key,
		func(ctx context.Context, batch []revisit.ListedOrigin) error {
			res, err := st.ListedOriginsRecord(ctx, batch)
			if err != nil {
				return fmt.Errorf("record origins: %w", err)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			w.total.Inserted += res.Inserted
			w.total.Updated += res.Updated
			if cfg.Written != nil {
				cfg.Written(len(batch))
			}
			return nil
		})
	return w
}

// Add queues an origin, whose lister ID is set, for writing. It fails once
// a batch has failed or ctx is done. Origins are added from one goroutine,
// and not after Close.
func (w *Writer) Add(o revisit.ListedOrigin) error {
	return w.batches.Add(o)
}

// Close writes the origins still queued, waits for the writers and returns
// what they recorded, and their first error. It may be called more than
// once.
func (w *Writer) Close() (revisit.RecordResult, error) {
	err := w.batches.Close()
	// The writers are done: total is theirs no more.
	return w.total, err
}
