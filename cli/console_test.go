package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/store"
)

// The API tokens of consoleServer: a reader's and a writer's.
const (
	testReadToken  = "read-token-0123456789"
	testWriteToken = "write-token-0123456789"
)

// gitQueue is load-git's queue in withGitType's store.
const gitQueue = "swh.loader.git.tasks.UpdateGitRepository"

// consoleWorld is a harness whose store has load-git and three origins
// of the lister github: r0 and r1 of visit type git, r1 of hg too; and a
// revisit serve API over the same store, at testNow, with the embedded
// broker and a history.
type consoleWorld struct {
	*harness
	st      store.Store
	broker  *embedded.Broker
	history *history.History
	server  string
}

func newConsoleWorld(t *testing.T) *consoleWorld {
	t.Helper()
	h := withGitType(t)
	h.environ = []string{"USER=tester"}
	lines := ""
	for _, o := range []string{"r0 git", "r1 git", "r1 hg"} {
		name, vt, _ := strings.Cut(o, " ")
		lines += fmt.Sprintf(`{"url": "https://github.com/o/%s", "visit_type": %q, "lister_name": "github"}`+"\n", name, vt)
	}
	r := h.runIn(lines, "origin", "record", "-")
	require.Equal(t, 0, r.code, r.stderr)
	w := &consoleWorld{harness: h, st: h.store()}
	clock := func() time.Time { return testNow }
	w.broker = embedded.New(w.st, embedded.Config{Clock: clock})
	w.history = history.New(history.Config{Clock: clock})
	srv := httptest.NewServer(api.New(api.Config{Store: w.st, Broker: w.broker, Queues: w.broker, History: w.history,
		Clock: clock, Tokens: []config.Token{{Name: "reader", Token: testReadToken, Scope: "read"},
			{Name: "writer", Token: testWriteToken, Scope: "write"}}}))
	t.Cleanup(func() {
		srv.Close()
		w.broker.Close()
		w.st.Close()
	})
	w.server = srv.URL
	return w
}

// remote are the global flags that drive the world's server with token.
func (w *consoleWorld) remote(token string, args ...string) []string {
	return append([]string{"--server", w.server, "--token", token}, args...)
}

// visitStates returns the states of the visits of the origin that the
// store keeps.
func (w *consoleWorld) visitStates(url, visitType string) []string {
	w.t.Helper()
	vs, err := w.st.VisitsOfOrigin(context.Background(), revisit.OriginKey{URL: url, VisitType: visitType})
	require.NoError(w.t, err)
	states := make([]string, len(vs))
	for i, v := range vs {
		states[i] = string(v.State)
	}
	return states
}

// enabled returns whether the origin's listed rows are enabled.
func (w *consoleWorld) enabled(url, visitType string) []bool {
	w.t.Helper()
	page, err := w.st.ListedOriginsGet(context.Background(), revisit.ListedOriginFilter{URLs: []string{url},
		VisitType: visitType, Enabled: revisit.AnyEnabled})
	require.NoError(w.t, err)
	out := make([]bool, len(page.Origins))
	for i, o := range page.Origins {
		out[i] = o.Enabled
	}
	return out
}

