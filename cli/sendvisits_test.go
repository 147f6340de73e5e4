package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
)

const gitTask = "swh.loader.git.tasks.UpdateGitRepository"

// engines runs body, in parallel subtests, with a harness on each store:
// an SQLite file, and a fresh PostgreSQL schema (migrated; without
// PostgreSQL the subtest skips, or fails under CI).
func engines(t *testing.T, body func(t *testing.T, h *harness)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		body(t, newHarness(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.url = pgtest.URL(t)
		h.ok("db", "migrate")
		body(t, h)
	})
}

// queued takes every message of an embedded queue, as a worker would, and
// returns their keyword arguments.
func (h *harness) queued(queue string) []map[string]any {
	h.t.Helper()
	st := h.store()
	defer st.Close()
	b := embedded.New(st, embedded.Config{})
	defer b.Close()
	var out []map[string]any
	for {
		tasks, err := b.Lease(context.Background(), embedded.LeaseParams{Queue: queue, Worker: "test", Max: 100,
			LeaseFor: time.Hour})
		if revisit.Code(err) == revisit.CodeNotFound {
			return out // nothing was ever published there
		}
		require.NoError(h.t, err)
		if len(tasks) == 0 {
			return out
		}
		for _, task := range tasks {
			var kw map[string]any
			require.NoError(h.t, json.Unmarshal(task.Kwargs, &kw))
			out = append(out, kw)
		}
	}
}

// inFlight counts the visits in flight, by state.
func (h *harness) inFlight() []revisit.VisitCounts {
	h.t.Helper()
	st := h.store()
	defer st.Close()
	counts, err := st.VisitsCount(context.Background())
	require.NoError(h.t, err)
	return counts
}

func urlsOf(kwargs []map[string]any) []string {
	var urls []string
	for _, kw := range kwargs {
		urls = append(urls, kw["url"].(string))
	}
	return urls
}

func TestSendToCelery(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("task-type", "add", "load-git", "--backend-name", gitTask, "--max-queue-length", "3")
		h.ok("origin", "record", h.file("o.jsonl", originLines(5, "git")))

		// Bad input sends nothing.
		require.Contains(t, h.fails(ExitError, "origin", "send-to-celery", "nope"),
			"no task type load-nope (add it with revisit task-type add or register)")
		require.Contains(t, h.fails(ExitUsage, "origin", "send-to-celery", "Git!"), `VISIT_TYPE: "Git!" is not a visit type`)
		require.Contains(t, h.fails(ExitUsage, "origin", "send-to-celery", "git", "--count", "0"),
			"--count: must be between 1 and 100000, not 0")
		require.Contains(t, h.fails(ExitUsage, "origin", "send-to-celery", "git", "--policy", "fastest_first"),
			`unknown policy "fastest_first"`)
		require.Contains(t, h.fails(ExitError, "origin", "send-to-celery", "git", "--lister", "nobody"), "no lister nobody")
		require.Contains(t, h.fails(ExitError, "origin", "send-to-celery", "git", "--tablesample", "2"), "sample: must be in (0, 1)")
		require.Contains(t, h.fails(ExitError, "origin", "send-to-celery", "git", "--policy", "first_visits_after_listing"),
			"needs a lister")
		require.Contains(t, h.fails(ExitUsage, "origin", "send-to-celery"), "want 1 argument(s) VISIT_TYPE, got 0")
		require.Empty(t, h.inFlight())

		require.Equal(t, []map[string]any{{"visit_type": "git", "queue": gitTask, "slots": 3.0, "sent": 3.0, "failed": 0.0}},
			h.jsonList("origin", "send-to-celery", "git"), "as many as the queue has free slots")
		require.Equal(t, []map[string]any{{"visit_type": "git", "queue": gitTask, "slots": 0.0, "sent": 0.0, "failed": 0.0}},
			h.jsonList("origin", "send-to-celery", "git"), "a full queue takes none")
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 3}}, h.inFlight(), "in flight, as the orchestrator's")
		kwargs := h.queued(gitTask)
		require.Len(t, kwargs, 3)
		for _, kw := range kwargs {
			require.Equal(t, "gitlab", kw["lister_name"])
			require.Equal(t, "example.org", kw["lister_instance_name"])
			require.True(t, strings.HasPrefix(kw["url"].(string), "https://example.org/r"), kw["url"])
		}

		// Another queue, a lister, a cap; the table says the same.
		out := h.ok("origin", "send-to-celery", "git", "--queue", "elsewhere", "--count", "1", "--lister", "gitlab/example.org")
		require.Equal(t, []string{"VISIT_TYPE  QUEUE      SLOTS  SENT  FAILED", "git         elsewhere  3      1     0"},
			strings.Split(strings.TrimSpace(out), "\n"))
		require.Len(t, h.queued("elsewhere"), 1)
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 4}}, h.inFlight())

		// A dry run prints what would be sent, and neither marks nor sends.
		r := h.run("origin", "send-to-celery", "git", "--dry-run", "--format", "json")
		require.Equal(t, 0, r.code, r.stderr)
		var preview []map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &preview))
		require.Len(t, preview, 1, "one origin left outside its cooldown")
		require.Equal(t, gitTask, preview[0]["task"])
		require.Equal(t, preview[0]["url"], preview[0]["kwargs"].(map[string]any)["url"])
		require.Contains(t, r.stderr, "dry run: 3 free slot(s) in "+gitTask+", 1 visit(s) would be sent; nothing sent")
		require.Empty(t, h.queued(gitTask))
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 4}}, h.inFlight())
		require.Len(t, h.jsonList("origin", "peek-next", "git", "5"), 1, "still eligible")
	})
}

