package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
)

// TestMain checks that no goroutine outlives the tests, but the health
// check of a closed PostgreSQL pool, which ends on its own shortly after.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

const queue = "swh.loader.git.tasks.UpdateGitRepository"

// harness is an API server over an embedded broker on a fresh SQLite store.
type harness struct {
	t   *testing.T
	srv *httptest.Server
	st  store.Store
	b   *embedded.Broker
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"), store.Options{})
	require.NoError(t, err)
	b := embedded.New(st, embedded.Config{})
	srv := httptest.NewServer(api.New(api.Config{Queues: b}))
	t.Cleanup(func() {
		srv.Close()
		b.Close()
		st.Close()
	})
	return &harness{t: t, srv: srv, st: st, b: b}
}

// publish queues one visit message and returns its id.
func (h *harness) publish(url string) string {
	h.t.Helper()
	m, err := celery.NewMessage(celery.Task{Name: queue, ID: uuid.NewString(), Origin: "test@host",
		Kwargs: map[string]any{"url": url}})
	require.NoError(h.t, err)
	pubs, err := h.b.Publish(context.Background(), queue, []celery.Message{m})
	require.NoError(h.t, err)
	require.Equal(h.t, broker.Confirmed, pubs[0].Outcome)
	return m.Properties.CorrelationID
}

