package amqp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/pytest"
)

// workerModule is a Celery app with tasks named like Software Heritage
// loaders; each appends what it received to $TEST_OUT as a JSON
// line.
const workerModule = `
import json, os
from celery import Celery

app = Celery('revisit_test', broker=os.environ['TEST_CELERY_BROKER'])
app.conf.update(
    worker_send_task_events=True,
    task_serializer='json',
    accept_content=['json'],
    worker_hijack_root_logger=False,
    broker_connection_retry_on_startup=True,
)

def record(task, args, kwargs):
    with open(os.environ['TEST_OUT'], 'a') as f:
        f.write(json.dumps({'task': task.name, 'id': task.request.id, 'args': list(args), 'kwargs': kwargs}) + '\n')

@app.task(name='swh.loader.git.tasks.UpdateGitRepository', bind=True)
def update_git(self, *args, **kwargs):
    record(self, args, kwargs)
    self.send_event('task-result', result={'status': 'eventful', 'snapshot_id': '00' * 20})
    return {'status': 'eventful'}

@app.task(name='swh.loader.svn.tasks.LoadSvnRepository', bind=True)
def load_svn(self, *args, **kwargs):
    record(self, args, kwargs)
    raise RuntimeError('svn is down for ' + kwargs.get('url', '?'))
`

