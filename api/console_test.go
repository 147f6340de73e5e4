package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// publishTo queues visit messages of urls into the embedded broker of st
// and returns their ids.
func publishTo(t *testing.T, b *embedded.Broker, q string, urls ...string) []string {
	t.Helper()
	msgs := make([]celery.Message, len(urls))
	ids := make([]string, len(urls))
	for i, u := range urls {
		m, err := celery.NewMessage(celery.Task{Name: q, ID: uuid.NewString(), Origin: "test@host",
			Kwargs: map[string]any{"url": u}})
		require.NoError(t, err)
		msgs[i], ids[i] = m, m.Properties.CorrelationID
	}
	pubs, err := b.Publish(context.Background(), q, msgs)
	require.NoError(t, err)
	for _, p := range pubs {
		require.Equal(t, broker.Confirmed, p.Outcome)
	}
	return ids
}

// TestBrokerQueuesAndMessages: the queues' figures and the messages of a
// queue, waiting and leased, on both stores.
func TestBrokerQueuesAndMessages(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		h := newDataHarnessOn(t, st, time.Now)
		h.seed()
		b := embedded.New(st, embedded.Config{})
		defer b.Close()
		ids := publishTo(t, b, queue, "https://github.com/a/0", "https://github.com/a/1", "https://github.com/a/2")
		publishTo(t, b, "other", "https://example.org/x")
		h.json("POST", leasePath, `{"worker": "w1", "lease_seconds": 120}`, 200)

		qs := h.json("GET", "/api/v1/broker/queues", "", 200)
		require.Equal(t, "embedded", qs["broker"])
		require.Equal(t, []any{
			map[string]any{"queue": "other", "task_types": []any{}, "waiting": 1.0, "leased": 0.0, "consumers": nil},
			map[string]any{"queue": queue, "task_types": []any{"load-git"}, "visit_type": "git", "waiting": 2.0,
				"leased": 1.0, "consumers": nil},
		}, qs["queues"])

		base := "/api/v1/queues/" + queue + "/messages"
		leased := h.json("GET", base+"?state=leased", "", 200)
		require.Equal(t, "leased", leased["state"])
		msgs := leased["messages"].([]any)
		require.Len(t, msgs, 1)
		m := msgs[0].(map[string]any)
		require.Equal(t, ids[0], m["id"])
		require.Equal(t, "https://github.com/a/0", m["url"])
		require.Equal(t, "git", m["visit_type"])
		require.Equal(t, "w1", m["worker"])
		require.EqualValues(t, 1, m["attempt"])
		expiry, err := time.Parse(time.RFC3339Nano, m["lease_expires_at"].(string))
		require.NoError(t, err)
		require.WithinDuration(t, time.Now().Add(2*time.Minute), expiry, 10*time.Second)

		first := h.json("GET", base+"?limit=1", "", 200)
		require.Equal(t, "waiting", first["state"], "waiting by default")
		require.Equal(t, ids[1], first["messages"].([]any)[0].(map[string]any)["id"])
		require.Nil(t, first["messages"].([]any)[0].(map[string]any)["worker"], "never leased")
		second := h.json("GET", base+"?limit=1&page_token="+first["next_page_token"].(string), "", 200)
		require.Equal(t, ids[2], second["messages"].([]any)[0].(map[string]any)["id"])
		require.NotContains(t, second, "next_page_token", "the last page")
		require.Empty(t, h.json("GET", "/api/v1/queues/nowhere/messages", "", 200)["messages"])

		for _, c := range []struct{ query, field, msg string }{
			{"state=done", "state", `"done" is not waiting or leased`},
			{"limit=0", "limit", "between 1 and 1000"},
			{"limit=1001", "limit", "between 1 and 1000"},
			{"page_token=garbage", "page_token", "not a page token"},
			{"colour=red", "colour", "unknown query parameter"},
		} {
			h.fails("GET", base+"?"+c.query, "", http.StatusBadRequest, "invalid", c.field, c.msg)
		}
	})
}

