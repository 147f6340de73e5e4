package urlindex

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// backlog is a store's backlog of URLs to index, counted, that fails the
// calls it is told to.
type backlog struct {
	mu      sync.Mutex
	waiting int
	calls   []int
	fail    int
}

func (b *backlog) IndexOriginURLs(_ context.Context, max int) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, max)
	if b.fail > 0 {
		b.fail--
		return 0, errors.New("database restarting")
	}
	n := min(max, b.waiting)
	b.waiting -= n
	return n, nil
}

func (b *backlog) add(n int) { b.mu.Lock(); b.waiting += n; b.mu.Unlock() }

func (b *backlog) state() (int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting, len(b.calls)
}

// TestRunEmptiesTheBacklogInBatches: Run indexes in batches until one
// comes back short, then waits for the next tick; a failure is retried
// at the next tick, and Run returns when its context ends.
func TestRunEmptiesTheBacklogInBatches(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &backlog{waiting: 25, fail: 0}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, b, Config{Every: 20 * time.Millisecond, Batch: 10}) }()
	require.Eventually(t, func() bool { w, _ := b.state(); return w == 0 }, 5*time.Second, time.Millisecond)
	b.mu.Lock()
	require.Equal(t, []int{10, 10, 10}, b.calls[:3], "batches until a short one")
	b.fail = 1
	b.mu.Unlock()
	b.add(7)
	require.Eventually(t, func() bool { w, _ := b.state(); return w == 0 }, 5*time.Second, time.Millisecond,
		"a failed tick is tried again at the next")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}
