package swhrpc_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/revisit-sched/revisit/internal/testkit/pytest"
	"github.com/revisit-sched/revisit/internal/testkit/swhtraffic"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// TestPythonClient runs a lister's session with testdata/swhclient.py, the
// Python client as RemoteScheduler is (requests, decoding, errors, models
// checked as attrs_strict does), against the server on each store; any
// mismatch it finds fails the test.
func TestPythonClient(t *testing.T) {
	py := pytest.Msgpack(t)
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		srv := httptest.NewServer(newServer(st, nil))
		defer srv.Close()
		runClient(t, py, srv.URL+"/")
	})
}

// TestPythonClientAsRecorded holds testdata/swhclient.py to the real
// client's recorded traffic: it decodes every recorded body into its models
// and packs every recorded request to the same bytes, so that what
// TestPythonClient finds is what RemoteScheduler would.
func TestPythonClientAsRecorded(t *testing.T) {
	py := pytest.Msgpack(t)
	dir := swhtraffic.Dir(t)
	runClient(t, py, "recorded", filepath.Join(dir, swhtraffic.Smoke), filepath.Join(dir, swhtraffic.Conformance))
}

// runClient runs testdata/swhclient.py with args and fails the test unless
// its verdict is ok.
func runClient(t *testing.T, py string, args ...string) {
	t.Helper()
	out, err := pytest.Command(py, "testdata/swhclient.py", args...).CombinedOutput()
	report := strings.TrimSpace(string(out))
	if err != nil || !strings.HasSuffix(report, "verdict: ok") {
		t.Fatalf("swhclient.py %s (%v):\n%s", args[0], err, report)
	}
	t.Logf("\n%s", report)
}
