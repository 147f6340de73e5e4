package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/amqp"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/internal/testkit/celerytest"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/sqlite"
	"github.com/revisit-sched/revisit/web"
)

// postJSON posts body to the server's path and decodes the answer into
// out, requiring a 200.
func postJSON(t *testing.T, base, path, body string, out any) {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}

// leased is the answer of a lease.
type leased struct {
	Messages []struct {
		ID             string         `json:"id"`
		Kwargs         map[string]any `json:"kwargs"`
		LeaseExpiresAt time.Time      `json:"lease_expires_at"`
	} `json:"messages"`
}

// pageTime writes a time as the console's pages do.
func pageTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }

// visit opens a page of the console.
func visit(t *testing.T, bctx context.Context, url string) {
	t.Helper()
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(url)))
}

// TestConsolePages runs revisit serve, has a worker lease two visits
// through the worker protocol and report one, records a generic task with
// runs, and checks what each page of the console shows, on both stores.
func TestConsolePages(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			st, err := eng.open(t, ctx)
			require.NoError(t, err)
			seed(t, ctx, st)
			s := newStack(t, ctx, st, nil)
			require.Eventually(t, func() bool { return counts(t, ctx, st).Sent == 4 }, 30*time.Second, 50*time.Millisecond,
				"the orchestrator queues the four origins")

			var got leased
			postJSON(t, s.srv.URL, "/api/v1/queues/"+queue+"/lease", `{"worker": "worker-7", "max": 2, "lease_seconds": 600}`, &got)
			require.Len(t, got.Messages, 2)
			var stored struct{ Stored bool }
			postJSON(t, s.srv.URL, "/api/v1/messages/"+got.Messages[0].ID+"/result", `{"worker": "worker-7", "status": "eventful"}`, &stored)
			require.True(t, stored.Stored)
			held := got.Messages[1]
			heldURL := held.Kwargs["url"].(string)

			require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "list-gitlab",
				BackendName: "swh.lister.gitlab.tasks.IncrementalGitLabLister", DefaultInterval: 24 * time.Hour}))
			next := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			tasks, err := st.TasksCreate(ctx, []revisit.NewTask{{Type: "list-gitlab", NextRun: next, Policy: revisit.TaskRecurring,
				Arguments: revisit.TaskArguments{Kwargs: map[string]any{"url": "https://gitlab.com"}}}})
			require.NoError(t, err)
			_, err = st.TaskRunsSchedule(ctx, []revisit.NewTaskRun{{TaskID: tasks[0].ID, BackendID: "run-1", Scheduled: next}})
			require.NoError(t, err)
			_, err = st.TaskRunEnd(ctx, revisit.TaskRunEnd{BackendID: "run-1", Status: revisit.RunEventful, Ended: next.Add(90 * time.Second)})
			require.NoError(t, err)

			bctx := browser.New(t)
			shots := "console-" + eng.name + "-"

			problems := browser.Errors(t, bctx)
			visit(t, bctx, s.srv.URL+"/queues")
			q := `#queues [data-queue="` + queue + `"] `
			waitText(t, bctx, q+`[data-field="waiting"]`, "2")
			waitText(t, bctx, q+`[data-field="leased"]`, "1")
			waitText(t, bctx, q+`[data-field="visit_type"]`, "git")
			screenshot(t, bctx, shots+"queues.png")

			visit(t, bctx, s.srv.URL+"/queues?queue="+queue+"&state=leased")
			m := `#message-list [data-message="` + held.ID + `"] `
			waitText(t, bctx, m+`[data-field="worker"]`, "worker-7")
			waitText(t, bctx, m+`[data-field="url"]`, heldURL)
			waitText(t, bctx, m+`[data-field="visit_type"]`, "git")
			waitText(t, bctx, m+`[data-field="attempt"]`, "1")
			waitPrefix(t, bctx, m+`[data-field="lease_expires_at"]`, pageTime(held.LeaseExpiresAt)+" (in ")
			require.Equal(t, 1, evaluate[int](t, bctx, `document.querySelectorAll("#message-list [data-message]").length`))
			screenshot(t, bctx, shots+"queue-leased.png")

			visit(t, bctx, s.srv.URL+"/queues?queue="+queue)
			waitText(t, bctx, `#message-list tbody tr:nth-child(2) [data-field="attempt"]`, "not leased yet")
			require.Equal(t, 2, evaluate[int](t, bctx, `document.querySelectorAll("#message-list [data-message]").length`),
				"two messages wait")

			visit(t, bctx, s.srv.URL+"/workers")
			w := `#workers [data-worker="worker-7"] `
			waitText(t, bctx, w+`[data-field="leases_held"]`, "1")
			waitPrefix(t, bctx, w+`[data-field="next_lease_expiry"]`, pageTime(held.LeaseExpiresAt))
			waitText(t, bctx, w+`[data-field="results"]`, "successful, eventful: 1")
			waitText(t, bctx, w+`[data-field="queues"]`, queue)
			waitMatch(t, bctx, w+`[data-field="last_result"]`, "… ago", func(got string) bool { return strings.HasSuffix(got, " ago") })
			waitPrefix(t, bctx, `#workers-note`, "Workers seen by this server since ")
			screenshot(t, bctx, shots+"workers.png")

			visit(t, bctx, s.srv.URL+"/tasks?type=list-gitlab")
			row := fmt.Sprintf(`#tasks [data-task="%d"] `, tasks[0].ID)
			waitText(t, bctx, row+`[data-field="arguments"]`, `url="https://gitlab.com"`)
			waitText(t, bctx, row+`[data-field="policy"]`, "recurring")
			waitText(t, bctx, `#task-types [data-task-type="load-git"] [data-field="max_queue_length"]`, "100")
			screenshot(t, bctx, shots+"tasks.png")
			require.NoError(t, chromedp.Do(bctx, chromedp.Click(row+`[data-field="id"] a`)))
			waitText(t, bctx, `#runs [data-field="status"]`, "eventful")
			waitText(t, bctx, `#runs [data-field="duration"]`, "90 s")
			waitText(t, bctx, `#runs [data-field="ended"]`, "2026-03-01 12:01:30 UTC")
			waitText(t, bctx, `#task [data-field="kwargs"]`, `{"url":"https://gitlab.com"}`)
			screenshot(t, bctx, shots+"task.png")

			// The task page acts: disable, then respawn, each confirmed;
			// only the button that applies shows.
			taskStatus := func() revisit.TaskStatus {
				page, err := st.TasksGet(ctx, revisit.TaskFilter{Limit: 10, Type: "list-gitlab"})
				require.NoError(t, err)
				return page.Tasks[0].Status
			}
			require.False(t, evaluate[bool](t, bctx, `document.getElementById("disable").hidden`))
			require.True(t, evaluate[bool](t, bctx, `document.getElementById("respawn").hidden`))
			click(t, bctx, "#disable")
			answer(t, bctx, fmt.Sprintf("Disable task %d?", tasks[0].ID), "confirm")
			waitText(t, bctx, "#action-message", fmt.Sprintf("Task %d disabled.", tasks[0].ID))
			waitText(t, bctx, `#task [data-field="status"]`, "disabled")
			require.Equal(t, revisit.TaskDisabled, taskStatus())
			require.True(t, evaluate[bool](t, bctx, `document.getElementById("disable").hidden`))
			require.True(t, evaluate[bool](t, bctx, `document.getElementById("run-now").hidden`))
			click(t, bctx, "#respawn")
			answer(t, bctx, fmt.Sprintf("Respawn task %d?", tasks[0].ID), "confirm")
			waitPrefix(t, bctx, "#action-message", fmt.Sprintf("Task %d respawned", tasks[0].ID))
			require.Eventually(t, func() bool { return taskStatus() != revisit.TaskDisabled }, 10*time.Second, 50*time.Millisecond)
			waitText(t, bctx, `#task [data-field="status"]`, "next run not scheduled")
			require.False(t, evaluate[bool](t, bctx, `document.getElementById("disable").hidden`))
			click(t, bctx, "#run-now")
			answer(t, bctx, fmt.Sprintf("Run task %d now?", tasks[0].ID), "confirm")
			waitText(t, bctx, "#action-message", fmt.Sprintf("Task %d due now.", tasks[0].ID))

			visit(t, bctx, s.srv.URL+"/listers")
			l := `#listers [data-lister="github/github"] `
			waitText(t, bctx, l+`[data-field="origins_known"]`, "4")
			waitText(t, bctx, l+`[data-field="origins_never_visited"]`, "4")
			waitText(t, bctx, l+`[data-field="first_visits"]`, "with the other visits")
			require.Equal(t, "/origins?lister=github%2Fgithub",
				evaluate[string](t, bctx, `document.querySelector('#listers [data-lister="github/github"] a').getAttribute("href")`))
			screenshot(t, bctx, shots+"listers.png")
			require.Empty(t, problems(), "the pages log no error")
		})
	}
}

