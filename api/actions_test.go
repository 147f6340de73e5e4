package api_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
)

// logBuffer collects the lines a logger writes, for the test to read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the lines logged that contain every one of parts.
func (b *logBuffer) lines(parts ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		found := l != ""
		for _, p := range parts {
			found = found && strings.Contains(l, p)
		}
		if found {
			out = append(out, l)
		}
	}
	return out
}

// actionHarness is the API over a fresh SQLite store with load-git, a
// lister and two of its git origins (r0, r1), the reader's and the
// writer's tokens, requests carrying the writer's, and its log.
type actionHarness struct {
	*dataHarness
	log    *logBuffer
	lister string
}

func newActionHarness(t *testing.T, tokens ...config.Token) *actionHarness {
	t.Helper()
	log := &logBuffer{}
	h := &actionHarness{log: log, dataHarness: newDataHarnessWith(t, teststore.SQLite(t), func(c *api.Config) {
		c.Tokens = tokens
		c.Logger = slog.New(slog.NewTextHandler(log, nil))
	})}
	if len(tokens) > 0 {
		h.token = writeToken
	}
	h.lister = h.seed()
	h.json("POST", "/api/v1/listed-origins", fmt.Sprintf(`{"origins": [
		{"lister_id": %q, "url": "https://github.com/o/r0", "visit_type": "git"},
		{"lister_id": %q, "url": "https://github.com/o/r1", "visit_type": "git"}]}`, h.lister, h.lister), 200)
	return h
}

// writerTokens are a reader's and a writer's tokens.
var writerTokens = []config.Token{{Name: "reader", Token: readToken, Scope: "read"},
	{Name: "writer", Token: writeToken, Scope: "write"}}

// counts returns the git visits in flight, by state.
func (h *actionHarness) counts() revisit.VisitCounts {
	h.t.Helper()
	cs, err := h.st.VisitsCount(context.Background())
	require.NoError(h.t, err)
	for _, c := range cs {
		if c.VisitType == "git" {
			return c
		}
	}
	return revisit.VisitCounts{VisitType: "git"}
}

// audited requires one log line of the action on target by who.
func (h *actionHarness) audited(action, target, by string) {
	h.t.Helper()
	require.Len(h.t, h.log.lines("level=INFO", `msg="console action"`, "action="+action, "target="+target, "by="+by), 1,
		"%s", h.log.lines("console action"))
}

func TestVisitNowSendsTheOriginAtOnce(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	ctx := context.Background()
	const r0 = `"url": "https://github.com/o/r0", "visit_type": "git"`
	v := h.json("POST", "/api/v1/visits", `{`+r0+`}`, 200)
	require.Equal(t, queue, v["queue"])
	require.Equal(t, h.lister, v["lister_id"])
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 1}, h.counts(), "in flight, its message confirmed")
	depth, err := h.st.QueueDepth(ctx, queue, time.Now())
	require.NoError(t, err)
	require.EqualValues(t, 1, depth, "in the visit type's queue")
	visits, err := h.st.VisitsGet(ctx, []string{v["id"].(string)})
	require.NoError(t, err)
	require.Len(t, visits, 1)
	require.Equal(t, revisit.OperatorChoice, visits[0].Policy)
	h.audited("visit_now", `"https://github.com/o/r0 (git)"`, "writer")

	h.fails("POST", "/api/v1/visits", `{`+r0+`}`, 409, "conflict", "", "force: true sends another")
	h.fails("POST", "/api/v1/visits", `{`+r0+`}`, 409, "conflict", "", "sent since ")
	h.json("POST", "/api/v1/visits", `{`+r0+`, "force": true}`, 200)
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 2}, h.counts())

	other := uuid.NewString()
	h.json("POST", "/api/v1/visits", `{"url": "https://github.com/o/r1", "visit_type": "git", "lister_id": "`+h.lister+`"}`, 200)
	h.fails("POST", "/api/v1/visits", `{"url": "https://github.com/o/r1", "visit_type": "git", "lister_id": "`+other+`"}`,
		404, "not_found", "", "lister "+other+" lists no origin")
	h.fails("POST", "/api/v1/visits", `{"url": "https://github.com/o/nope", "visit_type": "git"}`, 404, "not_found", "",
		"no listed origin")
	h.fails("POST", "/api/v1/visits", `{"url": "https://github.com/o/r0", "visit_type": "hg"}`, 404, "not_found", "",
		"no task type load-hg")
	h.fails("POST", "/api/v1/visits", `{"visit_type": "git"}`, 400, "invalid", "url", "missing")
	h.fails("POST", "/api/v1/visits", `{"url": "r0", "visit_type": "git"}`, 404, "not_found", "", "no listed origin r0")
	h.fails("POST", "/api/v1/visits", `{"url": "https://github.com/o/r0", "visit_type": "Git!"}`, 400, "invalid", "visit_type", "")
	h.fails("POST", "/api/v1/visits", `{`+r0+`, "lister_id": "x"}`, 400, "invalid", "lister_id", "")
	h.fails("POST", "/api/v1/visits", `{`+r0+`, "force": "yes"}`, 400, "invalid", "force", "boolean")
	h.fails("POST", "/api/v1/visits", `{`+r0+`, "priority": 9}`, 400, "invalid", "priority", "unknown field")
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Sent: 3}, h.counts(), "refused requests send nothing")
}

