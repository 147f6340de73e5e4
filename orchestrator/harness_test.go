package orchestrator

import (
	"context"
	"encoding/json"
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

const gitTask = "swh.loader.git.tasks.UpdateGitRepository"

// fakeBroker is an in-memory broker: queues of messages whose depth is
// what no worker took yet, with faults to inject. It stands in for a
// broker where the test's subject is the loop (the real brokers have their
// own tests, and the end-to-end tests use RabbitMQ).
type fakeBroker struct {
	mu       sync.Mutex
	queues   map[string][]celery.Message
	all      []celery.Message
	depthErr error
	failAll  bool
	// unconfirmAll: messages reach their queue but are reported Failed
	// with broker.ErrUnconfirmed (the confirm never came).
	unconfirmAll bool
	block        chan struct{} // when set, Publish waits for it to close (or ctx)
	slowQueue    string        // when set, only Publish calls to this queue wait for block
	maxDepth     int64         // highest depth seen after a publish
	publishes    int
}

func newFakeBroker() *fakeBroker { return &fakeBroker{queues: map[string][]celery.Message{}} }

// newBlockedBroker returns a fake broker whose publishes wait until block
// is closed.
func newBlockedBroker() (b *fakeBroker, block chan struct{}) {
	b, block = newFakeBroker(), make(chan struct{})
	b.block = block
	return b, block
}

func (b *fakeBroker) Publish(ctx context.Context, queue string, msgs []celery.Message) ([]broker.Publication, error) {
	b.mu.Lock()
	block := b.block
	if b.slowQueue != "" && queue != b.slowQueue {
		block = nil
	}
	b.mu.Unlock()
	pubs := make([]broker.Publication, len(msgs))
	for i, m := range msgs {
		pubs[i] = broker.Publication{ID: m.Properties.CorrelationID, Outcome: broker.Failed, Err: broker.ErrNotSent}
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
	b.publishes++
	if b.failAll {
		return pubs, nil
	}
	for i := range pubs {
		pubs[i] = broker.Publication{ID: msgs[i].Properties.CorrelationID, Outcome: broker.Confirmed}
		if b.unconfirmAll {
			pubs[i].Outcome, pubs[i].Err = broker.Failed, broker.ErrUnconfirmed
		}
	}
	b.queues[queue] = append(b.queues[queue], msgs...)
	b.all = append(b.all, msgs...)
	b.maxDepth = max(b.maxDepth, int64(len(b.queues[queue])))
	return pubs, nil
}

func (b *fakeBroker) Depth(_ context.Context, queue string) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.depthErr != nil {
		return 0, b.depthErr
	}
	return int64(len(b.queues[queue])), nil
}

func (b *fakeBroker) Events(ctx context.Context, _ func(context.Context, []celery.Event) error) error {
	<-ctx.Done()
	return nil
}

func (b *fakeBroker) Malformed() broker.MalformedCounts { return broker.MalformedCounts{} }
func (b *fakeBroker) Close() error                      { return nil }

// take removes up to n messages from the head of a queue, as a worker would.
func (b *fakeBroker) take(queue string, n int) []celery.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[queue]
	n = min(n, len(q))
	out := q[:n:n]
	b.queues[queue] = q[n:]
	return out
}

func (b *fakeBroker) set(f func(b *fakeBroker)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b)
}

func (b *fakeBroker) published() []celery.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]celery.Message(nil), b.all...)
}

// kwargs decodes the kwargs of a task message body.
func kwargs(t *testing.T, m celery.Message) map[string]any {
	t.Helper()
	var body []json.RawMessage
	require.NoError(t, json.Unmarshal(m.Body, &body))
	var kw map[string]any
	require.NoError(t, json.Unmarshal(body[1], &kw))
	return kw
}

// testConfig returns a configuration with short waits.
func testConfig(owner string) Config {
	return Config{Owner: owner, QueueFullBackoff: 20 * time.Millisecond, NoOriginsBackoff: 50 * time.Millisecond,
		RoundJitter: time.Millisecond, LeaseTTL: 600 * time.Millisecond, GracePeriod: 2 * time.Second,
		RestartMin: 10 * time.Millisecond, RestartMax: 50 * time.Millisecond}
}

// world is one test's store with a git task type and a lister.
type world struct {
	t      *testing.T
	st     store.Store
	lister revisit.Lister
	ctx    context.Context
}

func newWorld(t *testing.T, st store.Store, maxQueue int) *world {
	ctx := context.Background()
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: gitTask,
		MaxQueueLength: maxQueue}))
	l, err := st.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	return &world{t: t, st: st, lister: l, ctx: ctx}
}

// kind of origin, by the policy that wants it.
const (
	neverVisited = "never"    // never_visited_oldest_update_first
	lagging      = "lag"      // already_visited_order_by_lag
	noUpdate     = "noupdate" // origins_without_last_update
)

// add records n git origins of a kind, named kind-0…, with stats as needed.
func (w *world) add(kind string, n int) {
	now := time.Now().UTC()
	var origins []revisit.ListedOrigin
	var stats []revisit.VisitStats
	for i := range n {
		o := revisit.ListedOrigin{ListerID: w.lister.ID, URL: fmt.Sprintf("https://forge.example/%s-%d", kind, i),
			VisitType: "git", Enabled: true, ExtraLoaderArguments: map[string]any{"depth": 1}}
		updated := now.Add(-time.Duration(i+1) * time.Hour)
		switch kind {
		case neverVisited:
			o.LastUpdate = &updated
		case lagging:
			o.LastUpdate = &updated
			visited := updated.Add(-time.Duration(i+1) * time.Hour)
			status := revisit.VisitSuccessful
			stats = append(stats, revisit.VisitStats{URL: o.URL, VisitType: "git", LastSuccessful: &visited,
				LastVisit: &visited, LastVisitStatus: &status, NextPositionOffset: 4, SuccessiveVisits: 1})
		}
		origins = append(origins, o)
	}
	_, err := w.st.ListedOriginsRecord(w.ctx, origins)
	require.NoError(w.t, err)
	if len(stats) > 0 {
		require.NoError(w.t, w.st.VisitStatsUpsert(w.ctx, stats))
	}
}

// counts returns the in-flight counts of git.
func (w *world) counts() revisit.VisitCounts {
	cs, err := w.st.VisitsCount(w.ctx)
	require.NoError(w.t, err)
	for _, c := range cs {
		if c.VisitType == "git" {
			return c
		}
	}
	return revisit.VisitCounts{VisitType: "git"}
}

// start runs an orchestrator until the test ends, and returns a function
// that stops it and returns Run's error.
func start(t *testing.T, st store.Store, b broker.Broker, cfg Config) (stop func() error) {
	_, stop = startOrchestrator(t, st, b, cfg)
	return stop
}

// startOrchestrator is start that also returns the orchestrator.
func startOrchestrator(t *testing.T, st store.Store, b broker.Broker, cfg Config) (o *Orchestrator, stop func() error) {
	o, err := New(st, b, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return o, stop
}

// kinds counts published messages by origin kind.
func kinds(t *testing.T, msgs []celery.Message) map[string]int {
	out := map[string]int{}
	for _, m := range msgs {
		var kind string
		_, err := fmt.Sscanf(kwargs(t, m)["url"].(string), "https://forge.example/%s", &kind)
		require.NoError(t, err)
		for _, k := range []string{neverVisited, lagging, noUpdate} {
			if len(kind) > len(k) && kind[:len(k)+1] == k+"-" {
				out[k]++
			}
		}
	}
	return out
}
