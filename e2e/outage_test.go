package e2e

import (
	"context"
	neturl "net/url"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/netproxy"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"

	amqpbroker "github.com/revisit-sched/revisit/broker/amqp"
)

// TestDatabaseOutage cuts the orchestrator's PostgreSQL connections for a
// while: its loop waits and reports, then carries on by itself.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	direct, storeURL := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	ch := declaredQueue(t, queue)
	w := newWorld(t, direct, queue, 100_000)
	w.addNeverVisited(names("o", 3000)...)

	proxy, st := proxiedStore(t, storeURL)

	b := celerytest.OpenBroker(t, amqpbroker.Config{Logger: testLogger(t)})
	metrics := orchestrator.NewMetrics(nil)
	o, err := orchestrator.New(st, b, orchestrator.Config{Logger: testLogger(t), Metrics: metrics,
		MaxPerRound: 100, RoundJitter: 30 * time.Millisecond, NoOriginsBackoff: 100 * time.Millisecond,
		QueueFullBackoff: time.Second, LeaseTTL: 3 * time.Second})
	require.NoError(t, err)
	run(t, "orchestrator", o.Run)

	celerytest.WaitFor(t, 30*time.Second, "publishing to start", func() bool { return depth(t, ch, queue) > 0 })
	proxy.Down()
	time.Sleep(2 * time.Second)
	during := depth(t, ch, queue)
	time.Sleep(time.Second)
	require.Equal(t, during, depth(t, ch, queue), "nothing is published while the database is away")
	require.True(t, o.Health()["git"].Healthy, "an outage is waited out, not a failure")
	proxy.Up()

	celerytest.WaitFor(t, 60*time.Second, "every origin published after the outage", func() bool {
		c := w.inFlight()
		return c.Pending == 0 && c.Sent == 3000
	})
	seen := drain(t, ch, queue)
	require.Len(t, seen, 3000, "every origin, once at least")
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	require.LessOrEqual(t, dups, 100, "at most the round cut by the outage is duplicated")
}

// proxiedStore opens the PostgreSQL store at storeURL through a proxy that
// can cut or freeze its connections; a connection is given up after 1 s.
func proxiedStore(t *testing.T, storeURL string) (*netproxy.Proxy, *postgres.Store) {
	u, err := neturl.Parse(storeURL)
	require.NoError(t, err)
	proxy := netproxy.Start(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	q.Set("connect_timeout", "1")
	u.RawQuery = q.Encode()
	st, err := postgres.Open(context.Background(), u.String(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return proxy, st
}
