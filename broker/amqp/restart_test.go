package amqp_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
)

// rabbitmqctl runs rabbitmqctl with args.
func rabbitmqctl(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "rabbitmqctl", args...).CombinedOutput()
	if err != nil {
		return errors.Join(err, errors.New(string(out)))
	}
	return nil
}

// TestRestartUnderLoad restarts the RabbitMQ application while 10,000
// messages are being published: every message must come back Confirmed or
// Failed, every Confirmed one must be in the (durable) queue, and the
// broker must reconnect by itself.
//
// It restarts the shared RabbitMQ, which would cut the connections of the
// tests of other packages that go test runs at the same time: it runs only
// with TEST_DISRUPTIVE=1, which scripts/test sets in a step of its
// own, after every other test. It is not parallel either.
func TestRestartUnderLoad(t *testing.T) {
	if os.Getenv("TEST_DISRUPTIVE") != "1" {
		t.Skip("restarts RabbitMQ: runs alone, with TEST_DISRUPTIVE=1 (scripts/test does it)")
	}
	if _, err := exec.LookPath("rabbitmqctl"); err != nil {
		celerytest.Unavailable(t, "rabbitmqctl not found: %v", err)
	}
	exchange := "revisit.test.ev." + uuid.NewString()[:8]
	eventsQueue := testQueue(t, false)
	b := openBroker(t, amqp.Config{
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, ConfirmTimeout: 15 * time.Second,
		EventsExchange: exchange, EventsQueue: eventsQueue,
	})
	queue := testQueue(t, true)
	t.Cleanup(func() { celerytest.DeleteExchange(t, exchange) })
	events := newEventLog()
	runEvents(t, b, func(_ context.Context, evs []celery.Event) error {
		events.add(evs)
		return nil
	})
	waitQueue(t, b, eventsQueue, 10*time.Second)
	// Runs before the queue is deleted (cleanups run last-in first-out):
	// whatever happened, RabbitMQ is running again after this test.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := rabbitmqctl(ctx, "start_app"); err != nil {
			t.Errorf("cleanup: rabbitmqctl start_app: %v", err)
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const total, batchSize = 10000, 500
	msgs := messages(t, total)
	results := make([]broker.Publication, 0, total)
	var callErrors int
	progress := make(chan int, total/batchSize+1)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(progress)
		for off := 0; off < total; off += batchSize {
			// While RabbitMQ is down a call waits for the connection
			// at most 1.5 s, then reports its batch Failed.
			bctx, bcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			pubs, err := b.Publish(bctx, queue, msgs[off:off+batchSize])
			bcancel()
			if err != nil {
				callErrors++
			}
			results = append(results, pubs...)
			progress <- off + batchSize
			time.Sleep(20 * time.Millisecond) // spread the load over the restart
		}
	}()

	// Restart once a fifth is published.
	for n := range progress {
		if n >= total/5 {
			break
		}
	}
	start := time.Now()
	if err := rabbitmqctl(ctx, "stop_app"); err != nil {
		t.Fatalf("rabbitmqctl stop_app: %v", err)
	}
	// While RabbitMQ is down, a depth is unknown: neither 0 nor missing.
	celerytest.WaitFor(t, 5*time.Second, "depth to be unknown", func() bool {
		_, err := b.Depth(ctx, queue)
		return errors.Is(err, broker.ErrDepthUnknown) && !errors.Is(err, broker.ErrQueueMissing)
	})
	time.Sleep(2 * time.Second)
	if err := rabbitmqctl(ctx, "start_app"); err != nil {
		t.Fatalf("rabbitmqctl start_app: %v", err)
	}
	t.Logf("RabbitMQ app down and up again in %s", time.Since(start).Round(time.Millisecond))
	for range progress {
	}
	wg.Wait()

	if len(results) != total {
		t.Fatalf("got %d publications for %d messages", len(results), total)
	}
	n := countOutcomes(results)
	unconfirmed := 0
	for _, p := range results {
		if errors.Is(p.Err, broker.ErrUnconfirmed) {
			unconfirmed++
		}
	}
	t.Logf("outcomes: %d confirmed, %d failed (%d sent but unconfirmed), %d returned; %d calls failed as a whole",
		n[broker.Confirmed], n[broker.Failed], unconfirmed, n[broker.Returned], callErrors)
	if n[broker.Returned] != 0 {
		t.Errorf("%d messages returned from an existing queue", n[broker.Returned])
	}
	if n[broker.Failed] == 0 {
		t.Log("note: the restart fell between batches; no message failed")
	}
	for i, p := range results {
		if p.ID != msgs[i].Properties.CorrelationID {
			t.Fatalf("publication %d is for %s, want %s", i, p.ID, msgs[i].Properties.CorrelationID)
		}
		if p.Outcome == broker.Failed && p.Err == nil {
			t.Fatalf("publication %d failed without an error", i)
		}
	}

	// The broker recovered by itself: a later publish succeeds.
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	defer rcancel()
	after := messages(t, 10)
	pubs, err := b.Publish(rctx, queue, after)
	if err != nil {
		t.Fatalf("publish after the restart: %v", err)
	}
	if c := countOutcomes(pubs); c[broker.Confirmed] != len(after) {
		t.Fatalf("publish after the restart: %v", pubs)
	}
	if _, err := b.Depth(ctx, queue); err != nil {
		t.Fatalf("depth after the restart: %v", err)
	}

	// The events consumer came back too.
	id := uuid.NewString()
	celerytest.WaitFor(t, 30*time.Second, "an event after the restart", func() bool {
		if events.has(id, celery.TypeStarted) {
			return true
		}
		ch := admin(t)
		_ = ch.PublishWithContext(ctx, exchange, "task.started", false, false, amqp091.Publishing{
			Body: []byte(`{"type": "task-started", "uuid": "` + id + `", "hostname": "w@h", "timestamp": 1700000000}`),
		})
		time.Sleep(200 * time.Millisecond)
		return events.has(id, celery.TypeStarted)
	})

	// Every confirmed message is in the queue.
	inQueue := drain(t, queue)
	missing := 0
	for _, p := range append(results, pubs...) {
		if p.Outcome == broker.Confirmed && !inQueue[p.ID] {
			missing++
			if missing <= 5 {
				t.Errorf("confirmed message %s is not in the queue", p.ID)
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d confirmed messages lost", missing)
	}
	t.Logf("queue held %d distinct messages", len(inQueue))
}

// drain consumes every message of queue and returns their correlation ids.
func drain(t *testing.T, queue string) map[string]bool {
	t.Helper()
	ch := admin(t)
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("drain %s: %v", queue, err)
	}
	if err := ch.Qos(1000, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(queue, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := make(map[string]bool, q.Messages)
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for got := 0; got < q.Messages; got++ {
		var d amqp091.Delivery
		select {
		case d = <-deliveries:
		case <-timeout.C:
			t.Fatalf("drain %s: got %d of %d messages", queue, got, q.Messages)
		}
		ids[d.CorrelationId] = true
	}
	return ids
}
