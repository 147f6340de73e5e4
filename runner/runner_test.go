package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/internal/testkit/teststore"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/service/supervise"
	"github.com/revisit-sched/revisit/store"
)

// newRunner returns a runner of the lister type on st and b.
func newRunner(t *testing.T, st store.Store, b broker.Broker, cfg Config) *Runner {
	t.Helper()
	if cfg.TaskTypes == nil {
		cfg.TaskTypes = []string{listerType}
	}
	r, err := New(st, b, cfg)
	require.NoError(t, err)
	return r
}

// round runs one round of the lister type's loop.
func round(t *testing.T, r *Runner) (time.Duration, error) {
	t.Helper()
	return newLoop(r, listerType).round(context.Background())
}

// body decodes the args and kwargs of a task message.
func body(t *testing.T, m celery.Message) ([]any, map[string]any) {
	t.Helper()
	var b []json.RawMessage
	require.NoError(t, json.Unmarshal(m.Body, &b))
	var args []any
	var kwargs map[string]any
	dec := json.NewDecoder(bytes.NewReader(b[0]))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&args))
	require.NoError(t, json.Unmarshal(b[1], &kwargs))
	return args, kwargs
}

// statuses counts tasks by status.
func statuses(t *testing.T, st store.Store) map[revisit.TaskStatus]int {
	t.Helper()
	page, err := st.TasksGet(context.Background(), revisit.TaskFilter{Type: listerType})
	require.NoError(t, err)
	n := map[revisit.TaskStatus]int{}
	for _, tk := range page.Tasks {
		n[tk.Status]++
	}
	return n
}

func TestRoundDispatchesWhenAFifthIsFree(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		addType(t, st, 10)
		ts := addTasks(t, st, 5, revisit.TaskRecurring, revisit.PriorityNone)
		b := newFakeBroker()
		cfg := testConfig()
		cfg.Metrics = NewMetrics(prometheus.NewRegistry())
		r := newRunner(t, st, b, cfg)

		// One of ten free: less than a fifth. Nothing moves.
		b.fill(listerBackend, 9)
		wait, err := round(t, r)
		require.NoError(t, err)
		require.GreaterOrEqual(t, wait, cfg.PollInterval)
		require.Equal(t, map[revisit.TaskStatus]int{revisit.TaskNextRunNotScheduled: 5}, statuses(t, st))

		// Three free: three tasks go, the oldest first; the batch was full,
		// so the next round comes at once.
		b.set(func(b *fakeBroker) { b.queues[listerBackend] = b.queues[listerBackend][:7] })
		wait, err = round(t, r)
		require.NoError(t, err)
		require.Less(t, wait, cfg.PollInterval)
		msgs := b.queue(listerBackend)[7:]
		require.Len(t, msgs, 3)
		require.Equal(t, map[revisit.TaskStatus]int{revisit.TaskNextRunNotScheduled: 2, revisit.TaskNextRunScheduled: 3}, statuses(t, st))
		require.InDelta(t, 3, value(t, cfg.Metrics.dispatched.WithLabelValues(listerType, "false")), 0)
		require.InDelta(t, 7, value(t, cfg.Metrics.depth.WithLabelValues(listerType)), 0) // as measured

		// Each message carries its task's arguments, under the backend
		// name, and names the run recorded for it.
		var all []revisit.TaskRun
		for _, tk := range ts {
			all = append(all, runs(t, st, tk.ID)...)
		}
		byBackend := map[string]revisit.TaskRun{}
		for _, run := range all {
			byBackend[run.BackendID] = run
		}
		for _, m := range msgs {
			require.Equal(t, listerBackend, m.Headers.Task)
			run, ok := byBackend[m.Properties.CorrelationID]
			require.True(t, ok, "no run for message %s", m.Properties.CorrelationID)
			require.Equal(t, revisit.RunScheduled, run.Status)
			require.NotNil(t, run.Confirmed, "confirmed after publishing")
			require.Equal(t, listerBackend, run.Metadata["queue"])
			tk := task(t, st, run.TaskID)
			args, kwargs := body(t, m)
			require.Len(t, args, 1)
			require.Equal(t, tk.Arguments.Kwargs["url"], kwargs["url"])
		}
	})
}