func TestOriginSearch(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	all := w.jsonList("origin", "search", "https://github.com/o/")
	require.Len(t, all, 3)
	require.Equal(t, "https://github.com/o/r0", all[0]["url"])
	require.Equal(t, "github", all[0]["lister"])
	require.Equal(t, true, all[0]["enabled"])
	require.Nil(t, all[0]["last_visit"])
	require.Equal(t, all, w.jsonList(w.remote(testReadToken, "origin", "search", "https://github.com/o/")...),
		"the same rows through the server")

	table := w.ok("origin", "search", "https://github.com/o/r1")
	require.Equal(t, table, w.ok(w.remote(testReadToken, "origin", "search", "https://github.com/o/r1")...))
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"URL", "VISIT_TYPE", "LISTER", "ENABLED", "LAST_UPDATE", "LAST_VISIT", "LAST_VISIT_STATUS"},
		strings.Fields(lines[0]))
	require.Equal(t, []string{"https://github.com/o/r1", "hg", "github", "true", "-", "-", "-"}, strings.Fields(lines[2]))

	for _, c := range []struct {
		args []string
		want []string // the visit types of r1 found
	}{
		{[]string{"--contains", "o/r1"}, []string{"git", "hg"}},
		{[]string{"https://github.com/", "--visit-type", "hg"}, []string{"hg"}},
		{[]string{"https://github.com/o/r1", "--lister", "github", "--visit-type", "git"}, []string{"git"}},
	} {
		for _, flags := range [][]string{nil, w.remote(testReadToken)} {
			var got []string
			for _, o := range w.jsonList(append(append(flags, "origin", "search"), c.args...)...) {
				require.Equal(t, "https://github.com/o/r1", o["url"])
				got = append(got, o["visit_type"].(string))
			}
			require.Equal(t, c.want, got, "%v %v", flags, c.args)
		}
	}
	w.ok("origin", "disable", "https://github.com/o/r0", "git")
	require.Len(t, w.jsonList("origin", "search", "https://github.com/", "--enabled", "false"), 1)
	require.Len(t, w.jsonList(w.remote(testReadToken, "origin", "search", "https://github.com/", "--enabled", "true")...), 2)
	require.Empty(t, w.jsonList("origin", "search", "https://gitlab.com/"))

	// A page at a time.
	for _, flags := range [][]string{nil, w.remote(testReadToken)} {
		r := w.run(append(flags, "origin", "search", "https://github.com/", "--limit", "2", "--format", "json")...)
		require.Equal(t, 0, r.code, r.stderr)
		var page []map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
		require.Len(t, page, 2)
		_, token, ok := strings.Cut(strings.TrimSpace(r.stderr), "more matches may follow: --page-token ")
		require.True(t, ok, r.stderr)
		rest := w.jsonList(append(flags, "origin", "search", "https://github.com/", "--limit", "2", "--page-token", token)...)
		require.Len(t, rest, 1)
		require.Equal(t, all[2]["url"], rest[0]["url"])
		require.Len(t, w.jsonList(append(flags, "origin", "search", "https://github.com/", "--limit", "1", "--all")...), 3)
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"x", "--prefix", "--contains"}, "give --prefix or --contains, not both"},
		{[]string{"--contains", "ab"}, `TEXT: a substring search needs at least 3 characters, got "ab"`},
		{[]string{"https://a b"}, "TEXT: "},
		{[]string{"x", "--enabled", "maybe"}, `--enabled: "maybe" is not one of true, false, any`},
		{[]string{"x", "--visit-type", "Git!"}, `--visit-type: "Git!" is not a visit type`},
		{[]string{"x", "--limit", "0"}, "--limit: must be between 1 and 10000, not 0"},
		{[]string{"x", "--lister", "github", "--lister-id", "x"}, "give --lister or --lister-id, not both"},
		{[]string{}, "want 1 argument(s) TEXT, got 0"},
	} {
		require.Contains(t, w.fails(ExitUsage, append([]string{"origin", "search"}, c.args...)...), c.msg)
	}
	require.Contains(t, w.fails(ExitUsage, "origin", "search", "x", "--page-token", "garbage"), "--page-token: ")
	require.Contains(t, w.fails(ExitUsage, w.remote(testReadToken, "origin", "search", "x", "--page-token", "garbage")...),
		"--page-token: ")
	require.Contains(t, w.fails(ExitError, "origin", "search", "x", "--lister", "gitlab"), "no lister gitlab")
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "origin", "search", "x", "--lister", "gitlab")...),
		"no lister gitlab")
	// The API's URL names the server as well as its root; a call without
	// token says which flag gives it.
	require.Contains(t, w.ok("--server", w.server+"/api/v1/", "--token", testReadToken, "origin", "list"), "https://github.com/o/r1")
	require.Contains(t, w.fails(ExitError, "--server", w.server, "origin", "list"),
		"(give the server's token with --token)")
}

