package amqp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
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

// openBroker opens a Broker on the test RabbitMQ, logging through t
// unless cfg says otherwise, closed at cleanup.
func openBroker(t *testing.T, cfg amqp.Config) *amqp.Broker {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	return celerytest.OpenBroker(t, cfg)
}

// admin opens a plain amqp091 channel for test set-up and checks, closed
// at cleanup.
func admin(t *testing.T) *amqp091.Channel {
	t.Helper()
	celerytest.RequireRabbitMQ(t)
	conn, err := amqp091.Dial(celerytest.URL())
	if err != nil {
		celerytest.Unavailable(t, "RabbitMQ not reachable at %s: %v", celerytest.URL(), err)
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
	t.Cleanup(func() { celerytest.DeleteQueue(t, name) })
	return name
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

// waitQueue waits until queue exists.
func waitQueue(t *testing.T, b *amqp.Broker, queue string, timeout time.Duration) {
	t.Helper()
	celerytest.WaitFor(t, timeout, "queue "+queue+" to exist", func() bool {
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