func TestDisableAndEnableAnOrigin(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	enabled := func() bool {
		t.Helper()
		page, err := h.st.ListedOriginsGet(context.Background(), revisit.ListedOriginFilter{
			URLs: []string{"https://github.com/o/r0"}, VisitType: "git", Enabled: revisit.AnyEnabled})
		require.NoError(t, err)
		require.Len(t, page.Origins, 1)
		return page.Origins[0].Enabled
	}
	const r0 = `{"url": "https://github.com/o/r0", "visit_type": "git"}`
	out := h.json("POST", "/api/v1/listed-origins/disable", r0, 200)
	require.EqualValues(t, 1, out["changed"])
	require.Equal(t, false, out["enabled"])
	require.False(t, enabled())
	h.audited("disable_origin", `"https://github.com/o/r0 (git)"`, "writer")
	require.EqualValues(t, 0, h.json("POST", "/api/v1/listed-origins/disable", r0, 200)["changed"])

	out = h.json("POST", "/api/v1/listed-origins/enable",
		`{"url": "https://github.com/o/r0", "visit_type": "git", "lister_id": "`+h.lister+`"}`, 200)
	require.EqualValues(t, 1, out["changed"])
	require.Equal(t, h.lister, out["lister_id"])
	require.True(t, enabled())

	h.fails("POST", "/api/v1/listed-origins/disable", `{"url": "https://github.com/o/nope", "visit_type": "git"}`,
		404, "not_found", "", "no listed origin")
	h.fails("POST", "/api/v1/listed-origins/enable", `{"visit_type": "git"}`, 400, "invalid", "url", "missing")
	h.fails("POST", "/api/v1/listed-origins/enable", `{"url": "https://github.com/o/r0"}`, 400, "invalid", "visit_type", "")
	h.fails("POST", "/api/v1/listed-origins/enable", ``, 400, "invalid", "", "missing JSON body")
}

