package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/prometheus/client_golang/prometheus"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/listener"
)

// proc is a revisit subprocess.
type proc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRevisit runs the revisit binary with args and a clean environment;
// it is killed at cleanup if still running.
func startRevisit(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(revisitBinary(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = withoutRevisitVariables()
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("revisit %s (pid %d) said:\n%s", strings.Join(args, " "), cmd.Process.Pid, p.stderr.String())
		}
	})
	return p
}

// kill9 kills the process at once.
func (p *proc) kill9(t *testing.T) {
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
}

// interrupt sends SIGTERM and returns the exit code and how long the
// process took to exit.
func (p *proc) interrupt(t *testing.T, timeout time.Duration) (int, time.Duration) {
	began := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("no exit %s after SIGTERM", timeout)
	}
	return p.cmd.ProcessState.ExitCode(), time.Since(began)
}

// orchestratorConfig writes a configuration file for the subprocesses,
// with rounds of 200 origins at most, roundJitter apart on average, and
// leases of leaseTTL.
func orchestratorConfig(t *testing.T, storeURL, brokerURL, roundJitter, leaseTTL string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "revisit.yaml")
	text := fmt.Sprintf(`store: %q
broker: %q
orchestrator:
  max_per_round: 200
  round_jitter: %s
  queue_full_backoff: 100ms
  no_origins_backoff: 200ms
  lease_ttl: %s
  grace_period: 10s
`, storeURL, brokerURL, roundJitter, leaseTTL)
	require.NoError(t, os.WriteFile(name, []byte(text), 0o600))
	return name
}

// declaredQueue declares a durable queue for the test (no worker does) and
// returns a channel to read it with.
func declaredQueue(t *testing.T, name string) *amqp091.Channel {
	t.Helper()
	celerytest.RequireRabbitMQ(t)
	conn, err := amqp091.Dial(celerytest.URL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	_, err = ch.QueueDeclare(name, true, false, false, false, nil)
	require.NoError(t, err)
	return ch
}

// drain reads every message of queue and counts them by the url kwarg.
func drain(t *testing.T, ch *amqp091.Channel, queue string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for _, m := range drainMessages(t, ch, queue) {
		seen[m.url]++
	}
	return seen
}

// queued is a message read from a queue: its id and url kwarg.
type queued struct{ id, url string }

// drainMessages reads every message of queue.
func drainMessages(t *testing.T, ch *amqp091.Channel, queue string) []queued {
	t.Helper()
	var out []queued
	for {
		msg, ok, err := ch.Get(queue, true)
		require.NoError(t, err)
		if !ok {
			return out
		}
		var body []json.RawMessage
		require.NoError(t, json.Unmarshal(msg.Body, &body))
		var kw struct{ URL string }
		require.NoError(t, json.Unmarshal(body[1], &kw))
		out = append(out, queued{id: msg.CorrelationId, url: kw.URL})
	}
}

// depth returns how many messages wait in queue.
func depth(t *testing.T, ch *amqp091.Channel, queue string) int {
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	require.NoError(t, err)
	return q.Messages
}

// TestKillNineLosesNothing kills the orchestrator with SIGKILL at random
// points of its rounds, and once between publishing a batch and recording
// it sent, restarts it, and checks that every origin is published in the
// end, duplicates staying within one batch per kill, that SIGTERM then
// stops it cleanly, and that the result of every message, duplicates
// included, closes a visit (none is of an unknown visit).
func TestKillNineLosesNothing(t *testing.T) {
	t.Parallel()
	st, storeURL := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	ch := declaredQueue(t, queue)
	w := newWorld(t, st, queue, 100_000)
	origins := names("o", 20_000)
	w.addNeverVisited(origins...)
	// Rounds of 200 every 25 ms on average: kills land mid-way.
	cfg := orchestratorConfig(t, storeURL, celerytest.URL(), "50ms", "300ms")

	const kills = 8
	for i := range kills {
		p := startRevisit(t, "--config", cfg, "schedule-recurrent", "--results=false")
		time.Sleep(time.Duration(150+rand.IntN(450)) * time.Millisecond)
		p.kill9(t)
		t.Logf("kill %d: %d messages so far", i+1, depth(t, ch, queue))
	}
	origins = append(origins, killUnrecorded(t, w, "postgres", storeURL, cfg)...)
	p := startRevisit(t, "--config", cfg, "schedule-recurrent", "--results=false")
	celerytest.WaitFor(t, 60*time.Second, "every origin published", func() bool {
		c := w.inFlight()
		return c.Pending == 0 && c.Sent >= int64(len(origins))
	})
	code, took := p.interrupt(t, 15*time.Second)
	require.Equal(t, 0, code, "SIGTERM exits 0")
	require.Less(t, took, 10*time.Second)

	msgs := drainMessages(t, ch, queue)
	seen := map[string]int{}
	for _, m := range msgs {
		seen[m.url]++
	}
	dups := 0
	for _, n := range origins {
		require.GreaterOrEqual(t, seen[url(n)], 1, "%s never published", n)
		dups += seen[url(n)] - 1
	}
	require.Len(t, seen, len(origins))
	t.Logf("%d kills, %d duplicate messages", kills+1, dups)
	require.Positive(t, dups, "a kill between publishing and recording duplicates its batch")
	require.LessOrEqual(t, dups, (kills+1)*200, "at most the batch in flight is duplicated at each kill")
	c := w.inFlight()
	require.Equal(t, int64(len(origins)), c.Sent, "every origin has one in-flight record, sent")
	require.Zero(t, c.Pending)

	reg := prometheus.NewRegistry()
	l := listener.New(st, nil, listener.Config{Metrics: listener.NewMetrics(reg)})
	for batch := range slices.Chunk(msgs, 5000) {
		events := make([]celery.Event, len(batch))
		for i, m := range batch {
			events[i] = celery.Event{Type: celery.TypeResult, UUID: m.id, Timestamp: time.Now().UTC(),
				VisitResult: &celery.VisitResult{Status: celery.VisitUneventful}}
		}
		require.NoError(t, l.Handle(context.Background(), events))
	}
	require.Zero(t, counterValue(t, reg, "revisit_results_unknown_total"), "results of unknown visits")
	require.GreaterOrEqual(t, c.Lost, int64(dups), "the recovered visits were kept, lost, for their results")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Lost: c.Lost - int64(dups)}, w.inFlight(),
		"every result closed its visit; the recovered visits whose message never reached the queue are left, lost")
}

