package runner

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/store"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

// The task types of the tests.
const (
	listerType    = "list-gitlab-full"
	listerBackend = "swh.lister.gitlab.tasks.FullGitLabRelister"
)

// addType creates the lister task type: a day's interval in [12 h, 4 d],
// backoff factor 2, one retry after 10 minutes.
func addType(t *testing.T, st store.Store, maxQueue int) revisit.TaskType {
	tt := revisit.TaskType{Type: listerType, BackendName: listerBackend, DefaultInterval: 24 * time.Hour,
		MinInterval: 12 * time.Hour, MaxInterval: 96 * time.Hour, BackoffFactor: 2, MaxQueueLength: maxQueue,
		NumRetries: 1, RetryDelay: 10 * time.Minute}
	require.NoError(t, st.TaskTypeCreate(context.Background(), tt))
	return tt
}

// addTasks creates n due tasks of the lister type, with that policy and
// priority, the i-th with kwargs {"url": "https://forge.example/<i>"}.
func addTasks(t *testing.T, st store.Store, n int, policy revisit.TaskPolicy, prio revisit.TaskPriority) []revisit.Task {
	due := time.Now().Add(-time.Hour).UTC()
	news := make([]revisit.NewTask, n)
	for i := range news {
		news[i] = revisit.NewTask{Type: listerType, Policy: policy, Priority: prio, NextRun: due,
			Arguments: revisit.TaskArguments{Args: []any{i}, Kwargs: map[string]any{"url": fmt.Sprintf("https://forge.example/%s%d", prio, i)}}}
	}
	ts, err := st.TasksCreate(context.Background(), news)
	require.NoError(t, err)
	return ts
}

// task reads one task back.
func task(t *testing.T, st store.Store, id int64) revisit.Task {
	t.Helper()
	page, err := st.TasksGet(context.Background(), revisit.TaskFilter{IDs: []int64{id}})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	return page.Tasks[0]
}

// runs reads the runs of tasks.
func runs(t *testing.T, st store.Store, ids ...int64) []revisit.TaskRun {
	t.Helper()
	rs, err := st.TaskRunsGet(context.Background(), ids)
	require.NoError(t, err)
	return rs
}

// fakeBroker is an in-memory broker: queues of messages whose depth is
// what no worker took yet, with faults to inject. It stands in for
// RabbitMQ where the subject is the runner's loop (the real broker has its
// own tests, and the end-to-end test uses RabbitMQ and Celery).
type fakeBroker struct {
	mu     sync.Mutex
	queues map[string][]celery.Message
	// missing names queues whose depth is ErrQueueMissing.
	missing map[string]bool
	// depthErr, when set, is the error of every Depth.
	depthErr error
	// fail makes Publish fail every message of a batch whose index it
	// returns true for.
	fail func(i int) bool
	// onPublish, when set, runs at the start of Publish (outside the lock).
	onPublish func(queue string, msgs []celery.Message)
	// block, when set, makes Publish wait for it to close (or for ctx).
	block chan struct{}
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{queues: map[string][]celery.Message{}, missing: map[string]bool{}}
}

func (b *fakeBroker) Publish(ctx context.Context, queue string, msgs []celery.Message) ([]broker.Publication, error) {
	b.mu.Lock()
	block, onPublish, fail := b.block, b.onPublish, b.fail
	b.mu.Unlock()
	pubs := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		pubs[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Failed, Err: broker.ErrNotSent}
	}
	if onPublish != nil {
		onPublish(queue, msgs)
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return pubs, ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, m := range msgs {
		if fail != nil && fail(i) {
			pubs[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Returned, Err: broker.ErrUnroutable}
			continue
		}
		pubs[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Confirmed}
		b.queues[queue] = append(b.queues[queue], m)
	}
	return pubs, nil
}

func (b *fakeBroker) Depth(_ context.Context, queue string) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.depthErr != nil {
		return 0, b.depthErr
	}
	if b.missing[queue] {
		return 0, broker.ErrQueueMissing
	}
	return int64(len(b.queues[queue])), nil
}

func (b *fakeBroker) Events(ctx context.Context, _ func(context.Context, []celery.Event) error) error {
	<-ctx.Done()
	return nil
}

func (b *fakeBroker) Malformed() broker.MalformedCounts { return broker.MalformedCounts{} }
func (b *fakeBroker) Close() error                      { return nil }

// set changes the broker's faults under its lock.
func (b *fakeBroker) set(f func(b *fakeBroker)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b)
}

// queue returns a copy of a queue's messages.
func (b *fakeBroker) queue(name string) []celery.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]celery.Message(nil), b.queues[name]...)
}

// fill puts n placeholder messages in a queue, as if waiting for workers.
func (b *fakeBroker) fill(queue string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queues[queue] = append(b.queues[queue], make([]celery.Message, n)...)
}

// testConfig returns a configuration with short waits.
func testConfig() Config {
	return Config{PollInterval: 20 * time.Millisecond, RoundJitter: time.Millisecond, GracePeriod: 2 * time.Second,
		RestartMin: 10 * time.Millisecond, RestartMax: 50 * time.Millisecond, WedgedCheckInterval: time.Hour}
}

// waitFor polls cond every 10 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
