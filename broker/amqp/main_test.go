package amqp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
)

// The tests need a real RabbitMQ: REVISIT_AMQP_URL, or the local default.
// Without one they skip, except under CI (CI set), where they fail.
const defaultTestURL = "amqp://guest:guest@127.0.0.1:5672/"

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testURL returns the RabbitMQ URL the tests use.
func testURL() string {
	if u := os.Getenv("REVISIT_AMQP_URL"); u != "" {
		return u
	}
	return defaultTestURL
}

// unavailable skips the test locally and fails it under CI.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set, so this is a failure)", msg)
	}
	t.Skipf("%s; skipping (set CI=1 to make this a failure)", msg)
}

// testLogger logs through t.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// probe dials RabbitMQ once per test run, so that every test skips at once
// when it is not there.
var probe = sync.OnceValue(func() error {
	conn, err := amqp091.DialConfig(testURL(), amqp091.Config{
		Dial: amqp091.DefaultDial(2 * time.Second),
	})
	if err != nil {
		return err
	}
	return conn.Close()
})

// requireRabbitMQ skips (or, under CI, fails) the test without RabbitMQ.
func requireRabbitMQ(t *testing.T) {
	t.Helper()
	if err := probe(); err != nil {
		unavailable(t, "RabbitMQ not reachable at %s: %v (start it with `rabbitmq-server -detached`)", testURL(), err)
	}
}

// openBroker opens a Broker on the test RabbitMQ, closed at cleanup.
func openBroker(t *testing.T, cfg amqp.Config) *amqp.Broker {
	t.Helper()
	requireRabbitMQ(t)
	if cfg.URL == "" {
		cfg.URL = testURL()
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	b, err := amqp.Open(ctx, cfg)
	if err != nil {
		unavailable(t, "RabbitMQ not reachable at %s: %v (start it with `rabbitmq-server -detached`)", testURL(), err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close broker: %v", err)
		}
	})
	return b
}

// admin opens a plain amqp091 channel for test set-up and checks, closed
// at cleanup.
func admin(t *testing.T) *amqp091.Channel {
	t.Helper()
	requireRabbitMQ(t)
	conn, err := amqp091.Dial(testURL())
	if err != nil {
		unavailable(t, "RabbitMQ not reachable at %s: %v", testURL(), err)
	}
	ch, err := conn.Channel()
	if err != nil {
		_ = conn.Close()
		t.Fatalf("admin channel: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return ch
}

// testQueue returns a unique queue name, declared durable unless declare is
// false, and deleted at cleanup.
func testQueue(t *testing.T, declare bool) string {
	t.Helper()
	name := "revisit.test." + uuid.NewString()[:8]
	if declare {
		if _, err := admin(t).QueueDeclare(name, true, false, false, false, nil); err != nil {
			t.Fatalf("declare %s: %v", name, err)
		}
	}
	t.Cleanup(func() { deleteQueue(t, name) })
	return name
}

// deleteExchange deletes an exchange on a fresh connection (it may be
// missing).
func deleteExchange(t *testing.T, name string) {
	conn, err := amqp091.Dial(testURL())
	if err != nil {
		t.Logf("cleanup: cannot delete exchange %s: %v", name, err)
		return
	}
	defer conn.Close()
	if ch, err := conn.Channel(); err == nil {
		if err := ch.ExchangeDelete(name, false, false); err != nil {
			t.Logf("cleanup: delete exchange %s: %v", name, err)
		}
	}
}

// deleteQueue deletes a queue on a fresh connection (it may be missing).
func deleteQueue(t *testing.T, name string) {
	conn, err := amqp091.Dial(testURL())
	if err != nil {
		t.Logf("cleanup: cannot delete queue %s: %v", name, err)
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	if _, err := ch.QueueDelete(name, false, false, false); err != nil {
		t.Logf("cleanup: delete queue %s: %v", name, err)
	}
}

// newMessage builds a Celery task message with a fresh id.
func newMessage(t *testing.T, task string, args []any, kwargs map[string]any) celery.Message {
	t.Helper()
	m, err := celery.NewMessage(celery.Task{
		Name:   task,
		ID:     uuid.NewString(),
		Args:   args,
		Kwargs: kwargs,
		Origin: "revisit-test@localhost",
	})
	if err != nil {
		t.Fatalf("new message: %v", err)
	}
	return m
}

// messages builds n messages of one task.
func messages(t *testing.T, n int) []celery.Message {
	msgs := make([]celery.Message, n)
	for i := range msgs {
		msgs[i] = newMessage(t, "swh.loader.git.tasks.UpdateGitRepository", nil,
			map[string]any{"url": fmt.Sprintf("https://example.org/repo%d.git", i)})
	}
	return msgs
}

// countOutcomes tallies publications by outcome.
func countOutcomes(pubs []broker.Publication) map[broker.Outcome]int {
	n := map[broker.Outcome]int{}
	for _, p := range pubs {
		n[p.Outcome]++
	}
	return n
}

// waitFor polls cond every 50 ms until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitQueue waits until queue exists.
func waitQueue(t *testing.T, b *amqp.Broker, queue string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "queue "+queue+" to exist", func() bool {
		_, err := b.Depth(context.Background(), queue)
		return !errors.Is(err, broker.ErrQueueMissing)
	})
}

// captureLogger returns a logger that passes every record (debug
// included) to see, and logs info and above through t.
func captureLogger(t *testing.T, see func(msg string, attrs map[string]string)) *slog.Logger {
	return slog.New(&captureHandler{see: see, next: slog.NewTextHandler(tWriter{t}, nil)})
}

type captureHandler struct {
	see   func(msg string, attrs map[string]string)
	next  slog.Handler
	attrs []slog.Attr
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(ctx context.Context, r slog.Record) error {
	attrs := map[string]string{}
	for _, a := range h.attrs {
		attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	h.see(r.Message, attrs)
	if r.Level >= slog.LevelInfo {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *captureHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &captureHandler{see: h.see, next: h.next.WithAttrs(as), attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h *captureHandler) WithGroup(name string) slog.Handler {
	return &captureHandler{see: h.see, next: h.next.WithGroup(name), attrs: h.attrs}
}