func TestRoundFreeSlotsAreTheSlotRules(t *testing.T) {
	for _, c := range []struct {
		name                  string
		maxLen, perRound, len int
		want                  int
	}{
		{"a fifth free is enough", 10, 0, 8, 2},
		{"the cap of a round", 10, 3, 0, 3},
		{"a fifth of the queue, not of the round's cap", 100, 10, 95, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := teststore.SQLite(t)
			addType(t, st, c.maxLen)
			addTasks(t, st, 5, revisit.TaskRecurring, revisit.PriorityNone)
			b := newFakeBroker()
			cfg := testConfig()
			cfg.MaxPerRound = c.perRound
			r := newRunner(t, st, b, cfg)
			b.fill(listerBackend, c.len)
			_, err := round(t, r)
			require.NoError(t, err)
			require.Len(t, b.queue(listerBackend), c.len+c.want)
			require.Equal(t, c.want, revisit.SlotRule{MinFreeRatio: MinFreeRatio, PerSend: c.perRound}.Slots(c.maxLen, int64(c.len)))
		})
	}
}

func TestRoundSendsPriorityTasksAlways(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		addType(t, st, 10)
		addTasks(t, st, 2, revisit.TaskOneshot, revisit.PriorityHigh)
		addTasks(t, st, 2, revisit.TaskRecurring, revisit.PriorityNone)
		b := newFakeBroker()
		r := newRunner(t, st, b, testConfig())
		prioQueue := DefaultPriorityQueuePrefix + listerBackend

		// No priority worker declared the priority queue: the priority
		// tasks wait, the others go.
		b.set(func(b *fakeBroker) { b.missing[prioQueue] = true })
		_, err := round(t, r)
		require.NoError(t, err)
		require.Len(t, b.queue(listerBackend), 2)
		require.Empty(t, b.queue(prioQueue))

		// The type's queue is full; the priority tasks go all the same.
		b.set(func(b *fakeBroker) { delete(b.missing, prioQueue) })
		b.fill(listerBackend, 8)
		_, err = round(t, r)
		require.NoError(t, err)
		require.Len(t, b.queue(prioQueue), 2)
		require.Len(t, b.queue(listerBackend), 10)
		require.Equal(t, map[revisit.TaskStatus]int{revisit.TaskNextRunScheduled: 4}, statuses(t, st))
	})
}

func TestRoundRecordsRunsBeforePublishing(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		addType(t, st, 100)
		ts := addTasks(t, st, 3, revisit.TaskRecurring, revisit.PriorityNone)
		ids := []int64{ts[0].ID, ts[1].ID, ts[2].ID}
		b := newFakeBroker()
		var ended time.Time
		b.set(func(b *fakeBroker) {
			b.onPublish = func(_ string, msgs []celery.Message) {
				recorded := map[string]revisit.TaskRun{}
				for _, run := range runs(t, st, ids...) {
					recorded[run.BackendID] = run
				}
				for _, m := range msgs {
					run := recorded[m.Properties.CorrelationID]
					require.Equal(t, revisit.RunScheduled, run.Status, "run of %s at publication", m.Properties.CorrelationID)
					require.Nil(t, run.Confirmed, "run of %s unconfirmed at publication", m.Properties.CorrelationID)
				}
				// A fast worker: the first run ends before the round is over.
				ended = time.Now().UTC().Truncate(time.Microsecond)
				unmatched, err := HandleEvents(ctx, st, decode(t, ev(celery.TypeResult, msgs[0].Properties.CorrelationID,
					ended, "result", map[string]any{"status": "eventful"})))
				require.NoError(t, err)
				require.Empty(t, unmatched)
			}
		})
		r := newRunner(t, st, b, testConfig())
		_, err := round(t, r)
		require.NoError(t, err)

		// The task of the ended run is left as its end made it.
		first := b.queue(listerBackend)[0].Properties.CorrelationID
		var fast revisit.TaskRun
		for _, run := range runs(t, st, ids...) {
			if run.BackendID == first {
				fast = run
			}
		}
		require.Equal(t, revisit.RunEventful, fast.Status)
		tk := task(t, st, fast.TaskID)
		require.Equal(t, revisit.TaskNextRunNotScheduled, tk.Status)
		require.True(t, tk.NextRun.Equal(ended.Add(12*time.Hour)), "next run %v", tk.NextRun)
		require.Equal(t, map[revisit.TaskStatus]int{revisit.TaskNextRunNotScheduled: 1, revisit.TaskNextRunScheduled: 2}, statuses(t, st))
	})
}

