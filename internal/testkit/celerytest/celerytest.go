// Package celerytest gives tests the real peers of revisit's production
// broker: a RabbitMQ server and Debian's Python Celery workers started as
// subprocesses with events enabled. Without RabbitMQ or Celery a test
// skips, or fails when CI is set.
package celerytest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/internal/testkit/pytest"
)

// DefaultURL is the RabbitMQ the tests use unless TEST_AMQP_URL names
// another.
const DefaultURL = "amqp://guest:guest@127.0.0.1:5672/"

// URL returns the RabbitMQ URL the tests use.
func URL() string {
	if u := os.Getenv("TEST_AMQP_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Unavailable skips the test locally and fails it under CI.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set, so this is a failure)", msg)
	}
	t.Skipf("%s; skipping (set CI=1 to make this a failure)", msg)
}

// probe dials RabbitMQ once per test binary, so that every test skips at
// once when it is not there.
var probe = sync.OnceValue(func() error {
	conn, err := amqp091.DialConfig(URL(), amqp091.Config{Dial: amqp091.DefaultDial(2 * time.Second)})
	if err != nil {
		return err
	}
	return conn.Close()
})

// RequireRabbitMQ skips (or, under CI, fails) the test without RabbitMQ.
func RequireRabbitMQ(t testing.TB) {
	t.Helper()
	if err := probe(); err != nil {
		Unavailable(t, "RabbitMQ not reachable at %s: %v (start it with `rabbitmq-server -detached`)", URL(), err)
	}
}

// Queue returns a unique queue name; the queue and an exchange of the same
// name (Celery workers declare both) are deleted at cleanup.
func Queue(t testing.TB) string {
	t.Helper()
	name := "revisit.test." + uuid.NewString()[:8]
	t.Cleanup(func() {
		DeleteQueue(t, name)
		DeleteExchange(t, name)
	})
	return name
}

// withChannel runs fn on a channel of a fresh connection, logging when
// RabbitMQ cannot be reached (cleanups must not fail the test).
func withChannel(t testing.TB, what string, fn func(*amqp091.Channel) error) {
	conn, err := amqp091.Dial(URL())
	if err != nil {
		t.Logf("cleanup: cannot %s: %v", what, err)
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Logf("cleanup: cannot %s: %v", what, err)
		return
	}
	if err := fn(ch); err != nil {
		t.Logf("cleanup: %s: %v", what, err)
	}
}

// DeleteQueue deletes a queue, which may be missing.
func DeleteQueue(t testing.TB, name string) {
	withChannel(t, "delete queue "+name, func(ch *amqp091.Channel) error {
		_, err := ch.QueueDelete(name, false, false, false)
		return err
	})
}

// DeleteExchange deletes an exchange, which may be missing.
func DeleteExchange(t testing.TB, name string) {
	withChannel(t, "delete exchange "+name, func(ch *amqp091.Channel) error {
		return ch.ExchangeDelete(name, false, false)
	})
}

// Worker is a Celery worker subprocess whose tasks record what they
// receive.
type Worker struct {
	// Out is the file the tasks append their JSON lines to; a module reads
	// its name from $TEST_OUT.
	Out string
	cmd *exec.Cmd
}

// WorkerOptions say what worker to start.
type WorkerOptions struct {
	// Module is the Python source of the tasks module, imported as
	// revisit_test_tasks; it finds the broker URL in $TEST_CELERY_BROKER
	// and where to record in $TEST_OUT.
	Module string
	// Queues the worker consumes.
	Queues []string
	// Pool is the Celery pool (solo, prefork, threads); default solo.
	Pool string
	// Concurrency of the pool; default 1.
	Concurrency int
	// Env adds variables (KEY=value) to the worker's environment.
	Env []string
}

// StartWorker starts a Celery worker with events enabled (-E), killed at
// cleanup; its log is shown when the test fails.
func StartWorker(t testing.TB, o WorkerOptions) *Worker {
	t.Helper()
	RequireRabbitMQ(t)
	py := pytest.Celery(t)
	if o.Pool == "" {
		o.Pool = "solo"
	}
	if o.Concurrency == 0 {
		o.Concurrency = 1
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "revisit_test_tasks.py"), []byte(o.Module), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &Worker{Out: filepath.Join(dir, "received.jsonl")}
	logPath := filepath.Join(dir, "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-m", "celery", "-A", "revisit_test_tasks", "worker", "-E",
		"-Q", strings.Join(o.Queues, ","), "--pool", o.Pool, "--concurrency", fmt.Sprint(o.Concurrency),
		"-n", "revisit-test-"+uuid.NewString()[:8]+"@%h",
		"--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PYTHONPATH="+dir,
		"TEST_OUT="+w.Out,
		"TEST_CELERY_BROKER="+strings.TrimSuffix(URL(), "/")+"//",
	)
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // kill the pool's children too
	if err := cmd.Start(); err != nil {
		t.Fatalf("start celery worker: %v", err)
	}
	w.cmd = cmd
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // stray children
		_ = logFile.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("celery worker log:\n%s", log)
		}
	})
	return w
}

// Records reads what the tasks recorded, one JSON object per line, in the
// order they ran; numbers decode as json.Number.
func (w *Worker) Records(t testing.TB) []map[string]any {
	t.Helper()
	var got []map[string]any
	data, err := os.ReadFile(w.Out)
	if errors.Is(err, os.ErrNotExist) {
		return got
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var rec map[string]any
		if err := DecodeNumbers(sc.Bytes(), &rec); err != nil {
			continue // a line being written
		}
		got = append(got, rec)
	}
	return got
}

// Received is Records keyed by their "id" field.
func (w *Worker) Received(t testing.TB) map[string]map[string]any {
	t.Helper()
	got := map[string]map[string]any{}
	for _, rec := range w.Records(t) {
		id, _ := rec["id"].(string)
		got[id] = rec
	}
	return got
}

// DecodeNumbers decodes JSON keeping numbers as json.Number.
func DecodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// WaitFor polls cond every 50 ms until it holds, failing the test after
// timeout.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitQueue waits until the worker has declared queue.
func WaitQueue(t testing.TB, queue string, timeout time.Duration) {
	t.Helper()
	WaitFor(t, timeout, "queue "+queue+" to exist", func() bool {
		exists := false
		withChannel(t, "inspect queue "+queue, func(ch *amqp091.Channel) error {
			_, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
			exists = err == nil
			return nil
		})
		return exists
	})
}

// OpenBroker opens revisit's RabbitMQ broker on the test server (cfg.URL
// defaults to URL()), closed at cleanup; without RabbitMQ the test skips,
// or fails under CI.
func OpenBroker(t testing.TB, cfg amqp.Config) *amqp.Broker {
	t.Helper()
	RequireRabbitMQ(t)
	if cfg.URL == "" {
		cfg.URL = URL()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := amqp.Open(ctx, cfg)
	if err != nil {
		Unavailable(t, "RabbitMQ not reachable at %s: %v (start it with `rabbitmq-server -detached`)", URL(), err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close broker: %v", err)
		}
	})
	return b
}
