package orchestrator

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
)

// idleWorkers follows workers that lease from a queue and keeps the
// longest stretch during which none of them got a message.
type idleWorkers struct {
	mu      sync.Mutex
	last    time.Time // when a worker last got messages
	longest time.Duration
	taken   int
}

// leased records that a worker got n messages (none: it waited in vain).
func (w *idleWorkers) leased(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if n == 0 {
		w.longest = max(w.longest, now.Sub(w.last))
		return
	}
	w.longest = max(w.longest, now.Sub(w.last))
	w.last, w.taken = now, w.taken+n
}

func (w *idleWorkers) figures() (taken int, longest time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.taken, w.longest
}

// Workers drain the queue in half a second, while the loop, which fills
// it in one round, finds it full right after and waits. It notices the
// queue draining, at its next poll or, with the embedded broker, as soon
// as workers lease, and fills it again: the workers wait for messages
// about a second at most, not the minute of queue_full_backoff, while
// origins remain.
//
// With the default jitter (5 s), the wait after a round that filled the
// queue ends as soon as the queue has room again.
func TestWorkersWaitLittleForADrainedQueueToBeFilled(t *testing.T) {
	for _, c := range []struct {
		name   string
		poll   time.Duration
		jitter time.Duration
		broker func(*embedded.Broker) broker.Broker
		within time.Duration
	}{
		{"polled", time.Second, 10 * time.Millisecond, func(b *embedded.Broker) broker.Broker { return untold{b} }, 3 * time.Second},
		{"told of leases", time.Minute, 10 * time.Millisecond, func(b *embedded.Broker) broker.Broker { return b }, time.Second},
		{"the default jitter", time.Second, 0, func(b *embedded.Broker) broker.Broker { return b }, time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			longest := drainedQueueWait(t, c.poll, c.jitter, c.broker)
			t.Logf("longest wait of the workers for a message: %s", longest)
			require.Less(t, longest, c.within, "the workers waited that long for a message while origins remained")
		})
	}
}

// untold is a broker that does not tell when workers take messages.
type untold struct{ broker.Broker }

// drainedQueueWait runs 2,000 origins through a queue of 200 slots that
// four workers drain in half a second, and returns the longest the workers
// waited for a message.
func drainedQueueWait(t *testing.T, poll, jitter time.Duration, wrap func(*embedded.Broker) broker.Broker) time.Duration {
	const (
		maxLen  = 200
		origins = 2_000
	)
	st := teststore.SQLite(t)
	w := newWorld(t, st, maxLen)
	w.add(neverVisited, origins)
	b := embedded.New(st, embedded.Config{})
	t.Cleanup(func() { b.Close() })
	// The production waits, but for the jitter (zero: its default).
	start(t, st, wrap(b), Config{Owner: "a", RoundJitter: jitter, QueuePollInterval: poll})

	ctx, cancel := context.WithCancel(context.Background())
	var workers sync.WaitGroup
	idle := &idleWorkers{last: time.Now()}
	for i := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for ctx.Err() == nil {
				ts, err := b.Lease(ctx, embedded.LeaseParams{Queue: gitTask, Worker: string(rune('a' + i)), Max: 10,
					LeaseFor: time.Hour, Wait: time.Second})
				if err != nil {
					return
				}
				idle.leased(len(ts))
				if len(ts) > 0 {
					time.Sleep(100 * time.Millisecond) // the visits
				}
			}
		}()
	}
	t.Cleanup(func() {
		cancel()
		workers.Wait()
	})

	require.Eventually(t, func() bool { taken, _ := idle.figures(); return taken == origins }, 40*time.Second,
		100*time.Millisecond, "the workers got every origin")
	_, longest := idle.figures()
	return longest
}
