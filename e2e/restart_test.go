package e2e

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/orchestrator"
)

// TestBrokerRestart stops RabbitMQ's application while the orchestrator
// publishes, then starts it again: the loop waits, reports, and carries on
// by itself; every origin is published, duplicates within one round. It
// restarts the shared server, so it runs only with
// TEST_DISRUPTIVE=1 (scripts/test runs it alone, after the rest).
func TestBrokerRestart(t *testing.T) {
	if os.Getenv("TEST_DISRUPTIVE") != "1" {
		t.Skip("restarts RabbitMQ: set TEST_DISRUPTIVE=1 (scripts/test does, running it alone)")
	}
	st, _ := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	ch := declaredQueue(t, queue)
	w := newWorld(t, st, queue, 100_000)
	w.addNeverVisited(names("o", 5000)...)
	b := celerytest.OpenBroker(t, amqp.Config{Logger: testLogger(t), MinBackoff: 100 * time.Millisecond,
		MaxBackoff: time.Second, ConfirmTimeout: 5 * time.Second})
	metrics := orchestrator.NewMetrics(nil)
	o, err := orchestrator.New(st, b, orchestrator.Config{Logger: testLogger(t), Metrics: metrics,
		MaxPerRound: 100, RoundJitter: 30 * time.Millisecond, NoOriginsBackoff: 100 * time.Millisecond,
		QueueFullBackoff: 2 * time.Second})
	require.NoError(t, err)
	run(t, "orchestrator", o.Run)

	celerytest.WaitFor(t, 30*time.Second, "publishing to start", func() bool { return depth(t, ch, queue) > 0 })
	rabbitmqctl(t, "stop_app")
	time.Sleep(3 * time.Second)
	require.True(t, o.Health()["git"].Healthy, "a broker outage is waited out, not a failure")
	rabbitmqctl(t, "start_app")

	celerytest.WaitFor(t, 90*time.Second, "every origin published after the restart", func() bool {
		c := w.inFlight()
		return c.Pending == 0 && c.Sent == 5000
	})
	conn := declaredQueue(t, queue) // the old channel died with the broker
	seen := drain(t, conn, queue)
	require.Len(t, seen, 5000, "every origin, once at least")
	dups := 0
	for _, n := range seen {
		dups += n - 1
	}
	t.Logf("%d duplicates", dups)
	require.LessOrEqual(t, dups, 100, "at most the round cut by the restart is duplicated")
}

// rabbitmqctl runs a rabbitmqctl command and requires success.
func rabbitmqctl(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("rabbitmqctl", args...).CombinedOutput()
	require.NoError(t, err, "rabbitmqctl %v: %s", args, out)
}
