package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/listener"
	"github.com/revisit-sched/revisit/orchestrator"
)

// TestDatabaseCutAndFrozenUnderLoad runs the orchestrator, the embedded
// broker, the listener and eight workers on PostgreSQL behind a proxy, and
// cuts the database for 15 s, then freezes it (connections open, nothing
// answered) for 15 s, while origins are being visited. Every origin is
// visited exactly once and every result recorded; while the database is
// away the process logs a bounded number of lines and uses little CPU;
// visits flow again within 2 s of its return. Not parallel: it measures
// the process's CPU.
func TestDatabaseCutAndFrozenUnderLoad(t *testing.T) {
	direct, storeURL := teststore.Postgres(t)
	const origins = 3000
	w := newWorld(t, direct, embeddedQueue, 300)
	w.addNeverVisited(names("o", origins)...)
	proxy, st := proxiedStore(t, storeURL)

	logs := &logCounts{n: map[string]int{}}
	logger := slog.New(countingHandler{testLogger(t).Handler(), logs})
	b := embedded.New(st, embedded.Config{PollInterval: 50 * time.Millisecond, Logger: logger})
	t.Cleanup(func() { b.Close() })
	o, err := orchestrator.New(st, b, orchestrator.Config{Logger: logger, MaxPerRound: 100,
		RoundJitter: 50 * time.Millisecond, NoOriginsBackoff: time.Second, QueueFullBackoff: 2 * time.Second,
		LeaseTTL: 3 * time.Second})
	require.NoError(t, err)
	run(t, "orchestrator", o.Run)
	run(t, "listener", listener.New(st, b, listener.Config{Logger: logger}).Run)

	var (
		mu      sync.Mutex
		visited = map[string]int{}
		done    atomic.Int64
	)
	ctx, cancel := context.WithCancel(context.Background())
	var workers sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		workers.Wait()
	})
	for i := range 8 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			name := "chaos-" + string(rune('a'+i))
			for ctx.Err() == nil {
				// A lease whose answer the fault swallowed after its
				// commit leaves its messages to no one until the lease
				// ends: a minute, as a real worker's lease would, well
				// past a visit held up by a 15 s fault and well within
				// the test's wait.
				tasks, err := b.Lease(ctx, embedded.LeaseParams{Queue: embeddedQueue, Worker: name, Max: 5,
					LeaseFor: time.Minute, Wait: time.Second})
				if err != nil {
					pause(ctx, 200*time.Millisecond) // the database is away: as a worker retries
					continue
				}
				for _, task := range tasks {
					var kw struct{ URL string }
					require.NoError(t, json.Unmarshal(task.Kwargs, &kw))
					pause(ctx, 10*time.Millisecond) // the visit
					for ctx.Err() == nil {
						if _, err := b.Complete(ctx, embedded.Result{ID: task.ID, Worker: name,
							Status: celery.VisitUneventful}); err == nil {
							break
						}
						pause(ctx, 200*time.Millisecond)
					}
					mu.Lock()
					visited[kw.URL]++
					mu.Unlock()
					done.Add(1)
				}
			}
		}()
	}

	celerytest.WaitFor(t, 60*time.Second, "visits flowing", func() bool { return done.Load() >= 300 })
	for _, fault := range []struct {
		name       string
		start, end func()
	}{{"cut", proxy.Down, proxy.Up}, {"frozen", proxy.Freeze, proxy.Thaw}} {
		lines := logs.total()
		cpu := processCPU()
		fault.start()
		time.Sleep(15 * time.Second)
		used, logged := processCPU()-cpu, logs.total()-lines
		t.Logf("%s for 15 s: %v of CPU, %d log lines, %d visits done", fault.name, used, logged, done.Load())
		require.Less(t, used, 3*time.Second, "%s: the process waits, it does not spin", fault.name)
		require.LessOrEqual(t, logged, 150, "%s: the logs stay bounded", fault.name)
		before, back := done.Load(), time.Now()
		fault.end()
		celerytest.WaitFor(t, 30*time.Second, "visits flowing again", func() bool { return done.Load() >= before+20 })
		took := time.Since(back)
		t.Logf("%s: visits flowing again %v after the database's return", fault.name, took)
		require.Less(t, took, 2*time.Second, "%s: recovery within 2 s", fault.name)
	}

	celerytest.WaitFor(t, 120*time.Second, "every origin visited", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(visited) == origins
	})
	celerytest.WaitFor(t, 30*time.Second, "every result recorded", func() bool {
		c := w.inFlight()
		return c.Pending == 0 && c.Sent == 0
	})
	require.Zero(t, w.inFlight().Lost, "no visit declared lost")
	mu.Lock()
	defer mu.Unlock()
	for u, n := range visited {
		require.Equal(t, 1, n, "%s visited %d times", u, n)
	}
	require.Len(t, visited, origins, "no origin lost")
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// processCPU is the processor time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