// TestQueuesPageRabbitMQ: with RabbitMQ, the queues page shows each
// queue's messages waiting and its consumers, and a queue no worker
// declared yet.
func TestQueuesPageRabbitMQ(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q := celerytest.Queue(t)
	b := celerytest.OpenBroker(t, amqp.Config{})
	require.NoError(t, b.DeclareQueue(ctx, q))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "web.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: q}))
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-hg", BackendName: q + ".undeclared"}))
	var msgs []celery.Message
	for i := range 3 {
		m, err := celery.NewMessage(celery.Task{Name: q, ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			Origin: "test@host", Kwargs: map[string]any{"url": fmt.Sprintf("https://a/%d", i)}})
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	_, err = b.Publish(ctx, q, msgs)
	require.NoError(t, err)
	srv := httptest.NewServer(web.Handler(api.New(api.Config{Store: st, Broker: b}), ""))
	t.Cleanup(srv.Close)

	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)
	visit(t, bctx, srv.URL+"/queues")
	waitText(t, bctx, `#queues [data-queue="`+q+`"] [data-field="waiting"]`, "3")
	waitText(t, bctx, `#queues [data-queue="`+q+`"] [data-field="consumers"]`, "0")
	waitText(t, bctx, `#queues [data-queue="`+q+`.undeclared"] [data-field="waiting"]`, "0 (not declared by a worker yet)")
	waitPrefix(t, bctx, "#broker-note", "RabbitMQ: messages waiting")
	require.Equal(t, []string{"queue", "task types", "visit type", "waiting (messages)", "consumers (workers)", ""},
		evaluate[[]string](t, bctx, `[...document.querySelectorAll("#queues th")].map((th) => th.textContent)`))
	screenshot(t, bctx, "console-queues-rabbitmq.png")
	require.Zero(t, evaluate[int](t, bctx, `document.querySelectorAll('[data-queue="`+q+`.undeclared"] button').length`),
		"no purge for a queue that does not exist")

	click(t, bctx, `#queues [data-queue="`+q+`"] [data-action="purge"]`)
	answer(t, bctx, "Purge "+q+"? Every message waiting in it is deleted; those a worker holds now stay. "+
		"revisit does not know which visits they carried", "confirm")
	waitText(t, bctx, "#action-message", "3 messages purged from "+q+"; their visits are lost at their timeout.")
	waitText(t, bctx, `#queues [data-queue="`+q+`"] [data-field="waiting"]`, "0")
	n, err := b.Depth(ctx, q)
	require.NoError(t, err)
	require.Zero(t, n, "RabbitMQ purged the queue")
	require.Empty(t, problems(), "the page logs no error")
}