// TestWorkers: the workers the server saw through the worker routes, with
// their leases, results and times, and a worker that leased elsewhere.
func TestWorkers(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	h.seed()
	b := embedded.New(h.st, embedded.Config{})
	defer b.Close()
	publishTo(t, b, queue, "https://github.com/a/0", "https://github.com/a/1", "https://github.com/a/2")
	before := time.Now().Add(-time.Second)

	w := h.json("GET", "/api/v1/workers", "", 200)
	require.Empty(t, w["workers"])
	require.EqualValues(t, api.MaxWorkersSeen, w["max_workers"])
	since, err := time.Parse(time.RFC3339Nano, w["since"].(string))
	require.NoError(t, err)
	require.True(t, since.Before(time.Now()))

	leased := h.json("POST", leasePath, `{"worker": "w1", "max": 2, "lease_seconds": 300}`, 200)["messages"].([]any)
	require.Len(t, leased, 2)
	id := leased[0].(map[string]any)["id"].(string)
	h.json("POST", "/api/v1/messages/"+id+"/heartbeat", `{"worker": "w1"}`, 200)
	h.json("POST", "/api/v1/messages/"+id+"/result", `{"worker": "w1", "status": "eventful"}`, 200)
	h.json("POST", "/api/v1/messages/"+id+"/result", `{"worker": "w1", "status": "failed"}`, 200) // ignored
	_, err = b.Lease(context.Background(), embedded.LeaseParams{Queue: queue, Worker: "elsewhere", Max: 1, LeaseFor: time.Minute})
	require.NoError(t, err)
	h.json("POST", leasePath, `{"worker": "idle"}`, 200)

	ws := h.json("GET", "/api/v1/workers", "", 200)["workers"].([]any)
	require.Len(t, ws, 3)
	elsewhere, idle, w1 := ws[0].(map[string]any), ws[1].(map[string]any), ws[2].(map[string]any)
	require.Equal(t, "w1", w1["name"])
	require.Equal(t, true, w1["seen"])
	require.Equal(t, []any{queue}, w1["queues"])
	require.Equal(t, map[string]any{queue: 1.0}, w1["leases_held"], "one message left of the two")
	require.Equal(t, map[string]any{"eventful": 1.0}, w1["results"], "a repeated result is not counted")
	for _, f := range []string{"last_seen", "last_lease", "last_heartbeat", "last_result", "next_lease_expiry"} {
		at, err := time.Parse(time.RFC3339Nano, w1[f].(string))
		require.NoError(t, err, f)
		require.True(t, at.After(before), "%s: %s", f, at)
	}
	require.Equal(t, "idle", idle["name"])
	require.Nil(t, idle["last_lease"], "it took nothing")
	require.NotNil(t, idle["last_seen"])
	require.Equal(t, map[string]any{}, idle["leases_held"])
	require.Equal(t, "elsewhere", elsewhere["name"])
	require.Equal(t, false, elsewhere["seen"], "it leased through another server")
	require.Equal(t, map[string]any{queue: 1.0}, elsewhere["leases_held"])
	require.Nil(t, elsewhere["last_seen"])
}

// TestWorkersForgetTheOldest: the memory of workers stays bounded.
func TestWorkersForgetTheOldest(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := newDataHarnessAt(t, func() time.Time { now = now.Add(time.Second); return now })
	h.seed()
	for i := range api.MaxWorkersSeen + 2 {
		h.json("POST", leasePath, fmt.Sprintf(`{"worker": "w%04d"}`, i), 200)
	}
	w := h.json("GET", "/api/v1/workers", "", 200)
	require.EqualValues(t, 2, w["forgotten"])
	ws := w["workers"].([]any)
	require.Len(t, ws, api.MaxWorkersSeen)
	require.Equal(t, "w0002", ws[0].(map[string]any)["name"], "the two seen longest ago are forgotten")
}

// TestTasks: the tasks, filtered and paged, and a task with its runs.
func TestTasks(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	ctx := context.Background()
	require.NoError(t, h.st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-gitlab", BackendName: "swh.lister.gitlab.tasks.IncrementalGitLabLister",
		DefaultInterval: 24 * time.Hour, NumRetries: 1}))
	require.NoError(t, h.st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-cgit", BackendName: "swh.lister.cgit.tasks.CGitListerTask"}))
	next := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tasks, err := h.st.TasksCreate(ctx, []revisit.NewTask{
		{Type: "list-gitlab", Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://gitlab.com"}},
			NextRun: next, Policy: revisit.TaskRecurring},
		{Type: "list-gitlab", Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://gitlab.org"}},
			NextRun: next, Policy: revisit.TaskOneshot, Priority: revisit.PriorityHigh},
		{Type: "list-cgit", Arguments: revisit.TaskArguments{Args: []any{"https://git.kernel.org"}},
			NextRun: next, Policy: revisit.TaskOneshot},
	})
	require.NoError(t, err)
	_, err = h.st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: tasks[0].ID, BackendID: "run-1", Scheduled: next}})
	require.NoError(t, err)
	_, err = h.st.TaskRunEnd(ctx, revisit.TaskRunEnd{BackendID: "run-1", Status: revisit.RunEventful, Ended: next.Add(time.Minute)})
	require.NoError(t, err)
	_, err = h.st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: tasks[0].ID, BackendID: "run-2", Scheduled: next.Add(time.Hour)}})
	require.NoError(t, err)

	ids := func(query string) []any {
		var out []any
		for _, task := range h.json("GET", "/api/v1/tasks?"+query, "", 200)["tasks"].([]any) {
			out = append(out, task.(map[string]any)["id"])
		}
		return out
	}
	all := ids("")
	require.Len(t, all, 3)
	require.Equal(t, all[:2], ids("type=list-gitlab"))
	require.Equal(t, all[1:2], ids("priority=high"))
	require.Equal(t, []any{all[0], all[2]}, ids("priority=none"))
	require.Equal(t, all[1:], ids("policy=oneshot"))
	require.NoError(t, h.st.TasksSetStatus(ctx, []int64{tasks[2].ID}, revisit.TaskDisabled))
	require.Equal(t, all[2:], ids("status=disabled"))
	require.Empty(t, ids("type=list-cgit&policy=recurring"))
	page := h.json("GET", "/api/v1/tasks?limit=2", "", 200)
	require.Len(t, page["tasks"], 2)
	rest := h.json("GET", "/api/v1/tasks?limit=2&page_token="+page["next_page_token"].(string), "", 200)
	require.Equal(t, all[2], rest["tasks"].([]any)[0].(map[string]any)["id"])

	detail := h.json("GET", fmt.Sprintf("/api/v1/tasks/%d", tasks[0].ID), "", 200)
	task := detail["task"].(map[string]any)
	require.Equal(t, "list-gitlab", task["type"])
	require.Equal(t, "recurring", task["policy"])
	require.Equal(t, "next_run_not_scheduled", task["status"])
	require.Equal(t, "1d", task["current_interval"])
	require.Nil(t, task["priority"])
	require.Equal(t, map[string]any{"args": []any{}, "kwargs": map[string]any{"url": "https://gitlab.com"}}, task["arguments"])
	runs := detail["runs"].([]any)
	require.Len(t, runs, 2)
	require.Equal(t, "run-2", runs[0].(map[string]any)["backend_id"], "newest first")
	require.Equal(t, "scheduled", runs[0].(map[string]any)["status"])
	require.Equal(t, "eventful", runs[1].(map[string]any)["status"])
	require.Equal(t, "2026-03-01T12:01:00Z", runs[1].(map[string]any)["ended"])

	h.fails("GET", "/api/v1/tasks/999999", "", 404, "not_found", "", "task 999999 not found")
	for _, c := range []struct{ path, field, msg string }{
		{"/api/v1/tasks/abc", "id", `want a task id (a whole number), got "abc"`},
		{"/api/v1/tasks?status=running", "status", `"running" is not`},
		{"/api/v1/tasks?policy=sometimes", "policy", `"sometimes" is not oneshot or recurring`},
		{"/api/v1/tasks?priority=urgent", "priority", `"urgent" is not high, normal, low or none`},
		{"/api/v1/tasks?limit=0", "limit", "between 1 and 10000"},
		{"/api/v1/tasks?page_token=garbage", "page_token", "not a page token"},
		{"/api/v1/tasks?kind=x", "kind", "unknown query parameter"},
	} {
		h.fails("GET", c.path, "", 400, "invalid", c.field, c.msg)
	}
}

