package fanout_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/kit/fanout"
)

type item struct{ key, seq int }

// Every item is processed once, in batches of at most the batch size, each
// key's items in the order they were added, and batches run side by side.
func TestBatchesKeepEachKeysOrder(t *testing.T) {
	const keys, perKey, workers, size = 50, 40, 4, 7
	var (
		mu      sync.Mutex
		seen    = map[int][]int{}
		running int
		most    int
	)
	b := fanout.New(context.Background(), fanout.Config{Workers: workers, BatchSize: size},
		func(it item) int { return it.key },
		func(_ context.Context, batch []item) error {
			require.LessOrEqual(t, len(batch), size)
			mu.Lock()
			running++
			most = max(most, running)
			for _, it := range batch {
				seen[it.key] = append(seen[it.key], it.seq)
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			running--
			mu.Unlock()
			return nil
		})
	for seq := range perKey {
		for key := range keys {
			require.NoError(t, b.Add(item{key, seq}))
		}
	}
	require.NoError(t, b.Close())
	require.NoError(t, b.Close(), "Close may be called again")
	require.Len(t, seen, keys)
	for key, seqs := range seen {
		require.Len(t, seqs, perKey, "key %d", key)
		for i, s := range seqs {
			require.Equal(t, i, s, "key %d: items out of order", key)
		}
	}
	require.Greater(t, most, 1, "batches ran one at a time")
	require.LessOrEqual(t, most, workers)
}

// The first failed batch stops the others: Add and Close return its error.
func TestBatchesStopAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	b := fanout.New(context.Background(), fanout.Config{Workers: 3, BatchSize: 2},
		func(v int) int { return v },
		func(_ context.Context, batch []int) error {
			for _, v := range batch {
				if v == 10 {
					return boom
				}
			}
			return nil
		})
	var addErr error
	for v := 0; v < 100_000 && addErr == nil; v++ {
		addErr = b.Add(v)
	}
	require.ErrorIs(t, addErr, boom)
	require.ErrorIs(t, b.Close(), boom)
}

// Items still gathered when the stream ends are processed by Close; a
// context done stops the workers with its error.
func TestBatchesFlushAtCloseAndStopWithTheContext(t *testing.T) {
	var mu sync.Mutex
	total := 0
	b := fanout.New(context.Background(), fanout.Config{Workers: 2, BatchSize: 1000},
		func(v int) int { return v },
		func(_ context.Context, batch []int) error {
			mu.Lock()
			total += len(batch)
			mu.Unlock()
			return nil
		})
	for v := range 9 {
		require.NoError(t, b.Add(v))
	}
	require.NoError(t, b.Close())
	require.Equal(t, 9, total)

	ctx, cancel := context.WithCancel(context.Background())
	b = fanout.New(ctx, fanout.Config{Workers: 2, BatchSize: 1000},
		func(v int) int { return v },
		func(context.Context, []int) error { return nil })
	require.NoError(t, b.Add(1))
	cancel()
	require.ErrorIs(t, b.Close(), context.Canceled)
}