func TestOriginShow(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	r0 := "https://github.com/o/r0"
	text := w.ok("origin", "show", r0)
	require.Equal(t, text, w.ok(w.remote(testReadToken, "origin", "show", r0)...), "the same through the server")
	for _, want := range []string{
		"url:         https://github.com/o/r0\nvisit_type:  git\nas_of:       2025-03-01T12:00:00Z\neligible:    true\n",
		"\nlisted by:\nLISTER  ENABLED  LAST_UPDATE  FIRST_SEEN",
		"oldest_scheduled_first,origins_without_last_update",
		"\nvisit stats:\n  none: never scheduled nor visited\n",
		"\nrecent results:\n  none kept yet\n",
		"\nnext visit:\n  No next position yet",
		"\ncooldowns:\nCOOLDOWN   LENGTH  HOLDS  UNTIL  WHY\nabsolute   12h     false  -      Passes: never scheduled.\n",
		"\nin flight:\n  no visit\n",
	} {
		require.Contains(t, text, want)
	}

	w.ok("origin", "visit-now", r0, "git")
	text = w.ok("origin", "show", r0, "--visit-type", "git")
	require.Contains(t, text, "eligible:    false")
	require.Contains(t, text, "last_scheduled:        2025-03-01T12:00:00Z")
	require.Contains(t, text, "absolute   12h     true   2025-03-02T00:00:00Z  Scheduled at 2025-03-01T12:00:00Z")
	require.Regexp(t, `\nin flight:\nID +STATE +POLICY +SCHEDULED_AT +SENT_AT +OWNER\n\S+ +sent +operator +2025-03-01T12:00:00Z`, text)

	w.ok("visit-status", "ingest", w.file("results.jsonl",
		`{"origin": "`+r0+`", "visit_type": "git", "status": "failed", "date": "2025-03-01T11:00:00Z"}`+"\n"+
			`{"origin": "`+r0+`", "visit_type": "git", "status": "full", "date": "2025-03-01T11:30:00Z", "snapshot": "`+
			strings.Repeat("0a", 20)+`"}`+"\n"))
	text = w.ok("origin", "show", r0)
	require.Equal(t, text, w.ok(w.remote(testReadToken, "origin", "show", r0)...), "the same through the server")
	require.Contains(t, text, "\nrecent results:\n"+
		"DATE                  STATUS      EVENTFUL\n"+
		"2025-03-01T11:30:00Z  successful  true\n"+
		"2025-03-01T11:00:00Z  failed      false\n\nnext visit:")

	detail := w.jsonObject("origin", "show", r0)
	require.Equal(t, detail, w.jsonObject(w.remote(testReadToken, "origin", "show", r0)...))
	want, err := api.LoadOriginDetail(context.Background(), w.st, revisit.OriginKey{URL: r0, VisitType: "git"}, testNow, api.DefaultCooldowns())
	require.NoError(t, err)
	data, err := json.Marshal(want)
	require.NoError(t, err)
	var wantJSON map[string]any
	require.NoError(t, json.Unmarshal(data, &wantJSON))
	require.Equal(t, wantJSON, detail, "the API's document")

	r1 := "https://github.com/o/r1"
	require.Contains(t, w.ok("origin", "show", r1, "--visit-type", "hg"), "visit_type:  hg")
	require.Contains(t, w.fails(ExitUsage, "origin", "show", r1),
		"--visit-type: https://github.com/o/r1 is listed with the visit types git, hg; choose one")
	require.Contains(t, w.fails(ExitError, "origin", "show", "https://github.com/o/none"),
		"no listed origin https://github.com/o/none (an origin known only by its visits needs --visit-type)")
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "origin", "show", "https://github.com/o/none", "--visit-type", "git")...),
		"no origin https://github.com/o/none of visit type git")
	require.Contains(t, w.fails(ExitUsage, "origin", "show", r0, "--format", "csv"), "--format: origin show prints a table or json, not csv")
	require.Contains(t, w.fails(ExitUsage, "origin", "show", "a\x00b"), "URL: ")
	require.Contains(t, w.fails(ExitUsage, "origin", "show", r0, "--visit-type", "Git!"), `--visit-type: "Git!" is not a visit type`)
}

