package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// exerciseFootprint checks, on stores that report them, the disk space of
// the tables and indexes (store.Footprinter) and the write-ahead log
// written (store.WALMeter).
func exerciseFootprint(t *testing.T, newStore NewStore) {
	parallel(t, "Footprint/TablesAndIndexesLargestFirstGrowWithOrigins", func(t *testing.T) {
		f := newFixture(t, newStore)
		fp, ok := f.s.(store.Footprinter)
		if !ok {
			t.Skip("the store does not report its footprint")
		}
		a := f.lister("gitlab", "gitlab.com")
		recordMany := func(from, n int) {
			batch := make([]revisit.ListedOrigin, n)
			for i := range batch {
				batch[i] = origin(a.ID, fmt.Sprintf("footprint-%06d", from+i), "git")
			}
			f.record(batch...)
		}
		listedBytes := func() (table, indexes int64) {
			rels, err := fp.Footprint(f.ctx)
			require.NoError(t, err)
			require.True(t, slices.IsSortedFunc(rels, func(x, y store.Relation) int { return int(y.Bytes - x.Bytes) }),
				"largest first: %v", rels)
			for _, r := range rels {
				switch {
				case r.Table != "listed_origin":
				case r.Index:
					indexes += r.Bytes
				default:
					require.Equal(t, "listed_origin", r.Name, "a table is its own table")
					table += r.Bytes
				}
			}
			return table, indexes
		}
		recordMany(0, 10)
		table, indexes := listedBytes()
		require.Positive(t, table, "listed_origin's heap")
		require.Positive(t, indexes, "listed_origin's indexes")
		recordMany(10, 3000)
		moreTable, moreIndexes := listedBytes()
		require.Greater(t, moreTable, table, "3000 more origins take more heap")
		require.Greater(t, moreIndexes, indexes, "and more index")
	})
	parallel(t, "Footprint/WriteAheadLogGrowsWithWrites", func(t *testing.T) {
		f := newFixture(t, newStore)
		wal, ok := f.s.(store.WALMeter)
		if !ok {
			t.Skip("the store does not measure a write-ahead log")
		}
		before, err := wal.WALBytes(f.ctx)
		require.NoError(t, err)
		a := f.lister("gitlab", "gitlab.com")
		f.record(origin(a.ID, "wal", "git"))
		after, err := wal.WALBytes(f.ctx)
		require.NoError(t, err)
		require.Greater(t, after, before, "a recording writes to the log")
	})
}
