package bench

import (
	"context"

	"github.com/revisit-sched/revisit/store"
)

// DBCost is what an operation cost the database server per unit of work
// (an origin recorded, a result folded): its processor time, when it runs
// on this host, and the bytes it wrote to its write-ahead log, when the
// store measures one (store.WALMeter). Both count all the server did
// meanwhile: measure on an otherwise idle server.
type DBCost struct {
	CPUMicros float64 `json:"db_cpu_us"`
	WALBytes  float64 `json:"wal_bytes"`
}

// dbSample is what the database server has done so far.
type dbSample struct {
	cpu cpuSample
	wal int64
}

// sampleDB reads what the server of s has done so far.
func sampleDB(ctx context.Context, s store.Store) (dbSample, error) {
	d := dbSample{cpu: sampleCPU()}
	if m, ok := s.(store.WALMeter); ok {
		var err error
		if d.wal, err = m.WALBytes(ctx); err != nil {
			return d, err
		}
	}
	return d, nil
}

// costSince returns what the server of s did since start, per unit of
// work.
func costSince(ctx context.Context, s store.Store, start dbSample, units int64) (DBCost, error) {
	end, err := sampleDB(ctx, s)
	if err != nil || units <= 0 {
		return DBCost{}, err
	}
	return DBCost{CPUMicros: start.cpu.per(end.cpu, units).PostgresMicros,
		WALBytes: float64(end.wal-start.wal) / float64(units)}, nil
}

// RelationFootprint is one table's or index's disk space, in all and per
// origin of the data set.
type RelationFootprint struct {
	store.Relation
	PerOrigin float64 `json:"bytes_per_origin"`
}

// footprint returns the disk space of the tables and indexes of s (none
// when the store does not tell it), per origin of a data set of n.
func footprint(ctx context.Context, s store.Store, n int) ([]RelationFootprint, error) {
	fp, ok := s.(store.Footprinter)
	if !ok {
		return nil, nil
	}
	rels, err := fp.Footprint(ctx)
	out := make([]RelationFootprint, len(rels))
	for i, r := range rels {
		out[i] = RelationFootprint{Relation: r, PerOrigin: float64(r.Bytes) / float64(max(n, 1))}
	}
	return out, err
}