func TestOriginVisitNowDisableEnable(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	r0, r1 := "https://github.com/o/r0", "https://github.com/o/r1"

	out := w.ok("origin", "visit-now", r0, "git")
	require.Regexp(t, `^sent visit \S+ of https://github.com/o/r0 \(git\) to queue `+gitQueue+"\n$", out)
	require.Equal(t, []string{"sent"}, w.visitStates(r0, "git"))
	depth, err := w.st.QueueDepth(context.Background(), gitQueue, time.Now())
	require.NoError(t, err)
	require.EqualValues(t, 1, depth, "its message waits in the queue")
	require.Contains(t, w.fails(ExitError, "origin", "visit-now", r0, "git"),
		"a visit of https://github.com/o/r0 (git) is in flight: sent since 2025-03-01T12:00:00Z; --force sends another")
	sent := w.jsonObject("origin", "visit-now", r0, "git", "--force", "--lister", "github")
	require.Equal(t, gitQueue, sent["queue"])
	require.Equal(t, "2025-03-01T12:00:00Z", sent["scheduled_at"])
	require.Equal(t, []string{"sent", "sent"}, w.visitStates(r0, "git"))

	sent = w.jsonObject(w.remote(testWriteToken, "origin", "visit-now", r1, "git")...)
	require.Equal(t, r1, sent["url"])
	require.Equal(t, []string{"sent"}, w.visitStates(r1, "git"))
	require.Equal(t, []string{r0, r0, r1}, urlsOf(w.queued(gitQueue)))
	require.Contains(t, w.fails(ExitError, w.remote(testWriteToken, "origin", "visit-now", r1, "git")...),
		"is in flight: sent since 2025-03-01T12:00:00Z; --force sends another")
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "origin", "visit-now", r1, "git", "--force")...),
		"token reader is read-only; this route needs a write token")
	require.Equal(t, []string{"sent"}, w.visitStates(r1, "git"))
	require.Contains(t, w.fails(ExitError, "origin", "visit-now", r1, "hg"), "no task type load-hg")
	require.Contains(t, w.fails(ExitError, "origin", "visit-now", "https://github.com/o/none", "git"),
		"no listed origin https://github.com/o/none of visit type git")

	require.Equal(t, "disabled https://github.com/o/r1 (git): 1 listed row(s) changed\n",
		w.ok("origin", "disable", r1, "git", "--lister", "github"))
	require.Equal(t, []bool{false}, w.enabled(r1, "git"))
	require.Equal(t, []bool{true}, w.enabled(r1, "hg"), "only that visit type's row")
	require.Equal(t, "disabled https://github.com/o/r1 (git): 0 listed row(s) changed\n",
		w.ok(w.remote(testWriteToken, "origin", "disable", r1, "git")...))
	enabled := w.jsonObject(w.remote(testWriteToken, "origin", "enable", r1, "git")...)
	require.Equal(t, map[string]any{"url": r1, "visit_type": "git", "lister_id": nil, "enabled": true, "changed": 1.0}, enabled)
	require.Equal(t, []bool{true}, w.enabled(r1, "git"))
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "origin", "disable", r1, "git")...), "read-only")
	require.Contains(t, w.fails(ExitError, "origin", "enable", "https://github.com/o/none", "git"),
		"no listed origin https://github.com/o/none of visit type git")
	require.Equal(t, []bool{true}, w.enabled(r1, "git"))

	for _, cmd := range []string{"visit-now", "disable", "enable"} {
		require.Contains(t, w.fails(ExitUsage, "origin", cmd, "", "git"), `URL: missing`)
		require.Contains(t, w.fails(ExitUsage, "origin", cmd, r0, "Git!"), `VISIT_TYPE: "Git!" is not a visit type`)
		require.Contains(t, w.fails(ExitUsage, "origin", cmd, r0), "want 2 argument(s) URL VISIT_TYPE, got 1")
		require.Contains(t, w.fails(ExitError, "origin", cmd, r0, "git", "--lister", "gitlab"), "no lister gitlab")
	}
}