// normalized round-trips v through JSON, numbers as json.Number.
func normalized(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := celerytest.DecodeNumbers(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCeleryWorkerSoloPool(t *testing.T) {
	t.Parallel()
	testCeleryWorker(t, "solo", 1)
}

func TestCeleryWorkerPreforkPoolBatchesEvents(t *testing.T) {
	t.Parallel()
	testCeleryWorker(t, "prefork", 2)
}

// testCeleryWorker publishes loader tasks to a real Celery worker and checks
// what the tasks received and the events that come back.
func testCeleryWorker(t *testing.T, pool string, concurrency int) {
	pytest.Celery(t)
	queue := testQueue(t, false) // the worker declares it, and an exchange of that name
	t.Cleanup(func() { celerytest.DeleteExchange(t, queue) })
	eventsQueue := testQueue(t, false)
	logs := &routingKeys{}
	b := openBroker(t, amqp.Config{EventsQueue: eventsQueue, Logger: logs.logger(t)})

	log := newEventLog()
	runEvents(t, b, func(_ context.Context, evs []celery.Event) error {
		log.add(evs)
		return nil
	})
	waitQueue(t, b, eventsQueue, 10*time.Second)

	w := celerytest.StartWorker(t, celerytest.WorkerOptions{Module: workerModule, Queues: []string{queue}, Pool: pool, Concurrency: concurrency})
	waitQueue(t, b, queue, 60*time.Second)

	eta := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	kwargsOK := func(i int) map[string]any {
		return map[string]any{
			"url":               fmt.Sprintf("https://example.org/r%d.git", i),
			"incremental":       true,
			"visit_date":        eta,
			"max_content_size":  int64(1) << 40,
			"ratio":             0.25,
			"base_directory":    nil,
			"branches":          []any{"main", "dév", "漢字"},
			"lister":            map[string]any{"name": "gitlab", "instance": "inria", "id": 3},
			"very_long_integer": int64(9007199254740993),
		}
	}
	var msgs []celery.Message
	okIDs, failIDs := map[string]map[string]any{}, map[string]map[string]any{}
	for i := range 3 {
		kw := kwargsOK(i)
		m := newMessage(t, "swh.loader.git.tasks.UpdateGitRepository", nil, kw)
		okIDs[m.Properties.CorrelationID] = kw
		msgs = append(msgs, m)
	}
	for i := range 2 {
		kw := map[string]any{"url": fmt.Sprintf("svn://example.org/s%d", i), "origin_url": nil}
		m := newMessage(t, "swh.loader.svn.tasks.LoadSvnRepository", []any{"positional", i}, kw)
		failIDs[m.Properties.CorrelationID] = kw
		msgs = append(msgs, m)
	}
	pubs, err := b.Publish(context.Background(), queue, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if n := countOutcomes(pubs); n[broker.Confirmed] != len(msgs) {
		t.Fatalf("publish: %v", pubs)
	}

	// The tasks received exactly the kwargs sent.
	celerytest.WaitFor(t, 60*time.Second, "the tasks to run", func() bool { return len(w.Received(t)) == len(msgs) })
	got := w.Received(t)
	for id, kw := range okIDs {
		want := normalized(t, kw)
		want.(map[string]any)["visit_date"] = "2024-05-06T07:08:09.123456+00:00"
		if !reflect.DeepEqual(got[id]["kwargs"], want) {
			t.Errorf("task %s kwargs:\n got %#v\nwant %#v", id, got[id]["kwargs"], want)
		}
		if got[id]["task"] != "swh.loader.git.tasks.UpdateGitRepository" || !reflect.DeepEqual(got[id]["args"], []any{}) {
			t.Errorf("task %s: %v", id, got[id])
		}
	}
	for id, kw := range failIDs {
		if !reflect.DeepEqual(got[id]["kwargs"], normalized(t, kw)) {
			t.Errorf("task %s kwargs:\n got %#v\nwant %#v", id, got[id]["kwargs"], kw)
		}
		if args := fmt.Sprint(got[id]["args"]); !strings.HasPrefix(args, "[positional ") {
			t.Errorf("task %s args: %s", id, args)
		}
	}

	// The worker's events come back with the ids published.
	celerytest.WaitFor(t, 60*time.Second, "the worker's events", func() bool {
		for id := range okIDs {
			if !log.has(id, celery.TypeReceived, celery.TypeStarted, celery.TypeSucceeded, celery.TypeResult) {
				return false
			}
		}
		for id := range failIDs {
			if !log.has(id, celery.TypeReceived, celery.TypeStarted, celery.TypeFailed) {
				return false
			}
		}
		return true
	})
	for id := range okIDs {
		res, _ := log.get(id, celery.TypeResult)
		if res.VisitResult == nil || res.VisitResult.Status != celery.VisitEventful || len(res.VisitResult.SnapshotID) != 20 {
			t.Errorf("task-result of %s: %+v", id, res.VisitResult)
		}
		succ, _ := log.get(id, celery.TypeSucceeded)
		if vr, err := celery.ParseSucceededResult(succ.Result); err != nil || vr.Status != celery.VisitEventful {
			t.Errorf("task-succeeded result of %s: %q: %v", id, succ.Result, err)
		}
		recv, _ := log.get(id, celery.TypeReceived)
		if recv.Name != "swh.loader.git.tasks.UpdateGitRepository" {
			t.Errorf("task-received of %s names %q", id, recv.Name)
		}
	}
	for id := range failIDs {
		failed, _ := log.get(id, celery.TypeFailed)
		// Under the solo pool, Debian's Celery 5.2 on Python 3.11 reports
		// the exception as "ExceptionWithTraceback()" (billiard's wrapper);
		// the message is then only in the traceback.
		if !strings.Contains(failed.Exception+failed.Traceback, "svn is down") {
			t.Errorf("task-failed of %s: exception %q, traceback %q", id, failed.Exception, failed.Traceback)
		}
	}
	if m := b.Malformed(); m.Total() != 0 {
		t.Errorf("malformed events from a real worker: %+v", m)
	}
	if pool == "prefork" && !logs.saw("task.multi") {
		t.Errorf("the prefork pool sent no task.multi batch (routing keys: %v)", logs.keys())
	}
}

// routingKeys records the routing keys of event deliveries from the
// broker's debug log.
type routingKeys struct {
	mu   sync.Mutex
	seen map[string]int
}

func (r *routingKeys) logger(t *testing.T) *slog.Logger {
	return captureLogger(t, func(msg string, attrs map[string]string) {
		if msg == "amqp event delivery" {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.seen == nil {
				r.seen = map[string]int{}
			}
			r.seen[attrs["routing_key"]]++
		}
	})
}

func (r *routingKeys) saw(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key] > 0
}

func (r *routingKeys) keys() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}