func TestSendToCeleryRabbitMQ(t *testing.T) {
	t.Parallel()
	ch := rabbit(t)
	h := newHarness(t)
	queue := "revisit.test.cli." + uuid.NewString()[:8]
	_, err := ch.QueueDeclare(queue, true, false, false, false, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = ch.QueueDelete(queue, false, false, false) })
	h.ok("task-type", "add", "load-git", "--backend-name", queue)
	h.ok("origin", "record", h.file("o.jsonl", originLines(2, "git")))
	b := []string{"--broker", testBrokerURL}

	require.Contains(t, h.fails(ExitError, append(b, "origin", "send-to-celery", "git", "--queue", queue+".missing")...),
		"queue "+queue+".missing does not exist (no worker declared it yet)")
	rows := h.jsonList(append(b, "origin", "send-to-celery", "git")...)
	require.EqualValues(t, 2, rows[0]["sent"])
	msg, ok, err := ch.Get(queue, true)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, queue, msg.Headers["task"])
	var body []json.RawMessage
	require.NoError(t, json.Unmarshal(msg.Body, &body))
	var kw map[string]any
	require.NoError(t, json.Unmarshal(body[1], &kw))
	require.Equal(t, "gitlab", kw["lister_name"])
	require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 2}}, h.inFlight())
}

func TestScheduleNext(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("task-type", "add", "load-git", "--backend-name", gitTask, "--num-retries", "3")
		h.ok("origin", "record", h.file("o.jsonl", originLines(3, "git")+
			`{"url": "https://example.org/hg", "visit_type": "hg", "lister_name": "gitlab", "lister_instance_name": "example.org"}`+"\n"))

		require.Contains(t, h.fails(ExitError, "origin", "schedule-next", "hg", "1"), "no task type load-hg (add it with revisit task-type add or register)")
		require.Len(t, h.jsonList("origin", "peek-next", "hg", "1"), 1, "the origin is not marked")
		require.Contains(t, h.fails(ExitUsage, "origin", "schedule-next", "git", "0"), "COUNT: must be between 1 and 100000, not 0")

		tasks := h.jsonList("origin", "schedule-next", "git", "2", "--policy", "never_visited_oldest_update_first")
		require.Len(t, tasks, 2)
		for _, task := range tasks {
			require.Equal(t, "load-git", task["type"])
			require.Equal(t, "oneshot", task["policy"])
			require.Equal(t, "next_run_not_scheduled", task["status"])
			require.Equal(t, testNow.Format(time.RFC3339), task["next_run"])
			require.EqualValues(t, 1, task["retries_left"])
			kw := task["kwargs"].(map[string]any)
			require.Equal(t, "gitlab", kw["lister_name"])
			require.Equal(t, "example.org", kw["lister_instance_name"])
		}
		require.Equal(t, "https://example.org/r0", tasks[0]["kwargs"].(map[string]any)["url"], "the oldest update first")
		require.Len(t, h.jsonList("origin", "peek-next", "git", "5"), 1, "the two are marked scheduled")
		require.Len(t, h.jsonList("task", "list"), 2)
		require.Empty(t, h.inFlight(), "tasks are no visits in flight")
	})
}