func TestVisitTypePauseResumeRequeueLost(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	ctx := context.Background()
	pauses := func() []revisit.Pause {
		t.Helper()
		ps, err := w.st.VisitTypePauseList(ctx)
		require.NoError(t, err)
		return ps
	}
	require.Equal(t, "git paused by cli:tester at 2025-03-01T12:00:00Z\n", w.ok("visit-type", "pause", "git"))
	require.Equal(t, []revisit.Pause{{VisitType: "git", By: "cli:tester", At: testNow}}, pauses())
	require.Equal(t, "git paused by cli:tester at 2025-03-01T12:00:00Z\n",
		w.ok(w.remote(testWriteToken, "visit-type", "pause", "git")...), "paused already: who paused it first")
	require.Equal(t, "git resumed\n", w.ok(w.remote(testWriteToken, "visit-type", "resume", "git")...))
	require.Empty(t, pauses())
	require.Equal(t, map[string]any{"visit_type": "git", "was_paused": false},
		w.jsonObject("visit-type", "resume", "git"))
	require.Equal(t, map[string]any{"visit_type": "git", "paused_by": "writer", "paused_at": "2025-03-01T12:00:00Z"},
		w.jsonObject(w.remote(testWriteToken, "visit-type", "pause", "git")...))
	require.Equal(t, "writer", pauses()[0].By)
	require.Equal(t, "git resumed\n", w.ok("visit-type", "resume", "git"))
	require.Empty(t, pauses())

	// Two visits sent a minute ago without a result, each requeued in
	// turn: locally, then through the server.
	for _, flags := range [][]string{nil, w.remote(testWriteToken)} {
		vs, err := w.st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "test", Grab: revisit.GrabParams{VisitType: "git",
			Count: 1, Policy: revisit.OldestScheduledFirst, Cooldowns: &revisit.Cooldowns{}, Now: testNow.Add(-time.Hour)}})
		require.NoError(t, err)
		require.Len(t, vs, 1)
		_, err = w.st.VisitsSent(ctx, []string{vs[0].ID}, testNow.Add(-time.Minute))
		require.NoError(t, err)
		require.Equal(t, "declared 1 visit(s) of git lost; their origins are offered again\n",
			w.ok(append(flags, "visit-type", "requeue-lost", "git")...))
		states := w.visitStates(vs[0].Origin.URL, "git")
		require.NotEmpty(t, states)
		for _, s := range states {
			require.Equal(t, "lost", s)
		}
	}
	require.Equal(t, map[string]any{"visit_type": "git", "lost": 0.0}, w.jsonObject("visit-type", "requeue-lost", "git"))

	for _, action := range []string{"pause", "resume", "requeue-lost"} {
		require.Contains(t, w.fails(ExitError, "visit-type", action, "hg"), "no task type load-hg")
		require.Contains(t, w.fails(ExitError, w.remote(testWriteToken, "visit-type", action, "hg")...), "no task type load-hg")
		require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "visit-type", action, "git")...),
			"token reader is read-only; this route needs a write token")
		require.Contains(t, w.fails(ExitUsage, "visit-type", action, "Git!"), `VISIT_TYPE: "Git!" is not a visit type`)
		require.Contains(t, w.fails(ExitUsage, "visit-type", action), "want 1 argument(s) VISIT_TYPE, got 0")
	}
	require.Empty(t, pauses())
}

