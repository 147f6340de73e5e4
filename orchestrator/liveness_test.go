package orchestrator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
)

// logRecords is a slog handler keeping the records it receives.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}

// find returns the records whose message starts with prefix.
func (h *logRecords) find(prefix string) []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slog.Record
	for _, r := range h.records {
		if len(r.Message) >= len(prefix) && r.Message[:len(prefix)] == prefix {
			out = append(out, r)
		}
	}
	return out
}

// deadHolder returns an owner name of this host whose process is gone.
func deadHolder(t *testing.T) string {
	host, err := os.Hostname()
	require.NoError(t, err)
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	return fmt.Sprintf("%s:%d:dead", host, cmd.Process.Pid)
}

func TestTakesOverTheLeaseOfADeadPredecessorAtOnce(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100)
		w.add(neverVisited, 10)
		_, err := st.LeaseAcquire(w.ctx, "orchestrator:git", deadHolder(t), time.Hour)
		require.NoError(t, err)
		b := newFakeBroker()
		cfg := testConfig("")
		cfg.LeaseTTL = time.Hour
		start(t, st, b, cfg)
		require.Eventually(t, func() bool { return len(b.published()) == 10 }, 2*time.Second, tick,
			"the lease of a process gone from this host is taken over without waiting for its expiry")
	})
}

func TestStandingByIsNotAnError(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	_, err := st.LeaseAcquire(w.ctx, "orchestrator:git", "other-host:1:beef", time.Hour)
	require.NoError(t, err)
	logs := &logRecords{}
	cfg := testConfig("a")
	cfg.SingleProcess, cfg.Logger = true, slog.New(logs)
	start(t, st, newFakeBroker(), cfg)
	require.Eventually(t, func() bool { return len(logs.find("standing by")) > 0 }, waitFor, tick)
	r := logs.find("standing by")[0]
	require.Equal(t, slog.LevelInfo, r.Level, "standing by is the normal state of a replica: %s", r.Message)
}

// idleConfig is testConfig with the production backoffs and lease: a
// loop that finds no origin, or a full queue, would sleep for minutes.
func idleConfig() Config {
	cfg := testConfig("a")
	cfg.NoOriginsBackoff, cfg.QueueFullBackoff, cfg.LeaseTTL = 20*time.Minute, time.Minute, 15*time.Second
	return cfg
}

// startIdle starts an orchestrator and waits for its first round, which
// finds no origin: the loop then sleeps NoOriginsBackoff. It returns the
// orchestrator's log.
func startIdle(t *testing.T, st store.Store, b *fakeBroker) *logRecords {
	logs := &logRecords{}
	cfg := idleConfig()
	cfg.Logger = slog.New(logs)
	start(t, st, b, cfg)
	require.Eventually(t, func() bool { return len(logs.find("round")) > 0 }, waitFor, tick)
	return logs
}

func TestOriginsRecordedWhileTheLoopSleepsGoAtOnce(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100)
		b := newFakeBroker()
		startIdle(t, st, b)
		w.add(neverVisited, 10)
		require.Eventually(t, func() bool { return len(b.published()) == 10 }, 3*time.Second, tick,
			"recording origins wakes up the loop that found none")
	})
}

func TestOriginsRecordedByAnotherProcessGoAtOnce(t *testing.T) {
	st, url := teststore.Postgres(t)
	other, err := postgres.Open(context.Background(), url, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	w := newWorld(t, st, 100)
	b := newFakeBroker()
	startIdle(t, st, b)
	(&world{t: t, st: other, lister: w.lister, ctx: w.ctx}).add(neverVisited, 10)
	require.Eventually(t, func() bool { return len(b.published()) == 10 }, 3*time.Second, tick,
		"origins recorded through another connection pool (another process) wake up the loop")
}

func TestChangingTheTaskTypeWakesTheLoop(t *testing.T) {
	st := teststore.SQLite(t)
	w := newWorld(t, st, 100)
	logs := startIdle(t, st, newFakeBroker())
	rounds := len(logs.find("round"))
	require.NoError(t, st.TaskTypeUpdate(w.ctx, revisit.TaskType{Type: "load-git", BackendName: gitTask,
		MaxQueueLength: 200}))
	require.Eventually(t, func() bool { return len(logs.find("round")) > rounds }, 3*time.Second, tick,
		"a change of the visit type's task type runs a round")
}

func TestAFullQueueThatDrainsIsFilledAgainWithinThePollInterval(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		w := newWorld(t, st, 100)
		w.add(neverVisited, 300)
		b := newFakeBroker()
		cfg := idleConfig()
		cfg.QueuePollInterval = 100 * time.Millisecond
		start(t, st, b, cfg)
		require.Eventually(t, func() bool { return len(b.published()) == 100 }, waitFor, tick)
		time.Sleep(200 * time.Millisecond) // the loop found the queue full and waits
		b.take(gitTask, 50)
		require.Eventually(t, func() bool { return len(b.published()) == 150 }, 2*time.Second, tick,
			"workers taking messages make room that the next poll finds")
	})
}
