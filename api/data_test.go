package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

const (
	readToken  = "read-token-0123456789"
	writeToken = "write-token-0123456789"
)

// dataHarness is the whole API over a fresh SQLite store and embedded
// broker; with tokens, requests carry token.
type dataHarness struct {
	t     *testing.T
	srv   *httptest.Server
	api   *api.Server
	st    store.Store
	token string
}

func newDataHarness(t *testing.T, tokens ...config.Token) *dataHarness {
	t.Helper()
	return newDataHarnessAt(t, time.Now, tokens...)
}

// newDataHarnessAt is newDataHarness with the API's clock.
func newDataHarnessAt(t *testing.T, clock func() time.Time, tokens ...config.Token) *dataHarness {
	t.Helper()
	return newDataHarnessOn(t, teststore.SQLite(t), clock, tokens...)
}

// newDataHarnessOn is newDataHarnessAt on the store st, which the test
// closes.
func newDataHarnessOn(t *testing.T, st store.Store, clock func() time.Time, tokens ...config.Token) *dataHarness {
	t.Helper()
	return newDataHarnessWith(t, st, func(c *api.Config) { c.Clock, c.Tokens = clock, tokens })
}

// newDataHarnessWith is the harness on the store st, which the test
// closes, with the API's configuration changed by with.
func newDataHarnessWith(t *testing.T, st store.Store, with func(*api.Config)) *dataHarness {
	t.Helper()
	b := embedded.New(st, embedded.Config{})
	cfg := api.Config{Store: st, Broker: b, Queues: b, Metrics: prometheus.NewRegistry()}
	with(&cfg)
	a := api.New(cfg)
	srv := httptest.NewServer(a)
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	return &dataHarness{t: t, srv: srv, api: a, st: st}
}

// do sends a request and returns the status and the raw answer.
func (h *dataHarness) do(method, path, body string) (int, []byte) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	require.NoError(h.t, err)
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return resp.StatusCode, data
}

// json sends a request that must answer status, and decodes the answer.
func (h *dataHarness) json(method, path, body string, status int) map[string]any {
	h.t.Helper()
	got, data := h.do(method, path, body)
	require.Equal(h.t, status, got, "%s %s: %s", method, path, data)
	var out map[string]any
	require.NoError(h.t, json.Unmarshal(data, &out), "%s", data)
	return out
}

// fails requires an error answer of that status, code, field ("*": any)
// and message.
func (h *dataHarness) fails(method, path, body string, status int, code, field, msg string) {
	h.t.Helper()
	out := h.json(method, path, body, status)
	e, ok := out["error"].(map[string]any)
	require.True(h.t, ok, "%v", out)
	require.Equal(h.t, code, e["code"], "%v", out)
	require.Contains(h.t, e["message"], msg, "%v", out)
	switch field {
	case "*": // any
	case "":
		require.NotContains(h.t, e, "field", "%v", out)
	default:
		require.Equal(h.t, field, e["field"], "%v", out)
	}
}

const gitType = `{"type": "load-git", "backend_name": "swh.loader.git.tasks.UpdateGitRepository", "default_interval": "64d", "max_queue_length": 50}`

// seed creates load-git and a lister, and returns the lister's id.
func (h *dataHarness) seed() string {
	h.t.Helper()
	h.json("POST", "/api/v1/task-types", gitType, http.StatusCreated)
	l := h.json("POST", "/api/v1/listers", `{"name": "github", "instance_name": "github"}`, 200)
	return l["id"].(string)
}