func TestTaskDisableAndRespawnThroughTheServer(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	for i := range 3 {
		w.ok("task", "add", "load-git", fmt.Sprintf("n=%d", i))
	}
	status := func() []any {
		t.Helper()
		var out []any
		for _, task := range w.jsonList("task", "list") {
			out = append(out, task["status"])
		}
		return out
	}
	require.Equal(t, "disabled 2 task(s)\n", w.ok("task", "disable", "1", "2"))
	require.Equal(t, []any{"disabled", "disabled", "next_run_not_scheduled"}, status())
	require.Contains(t, w.fails(ExitError, "task", "disable", "3", "99"), "task 99 not found")
	require.Equal(t, []any{"disabled", "disabled", "next_run_not_scheduled"}, status(), "nothing changed")

	require.Equal(t, map[string]any{"disabled": 1.0}, w.jsonObject(w.remote(testWriteToken, "task", "disable", "3")...))
	require.Equal(t, []any{"disabled", "disabled", "disabled"}, status())
	require.Equal(t, "respawned 2 task(s)\n", w.ok(w.remote(testWriteToken, "task", "respawn", "1", "2")...))
	require.Equal(t, []any{"next_run_not_scheduled", "next_run_not_scheduled", "disabled"}, status())
	require.Contains(t, w.fails(ExitError, w.remote(testWriteToken, "task", "respawn", "3", "1")...),
		"task 1 is next_run_not_scheduled: only a disabled or completed task is respawned (the 1 task(s) before it were changed)")
	require.Equal(t, []any{"next_run_not_scheduled", "next_run_not_scheduled", "next_run_not_scheduled"}, status())
	require.Equal(t, "2 task(s) due now\n", w.ok("task", "run-now", "1", "2"))
	require.Equal(t, "1 task(s) due now\n", w.ok(w.remote(testWriteToken, "task", "run-now", "3")...))
	w.ok("task", "disable", "3")
	require.Contains(t, w.fails(ExitError, "task", "run-now", "1", "3"), "task 3 is disabled: respawn it instead")
	require.Contains(t, w.fails(ExitError, w.remote(testWriteToken, "task", "run-now", "3")...), "respawn it instead")
	require.Contains(t, w.fails(ExitError, "task", "run-now", "99"), "no task 99")
	w.ok("task", "respawn", "3")
	require.Contains(t, w.fails(ExitError, w.remote(testWriteToken, "task", "disable", "99")...), "no task 99")
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "task", "disable", "1")...), "read-only")
	require.Contains(t, w.fails(ExitError, w.remote(testReadToken, "task", "respawn", "1")...), "read-only")
	require.Contains(t, w.fails(ExitUsage, w.remote(testWriteToken, "task", "respawn", "1", "--next-run", "2025-03-02")...),
		"--next-run: a server respawns tasks due now; leave it out with --server")
	require.Contains(t, w.fails(ExitUsage, "task", "disable", "x"), `ID: "x" is not a task id`)
	require.Contains(t, w.fails(ExitUsage, "task", "disable"), "want arguments ID..., got none")
	require.Equal(t, []any{"next_run_not_scheduled", "next_run_not_scheduled", "next_run_not_scheduled"}, status())
}