// killUnrecorded lists 1000 more origins, makes the store of engine refuse
// to record visits sent, runs the orchestrator until it tried to record
// its first batch, kills it there and lets the store record again. It
// returns the origins' names.
func killUnrecorded(t *testing.T, w *world, engine, storeURL, cfg string) []string {
	late := names("late", 1000)
	w.addNeverVisited(late...)
	undo := refuseSent(t, engine, storeURL)
	p := startRevisit(t, "--config", cfg, "schedule-recurrent", "--results=false")
	celerytest.WaitFor(t, 30*time.Second, "a batch published but not recorded", func() bool {
		return strings.Contains(p.stderr.String(), refusedSent)
	})
	p.kill9(t)
	undo()
	return late
}

// counterValue returns the value of the counter named name in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestReplicasShareNothingAndTakeOver runs two orchestrators against one
// store: one drives git, the other stands by; when the driver is killed the
// other takes over within the lease TTL.
func TestReplicasShareNothingAndTakeOver(t *testing.T) {
	t.Parallel()
	st, storeURL := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	ch := declaredQueue(t, queue)
	w := newWorld(t, st, queue, 100_000)
	w.addNeverVisited(names("a", 1000)...)
	// A killed holder's lease is taken over at once (its process and its
	// presence connection are gone), so the takeover needs no short TTL;
	// with 300 ms, renewals bounded by 100 ms let the live holder's lease
	// lapse on a busy server, and the probe below took it.
	cfg := orchestratorConfig(t, storeURL, celerytest.URL(), "1ms", "3s")

	a := startRevisit(t, "--config", cfg, "schedule-recurrent", "--results=false")
	b := startRevisit(t, "--config", cfg, "schedule-recurrent", "--results=false")
	celerytest.WaitFor(t, 30*time.Second, "the first origins published", func() bool {
		return w.inFlight().Sent == 1000
	})
	seen := drain(t, ch, queue)
	require.Len(t, seen, 1000)
	for u, n := range seen {
		require.Equal(t, 1, n, "%s published twice", u)
	}
	owner := leaseOwner(t, w)
	driver, standby := a, b
	if !strings.Contains(owner, fmt.Sprintf(":%d:", a.cmd.Process.Pid)) {
		driver, standby = b, a
	}
	require.Contains(t, owner, fmt.Sprintf(":%d:", driver.cmd.Process.Pid), "the lease names a running replica")

	// The takeover is timed from the kill: the standby must be up first.
	celerytest.WaitFor(t, 30*time.Second, "the standby to start", func() bool {
		return strings.Contains(standby.stderr.String(), "orchestrator starting")
	})
	driver.kill9(t)
	killed := time.Now()
	w.addNeverVisited(names("b", 100)...)
	celerytest.WaitFor(t, 30*time.Second, "the standby to take over", func() bool {
		return w.inFlight().Sent == 1100
	})
	t.Logf("taken over in %s", time.Since(killed).Round(time.Millisecond))
	require.Less(t, time.Since(killed), 10*time.Second)
	require.Contains(t, leaseOwner(t, w), fmt.Sprintf(":%d:", standby.cmd.Process.Pid))
	require.Len(t, drain(t, ch, queue), 100)
	code, _ := standby.interrupt(t, 15*time.Second)
	require.Equal(t, 0, code)
}

// leaseOwner returns who holds git's lease, through the store's own
// acquisition (a probe that never wins a live lease).
func leaseOwner(t *testing.T, w *world) string {
	l, err := w.st.LeaseAcquire(context.Background(), "orchestrator:git", "probe", time.Millisecond)
	require.NoError(t, err)
	require.NotEqual(t, "probe", l.Owner, "the lease is held")
	return l.Owner
}

// TestSIGTERMMidRound interrupts the orchestrator while it publishes: it
// exits 0 within the grace period and leaves nothing pending.
func TestSIGTERMMidRound(t *testing.T) {
	t.Parallel()
	st, storeURL := teststore.Postgres(t)
	queue := celerytest.Queue(t)
	ch := declaredQueue(t, queue)
	w := newWorld(t, st, queue, 100_000)
	w.addNeverVisited(names("o", 20_000)...)
	p := startRevisit(t, "--config", orchestratorConfig(t, storeURL, celerytest.URL(), "20ms", "300ms"), "schedule-recurrent", "--results=false")
	celerytest.WaitFor(t, 30*time.Second, "publishing to start", func() bool { return depth(t, ch, queue) > 0 })
	code, took := p.interrupt(t, 15*time.Second)
	require.Equal(t, 0, code)
	require.Less(t, took, 10*time.Second, "within the grace period")
	c := w.inFlight()
	require.Zero(t, c.Pending, "the round in flight was finished or rolled back")
	require.Equal(t, int64(depth(t, ch, queue)), c.Sent, "every message in the queue is recorded sent, no more")
	require.Less(t, c.Sent, int64(20_000), "stopped mid-way")
}