func TestDataRoutes(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	id := h.seed()

	tts := h.json("GET", "/api/v1/task-types", "", 200)["task_types"].([]any)
	require.Len(t, tts, 1)
	tt := h.json("GET", "/api/v1/task-types/load-git", "", 200)
	require.Equal(t, "64d", tt["default_interval"])
	require.EqualValues(t, 50, tt["max_queue_length"])
	h.fails("POST", "/api/v1/task-types", gitType, 409, "conflict", "", "exists already")
	h.fails("GET", "/api/v1/task-types/load-nothing", "", 404, "not_found", "", "")

	again := h.json("POST", "/api/v1/listers", `{"name": "github", "instance_name": "github"}`, 200)
	require.Equal(t, id, again["id"], "get or create is idempotent")
	ls := h.json("GET", "/api/v1/listers?name=github&instance_name=github", "", 200)["listers"].([]any)
	require.Len(t, ls, 1)
	ls = h.json("GET", "/api/v1/listers?id="+id, "", 200)["listers"].([]any)
	require.Len(t, ls, 1)
	require.Empty(t, h.json("GET", "/api/v1/listers?name=gitlab", "", 200)["listers"])

	var origins []string
	for i := range 5 {
		origins = append(origins, fmt.Sprintf(`{"lister_id": %q, "url": "https://github.com/o/r%d", "visit_type": "git", "last_update": "2024-0%d-01T00:00:00Z"}`, id, i, i+1))
	}
	rec := h.json("POST", "/api/v1/listed-origins", `{"origins": [`+strings.Join(origins, ",")+`]}`, 200)
	require.EqualValues(t, 5, rec["inserted"])
	rec = h.json("POST", "/api/v1/listed-origins", `{"origins": [`+origins[0]+`]}`, 200)
	require.EqualValues(t, 1, rec["updated"])

	// Keyset pages: 2 + 2 + 1, the token absent on the last page.
	var urls []string
	token := ""
	for page := 0; ; page++ {
		out := h.json("GET", "/api/v1/listed-origins?limit=2&page_token="+token, "", 200)
		for _, o := range out["origins"].([]any) {
			urls = append(urls, o.(map[string]any)["url"].(string))
		}
		next, ok := out["next_page_token"].(string)
		if !ok {
			require.Equal(t, 2, page)
			break
		}
		token = next
	}
	require.Len(t, urls, 5)
	require.Equal(t, "https://github.com/o/r0", urls[0])

	peek := h.json("POST", "/api/v1/next-visits/peek", `{"visit_type": "git", "count": 3, "policy": "never_visited_oldest_update_first"}`, 200)
	require.Len(t, peek["origins"], 3)
	require.Equal(t, "https://github.com/o/r0", peek["origins"].([]any)[0].(map[string]any)["url"])
	grab := h.json("POST", "/api/v1/next-visits/grab", `{"visit_type": "git", "count": 2}`, 200)
	require.Len(t, grab["origins"], 2)
	grabbed := grab["origins"].([]any)[0].(map[string]any)["url"].(string)

	stats := h.json("GET", "/api/v1/visit-stats?visit_type=git&url="+grabbed, "", 200)["visit_stats"].([]any)
	require.Len(t, stats, 1)
	require.NotNil(t, stats[0].(map[string]any)["last_scheduled"], "the grab marked it")

	ingest := h.json("POST", "/api/v1/visit-statuses", `[
		{"origin": "`+grabbed+`", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "snapshot": "0123456789abcdef0123456789abcdef01234567"},
		{"origin": "`+grabbed+`", "visit_type": "git", "status": "ongoing", "date": "2026-01-02T03:00:00Z"}]`, 200)
	require.EqualValues(t, 1, ingest["processed"])
	require.EqualValues(t, 1, ingest["ignored"])
	s := h.json("GET", "/api/v1/visit-stats?visit_type=git&url="+grabbed, "", 200)["visit_stats"].([]any)[0].(map[string]any)
	require.Equal(t, "successful", s["last_visit_status"])
	require.Equal(t, "0123456789abcdef0123456789abcdef01234567", s["last_snapshot"])
	require.Contains(t, h.json("GET", "/api/v1/queue-positions/git", "", 200), "position")

	require.Empty(t, h.json("GET", "/api/v1/scheduler-metrics", "", 200)["metrics"])
	ms := h.json("POST", "/api/v1/scheduler-metrics/refresh", `{}`, 200)["metrics"].([]any)
	require.Len(t, ms, 1)
	m := ms[0].(map[string]any)
	require.EqualValues(t, 5, m["origins_known"])
	require.EqualValues(t, 4, m["origins_never_visited"])
	require.Len(t, h.json("GET", "/api/v1/scheduler-metrics?visit_type=git&lister_id="+id, "", 200)["metrics"], 1)

	qs := h.json("GET", "/api/v1/queues", "", 200)["queues"].([]any)
	require.Len(t, qs, 1)
	q := qs[0].(map[string]any)
	require.Equal(t, "swh.loader.git.tasks.UpdateGitRepository", q["queue"])
	require.EqualValues(t, 50, q["max_queue_length"])
	require.EqualValues(t, 0, q["depth"])

	d := h.json("GET", "/api/v1/dashboard", "", 200)
	require.Len(t, d["visit_types"], 1)
	require.Equal(t, "github/github", d["listers"].([]any)[0].(map[string]any)["lister"])

	require.Equal(t, "ok", h.json("GET", "/healthz", "", 200)["status"])
	require.Equal(t, "ready", h.json("GET", "/readyz", "", 200)["status"])
	status, body := h.do("GET", "/metrics", "")
	require.Equal(t, 200, status)
	require.NotContains(t, string(body), "error")
}