func TestServerViews(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	ctx := context.Background()
	w.ok("origin", "visit-now", "https://github.com/o/r0", "git")
	w.ok("origin", "visit-now", "https://github.com/o/r1", "git")
	_, err := w.broker.Lease(ctx, embedded.LeaseParams{Queue: gitQueue, Worker: "w1", Max: 1, LeaseFor: time.Hour})
	require.NoError(t, err)

	qs := w.jsonList(w.remote(testReadToken, "queue", "list")...)
	require.Equal(t, []map[string]any{{"queue": gitQueue, "visit_type": "git", "task_types": []any{"load-git"},
		"waiting": 1.0, "leased": 1.0, "consumers": nil, "missing": false, "error": ""}}, qs)

	leased := w.jsonList(w.remote(testReadToken, "queue", "messages", gitQueue, "--state", "leased")...)
	require.Len(t, leased, 1)
	require.Equal(t, "https://github.com/o/r0", leased[0]["url"])
	require.Equal(t, "w1", leased[0]["worker"])
	require.Equal(t, 1.0, leased[0]["attempt"])
	table := w.ok(w.remote(testReadToken, "queue", "messages", gitQueue)...)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 2)
	require.Equal(t, []string{"ID", "URL", "VISIT_TYPE", "ATTEMPT", "ENQUEUED_AT", "WORKER", "LEASE_EXPIRES_AT"},
		strings.Fields(lines[0]))
	require.Equal(t, []string{"https://github.com/o/r1", "git", "0"}, strings.Fields(lines[1])[1:4])
	r := w.run(w.remote(testReadToken, "queue", "messages", gitQueue, "--state", "leased", "--limit", "1", "--format", "json")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr, "one page")

	workers := w.jsonList(w.remote(testReadToken, "worker", "list")...)
	require.Len(t, workers, 1)
	require.Equal(t, "w1", workers[0]["name"])
	require.Equal(t, false, workers[0]["seen"])
	require.Equal(t, map[string]any{gitQueue: 1.0}, workers[0]["leases_held"])

	minute := testNow.Truncate(time.Minute)
	w.history.Add(history.Key{VisitType: "git", Series: history.Scheduled, Label: "operator"}, minute.Add(-2*time.Minute), 2)
	w.history.Add(history.Key{VisitType: "git", Series: history.Results, Label: "failed"}, minute.Add(-time.Minute), 1)
	w.history.Set(history.Key{VisitType: "git", Series: history.QueueDepth}, minute.Add(-time.Minute), 5)
	hist := w.jsonList(w.remote(testReadToken, "history", "--minutes", "2")...)
	require.Equal(t, []map[string]any{
		{"visit_type": "git", "minute": "2025-03-01T11:58:00Z", "scheduled": map[string]any{"operator": 2.0},
			"scheduled_without_policy": nil, "results": nil, "lost": nil, "queue_depth": nil, "free_slots": nil,
			"grab_p95_seconds": nil, "grab_mean_seconds": nil},
		{"visit_type": "git", "minute": "2025-03-01T11:59:00Z", "scheduled": nil, "scheduled_without_policy": nil,
			"results": map[string]any{"failed": 1.0}, "lost": nil, "queue_depth": 5.0, "free_slots": nil,
			"grab_p95_seconds": nil, "grab_mean_seconds": nil},
	}, hist)
	require.Len(t, w.jsonList(w.remote(testReadToken, "history")...), 60, "an hour by default")
	// Tables write maps as the console does, not as JSON.
	table = w.ok(w.remote(testReadToken, "history", "--minutes", "2")...)
	require.Contains(t, table, "operator: 2")
	require.Contains(t, table, "failed: 1")
	require.NotContains(t, table, "{")
	require.Contains(t, w.ok(w.remote(testReadToken, "worker", "list")...), gitQueue+": 1")

	for _, c := range []struct{ args, path, what string }{
		{"queue list", "queue list", "its broker's queues"},
		{"queue messages q", "queue messages", "the messages of its embedded broker"},
		{"worker list", "worker list", "the workers it saw"},
		{"history", "history", "the history it keeps"},
	} {
		require.Contains(t, w.fails(ExitUsage, strings.Fields(c.args)...),
			"--server is required: revisit "+c.path+" asks a running revisit serve for "+c.what)
	}
	require.Contains(t, w.fails(ExitUsage, "queue", "messages", gitQueue, "--state", "done"), `--state: "done" is not waiting or leased`)
	require.Contains(t, w.fails(ExitUsage, "queue", "messages", gitQueue, "--limit", "1001"), "--limit: must be between 1 and 1000, not 1001")
	require.Contains(t, w.fails(ExitUsage, "queue", "messages", ""), "QUEUE: must not be empty")
	require.Contains(t, w.fails(ExitUsage, w.remote(testReadToken, "queue", "messages", gitQueue, "--page-token", "x")...),
		"--page-token: ")
	require.Contains(t, w.fails(ExitUsage, "history", "--minutes", "1441"), "--minutes: must be between 1 and 1440, not 1441")
	require.Contains(t, w.fails(ExitError, w.remote("wrong-token-0123456789", "worker", "list")...), "unknown bearer token")
}