// TestListerFirstVisits: a lister shows its first visits' queue prefix
// and when they were scheduled.
func TestListerFirstVisits(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	ctx := context.Background()
	l, err := h.st.ListerGetOrCreateForFirstVisits(ctx, "gitea", "codeberg.org", "high")
	require.NoError(t, err)
	done := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l.LastListingFinishedAt, l.FirstVisitsScheduledAt = &done, &done
	_, err = h.st.ListerUpdate(ctx, l)
	require.NoError(t, err)
	got := h.json("GET", "/api/v1/listers", "", 200)["listers"].([]any)[0].(map[string]any)
	require.Equal(t, "high", got["first_visits_queue_prefix"])
	require.Equal(t, "2026-03-01T12:00:00Z", got["first_visits_scheduled_at"])
	require.Equal(t, "2026-03-01T12:00:00Z", got["last_listing_finished_at"])
}

// TestBrokerQueuesRabbitMQ: with RabbitMQ, a queue's messages and
// consumers; a queue no worker declared yet says so.
func TestBrokerQueuesRabbitMQ(t *testing.T) {
	t.Parallel()
	q := celerytest.Queue(t)
	b := celerytest.OpenBroker(t, amqp.Config{})
	st := teststore.SQLite(t)
	ctx := context.Background()
	require.NoError(t, b.DeclareQueue(ctx, q))
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: q}))
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-hg", BackendName: q + ".undeclared"}))
	m, err := celery.NewMessage(celery.Task{Name: q, ID: uuid.NewString(), Origin: "test@host", Kwargs: map[string]any{"url": "https://a/b"}})
	require.NoError(t, err)
	pubs, err := b.Publish(ctx, q, []celery.Message{m})
	require.NoError(t, err)
	require.Equal(t, broker.Confirmed, pubs[0].Outcome)

	srv := httptest.NewServer(api.New(api.Config{Store: st, Broker: b}))
	t.Cleanup(srv.Close)
	h := &dataHarness{t: t, srv: srv, st: st}
	qs := h.json("GET", "/api/v1/broker/queues", "", 200)
	require.Equal(t, "rabbitmq", qs["broker"])
	require.Equal(t, []any{
		map[string]any{"queue": q, "task_types": []any{"load-git"}, "visit_type": "git", "waiting": 1.0, "leased": nil, "consumers": 0.0},
		map[string]any{"queue": q + ".undeclared", "task_types": []any{"load-hg"}, "visit_type": "hg", "waiting": 0.0,
			"leased": nil, "consumers": 0.0, "missing": true},
	}, qs["queues"])
	h.fails("GET", "/api/v1/queues/"+q+"/messages", "", 404, "not_found", "", "no route")
	h.fails("GET", "/api/v1/workers", "", 404, "not_found", "", "no route")
}
