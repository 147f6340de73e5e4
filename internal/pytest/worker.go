package pytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartWorker starts a Celery worker with events enabled (-E) and the solo
// pool, on the RabbitMQ of amqpURL (amqp://user:pass@host:port/), consuming
// queues, with the Python module source as its app: module must define a
// Celery app named app in a module named revisit_test_tasks, and may read
// the broker URL from $REVISIT_TEST_BROKER and a scratch directory from
// $REVISIT_TEST_DIR. The worker is stopped at cleanup, and its log shown
// when the test failed. Without Python and Celery the test skips (fails
// under CI). It returns the scratch directory.
func StartWorker(t testing.TB, module, amqpURL string, queues ...string) string {
	t.Helper()
	py := Celery(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "revisit_test_tasks.py"), []byte(module), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "worker.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-m", "celery", "-A", "revisit_test_tasks", "worker", "-E",
		"-Q", strings.Join(queues, ","), "--pool", "solo", "--concurrency", "1",
		"-n", fmt.Sprintf("revisit-test-%d@%%h", time.Now().UnixNano()),
		"--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel", "INFO")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "REVISIT_TEST_DIR="+dir,
		"REVISIT_TEST_BROKER="+strings.TrimSuffix(amqpURL, "/")+"//")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // kill the pool's children too
	if err := cmd.Start(); err != nil {
		t.Fatalf("start celery worker: %v", err)
	}
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
		_ = logFile.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logPath)
			t.Logf("celery worker log:\n%s", log)
		}
	})
	return dir
}