func TestDataBadInput(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	id := h.seed()
	origin := func(fields string) string {
		return `{"origins": [{"lister_id": "` + id + `", "url": "https://a/b", "visit_type": "git"}, {` + fields + `}]}`
	}
	big := `{"origins": [` + strings.Repeat(`{"lister_id": "`+id+`", "url": "https://a/b", "visit_type": "git"},`, api.MaxBatch) +
		`{"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git"}]}`
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code, field, inText      string
	}{
		{"malformed", "POST", "/api/v1/listed-origins", `{"origins": [`, 400, "invalid", "", "malformed JSON"},
		{"not an object", "POST", "/api/v1/listed-origins", `[]`, 400, "invalid", "", "want an object"},
		{"no origins", "POST", "/api/v1/listed-origins", `{}`, 400, "invalid", "origins", "missing"},
		{"unknown top field", "POST", "/api/v1/listed-origins", `{"origins": [], "x": 1}`, 400, "invalid", "x", "unknown field"},
		{"unknown field", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git", "colour": 1`),
			400, "invalid", "origins[1].colour", "unknown field"},
		{"wrong type", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": 3, "visit_type": "git"`),
			400, "invalid", "origins[1].url", "want a string"},
		{"invalid URL", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "not a url", "visit_type": "git"`),
			400, "invalid", "origins[1].url", "white space"},
		{"relative URL", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "a/b", "visit_type": "git"`),
			400, "invalid", "origins[1].url", "not an absolute URL"},
		{"bad visit type", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "Git!"`),
			400, "invalid", "origins[1].visit_type", "not a visit type"},
		{"bad lister id", "POST", "/api/v1/listed-origins", origin(`"lister_id": "nope", "url": "https://a/c", "visit_type": "git"`),
			400, "invalid", "origins[1].lister_id", `want a UUID such as 0190a4e2-7c1f-7b3e-9d2a-5f6e7d8c9b0a, got "nope"`},
		{"bad last update", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git", "last_update": "yesterday"`),
			400, "invalid", "origins[1].last_update", `want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "yesterday"`},
		{"year 0", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git", "last_update": "0000-01-01T00:00:00Z"`),
			400, "invalid", "origins[1].last_update", "0000-01-01T00:00:00Z is outside years 1 to 9999"},
		{"year 10000 by its offset", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git", "last_update": "9999-12-31T23:00:00-02:00"`),
			400, "invalid", "origins[1].last_update", "10000-01-01T01:00:00Z is outside years 1 to 9999"},
		{"status in year 0", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "full", "date": "0000-12-31T23:59:59Z"}]`,
			400, "invalid", "[0].date", "outside years 1 to 9999"},
		{"lone surrogate", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/\ud800", "visit_type": "git"`),
			400, "invalid", "origins[1].url", "lone UTF-16 surrogate"},
		{"invalid UTF-8 URL", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + "\", \"url\": \"https://e.org/\xff\xfe\", \"visit_type\": \"git\""),
			400, "invalid", "origins[1].url", "not valid UTF-8"},
		{"key given twice", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "url": "https://a/d", "visit_type": "git"`),
			400, "invalid", "origins[1].url", "given twice"},
		{"deep extra arguments", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git", ` +
			`"extra_loader_arguments": ` + strings.Repeat(`{"a": `, 40) + "1" + strings.Repeat("}", 40)),
			400, "invalid", "origins[1].extra_loader_arguments" + strings.Repeat(".a", 32),
			"nested deeper than 32 objects and arrays"},
		{"large extra arguments", "POST", "/api/v1/listed-origins", origin(`"lister_id": "` + id + `", "url": "https://a/c", "visit_type": "git", ` +
			`"extra_loader_arguments": {"a": "` + strings.Repeat("x", 70_000) + `"}`),
			400, "invalid", "origins[1].extra_loader_arguments", "at most 65536 (64 KiB)"},
		{"unknown lister", "POST", "/api/v1/listed-origins", origin(`"lister_id": "00000000-0000-0000-0000-0000000000ff", "url": "https://a/c", "visit_type": "git"`),
			400, "invalid", "*", "does not exist"},
		{"too many", "POST", "/api/v1/listed-origins", big, 400, "invalid", "origins", "at most 10000"},
		{"oversized", "POST", "/api/v1/listed-origins", `{"origins": [{"url": "` + strings.Repeat("a", api.MaxBatchBodyBytes) + `"}]}`,
			413, "too_large", "", "larger than"},
		{"bad page token", "GET", "/api/v1/listed-origins?page_token=garbage", "", 400, "invalid", "page_token", "not a page token"},
		{"zero limit", "GET", "/api/v1/listed-origins?limit=0", "", 400, "invalid", "limit", "must be between 1 and 10000, not 0"},
		{"limit too big", "GET", "/api/v1/listed-origins?limit=50000", "", 400, "invalid", "limit", "must be between 1 and 10000, not 50000"},
		{"bad limit", "GET", "/api/v1/listed-origins?limit=ten", "", 400, "invalid", "limit", `want an integer between 1 and 10000, got "ten"`},
		{"invalid UTF-8 query", "GET", "/api/v1/visit-stats?visit_type=git&url=https://e.org/%FF%FE", "", 400, "invalid", "url", "not valid UTF-8"},
		{"bad enabled", "GET", "/api/v1/listed-origins?enabled=maybe", "", 400, "invalid", "enabled", "not one of"},
		{"unknown query", "GET", "/api/v1/listed-origins?colour=red", "", 400, "invalid", "colour", "unknown query parameter"},
		{"repeated query", "GET", "/api/v1/listed-origins?limit=1&limit=2", "", 400, "invalid", "limit", "at most once"},
		{"unknown policy", "POST", "/api/v1/next-visits/peek", `{"visit_type": "git", "count": 1, "policy": "random"}`, 400, "unknown_policy", "policy", "random"},
		{"count too big", "POST", "/api/v1/next-visits/grab", `{"visit_type": "git", "count": 100001}`, 400, "invalid", "count", "between 1 and 100000"},
		{"no count", "POST", "/api/v1/next-visits/grab", `{"visit_type": "git"}`, 400, "invalid", "count", "between"},
		{"negative count", "POST", "/api/v1/next-visits/peek", `{"visit_type": "git", "count": -5}`, 400, "invalid", "count", "must be between 1 and 100000, not -5"},
		{"large count", "POST", "/api/v1/next-visits/peek", `{"visit_type": "git", "count": 500000}`, 400, "invalid", "count", "must be between 1 and 100000, not 500000"},
		{"bad now", "POST", "/api/v1/next-visits/peek", `{"visit_type": "git", "count": 1, "now": "yesterday"}`, 400, "invalid", "now",
			`want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "yesterday"`},
		{"bad cooldown", "POST", "/api/v1/next-visits/grab", `{"visit_type": "git", "count": 1, "cooldowns": {"absolute": "soon"}}`, 400, "invalid", "cooldowns.absolute", "soon"},
		{"stats without url", "GET", "/api/v1/visit-stats?visit_type=git", "", 400, "invalid", "url", "missing"},
		{"stats bad type", "GET", "/api/v1/visit-stats?visit_type=&url=https://a/b", "", 400, "invalid", "visit_type", "not a visit type"},
		{"statuses not an array", "POST", "/api/v1/visit-statuses", `{}`, 400, "invalid", "", "want an array"},
		{"status bad date", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z"},
			{"origin": "https://a/b", "visit_type": "git", "status": "full", "date": "yesterday"}]`, 400, "invalid", "[1].date",
			`want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "yesterday"`},
		{"status in the future", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "full", "date": "2999-01-01T00:00:00Z"}]`,
			400, "invalid", "[0].date", "2999-01-01T00:00:00Z is in the future"},
		{"status short snapshot", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "snapshot": "00"}]`,
			400, "invalid", "[0].snapshot", `want a snapshot id of 40 hex digits (20 bytes), got "00"`},
		{"status key given twice", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "full", "status": "failed", "date": "2026-01-02T03:04:05Z"}]`,
			400, "invalid", "[0].status", "given twice"},
		{"status invalid UTF-8", "POST", "/api/v1/visit-statuses", "[{\"origin\": \"https://e.org/\xff\xfe\", \"visit_type\": \"git\", \"status\": \"full\", \"date\": \"2026-01-02T03:04:05Z\"}]",
			400, "invalid", "[0].origin", "not valid UTF-8"},
		{"status unknown field", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "full", "date": "2026-01-02T03:04:05Z", "x": 1}]`,
			400, "invalid", "[0].x", "unknown field"},
		{"status bad status", "POST", "/api/v1/visit-statuses", `[{"origin": "https://a/b", "visit_type": "git", "status": "done", "date": "2026-01-02T03:04:05Z"}]`,
			400, "invalid", "[0].status", "not one of"},
		{"task type missing backend", "POST", "/api/v1/task-types", `{"type": "load-hg"}`, 400, "invalid", "backend_name", "missing"},
		{"task type bad duration", "POST", "/api/v1/task-types", `{"type": "load-hg", "backend_name": "x", "min_interval": "often"}`, 400, "invalid", "min_interval", "often"},
		{"lister without name", "POST", "/api/v1/listers", `{"instance_name": "x"}`, 400, "invalid", "name", "missing"},
		{"lister bad id", "GET", "/api/v1/listers?id=x", "", 400, "invalid", "id", `want a UUID such as 0190a4e2-7c1f-7b3e-9d2a-5f6e7d8c9b0a, got "x"`},
		{"metrics bad lister", "GET", "/api/v1/scheduler-metrics?lister_id=x", "", 400, "invalid", "lister_id", `want a UUID such as 0190a4e2-7c1f-7b3e-9d2a-5f6e7d8c9b0a, got "x"`},
		{"refresh wrong type", "POST", "/api/v1/scheduler-metrics/refresh", `{"lister_id": 3}`, 400, "invalid", "lister_id", ""},
		{"wrong method", "DELETE", "/api/v1/task-types", "", 405, "method_not_allowed", "", "method not allowed (allowed: GET, HEAD, POST)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			h.fails(c.method, c.path, c.body, c.status, c.code, c.field, c.inText)
		})
	}
	h.t = t
	// Nothing was written by the failed requests.
	require.Empty(t, h.json("GET", "/api/v1/listed-origins?enabled=any", "", 200)["origins"])
	tts, err := h.st.TaskTypeList(context.Background())
	require.NoError(t, err)
	require.Len(t, tts, 1)
	stats, err := h.st.VisitStatsGet(context.Background(), []revisit.OriginKey{{URL: "https://a/b", VisitType: "git"}})
	require.NoError(t, err)
	require.Empty(t, stats)
}

func TestAuthScopes(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t, config.Token{Name: "reader", Token: readToken, Scope: "read"},
		config.Token{Name: "writer", Token: writeToken, Scope: "write"})
	h.fails("GET", "/api/v1/task-types", "", 401, "unauthorized", "", "missing bearer token")
	h.token = "wrong-token-0123456789"
	h.fails("GET", "/api/v1/task-types", "", 401, "unauthorized", "", "unknown bearer token")
	h.fails("GET", "/metrics", "", 401, "unauthorized", "", "")
	h.token = readToken
	h.json("GET", "/api/v1/task-types", "", 200)
	h.json("POST", "/api/v1/next-visits/peek", `{"visit_type": "git", "count": 1}`, 200)
	h.fails("POST", "/api/v1/task-types", gitType, 403, "forbidden", "", "read-only")
	h.fails("POST", "/api/v1/queues/q/lease", `{"worker": "w"}`, 403, "forbidden", "", "read-only")
	h.token = writeToken
	h.json("POST", "/api/v1/task-types", gitType, 201)
	for _, scheme := range []string{"bearer", "BEARER", "Bearer"} {
		req, err := http.NewRequest("GET", h.srv.URL+"/api/v1/task-types", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", scheme+" "+readToken)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, "the scheme %q names Bearer: schemes are case-insensitive", scheme)
	}
	h.token = ""
	h.json("GET", "/healthz", "", 200)
	h.json("GET", "/readyz", "", 200)
	h.json("GET", "/api/v1/openapi.json", "", 200)
}

// TestOpenAPI checks that the document describes every route and that
// every documented route answers (not "no route", not 405).
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	h.seed()
	doc := h.json("GET", "/api/v1/openapi.json", "", 200)
	require.Equal(t, "3.0.3", doc["openapi"])
	paths := doc["paths"].(map[string]any)
	documented := 0
	for _, rt := range h.api.Routes() {
		item, ok := paths[rt.Path].(map[string]any)
		require.True(t, ok, "%s is not documented", rt.Path)
		op, ok := item[strings.ToLower(rt.Method)].(map[string]any)
		require.True(t, ok, "%s %s is not documented", rt.Method, rt.Path)
		require.NotEmpty(t, op["summary"])
		require.Equal(t, string(rt.Scope), op["x-scope"])
	}
	for path, item := range paths {
		for method := range item.(map[string]any) {
			documented++
			concrete := strings.NewReplacer("{type}", "load-git", "{visit_type}", "git", "{queue}", "q", "{id}", "x").Replace(path)
			body := ""
			if method != "get" {
				body = "{}"
			}
			status, data := h.do(strings.ToUpper(method), concrete, body)
			require.NotEqual(t, http.StatusMethodNotAllowed, status, "%s %s", method, path)
			require.False(t, status == 404 && bytes.Contains(data, []byte("no route")), "%s %s: %s", method, path, data)
			require.Less(t, status, 500, "%s %s: %s", method, path, data)
		}
	}
	require.Equal(t, len(h.api.Routes()), documented)
	status, data := h.do("GET", "/api/v1/nothing", "")
	require.Equal(t, 404, status)
	require.Contains(t, string(data), "no route")
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/api/v1/task-types", "GET, HEAD, POST"},
		{"PUT", "/api/v1/task-types/load-git", "GET, HEAD"},
		{"GET", "/api/v1/next-visits/grab", "POST"},
		{"GET", "/api/v1/queues/q/lease", "POST"},
		{"POST", "/healthz", "GET, HEAD"},
	} {
		req, err := http.NewRequest(c.method, h.srv.URL+c.path, strings.NewReader(`{}`))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body api.ErrorBody
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", c.method, c.path)
		require.Equal(t, c.allow, resp.Header.Get("Allow"), "%s %s", c.method, c.path)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.EqualValues(t, "method_not_allowed", body.Error.Code)
		require.Contains(t, body.Error.Message, c.method+" "+c.path+": method not allowed (allowed: "+c.allow+")")
	}
	req, err := http.NewRequest("DELETE", h.srv.URL+"/api/v1/nothing", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "an unknown path is still 404")
	require.Empty(t, resp.Header.Get("Allow"))
	require.Equal(t, http.StatusMethodNotAllowed, api.Status("method_not_allowed"))
}

// /queues shares one measure a second between requests, then measures
// again.
func TestQueuesShareOneMeasureASecond(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h := newDataHarnessAt(t, clock)
	id := h.seed()
	h.json("POST", "/api/v1/listed-origins", `{"origins": [{"lister_id": "`+id+`", "url": "https://github.com/a/b", "visit_type": "git"}]}`, 200)
	sent := func() float64 {
		qs := h.json("GET", "/api/v1/queues", "", 200)["queues"].([]any)
		require.Len(t, qs, 1)
		return qs[0].(map[string]any)["pending"].(float64)
	}
	require.Zero(t, sent())
	_, err := h.st.VisitsDispatch(context.Background(), revisit.DispatchParams{Owner: "test",
		Grab: revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst}})
	require.NoError(t, err)
	require.Zero(t, sent(), "within the second, the shared measure")
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	require.Equal(t, 1.0, sent(), "after it, a new measure")
}

// slowCount is a store whose count of the visits in flight takes a while,
// as on a large backlog.
type slowCount struct {
	store.Store
	took  time.Duration
	calls atomic.Int32
}

func (s *slowCount) VisitsCount(ctx context.Context) ([]revisit.VisitCounts, error) {
	s.calls.Add(1)
	time.Sleep(s.took)
	return s.Store.VisitsCount(ctx)
}

// queuesHarness serves the API over st, a store wrapping a data harness's
// store, at a clock the test moves; one git origin is listed.
type queuesHarness struct {
	t     *testing.T
	h     *dataHarness
	srv   *httptest.Server
	later func(time.Duration)
	// hc gives up after 5 s, so that a request that waits too long fails
	// the test instead of hanging it.
	hc *http.Client
}

func newQueuesHarness(t *testing.T, wrap func(store.Store) store.Store) *queuesHarness {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	h := newDataHarnessAt(t, clock)
	srv := httptest.NewServer(api.New(api.Config{Store: wrap(h.st), Metrics: prometheus.NewRegistry(), Clock: clock}))
	t.Cleanup(srv.Close)
	id := h.seed()
	h.json("POST", "/api/v1/listed-origins", `{"origins": [{"lister_id": "`+id+`", "url": "https://github.com/a/b", "visit_type": "git"}]}`, 200)
	return &queuesHarness{t: t, h: h, srv: srv, hc: &http.Client{Timeout: 5 * time.Second},
		later: func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }}
}

// pending returns the pending visits /queues reports for git.
func (q *queuesHarness) pending() (float64, error) {
	resp, err := q.hc.Get(q.srv.URL + "/api/v1/queues")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var qr api.QueuesResponse
	if err := json.NewDecoder(resp.Body).Decode(&qr); err != nil {
		return 0, err
	}
	if len(qr.Queues) != 1 {
		return 0, fmt.Errorf("%d queues, want 1", len(qr.Queues))
	}
	return float64(qr.Queues[0].Pending), nil
}

// requirePending checks the pending visits /queues reports for git.
func (q *queuesHarness) requirePending(want float64, msg string) {
	q.t.Helper()
	n, err := q.pending()
	require.NoError(q.t, err)
	require.Equal(q.t, want, n, msg)
}

// dispatch records one visit of the git origin pending.
func (q *queuesHarness) dispatch() {
	_, err := q.h.st.VisitsDispatch(context.Background(), revisit.DispatchParams{Owner: "test",
		Grab: revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst}})
	require.NoError(q.t, err)
}

// A count that takes long serves for ten times as long: polling /queues
// every second never keeps the database counting most of the time.
func TestQueuesCountAtMostATenthOfTheTime(t *testing.T) {
	t.Parallel()
	var st *slowCount
	q := newQueuesHarness(t, func(s store.Store) store.Store {
		st = &slowCount{Store: s, took: 150 * time.Millisecond}
		return st
	})
	q.requirePending(0, "first measure")
	q.dispatch()
	q.later(time.Second)
	q.requirePending(0, "a second later: the queues measured again, the count of 150 ms kept")
	require.Equal(t, int32(1), st.calls.Load())
	q.later(4 * time.Second)
	q.requirePending(1, "five seconds later, counted again")
	require.Equal(t, int32(2), st.calls.Load())
}

// gatedTaskTypes is a store whose task type list, once armed, waits for
// release: a measure of the queues that is slow to get its answer.
type gatedTaskTypes struct {
	store.Store
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *gatedTaskTypes) TaskTypeList(ctx context.Context) ([]revisit.TaskType, error) {
	if s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
	}
	return s.Store.TaskTypeList(ctx)
}

// While one request measures the queues again, the others get the last
// measure at once instead of waiting for it.
func TestQueuesServeTheLastMeasureWhileOneIsTaken(t *testing.T) {
	t.Parallel()
	var st *gatedTaskTypes
	q := newQueuesHarness(t, func(s store.Store) store.Store {
		st = &gatedTaskTypes{Store: s, entered: make(chan struct{}), release: make(chan struct{})}
		return st
	})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(st.release) }) }
	t.Cleanup(release) // before the server's close, which waits for the measuring request
	q.requirePending(0, "first measure")
	q.dispatch()
	q.later(time.Minute) // past the measure, and past the count's reuse

	st.armed.Store(true)
	measured := make(chan float64, 1)
	go func() {
		n, err := q.pending()
		if err != nil {
			t.Error(err)
		}
		measured <- n
	}()
	<-st.entered
	q.requirePending(0, "while the measure waits: the last one, at once")
	release()
	require.Equal(t, 1.0, <-measured, "the measuring request gets its own measure")
	q.requirePending(1, "then everyone does")
}

// Year 1 is a date like another: recorded, it is answered as given, on
// both stores.
func TestYearOneIsADate(t *testing.T) {
	t.Parallel()
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		h := newDataHarnessOn(t, st, time.Now)
		id := h.seed()
		h.json("POST", "/api/v1/listed-origins", `{"origins": [{"lister_id": "`+id+`", "url": "https://a/old", "visit_type": "git", `+
			`"last_update": "0001-01-01T00:00:00Z"}]}`, 200)
		page := h.json("GET", "/api/v1/listed-origins?lister_id="+id, "", 200)
		var found bool
		for _, o := range page["origins"].([]any) {
			if o := o.(map[string]any); o["url"] == "https://a/old" {
				found = true
				require.Equal(t, "0001-01-01T00:00:00Z", o["last_update"])
			}
		}
		require.True(t, found)
	})
}

// A batch body of many tiny elements is refused at the first element past
// MaxBatch, at a memory cost of a few times its size. Not parallel: it
// measures the process's allocations.
func TestManyTinyElementsCostBoundedMemory(t *testing.T) {
	h := newDataHarness(t)
	n := (api.MaxBatchBodyBytes - 2) / 3
	body := "[" + strings.Repeat("{},", n-1) + "{}]"
	for _, c := range []struct{ path, body, field string }{
		{"/api/v1/visit-statuses", body, ""},
		{"/api/v1/listed-origins", `{"origins": [` + strings.Repeat("{},", n-10) + "{}]}", "origins"},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		status, answer := h.do("POST", c.path, c.body)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s, %d bytes: %d MB allocated", c.path, len(c.body), allocated>>20)
		require.Equal(t, http.StatusBadRequest, status, "%s", answer)
		require.Contains(t, string(answer), "more than 10000 elements, at most 10000 in one request")
		require.Less(t, allocated, uint64(4*len(c.body)+64<<20), "memory of a small multiple of the body")
	}
}
