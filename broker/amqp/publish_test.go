package amqp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
)

func TestPublishConfirmsAndDeliversMessagesUnchanged(t *testing.T) {
	t.Parallel()
	for _, channels := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d channels", channels), func(t *testing.T) {
			t.Parallel()
			testPublishDelivers(t, channels)
		})
	}
}

// testPublishDelivers publishes a batch over channels publishing channels
// and checks every message arrives unchanged, in order with one channel.
func testPublishDelivers(t *testing.T, channels int) {
	// Window smaller than the batch.
	b := openBroker(t, amqp.Config{ConfirmWindow: 16, PublishChannels: channels})
	q := testQueue(t, true)
	ctx := context.Background()

	prio := uint8(3)
	msgs := messages(t, 99)
	special, err := celery.NewMessage(celery.Task{
		Name: "swh.loader.svn.tasks.LoadSvnRepository", ID: "0b7f1a55-3a53-4a2e-9e8e-3d1b2c4d5e6f",
		Args: []any{1, "two"}, Kwargs: map[string]any{"url": "svn://example.org/é", "nested": map[string]any{"a": []any{1, nil}}},
		Origin: "revisit-test@localhost", Priority: &prio,
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, special)

	pubs, err := b.Publish(ctx, q, msgs)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if len(pubs) != len(msgs) {
		t.Fatalf("got %d publications for %d messages", len(pubs), len(msgs))
	}
	byID := map[string]celery.Message{}
	for i, p := range pubs {
		if p.ID != msgs[i].Properties.CorrelationID || p.Outcome != broker.Confirmed || p.Err != nil {
			t.Fatalf("publication %d: %+v, want confirmed %s", i, p, msgs[i].Properties.CorrelationID)
		}
		byID[p.ID] = msgs[i]
	}
	depth, err := b.Depth(ctx, q)
	if err != nil || depth != int64(len(msgs)) {
		t.Fatalf("depth: got %d, %v; want %d", depth, err, len(msgs))
	}

	ch := admin(t)
	for i := range msgs {
		d, ok, err := ch.Get(q, true)
		if err != nil || !ok {
			t.Fatalf("get message %d: ok=%v err=%v", i, ok, err)
		}
		m, ok := byID[d.CorrelationId]
		if !ok {
			t.Fatalf("message %d: unknown or repeated correlation id %q", i, d.CorrelationId)
		}
		delete(byID, d.CorrelationId)
		if channels == 1 && d.CorrelationId != msgs[i].Properties.CorrelationID {
			t.Fatalf("message %d: %s, want %s: one channel keeps the batch's order", i, d.CorrelationId, msgs[i].Properties.CorrelationID)
		}
		if d.MessageId != m.Properties.CorrelationID {
			t.Fatalf("message %d: correlation id %q / message id %q", i, d.CorrelationId, d.MessageId)
		}
		if d.ContentType != "application/json" || d.ContentEncoding != "utf-8" || d.DeliveryMode != 2 || d.Priority != m.Properties.Priority {
			t.Fatalf("message %d: properties %q %q %d %d", i, d.ContentType, d.ContentEncoding, d.DeliveryMode, d.Priority)
		}
		if string(d.Body) != string(m.Body) {
			t.Fatalf("message %d: body %s, want %s", i, d.Body, m.Body)
		}
		if want := m.Headers.Table(nil); !reflect.DeepEqual(map[string]any(d.Headers), want) {
			t.Fatalf("message %d: headers\n got %#v\nwant %#v", i, d.Headers, want)
		}
	}
	if _, ok, _ := ch.Get(q, true); ok {
		t.Fatal("more messages in the queue than published")
	}
}

func TestPublishToMissingQueueReturnsEveryMessage(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{ConfirmWindow: 7})
	missing := testQueue(t, false)
	ctx := context.Background()

	msgs := messages(t, 40)
	pubs, err := b.Publish(ctx, missing, msgs)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	for i, p := range pubs {
		if p.Outcome != broker.Returned || !errors.Is(p.Err, broker.ErrUnroutable) || p.ID != msgs[i].Properties.CorrelationID {
			t.Fatalf("publication %d: %+v, want returned", i, p)
		}
	}
	if _, err := b.Depth(ctx, missing); !errors.Is(err, broker.ErrQueueMissing) {
		t.Fatalf("depth of missing queue: %v, want ErrQueueMissing", err)
	}

	// The same channel then publishes normally: no return leaks into the
	// next batch, and the depth channel reopened after the 404.
	q := testQueue(t, true)
	pubs, err = b.Publish(ctx, q, msgs[:10])
	if err != nil {
		t.Fatal(err)
	}
	if n := countOutcomes(pubs); n[broker.Confirmed] != 10 {
		t.Fatalf("after returns: %v, want 10 confirmed", n)
	}
	if d, err := b.Depth(ctx, q); err != nil || d != 10 {
		t.Fatalf("depth after a missing queue: %d, %v; want 10", d, err)
	}
}

func TestPublishRefusesDuplicateIDs(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{})
	q := testQueue(t, true)
	msgs := messages(t, 3)
	batch := []celery.Message{msgs[0], msgs[1], msgs[0], msgs[1], msgs[2]}

	pubs, err := b.Publish(context.Background(), q, batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []broker.Outcome{broker.Confirmed, broker.Confirmed, broker.Failed, broker.Failed, broker.Confirmed}
	for i, p := range pubs {
		if p.Outcome != want[i] {
			t.Fatalf("publication %d: %+v, want %v", i, p, want[i])
		}
	}
	if !errors.Is(pubs[2].Err, broker.ErrDuplicateID) || !errors.Is(pubs[3].Err, broker.ErrDuplicateID) {
		t.Fatalf("errors: %v / %v", pubs[2].Err, pubs[3].Err)
	}
	if d, err := b.Depth(context.Background(), q); err != nil || d != 3 {
		t.Fatalf("depth: %d, %v; want 3", d, err)
	}
}

