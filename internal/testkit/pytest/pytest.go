// Package pytest finds, for tests, a Python interpreter with Debian's Celery
// and kombu: the real peer that revisit's messages and events are checked
// against.
package pytest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Celery returns a python3 that imports celery and kombu: REVISIT_PYTHON,
// else Debian's /usr/bin/python3, else python3 on PATH. Without one the test
// skips, or fails when CI is set.
func Celery(t testing.TB) string {
	t.Helper()
	var tried []string
	for _, py := range []string{os.Getenv("REVISIT_PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		out, err := exec.Command(py, "-c", "import celery, kombu").CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, py+": "+lastLine(string(out)))
	}
	msg := "needs Python with Celery and kombu (Debian: apt-get install python3-celery; or set REVISIT_PYTHON); tried " +
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