// post posts body to path and returns the status and the decoded JSON.
func (h *harness) post(path, body string) (int, map[string]any) {
	h.t.Helper()
	resp, err := http.Post(h.srv.URL+path, "application/json", strings.NewReader(body))
	require.NoError(h.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	require.Equal(h.t, "application/json", resp.Header.Get("Content-Type"), "%s", data)
	var out map[string]any
	require.NoError(h.t, json.Unmarshal(data, &out), "%s", data)
	return resp.StatusCode, out
}

// fails posts body to path and requires an error of that status and code,
// whose message contains msg and whose field is field.
func (h *harness) fails(path, body string, status int, code, field, msg string) {
	h.t.Helper()
	got, out := h.post(path, body)
	require.Equal(h.t, status, got, "%s %s: %v", path, body, out)
	e, ok := out["error"].(map[string]any)
	require.True(h.t, ok, "%v", out)
	require.Equal(h.t, code, e["code"], "%v", out)
	require.Contains(h.t, e["message"], msg, "%v", out)
	if field == "" {
		require.NotContains(h.t, e, "field")
	} else {
		require.Equal(h.t, field, e["field"], "%v", out)
	}
}

const leasePath = "/api/v1/queues/" + queue + "/lease"

func TestLeaseHeartbeatResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.publish("https://github.com/a/b")

	status, out := h.post(leasePath, `{"worker": "w1", "max": 10, "lease_seconds": 60}`)
	require.Equal(t, http.StatusOK, status, "%v", out)
	msgs := out["messages"].([]any)
	require.Len(t, msgs, 1)
	m := msgs[0].(map[string]any)
	require.Equal(t, id, m["id"])
	require.Equal(t, queue, m["task"])
	require.Equal(t, []any{}, m["args"])
	require.Equal(t, map[string]any{"url": "https://github.com/a/b"}, m["kwargs"])
	require.EqualValues(t, 1, m["attempt"])
	exp, err := time.Parse(time.RFC3339Nano, m["lease_expires_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Minute), exp, 10*time.Second)

	status, out = h.post("/api/v1/messages/"+id+"/heartbeat", `{"worker": "w1", "lease_seconds": 600}`)
	require.Equal(t, http.StatusOK, status, "%v", out)
	exp, err = time.Parse(time.RFC3339Nano, out["lease_expires_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(10*time.Minute), exp, 10*time.Second)
	h.fails("/api/v1/messages/"+id+"/heartbeat", `{"worker": "w2"}`, http.StatusConflict, "conflict", "", "not leased to worker")
	h.fails("/api/v1/messages/"+id+"/result", `{"worker": "intruder", "status": "eventful"}`,
		http.StatusConflict, "conflict", "", "not leased to worker")

	status, out = h.post("/api/v1/messages/"+id+"/result",
		`{"worker": "w1", "status": "eventful", "snapshot": "0123456789abcdef0123456789abcdef01234567"}`)
	require.Equal(t, http.StatusOK, status, "%v", out)
	require.Equal(t, true, out["stored"])
	status, out = h.post("/api/v1/messages/"+id+"/result", `{"worker": "w1", "status": "failed", "error": "again"}`)
	require.Equal(t, http.StatusOK, status, "%v", out)
	require.Equal(t, false, out["stored"], "a second result is ignored")
	h.fails("/api/v1/messages/"+id+"/heartbeat", `{"worker": "w1"}`, http.StatusConflict, "conflict", "", "done")

	status, out = h.post(leasePath, `{"worker": "w1"}`)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, []any{}, out["messages"], "an empty queue gives an empty list")
}

func TestLeaseLongPoll(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fails(leasePath, `{"worker": "w1"}`, http.StatusNotFound, "not_found", "", `queue "`+queue+`" does not exist`)
	require.NoError(t, h.st.TaskTypeCreate(context.Background(), revisit.TaskType{Type: "load-git", BackendName: queue}))
	go func() {
		time.Sleep(200 * time.Millisecond)
		h.publish("https://github.com/a/b")
	}()
	start := time.Now()
	status, out := h.post(leasePath, `{"worker": "w1", "wait_seconds": 20}`)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, out["messages"], 1)
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.publish("https://github.com/a/b")
	result := "/api/v1/messages/" + id + "/result"
	for _, c := range []struct {
		name, path, body    string
		status              int
		code, field, inText string
	}{
		{"malformed", leasePath, `{"worker": `, 400, "invalid", "", "malformed JSON"},
		{"syntax", leasePath, `{"worker" "w"}`, 400, "invalid", "", "malformed JSON at byte"},
		{"empty body", leasePath, ``, 400, "invalid", "", "missing JSON body"},
		{"not an object", leasePath, `[1]`, 400, "invalid", "", "want an object"},
		{"unknown field", leasePath, `{"worker": "w", "maxx": 3}`, 400, "invalid", "maxx", "unknown field"},
		{"wrong type", leasePath, `{"worker": "w", "max": "3"}`, 400, "invalid", "max", "got a JSON string, want an integer"},
		{"trailing data", leasePath, `{"worker": "w"} {}`, 400, "invalid", "", "trailing data"},
		{"no worker", leasePath, `{}`, 400, "invalid", "worker", "missing"},
		{"max too big", leasePath, `{"worker": "w", "max": 1000}`, 400, "invalid", "max", "must be between 1 and 100, not 1000"},
		{"negative max", leasePath, `{"worker": "w", "max": -1}`, 400, "invalid", "max", "must be between 1 and 100, not -1"},
		{"zero max", leasePath, `{"worker": "w", "max": 0}`, 400, "invalid", "max", "must be between 1 and 100, not 0"},
		{"zero lease", leasePath, `{"worker": "w", "lease_seconds": 0}`, 400, "invalid", "lease_seconds", "must be between 1 and 86400, not 0"},
		{"negative wait", leasePath, `{"worker": "w", "wait_seconds": -1}`, 400, "invalid", "wait_seconds", "must be between 0 and 60, not -1"},
		{"duplicate key", leasePath, `{"worker": "w", "max": 1, "max": 100}`, 400, "invalid", "max", "given twice"},
		{"invalid UTF-8", leasePath, "{\"worker\": \"w\xff\"}", 400, "invalid", "worker", "not valid UTF-8"},
		{"zero lease heartbeat", "/api/v1/messages/nope/heartbeat", `{"worker": "w", "lease_seconds": 0}`, 400, "invalid",
			"lease_seconds", "must be between 1 and 86400, not 0"},
		{"lease too long", leasePath, `{"worker": "w", "lease_seconds": 100000}`, 400, "invalid", "lease_seconds", "must be between 1 and 86400, not 100000"},
		{"wait too long", leasePath, `{"worker": "w", "wait_seconds": 61}`, 400, "invalid", "wait_seconds", "must be between 0 and 60, not 61"},
		{"oversized", leasePath, `{"worker": "` + strings.Repeat("w", api.MaxBodyBytes) + `"}`, 413, "too_large", "", "larger than"},
		{"bad status", result, `{"worker": "w", "status": "success"}`, 400, "invalid", "status", `"success" is not one of`},
		{"no status", result, `{"worker": "w"}`, 400, "invalid", "status", "missing"},
		{"non-hex snapshot", result, `{"worker": "w", "status": "eventful", "snapshot": "xyz"}`, 400, "invalid", "snapshot", "40 hex digits"},
		{"odd snapshot", result, `{"worker": "w", "status": "eventful", "snapshot": "abc"}`, 400, "invalid", "snapshot", "40 hex digits"},
		{"short snapshot", result, `{"worker": "w", "status": "eventful", "snapshot": "00"}`, 400, "invalid", "snapshot",
			`want a snapshot id of 40 hex digits (20 bytes), got "00"`},
		{"unknown message", "/api/v1/messages/" + uuid.NewString() + "/result", `{"worker": "w", "status": "failed"}`,
			404, "not_found", "", "not found"},
		{"unknown message heartbeat", "/api/v1/messages/nope/heartbeat", `{"worker": "w"}`, 404, "not_found", "", "not found"},
		{"never leased", result, `{"worker": "w", "status": "failed"}`, 409, "conflict", "", "never leased"},
		{"unknown route", "/api/v1/nothing", `{}`, 404, "not_found", "", "no route"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			h.fails(c.path, c.body, c.status, c.code, c.field, c.inText)
		})
	}
}

func TestStatus(t *testing.T) {
	require.Equal(t, http.StatusServiceUnavailable, api.Status("unavailable"))
	require.Equal(t, http.StatusInternalServerError, api.Status("internal"))
	require.Equal(t, http.StatusConflict, api.Status("stale_data"))
}
