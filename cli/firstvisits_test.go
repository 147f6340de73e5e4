package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// listingFinished sets the last listing of a lister an hour before testNow,
// and, when prefix is not empty, its first-visits queue prefix.
func (h *harness) listingFinished(name, instance, prefix string) {
	h.t.Helper()
	st := h.store()
	defer st.Close()
	ctx := context.Background()
	l, err := st.ListerGet(ctx, name, instance)
	require.NoError(h.t, err)
	finished := testNow.Add(-time.Hour)
	l.LastListingFinishedAt = &finished
	if prefix != "" {
		l.FirstVisitsQueuePrefix = &prefix
	}
	_, err = st.ListerUpdate(ctx, l)
	require.NoError(h.t, err)
}

// giteaOrigins records n git origins and one hg origin of the lister
// gitea/g.example.
func giteaOrigins(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"url": "https://g.example/r%d", "visit_type": "git", "lister_name": "gitea", "lister_instance_name": "g.example"}`+"\n", i)
	}
	b.WriteString(`{"url": "https://g.example/hg", "visit_type": "hg", "lister_name": "gitea", "lister_instance_name": "g.example"}` + "\n")
	return b.String()
}

func TestAddForgeNowRegisterLister(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		require.Contains(t, h.fails(ExitError, "add-forge-now", "register-lister", "gitea", "url=https://g.example/api/v1/"),
			"no task type list-gitea (add it with revisit task-type add or register)")
		require.Contains(t, h.fails(ExitUsage, "add-forge-now", "register-lister"), "want arguments LISTER_NAME [KEY=VALUE...], got none")
		h.ok("task-type", "add", "list-gitea", "--backend-name", "swh.lister.gitea.tasks.IncrementalGiteaLister")
		require.Contains(t, h.fails(ExitUsage, "add-forge-now", "register-lister", "gitea", "oops"), `"oops" is not KEY=VALUE`)
		require.Empty(t, h.jsonList("task", "list"), "nothing created by the failures")

		task := h.jsonObject("add-forge-now", "register-lister", "gitea", "url=https://g.example/api/v1/", "page_size=50")
		require.Equal(t, "list-gitea", task["type"])
		require.Equal(t, "oneshot", task["policy"])
		require.Equal(t, "high", task["priority"])
		require.Equal(t, testNow.Format(time.RFC3339), task["next_run"])
		require.Equal(t, map[string]any{"url": "https://g.example/api/v1/", "page_size": "50"}, task["kwargs"],
			"values are strings")
		require.Len(t, h.jsonList("task", "list", "--priority", "high"), 1)
	})
}

func TestAddForgeNowScheduleFirstVisits(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("task-type", "add", "load-git", "--backend-name", gitTask)
		h.ok("origin", "record", h.file("o.jsonl", giteaOrigins(2)))
		h.listingFinished("gitea", "g.example", "")

		require.Contains(t, h.fails(ExitError, "add-forge-now", "schedule-first-visits", "--visit-type", "git",
			"--visit-type", "hg", "--visit-type", "svn", "--lister", "gitea/g.example"),
			"no task type load-hg, load-svn (add it with revisit task-type add or register); nothing sent")
		require.Contains(t, h.fails(ExitUsage, "add-forge-now", "schedule-first-visits", "--visit-type", "git"), "--lister: name the lister")
		require.Contains(t, h.fails(ExitUsage, "add-forge-now", "schedule-first-visits", "--lister", "gitea/g.example"),
			"--visit-type: name at least one visit type")
		require.Contains(t, h.fails(ExitUsage, "add-forge-now", "schedule-first-visits", "--visit-type", "Git!",
			"--lister", "gitea/g.example"), `--visit-type: "Git!" is not a visit type`)
		require.Contains(t, h.fails(ExitError, "add-forge-now", "schedule-first-visits", "--visit-type", "git",
			"--lister", "gitea/elsewhere"), "no lister gitea/elsewhere")
		require.Empty(t, h.inFlight())

		h.ok("task-type", "add", "load-hg", "--backend-name", "swh.loader.mercurial.tasks.LoadMercurial")
		rows := h.jsonList("add-forge-now", "schedule-first-visits", "--visit-type", "git", "--visit-type", "hg",
			"--lister", "gitea/g.example")
		require.Equal(t, []map[string]any{
			{"visit_type": "git", "queue": "add_forge_now:" + gitTask, "slots": 1000.0, "sent": 2.0, "failed": 0.0},
			{"visit_type": "hg", "queue": "add_forge_now:swh.loader.mercurial.tasks.LoadMercurial", "slots": 1000.0,
				"sent": 1.0, "failed": 0.0},
		}, rows)
		require.ElementsMatch(t, []string{"https://g.example/r0", "https://g.example/r1"}, urlsOf(h.queued("add_forge_now:"+gitTask)))
		require.Empty(t, h.queued(gitTask), "not the visit type's own queue")

		rows = h.jsonList("add-forge-now", "schedule-first-visits", "--visit-type", "git", "--lister", "gitea/g.example",
			"--queue-prefix", "elsewhere")
		require.EqualValues(t, 0, rows[0]["sent"], "every origin is scheduled since the listing")
		require.Equal(t, "elsewhere:"+gitTask, rows[0]["queue"])
	})
}

func TestFirstVisitsRun(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("task-type", "add", "load-git", "--backend-name", gitTask)
		h.ok("origin", "record", h.file("o.jsonl", giteaOrigins(2)+originLines(2, "git")))
		h.listingFinished("gitea", "g.example", "add_forge_now")
		h.listingFinished("gitlab", "example.org", "") // no prefix: left alone

		require.Contains(t, h.fails(ExitUsage, "first-visits", "run", "--interval", "0s"), "--interval: must be positive")
		rows := h.jsonList("first-visits", "run", "--once")
		require.Equal(t, []map[string]any{
			{"lister": "gitea/g.example", "visit_type": "git", "queue": "add_forge_now:" + gitTask, "slots": 1000.0,
				"sent": 2.0, "failed": 0.0, "skipped": nil, "first_visits_scheduled_at": nil},
			{"lister": "gitea/g.example", "visit_type": "hg", "queue": nil, "slots": 0.0,
				"sent": 0.0, "failed": 0.0, "skipped": "no task type load-hg", "first_visits_scheduled_at": nil},
		}, rows, "the hg origin cannot be sent: the lister stays due")
		require.ElementsMatch(t, []string{"https://g.example/r0", "https://g.example/r1"}, urlsOf(h.queued("add_forge_now:"+gitTask)))

		h.ok("task-type", "add", "load-hg", "--backend-name", "swh.loader.mercurial.tasks.LoadMercurial")
		rows = h.jsonList("first-visits", "run", "--once")
		require.Len(t, rows, 2)
		require.EqualValues(t, 0, rows[0]["sent"])
		require.EqualValues(t, 1, rows[1]["sent"])
		require.Equal(t, testNow.Format(time.RFC3339), rows[1]["first_visits_scheduled_at"], "now every first visit is scheduled")
		require.Empty(t, h.jsonList("first-visits", "run", "--once"), "and the lister is left alone")
		require.Empty(t, h.queued(gitTask), "nothing went to the visit types' own queues")
	})
}

// first-visits run, without --once, and the firstvisits role of serve
// pass over the listers until interrupted.
func TestFirstVisitsRunUntilInterrupted(t *testing.T) {
	for name, args := range map[string][]string{
		"run":   {"first-visits", "run", "--interval", "50ms"},
		"serve": {"serve", "--roles", "firstvisits", "--listen", "127.0.0.1:0"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			firstVisitsUntilInterrupted(t, args)
		})
	}
}

func firstVisitsUntilInterrupted(t *testing.T, args []string) {
	h := newHarness(t)
	h.ok("task-type", "add", "load-git", "--backend-name", gitTask)
	h.ok("origin", "record", h.file("o.jsonl", originLines(2, "git")))
	h.listingFinished("gitlab", "example.org", "afn")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	env := Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Clock: func() time.Time { return testNow }}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, env, append([]string{"--store", h.url}, args...))
	}()
	require.Eventually(t, func() bool {
		st := h.store()
		defer st.Close()
		l, err := st.ListerGet(context.Background(), "gitlab", "example.org")
		return err == nil && l.FirstVisitsScheduledAt != nil
	}, 15*time.Second, 50*time.Millisecond, "stderr: %s", &errb)
	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(20 * time.Second):
		t.Fatal("it did not stop")
	}
	require.Len(t, h.queued("afn:"+gitTask), 2)
	require.Contains(t, errb.String(), "first visits sent")
}

func TestCheckIngested(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("origin", "record", h.file("o.jsonl", originLines(4, "git")+
			`{"url": "https://example.org/off", "visit_type": "git", "lister_name": "gitlab", "lister_instance_name": "example.org", "enabled": false}`+"\n"))
		status := func(i int, s string) string {
			snapshot := ""
			if s == "full" {
				snapshot = `, "snapshot": "0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b"`
			}
			return fmt.Sprintf(`{"origin": "https://example.org/r%d", "visit_type": "git", "status": %q, "date": "2025-02-01T00:00:00Z"%s}`,
				i, s, snapshot)
		}
		h.ok("visit-status", "ingest", h.file("s.jsonl", strings.Join([]string{status(0, "full"), status(1, "failed"),
			status(2, "not_found")}, "\n")+"\n"))

		row := map[string]any{"checked_at": testNow.Format(time.RFC3339), "lister": "gitlab/example.org", "enabled": 4.0,
			"successful": 1.0, "failed": 1.0, "not_found": 1.0, "never_visited": 1.0, "success_ratio": 1.0 / 3}
		require.Equal(t, []map[string]any{row}, h.jsonList("origin", "check-ingested", "gitlab", "example.org"))
		h.ok("origin", "check-ingested", "gitlab", "example.org", "--minimum-success", "0.3")
		r := h.run("origin", "check-ingested", "gitlab", "example.org", "--minimum-success", "0.5")
		require.Equal(t, ExitError, r.code)
		require.Contains(t, r.stdout, "gitlab/example.org", "the counts are printed")
		require.Equal(t, "revisit: success ratio 0.3333 of gitlab/example.org is below the minimum 0.5\n", r.stderr)
		require.Contains(t, h.fails(ExitUsage, "origin", "check-ingested", "gitlab", "example.org", "--minimum-success", "2"),
			"--minimum-success: must be between 0 and 1, not 2")
		require.Contains(t, h.fails(ExitError, "origin", "check-ingested", "gitlab", ""), "no lister gitlab")
		require.Contains(t, h.fails(ExitUsage, "origin", "check-ingested", "gitlab"), "want 2 argument(s) LISTER_NAME INSTANCE_NAME")

		// --watch counts again until no origin is left never visited.
		var out, errb bytes.Buffer
		env := Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Clock: func() time.Time { return testNow }}
		done := make(chan int, 1)
		go func() {
			done <- Run(context.Background(), env, []string{"--store", h.url, "--format", "json", "origin", "check-ingested",
				"gitlab", "example.org", "--watch", "--watch-period", "30ms", "--minimum-success", "0.5"})
		}()
		time.Sleep(100 * time.Millisecond)
		h.ok("visit-status", "ingest", h.file("s3.jsonl", status(3, "full")+"\n"))
		select {
		case code := <-done:
			require.Equal(t, ExitOK, code, errb.String())
		case <-time.After(15 * time.Second):
			t.Fatal("check-ingested --watch did not end")
		}
		var rows []map[string]any
		require.NoError(t, json.Unmarshal(out.Bytes(), &rows), out.String())
		require.GreaterOrEqual(t, len(rows), 2)
		require.EqualValues(t, 1, rows[0]["never_visited"])
		last := rows[len(rows)-1]
		require.EqualValues(t, 0, last["never_visited"])
		require.EqualValues(t, 0.5, last["success_ratio"])

		empty := h.file("e.jsonl", `{"url": "https://e.example/x", "visit_type": "git", "lister_name": "empty"}`+"\n")
		h.ok("origin", "record", empty)
		r = h.run("origin", "check-ingested", "empty", "", "--minimum-success", "0")
		require.Equal(t, ExitError, r.code)
		require.Contains(t, r.stderr, "no origin of empty was visited yet")
		require.Contains(t, h.ok("origin", "check-ingested", "empty", ""), "SUCCESS_RATIO")
	})
}

func TestServeRolesNameFirstVisits(t *testing.T) {
	t.Parallel()
	msg := newHarness(t).fails(ExitUsage, "serve", "--roles", "firstvisits,cook")
	require.Contains(t, msg, `"cook" is not one of api, orchestrator, listener, runner, firstvisits`)
}
