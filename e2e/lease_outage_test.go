package e2e

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"

	amqpbroker "github.com/revisit-sched/revisit/broker/amqp"
)

// TestLeaseRenewalWaitsOutAnOutage cuts, then freezes, the database of an
// idle orchestrator for 15 s each: its lease renewals are spaced and
// logged once, and the lease is renewed soon after the database's return
// (renewedWithin).
func TestLeaseRenewalWaitsOutAnOutage(t *testing.T) {
	t.Parallel()
	direct, storeURL := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	newWorld(t, direct, queue, 1000)
	proxy, st := proxiedStore(t, storeURL)
	leases := &countedLeases{Store: st}
	logs := &logCounts{n: map[string]int{}}
	o, err := orchestrator.New(leases, celerytest.OpenBroker(t, amqpbroker.Config{Logger: testLogger(t)}),
		orchestrator.Config{Logger: slog.New(countingHandler{testLogger(t).Handler(), logs}),
			NoOriginsBackoff: 100 * time.Millisecond, LeaseTTL: 3 * time.Second})
	require.NoError(t, err)
	run(t, "orchestrator", o.Run)
	celerytest.WaitFor(t, 30*time.Second, "the lease taken", func() bool { return leases.held.Load() > 0 })

	for _, fault := range []struct {
		name       string
		start, end func()
	}{{"cut", proxy.Down, proxy.Up}, {"frozen", proxy.Freeze, proxy.Thaw}} {
		calls, lines, renewed := leases.calls.Load(), logs.total(), logs.of("lease renewed again")
		warned := logs.of("cannot renew the lease; trying again until the store answers")
		fault.start()
		time.Sleep(15 * time.Second)
		attempts, logged := leases.calls.Load()-calls, logs.total()-lines
		t.Logf("%s for 15 s: %d renewal attempts, %d log lines", fault.name, attempts, logged)
		require.LessOrEqual(t, attempts, int64(40), "%s: the renewals back off", fault.name)
		require.GreaterOrEqual(t, attempts, int64(3), "%s: the renewals go on", fault.name)
		require.Equal(t, warned+1, logs.of("cannot renew the lease; trying again until the store answers"),
			"%s: the failing renewals are logged once", fault.name)
		require.LessOrEqual(t, logged, 40, "%s: the logs stay quiet", fault.name)
		back := time.Now()
		fault.end()
		celerytest.WaitFor(t, 10*time.Second, "the lease renewed", func() bool { return logs.of("lease renewed again") > renewed })
		took := time.Since(back)
		t.Logf("%s: lease renewed %v after the database's return", fault.name, took)
		require.Less(t, took, renewedWithin, "%s: the lease is renewed soon after the return", fault.name)
	}
}

// renewedWithin bounds the time from the database's return to the lease's
// renewal: an attempt begun just before the return may run out its timeout
// (a third of the 3 s TTL), the next waits at most RenewRetryMax and its
// jitter (1 s), and the renewal itself takes a fresh connection.
const renewedWithin = 3 * time.Second

// countedLeases counts the lease renewals a store is asked for.
type countedLeases struct {
	store.Store
	calls, held atomic.Int64
}

func (c *countedLeases) LeaseAcquire(ctx context.Context, name, owner string, ttl time.Duration) (revisit.Lease, error) {
	c.calls.Add(1)
	l, err := c.Store.LeaseAcquire(ctx, name, owner, ttl)
	if err == nil && l.Owner == owner {
		c.held.Add(1)
	}
	return l, err
}

// logCounts counts log records by message.
type logCounts struct {
	mu  sync.Mutex
	n   map[string]int
	all int
}

func (c *logCounts) of(msg string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[msg]
}

func (c *logCounts) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all
}

// countingHandler counts the records it passes on.
type countingHandler struct {
	slog.Handler
	counts *logCounts
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.counts.mu.Lock()
	h.counts.n[r.Message]++
	h.counts.all++
	h.counts.mu.Unlock()
	return h.Handler.Handle(ctx, r)
}

func (h countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(attrs), h.counts}
}

func (h countingHandler) WithGroup(name string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(name), h.counts}
}