// TestOriginBrowse browses git's origins on the store and through the
// server: the waiting order, the failures, the disabled, pages, and bad
// flags named.
func TestOriginBrowse(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	ctx := context.Background()
	// r1 failed a visit, then r0 was scheduled.
	failed := revisit.VisitFailed
	r0, r1 := revisit.NewVisitStats(revisit.OriginKey{URL: "https://github.com/o/r0", VisitType: "git"}),
		revisit.NewVisitStats(revisit.OriginKey{URL: "https://github.com/o/r1", VisitType: "git"})
	scheduled, visited, later := testNow.Add(-2*time.Hour), testNow.Add(-time.Hour), testNow.Add(-30*time.Minute)
	r1.LastScheduled, r1.LastVisit, r1.LastVisitStatus = &scheduled, &visited, &failed
	r0.LastScheduled = &later
	require.NoError(t, w.st.VisitStatsUpsert(ctx, []revisit.VisitStats{r0, r1}))
	urls := func(rows []map[string]any) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r["url"].(string))
		}
		return out
	}
	for _, flags := range [][]string{nil, w.remote(testReadToken)} {
		browse := func(args ...string) []map[string]any {
			t.Helper()
			return w.jsonList(append(append(flags, "origin", "browse", "git"), args...)...)
		}
		require.Equal(t, []string{"https://github.com/o/r1", "https://github.com/o/r0"}, urls(browse()), "%v: waiting longest first", flags)
		require.Equal(t, []string{"https://github.com/o/r0", "https://github.com/o/r1"}, urls(browse("--newest-first")))
		rows := browse("--failures")
		require.Equal(t, []string{"https://github.com/o/r1"}, urls(rows))
		require.Equal(t, "failed", rows[0]["last_visit_status"])
		require.Equal(t, testNow.Add(-2*time.Hour).Format(time.RFC3339), rows[0]["last_scheduled"])
		require.Equal(t, []string{"https://github.com/o/r0"}, urls(browse("--outcome", "never", "--lister", "github")))
		require.Empty(t, browse("--disabled"))
		r := w.run(append(flags, "origin", "browse", "git", "--limit", "1", "--format", "json")...)
		require.Equal(t, 0, r.code, r.stderr)
		_, token, ok := strings.Cut(strings.TrimSpace(r.stderr), "more origins may follow: --page-token ")
		require.True(t, ok, r.stderr)
		require.Equal(t, []string{"https://github.com/o/r0"}, urls(browse("--limit", "1", "--page-token", token)))
		require.Len(t, browse("--limit", "1", "--all"), 2)
	}
	w.ok("origin", "disable", "https://github.com/o/r0", "git")
	require.Equal(t, []string{"https://github.com/o/r0"}, urls(w.jsonList("origin", "browse", "git", "--disabled")))

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"Git!"}, `VISIT_TYPE: "Git!" is not a visit type`},
		{[]string{"git", "--outcome", "lost"}, `--outcome: "lost" is not one of successful, failed, not_found, never`},
		{[]string{"git", "--failures", "--outcome", "successful"}, "--outcome: the failures view holds failed and not_found origins"},
		{[]string{"git", "--limit", "0"}, "--limit: must be between 1 and 1000, not 0"},
		{[]string{"git", "--page-token", "garbage"}, "--page-token: "},
		{[]string{}, "want 1 argument(s) VISIT_TYPE, got 0"},
	} {
		require.Contains(t, w.fails(ExitUsage, append([]string{"origin", "browse"}, c.args...)...), c.msg)
	}
}
