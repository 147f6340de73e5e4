// Package pytest finds, for tests, a Python interpreter with the Debian
// packages revisit's wire formats are checked against: Celery and kombu,
// msgpack, and confluent_kafka; and runs the tests' Python scripts with the module swhcore.py
// beside this file (swh-core's msgpack conventions) importable.
package pytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Command runs the script (with args) with the interpreter py, this
// package's directory on PYTHONPATH.
func Command(py, script string, args ...string) *exec.Cmd {
	_, self, _, _ := runtime.Caller(0)
	cmd := exec.Command(py, append([]string{script}, args...)...)
	path := filepath.Dir(self)
	if old := os.Getenv("PYTHONPATH"); old != "" {
		path += string(os.PathListSeparator) + old
	}
	cmd.Env = append(os.Environ(), "PYTHONPATH="+path)
	return cmd
}

// Celery returns a python3 that imports celery and kombu: TEST_PYTHON,
// else Debian's /usr/bin/python3, else python3 on PATH. Without one the test
// skips, or fails when CI is set.
func Celery(t testing.TB) string {
	t.Helper()
	return find(t, "celery, kombu", "Celery and kombu", "python3-celery")
}

// Msgpack returns a python3 that imports msgpack, found as Celery's is.
func Msgpack(t testing.TB) string {
	t.Helper()
	return find(t, "msgpack", "msgpack", "python3-msgpack")
}

// Kafka returns a python3 that imports confluent_kafka (librdkafka) and
// msgpack, found as Celery's is: an independent Kafka producer.
func Kafka(t testing.TB) string {
	t.Helper()
	return find(t, "confluent_kafka, msgpack", "confluent_kafka and msgpack", "python3-confluent-kafka python3-msgpack")
}

// Plain returns a python3 with its standard library, found as Celery's is.
func Plain(t testing.TB) string {
	t.Helper()
	return find(t, "hashlib, datetime", "its standard library", "python3")
}

// find returns the first interpreter that imports modules; what and deb name
// them in the message of the skip or failure.
func find(t testing.TB, modules, what, deb string) string {
	t.Helper()
	var tried []string
	for _, py := range []string{os.Getenv("TEST_PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		out, err := exec.Command(py, "-c", "import "+modules).CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, py+": "+lastLine(string(out)))
	}
	msg := "needs Python with " + what + " (Debian: apt-get install " + deb + "; or set TEST_PYTHON); tried " +
		strings.Join(tried, "; ")
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