func TestPauseResumeAndRequeueLost(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	ctx := context.Background()
	paused := func() []revisit.Pause {
		t.Helper()
		ps, err := h.st.VisitTypePauseList(ctx)
		require.NoError(t, err)
		return ps
	}
	out := h.json("POST", "/api/v1/visit-types/git/pause", "", 200)
	require.Equal(t, "git", out["visit_type"])
	require.Equal(t, "writer", out["paused"].(map[string]any)["by"])
	ps := paused()
	require.Len(t, ps, 1)
	require.Equal(t, "writer", ps[0].By)
	h.audited("pause", "git", "writer")
	dash := h.json("GET", "/api/v1/dashboard", "", 200)["visit_types"].([]any)[0].(map[string]any)
	require.Equal(t, "writer", dash["paused"].(map[string]any)["by"], "the overview says so")

	out = h.json("POST", "/api/v1/visit-types/git/resume", "", 200)
	require.Nil(t, out["paused"])
	require.Equal(t, true, out["was_paused"])
	require.Empty(t, paused())
	h.audited("resume", "git", "writer")
	require.Equal(t, false, h.json("POST", "/api/v1/visit-types/git/resume", "", 200)["was_paused"])
	dash = h.json("GET", "/api/v1/dashboard", "", 200)["visit_types"].([]any)[0].(map[string]any)
	require.Nil(t, dash["paused"])

	// Two visits sent, without a result: requeued, they are lost, and
	// their origins offered again.
	vs, err := h.st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{VisitType: "git",
		Count: 10, Policy: revisit.OldestScheduledFirst}})
	require.NoError(t, err)
	require.Len(t, vs, 2)
	_, err = h.st.VisitsSent(ctx, []string{vs[0].ID, vs[1].ID}, time.Now().Add(-time.Minute))
	require.NoError(t, err)
	out = h.json("POST", "/api/v1/visit-types/git/requeue-lost", "", 200)
	require.EqualValues(t, 2, out["lost"])
	require.Equal(t, revisit.VisitCounts{VisitType: "git", Lost: 2}, h.counts())
	again, err := h.st.GrabNextVisits(ctx, revisit.GrabParams{VisitType: "git", Count: 10,
		Policy: revisit.OldestScheduledFirst, DryRun: true})
	require.NoError(t, err)
	require.Len(t, again, 2, "offered again")
	h.audited("requeue_lost", "git", "writer")

	for _, action := range []string{"pause", "resume", "requeue-lost"} {
		h.fails("POST", "/api/v1/visit-types/hg/"+action, "", 404, "not_found", "", "no task type load-hg")
		h.fails("POST", "/api/v1/visit-types/Git%21/"+action, "", 400, "invalid", "visit_type", "not a visit type")
	}
}

