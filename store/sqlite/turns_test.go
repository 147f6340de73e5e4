package sqlite

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// Callers waiting for a turn get it in the order they came, which is what
// database/sql does not do for its connections.
func TestTurnsAreFirstComeFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		tr := newTurns(1)
		require.NoError(t, tr.take(ctx))
		var (
			mu     sync.Mutex
			served []int
		)
		for i := range 8 {
			go func() {
				if err := tr.take(ctx); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				served = append(served, i)
				mu.Unlock()
				tr.give()
			}()
			synctest.Wait() // caller i waits before caller i+1 comes
		}
		require.Empty(t, served, "the one turn is taken")
		tr.give()
		synctest.Wait()
		require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, served)
	})
}

// A caller whose context ends while it waits gives up without a turn.
func TestTurnsWaitNoLongerThanTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTurns(1)
		require.NoError(t, tr.take(context.Background()))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { errc <- tr.take(ctx) }()
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		tr.give()
		require.NoError(t, tr.take(context.Background()), "the turn the caller gave up is free")
	})
}

// Reads and writes go through their turns: more concurrent readers than
// connections all get their answer, and a read whose context has ended
// does not run.
func TestStoreReadsInTurn(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, nil)
	_, err := s.ListerGetOrCreate(ctx, "github", "github")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 * cap(s.readTurns) {
		wg.Go(func() {
			ls, err := s.ListerList(ctx)
			if err != nil || len(ls) != 1 {
				t.Errorf("ListerList = %v, %v; want one lister", ls, err)
			}
		})
	}
	wg.Wait()
	require.Empty(t, s.readTurns, "every turn given back")
	require.Empty(t, s.writeTurns, "every turn given back")
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.ListerList(done)
	require.ErrorIs(t, err, context.Canceled)
}