func TestRoundEndsUnconfirmedRuns(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		addType(t, st, 100)
		ts := addTasks(t, st, 4, revisit.TaskRecurring, revisit.PriorityNone)
		b := newFakeBroker()
		b.set(func(b *fakeBroker) { b.fail = func(i int) bool { return i%2 == 0 } })
		now := time.Now().UTC().Truncate(time.Microsecond)
		cfg := testConfig()
		cfg.Clock = func() time.Time { return now }
		cfg.Metrics = NewMetrics(nil)
		r := newRunner(t, st, b, cfg)
		_, err := round(t, r)
		require.NoError(t, err)
		require.Len(t, b.queue(listerBackend), 2)
		require.InDelta(t, 2, value(t, cfg.Metrics.publishFailed.WithLabelValues(listerType, "false")), 0)

		lost := 0
		for _, tk := range ts {
			rs := runs(t, st, tk.ID)
			require.Len(t, rs, 1)
			got := task(t, st, tk.ID)
			switch rs[0].Status {
			case revisit.RunLost:
				lost++
				require.Contains(t, rs[0].Metadata["publish_error"], "unroutable")
				require.Nil(t, rs[0].Confirmed, "never confirmed")
				// Retried after the type's retry delay, one retry less.
				require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
				require.True(t, got.NextRun.Equal(now.Add(10*time.Minute)), "next run %v", got.NextRun)
				require.Equal(t, 0, got.RetriesLeft)
			case revisit.RunScheduled:
				require.Equal(t, revisit.TaskNextRunScheduled, got.Status)
				requireTimePtr(t, now, rs[0].Confirmed, "confirmed right after publishing")
			default:
				t.Fatalf("run %+v", rs[0])
			}
		}
		require.Equal(t, 2, lost)

		// When nothing is confirmed the loop waits, as for an unavailable
		// broker.
		addTasks(t, st, 1, revisit.TaskOneshot, revisit.PriorityNone)
		b.set(func(b *fakeBroker) { b.fail = func(int) bool { return true } })
		_, err = round(t, r)
		var werr *supervise.WaitError
		require.ErrorAs(t, err, &werr)
		require.Equal(t, "publish_failed", werr.Reason)
	})
}

func TestRoundWaitsWhenDepthUnknown(t *testing.T) {
	st := teststore.SQLite(t)
	addType(t, st, 100)
	addTasks(t, st, 2, revisit.TaskRecurring, revisit.PriorityNone)
	b := newFakeBroker()
	r := newRunner(t, st, b, testConfig())
	for _, fault := range []error{fmtErr(broker.ErrDepthUnknown), broker.ErrQueueMissing} {
		b.set(func(b *fakeBroker) { b.depthErr = fault })
		_, err := round(t, r)
		var werr *supervise.WaitError
		require.ErrorAs(t, supervise.Classify(err), &werr, "%v", err)
		require.Equal(t, map[revisit.TaskStatus]int{revisit.TaskNextRunNotScheduled: 2}, statuses(t, st))
	}
}

func fmtErr(err error) error { return errors.Join(errors.New("management API: 503"), err) }

func TestRunEndsWedgedRunsAndRecoversClaimedTasks(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		addType(t, st, 100)
		ts := addTasks(t, st, 2, revisit.TaskRecurring, revisit.PriorityNone)
		// Task 0 was dispatched two days ago and never heard of again; task
		// 1 was claimed by a runner that died before recording its run.
		grabbed, err := st.TasksGrabReady(ctx, revisit.ReadyTasksParams{Type: listerType, Limit: 2})
		require.NoError(t, err)
		require.Len(t, grabbed, 2)
		_, err = st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: ts[0].ID, BackendID: "old-run",
			Scheduled: time.Now().Add(-48 * time.Hour)}})
		require.NoError(t, err)

		b := newFakeBroker()
		cfg := testConfig()
		cfg.Metrics = NewMetrics(nil)
		r := newRunner(t, st, b, cfg)
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		waitFor(t, 5*time.Second, "the wedged run to end and the claimed task to go", func() bool {
			rs := runs(t, st, ts[0].ID)
			return rs[0].Status == revisit.RunLost && len(b.queue(listerBackend)) == 1
		})
		cancel()
		require.NoError(t, <-done)
		require.InDelta(t, 1, value(t, cfg.Metrics.wedged.WithLabelValues(listerType)), 0)
		require.InDelta(t, 1, value(t, cfg.Metrics.recovered.WithLabelValues(listerType)), 0)
		require.Equal(t, ts[1].ID, runs(t, st, ts[1].ID)[0].TaskID)
		// The lost run's task is retried after the retry delay.
		require.Equal(t, revisit.TaskNextRunNotScheduled, task(t, st, ts[0].ID).Status)
		for name, h := range r.Health() {
			require.True(t, h.Healthy, name)
		}
	})
}