func TestDisableAndRespawnATask(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	ctx := context.Background()
	require.NoError(t, h.st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-gitlab", BackendName: "swh.lister.gitlab.tasks.Lister"}))
	tasks, err := h.st.TasksCreate(ctx, []revisit.NewTask{{Type: "list-gitlab", NextRun: time.Now().Add(time.Hour),
		Policy: revisit.TaskOneshot, Arguments: revisit.TaskArguments{Args: []any{}, Kwargs: map[string]any{}}}})
	require.NoError(t, err)
	id := fmt.Sprint(tasks[0].ID)
	status := func() revisit.Task {
		t.Helper()
		page, err := h.st.TasksGet(ctx, revisit.TaskFilter{IDs: []int64{tasks[0].ID}})
		require.NoError(t, err)
		return page.Tasks[0]
	}

	h.fails("POST", "/api/v1/tasks/"+id+"/respawn", "", 409, "conflict", "", "is next_run_not_scheduled")
	out := h.json("POST", "/api/v1/tasks/"+id+"/run-now", "", 200)
	require.Equal(t, "next_run_not_scheduled", out["status"])
	require.WithinDuration(t, time.Now(), status().NextRun, 10*time.Second, "due now, an hour early")
	h.audited("run_task_now", `"task `+id+`"`, "writer")
	out = h.json("POST", "/api/v1/tasks/"+id+"/disable", "", 200)
	require.Equal(t, "disabled", out["status"])
	require.Equal(t, revisit.TaskDisabled, status().Status)
	h.audited("disable_task", `"task `+id+`"`, "writer")
	h.fails("POST", "/api/v1/tasks/"+id+"/run-now", "", 409, "conflict", "", "is disabled: respawn it instead")

	out = h.json("POST", "/api/v1/tasks/"+id+"/respawn", "", 200)
	require.Equal(t, "next_run_not_scheduled", out["status"])
	got := status()
	require.Equal(t, revisit.TaskNextRunNotScheduled, got.Status)
	require.WithinDuration(t, time.Now(), got.NextRun, 10*time.Second, "due now")
	h.audited("respawn_task", `"task `+id+`"`, "writer")

	h.fails("POST", "/api/v1/tasks/999/disable", "", 404, "not_found", "", "no task 999")
	h.fails("POST", "/api/v1/tasks/abc/respawn", "", 400, "invalid", "id", "not a task id")
	h.fails("POST", "/api/v1/tasks/0/disable", "", 400, "invalid", "id", "not a task id")
}

// actionRoutes are a request of every action of the console.
var actionRoutes = [][2]string{
	{"/api/v1/visits", `{"url": "https://github.com/o/r0", "visit_type": "git"}`},
	{"/api/v1/listed-origins/disable", `{"url": "https://github.com/o/r0", "visit_type": "git"}`},
	{"/api/v1/listed-origins/enable", `{"url": "https://github.com/o/r0", "visit_type": "git"}`},
	{"/api/v1/visit-types/git/pause", ""},
	{"/api/v1/visit-types/git/resume", ""},
	{"/api/v1/visit-types/git/requeue-lost", ""},
	{"/api/v1/tasks/1/disable", ""},
	{"/api/v1/tasks/1/respawn", ""},
	{"/api/v1/tasks/1/run-now", ""},
	{"/api/v1/scheduler-metrics/refresh", "{}"},
	{"/api/v1/queues/" + queue + "/purge", ""},
	{"/api/v1/messages/00000000-0000-4000-8000-000000000000/drop", ""},
	{"/api/v1/messages/00000000-0000-4000-8000-000000000000/requeue", ""},
}

func TestActionsNeedAWriteToken(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, writerTokens...)
	for _, rt := range actionRoutes {
		h.token = readToken
		h.fails("POST", rt[0], rt[1], 403, "forbidden", "", "token reader is read-only")
		h.token = ""
		h.fails("POST", rt[0], rt[1], 401, "unauthorized", "", "missing bearer token")
	}
	require.Empty(t, h.log.lines("console action"), "nothing done")
	h.token = readToken
	require.Empty(t, h.actions(nil).Actions, "nothing recorded")
	require.Equal(t, revisit.VisitCounts{VisitType: "git"}, h.counts())
	ps, err := h.st.VisitTypePauseList(context.Background())
	require.NoError(t, err)
	require.Empty(t, ps)
	paths := h.json("GET", "/api/v1/openapi.json", "", 200)["paths"].(map[string]any)
	for _, path := range []string{"/api/v1/visits", "/api/v1/listed-origins/disable", "/api/v1/listed-origins/enable",
		"/api/v1/visit-types/{visit_type}/pause", "/api/v1/visit-types/{visit_type}/resume",
		"/api/v1/visit-types/{visit_type}/requeue-lost", "/api/v1/tasks/{id}/disable", "/api/v1/tasks/{id}/respawn",
		"/api/v1/tasks/{id}/run-now", "/api/v1/queues/{queue}/purge", "/api/v1/messages/{id}/drop",
		"/api/v1/messages/{id}/requeue"} {
		require.Contains(t, paths, path)
		require.Equal(t, "write", paths[path].(map[string]any)["post"].(map[string]any)["x-scope"], path)
	}
}

func TestActionsWithoutTokensAreAnonymous(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t)
	h.json("POST", "/api/v1/visit-types/git/pause", "", 200)
	h.audited("pause", "git", "anonymous")
	h.json("POST", "/api/v1/scheduler-metrics/refresh", "{}", 200)
	h.audited("refresh_metrics", `"every lister"`, "anonymous")
	ps, err := h.st.VisitTypePauseList(context.Background())
	require.NoError(t, err)
	require.Equal(t, "anonymous", ps[0].By)
}

// A request whose client went away ends without an internal error: its
// cancelled read is logged at DEBUG, not ERROR.
func TestCancelledRequestIsNoInternalError(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/listed-origins", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "the request was cancelled")
	require.Empty(t, h.log.lines("level=ERROR"))
}