func TestConcurrentPublishCallsConfirmEachMessage(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{ConfirmWindow: 50})
	q := testQueue(t, true)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pubs, err := b.Publish(context.Background(), q, messages(t, 200))
			if err != nil {
				errs <- err
				return
			}
			if n := countOutcomes(pubs); n[broker.Confirmed] != 200 {
				errs <- errors.New("not all confirmed")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if d, err := b.Depth(context.Background(), q); err != nil || d != 800 {
		t.Fatalf("depth: %d, %v; want 800", d, err)
	}
}

// TestPublishCallsDoNotWaitForEachOther publishes one message to a queue
// while a large batch is being published to another: the small call must
// not wait for the large one (the orchestrator's loops, one per visit
// type, publish side by side, and a slow queue must not hold up another).
func TestPublishCallsDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{ConfirmWindow: 100, PublishChannels: 1})
	big, small := testQueue(t, true), testQueue(t, true)
	const n = 20000
	batch := messages(t, n)
	bigDone := make(chan error, 1)
	go func() {
		pubs, err := b.Publish(context.Background(), big, batch)
		if err == nil && countOutcomes(pubs)[broker.Confirmed] != n {
			err = fmt.Errorf("large batch: %v", countOutcomes(pubs))
		}
		bigDone <- err
	}()
	celerytest.WaitFor(t, 30*time.Second, "the large batch to start arriving", func() bool {
		d, err := b.Depth(context.Background(), big)
		return err == nil && d > 0
	})

	pubs, err := b.Publish(context.Background(), small, messages(t, 1))
	if err != nil || pubs[0].Outcome != broker.Confirmed {
		t.Fatalf("small publish: %v, %+v", err, pubs)
	}
	depth, err := b.Depth(context.Background(), big)
	select {
	case err := <-bigDone:
		t.Fatalf("the one-message publish returned only after the %d-message batch had finished (%v)", n, err)
	default:
	}
	if err != nil || depth >= n {
		t.Fatalf("depth of the large batch's queue when the small publish returned: %d, %v", depth, err)
	}
	if err := <-bigDone; err != nil {
		t.Fatal(err)
	}
}

func TestCallsFailClearlyWhenClosedOrCancelled(t *testing.T) {
	t.Parallel()
	b := openBroker(t, amqp.Config{})
	q := testQueue(t, true)
	msgs := messages(t, 3)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pubs, err := b.Publish(ctx, q, msgs)
	if !errors.Is(err, context.Canceled) || len(pubs) != 3 || pubs[0].Outcome != broker.Failed || !errors.Is(pubs[0].Err, broker.ErrNotSent) {
		t.Fatalf("cancelled publish: %v, %+v", err, pubs)
	}
	if _, err := b.Depth(ctx, q); !errors.Is(err, broker.ErrDepthUnknown) {
		t.Fatalf("cancelled depth: %v", err)
	}
	if pubs, err := b.Publish(context.Background(), "", msgs); err == nil || pubs[1].Outcome != broker.Failed {
		t.Fatalf("empty queue name: %v, %+v", err, pubs)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Publish(context.Background(), q, msgs); !errors.Is(err, broker.ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
	if _, err := b.Depth(context.Background(), q); !errors.Is(err, broker.ErrDepthUnknown) || !errors.Is(err, broker.ErrClosed) {
		t.Fatalf("depth after close: %v", err)
	}
	if err := b.Events(context.Background(), func(context.Context, []celery.Event) error { return nil }); !errors.Is(err, broker.ErrClosed) {
		t.Fatalf("events after close: %v", err)
	}
}

func TestOpenGivesUpWhenContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := amqp.Open(ctx, amqp.Config{URL: "amqp://guest:secret@127.0.0.1:1/", MinBackoff: 10 * time.Millisecond})
	if !errors.Is(err, broker.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("open: %v", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("the error shows the password: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("open took %s", time.Since(start))
	}
}

func TestDepthThroughManagementAPI(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths, auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		auths = append(auths, user+":"+pass)
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/ready"):
			w.Write([]byte(`{"name":"ready","messages":42,"messages_ready":40,"consumers":3}`))
		case strings.HasSuffix(r.URL.Path, "/fresh"):
			w.Write([]byte(`{"name":"fresh"}`)) // no statistics yet
		case strings.HasSuffix(r.URL.Path, "/broken"):
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.Error(w, `{"error":"Object Not Found"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()

	mgmt := strings.Replace(srv.URL, "http://", "http://admin:pw@", 1)
	b := openBroker(t, amqp.Config{ManagementURL: mgmt})
	ctx := context.Background()
	if d, err := b.Depth(ctx, "ready"); err != nil || d != 42 {
		t.Fatalf("ready: %d, %v", d, err)
	}
	if q, err := b.Inspect(ctx, "ready"); err != nil || q != (broker.QueueInfo{Messages: 42, Consumers: 3}) {
		t.Fatalf("inspect ready: %+v, %v", q, err)
	}
	if _, err := b.Depth(ctx, "fresh"); !errors.Is(err, broker.ErrDepthUnknown) {
		t.Fatalf("fresh: %v", err)
	}
	if _, err := b.Depth(ctx, "broken"); !errors.Is(err, broker.ErrDepthUnknown) {
		t.Fatalf("broken: %v", err)
	}
	if _, err := b.Depth(ctx, "gone"); !errors.Is(err, broker.ErrQueueMissing) {
		t.Fatalf("gone: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if paths[0] != "/api/queues/%2F/ready" || auths[0] != "admin:pw" {
		t.Fatalf("request: %s as %s", paths[0], auths[0])
	}
}
