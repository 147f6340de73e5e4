package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/require"
)

const testBrokerURL = "amqp://guest:guest@127.0.0.1:5672/"

// rabbit returns a channel on the test RabbitMQ for set-up and checks; the
// test skips without RabbitMQ, or fails when CI is set.
func rabbit(t *testing.T) *amqp091.Channel {
	t.Helper()
	conn, err := amqp091.Dial(testBrokerURL)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("RabbitMQ at %s is required in CI: %v", testBrokerURL, err)
		}
		t.Skipf("RabbitMQ at %s unreachable, skipping: %v", testBrokerURL, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	return ch
}

func TestBrokerBadURL(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	msg := h.fails(ExitError, "--broker", "redis://x", "broker", "depth", "q")
	require.Contains(t, msg, "broker:")
	require.Contains(t, msg, "neither embedded nor an amqp://")
}

func TestBrokerEmbeddedIsTheDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("db", "migrate") // creates the store the read-only commands below read
	depth := h.jsonObject("broker", "depth", "q")
	require.EqualValues(t, 0, depth["depth"], "an unknown embedded queue is empty")
	out := h.ok("broker", "send", "swh.loader.git.tasks.UpdateGitRepository", "--queue", "q",
		"--kwargs", `{"url": "https://github.com/a/b"}`)
	require.Contains(t, out, "confirmed")
	depth = h.jsonObject("broker", "depth", "q")
	require.EqualValues(t, 1, depth["depth"], "the message is in the store")

	rows := h.jsonList("bench", "broker", "--messages", "300", "--batch", "100")
	require.EqualValues(t, 300, rows[0]["confirmed"])
	require.EqualValues(t, 300, rows[0]["queue_depth_after"])
}

func TestBrokerSendAndDepth(t *testing.T) {
	t.Parallel()
	ch := rabbit(t)
	h := newHarness(t)
	queue := "revisit.test.cli." + uuid.NewString()[:8]
	t.Cleanup(func() { _, _ = ch.QueueDelete(queue, false, false, false) })
	b := []string{"--broker", testBrokerURL}

	out := h.ok(append(b, "broker", "send", "swh.loader.git.tasks.UpdateGitRepository", "--queue", queue, "--declare",
		"--kwargs", `{"url": "https://github.com/a/b", "lister_name": "github"}`)...)
	require.Contains(t, out, "confirmed")
	depth := h.jsonObject(append(b, "broker", "depth", queue)...)
	require.EqualValues(t, 1, depth["depth"])

	msg, ok, err := ch.Get(queue, true)
	require.NoError(t, err)
	require.True(t, ok, "the message is in the queue")
	require.Equal(t, "swh.loader.git.tasks.UpdateGitRepository", msg.Headers["task"])
	var body []any
	require.NoError(t, json.Unmarshal(msg.Body, &body))
	require.Equal(t, map[string]any{"url": "https://github.com/a/b", "lister_name": "github"}, body[1])

	missing := queue + ".missing"
	require.Contains(t, h.fails(ExitError, append(b, "broker", "depth", missing)...), "does not exist")
	require.Contains(t, h.fails(ExitError, append(b, "broker", "send", "t", "--queue", missing)...), "returned")
	require.Contains(t, h.fails(ExitUsage, append(b, "broker", "send", "t", "--queue", queue, "--kwargs", "[1]")...), "--kwargs")
}

func TestBrokerEvents(t *testing.T) {
	t.Parallel()
	ch := rabbit(t)
	h := newHarness(t)
	id := uuid.NewString()
	done := make(chan result, 1)
	follow := func() {
		go func() {
			done <- h.run("--broker", testBrokerURL, "--format", "json", "broker", "events", "--count", "1")
		}()
	}
	follow()
	// The observer's queue is bound a moment after the command starts:
	// send the event until the command has seen one.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case r := <-done:
			require.Equal(t, 0, r.code, r.stderr)
			var rows []map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
			require.Len(t, rows, 1)
			if rows[0]["id"] != id {
				// Another package's test has a Celery worker on this
				// RabbitMQ, whose events the command sees too: follow
				// again until it prints ours.
				follow()
				continue
			}
			require.Equal(t, "task-failed", rows[0]["type"])
			require.Equal(t, "ValueError: boom", rows[0]["detail"])
			return
		case <-tick.C:
			publishTaskFailed(t, ch, id)
		case <-deadline:
			t.Fatal("broker events did not print the event")
		}
	}
}

// publishTaskFailed publishes a Celery worker's task-failed event of task
// id, whose exception is "ValueError: boom", to the events exchange.
func publishTaskFailed(t *testing.T, ch *amqp091.Channel, id string) {
	t.Helper()
	event := fmt.Sprintf(`{"type": "task-failed", "uuid": %q, "hostname": "w@h", "timestamp": 1700000000.5, `+
		`"exception": "ExceptionWithTraceback()", "traceback": "Traceback:\n  ...\nValueError: boom\n"}`, id)
	err := ch.PublishWithContext(context.Background(), "celeryev", "task.failed", false, false,
		amqp091.Publishing{ContentType: "application/json", Body: []byte(event)})
	require.NoError(t, err)
}