func TestRunStopsWithinTheGracePeriod(t *testing.T) {
	for _, c := range []struct {
		name    string
		release bool // the broker confirms within the grace period
		want    revisit.TaskRunStatus
	}{{"round finishes", true, revisit.RunScheduled}, {"grace period ends", false, revisit.RunLost}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := teststore.SQLite(t)
			addType(t, st, 100)
			ts := addTasks(t, st, 1, revisit.TaskRecurring, revisit.PriorityNone)
			b := newFakeBroker()
			block, publishing := make(chan struct{}), make(chan struct{})
			b.set(func(b *fakeBroker) {
				b.block = block
				b.onPublish = func(string, []celery.Message) { close(publishing) }
			})
			cfg := testConfig()
			cfg.GracePeriod = 300 * time.Millisecond
			r := newRunner(t, st, b, cfg)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			<-publishing
			cancel()
			start := time.Now()
			if c.release {
				close(block)
			}
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return")
			}
			require.Less(t, time.Since(start), cfg.GracePeriod+2*time.Second)
			rs := runs(t, st, ts[0].ID)
			require.Len(t, rs, 1)
			require.Equal(t, c.want, rs[0].Status)
		})
	}
}

func TestTaskTypes(t *testing.T) {
	ctx := context.Background()
	st := teststore.SQLite(t)
	b := newFakeBroker()
	r, err := New(st, b, Config{})
	require.NoError(t, err)
	_, err = r.TaskTypes(ctx)
	require.ErrorContains(t, err, "no task type to dispatch")

	addType(t, st, 0)
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: "swh.loader.git.tasks.UpdateGitRepository"}))
	types, err := r.TaskTypes(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{listerType, "load-git"}, types, "every task type, load-* included")

	r, err = New(st, b, Config{TaskTypes: []string{"index-fossology"}})
	require.NoError(t, err)
	_, err = r.TaskTypes(ctx)
	require.ErrorIs(t, err, revisit.ErrNotFound)
	require.ErrorContains(t, err, "index-fossology")

	_, err = New(st, b, Config{MaxPerRound: -1})
	require.Error(t, err)
}

// value reads a counter or gauge.
func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

// Two runners on one store: one dispatches a task type, the other stands
// by, and takes over when the first stops.
func TestOneRunnerPerTaskTypeAndTakeover(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		addType(t, st, 1000)
		addTasks(t, st, 20, revisit.TaskOneshot, revisit.PriorityNone)
		ba, bb := newFakeBroker(), newFakeBroker()
		cfgA, cfgB := testConfig(), testConfig()
		cfgA.Owner, cfgB.Owner = "a", "b"
		cfgA.LeaseTTL, cfgB.LeaseTTL = 300*time.Millisecond, 300*time.Millisecond
		a, b := newRunner(t, st, ba, cfgA), newRunner(t, st, bb, cfgB)
		ctxA, stopA := context.WithCancel(context.Background())
		ctxB, stopB := context.WithCancel(context.Background())
		doneA, doneB := make(chan error, 1), make(chan error, 1)
		go func() { doneA <- a.Run(ctxA) }()
		waitFor(t, 5*time.Second, "a to dispatch", func() bool { return len(ba.queue(listerBackend)) == 20 })
		go func() { doneB <- b.Run(ctxB) }()
		defer func() { stopB(); require.NoError(t, <-doneB) }()
		addTasks(t, st, 5, revisit.TaskOneshot, revisit.PriorityHigh) // a's, while it holds the lease
		waitFor(t, 5*time.Second, "a to dispatch the new tasks", func() bool {
			return len(ba.queue(DefaultPriorityQueuePrefix+listerBackend)) == 5
		})
		require.Empty(t, bb.queue(listerBackend), "b stands by")
		require.Empty(t, bb.queue(DefaultPriorityQueuePrefix+listerBackend))

		stopA()
		require.NoError(t, <-doneA)
		addTasks(t, st, 3, revisit.TaskOneshot, revisit.PriorityLow)
		waitFor(t, 5*time.Second, "b to take over", func() bool {
			return len(bb.queue(DefaultPriorityQueuePrefix+listerBackend)) == 3
		})
		require.Equal(t, 20, len(ba.queue(listerBackend)), "nothing dispatched twice")
	})
}
