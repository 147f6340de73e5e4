package sqlite

import "context"

// turns hands out a pool's connections first come, first served: a caller
// takes a turn before it asks the pool for a connection and gives it back
// once it has returned the connection, and there are as many turns as
// connections, so the pool never has a caller waiting. database/sql gives
// a freed connection to a random waiting caller: with 200 API clients
// reading, a page of origins waited five times longer at p99 than at the
// median (docs/performance.md, P8). A channel queues the callers
// blocked on it in the order they came.
type turns chan struct{}

func newTurns(n int) turns { return make(turns, n) }

// take waits for a turn, or for ctx to end.
func (t turns) take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// give hands a turn back.
func (t turns) give() { <-t }