func TestSendFromFile(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("task-type", "add", "load-git", "--backend-name", gitTask)
		good := h.file("urls.txt", "https://a.example/1\n\n# a comment\n  https://a.example/2  \r\nhttps://a.example/3\n")

		bad := h.file("bad.txt", "https://ok.example/1\n# fine\nnot a url\n")
		msg := h.fails(ExitError, "origin", "send-from-file", "load-git", bad)
		require.Contains(t, msg, "line 3: url: \"not a url\" contains white space")
		require.Contains(t, msg, "nothing sent")
		require.Contains(t, h.fails(ExitError, "origin", "send-from-file", "load-nope", good),
			"no task type load-nope (add it with revisit task-type add or register)")
		require.Contains(t, h.fails(ExitUsage, "origin", "send-from-file", "load-git", good, "--threshold", "0"),
			"--threshold: must be positive, not 0")
		require.Contains(t, h.fails(ExitUsage, "origin", "send-from-file", "load-git", good, "--waiting-period", "0s"),
			"--waiting-period: must be positive")
		require.Contains(t, h.fails(ExitUsage, "origin", "send-from-file", "load-git", good, "--limit", "0"),
			"--limit: must be positive, not 0")
		require.Empty(t, h.queued(gitTask))

		preview := h.jsonList("origin", "send-from-file", "load-git", good, "--dry-run")
		require.Equal(t, []map[string]any{
			{"queue": gitTask, "task": gitTask, "url": "https://a.example/1"},
			{"queue": gitTask, "task": gitTask, "url": "https://a.example/2"},
			{"queue": gitTask, "task": gitTask, "url": "https://a.example/3"},
		}, preview)
		require.Empty(t, h.queued(gitTask), "a dry run sends nothing")

		require.Equal(t, map[string]any{"queue": gitTask, "sent": 2.0, "failed": 0.0},
			h.jsonObject("origin", "send-from-file", "load-git", good, "--limit", "2"))
		require.Equal(t, []map[string]any{{"url": "https://a.example/1"}, {"url": "https://a.example/2"}},
			h.queued(gitTask), "the url is the only keyword argument")
		require.Empty(t, h.inFlight(), "no visit in flight")

		r := h.runIn("https://b.example/x\n", "origin", "send-from-file", "load-git", "-", "--queue", "other")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "sent 1 message(s) to other, 0 failed\n", r.stdout)
		require.Equal(t, []string{"https://b.example/x"}, urlsOf(h.queued("other")))
	})
}

// send-from-file sends while the queue holds fewer messages than the
// threshold, and waits for a worker to take some when it does not.
func TestSendFromFileThrottles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("task-type", "add", "load-git", "--backend-name", gitTask)
	var lines []string
	for i := range 5 {
		lines = append(lines, "https://a.example/"+string(rune('a'+i)))
	}
	file := h.file("urls.txt", strings.Join(lines, "\n")+"\n")

	var out, errb bytes.Buffer
	env := Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb, Clock: func() time.Time { return testNow }}
	done := make(chan int, 1)
	go func() {
		done <- Run(context.Background(), env, []string{"--store", h.url, "origin", "send-from-file", "load-git", file,
			"--threshold", "2", "--waiting-period", "20ms"})
	}()
	st := h.store()
	defer st.Close()
	b := embedded.New(st, embedded.Config{})
	defer b.Close()
	ctx := context.Background()
	var taken []string
	deadline := time.Now().Add(20 * time.Second)
	for len(taken) < 5 {
		require.True(t, time.Now().Before(deadline), "took %v; stderr: %s", taken, errb.String())
		depth, err := b.Depth(ctx, gitTask)
		require.NoError(t, err)
		require.LessOrEqual(t, depth, int64(2), "never beyond the threshold")
		if depth < 2 && len(taken)+int(depth) < 5 {
			time.Sleep(30 * time.Millisecond) // let the command fill the queue
			continue
		}
		tasks, err := b.Lease(ctx, embedded.LeaseParams{Queue: gitTask, Worker: "w", Max: 1, LeaseFor: time.Hour})
		require.NoError(t, err)
		for _, task := range tasks {
			var kw map[string]any
			require.NoError(t, json.Unmarshal(task.Kwargs, &kw))
			taken = append(taken, kw["url"].(string))
		}
	}
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, errb.String())
	case <-time.After(10 * time.Second):
		t.Fatal("send-from-file did not finish")
	}
	require.Equal(t, lines, taken, "in the file's order")
	require.Equal(t, "sent 5 message(s) to "+gitTask+", 0 failed\n", out.String())
	require.Contains(t, errb.String(), "waiting for the queue to drain")
}
