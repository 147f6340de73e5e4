package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api/client"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/swhwire"
	"github.com/revisit-sched/revisit/worker"
)

// buildRevisit builds the revisit binary into a temporary directory.
func buildRevisit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "revisit")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/revisit-sched/revisit/cmd/revisit").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// cleanEnviron is the environment without REVISIT_ variables.
func cleanEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REVISIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// freeAddr returns a loopback address where nothing listens.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// listenLine is the line revisit serve prints once it listens: the
// dashboard's, or, without the api role, the health's.
var listenLine = regexp.MustCompile(`revisit: (?:dashboard|health and metrics) at (http://[^/\s]+)/`)

// startServe starts revisit with args (which name the serve command) in dir
// and returns its base URL once it listens; the process is stopped
// (SIGTERM) at cleanup and must exit 0.
func startServe(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--listen", "127.0.0.1:0")...)
	cmd.Dir, cmd.Env = dir, cleanEnviron()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var log bytes.Buffer
	lines := bufio.NewScanner(stderr)
	base := ""
	for base == "" && lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if m := listenLine.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		_ = cmd.Wait()
		t.Fatalf("revisit serve did not start:\n%s", log.String())
	}
	done := make(chan error, 1)
	go func() {
		_, _ = io.Copy(&log, stderr)
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		select {
		case err := <-done:
			require.NoError(t, err, "revisit serve exited badly:\n%s", log.String())
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("revisit serve did not stop:\n%s", log.String())
		}
	})
	return base
}

// TestServeEndToEnd runs revisit serve in an empty directory without
// configuration (but for short waits): origins recorded over the API are
// scheduled to the embedded broker, a Go worker completes their visits,
// and the visit stats show the results.
func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	bin := buildRevisit(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "revisit.yaml"), []byte(`
orchestrator:
  no_origins_backoff: 1s
  queue_full_backoff: 1s
  round_jitter: 100ms
`), 0o600))
	base := startServe(t, bin, dir, "--config", "revisit.yaml", "serve")
	_, err := os.Stat(filepath.Join(dir, "revisit.db"))
	require.NoError(t, err, "the SQLite store is created in the current directory")

	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(base, "", nil)
	require.NoError(t, err)
	const queue = "swh.loader.git.tasks.UpdateGitRepository"
	require.NoError(t, c.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: queue,
		MaxQueueLength: 100}))

	// The CLI records through the server (--server).
	h := newHarness(t)
	lines := ""
	urls := []string{"https://github.com/o/a", "https://github.com/o/b", "https://github.com/o/c"}
	for _, u := range urls {
		lines += `{"url": "` + u + `", "visit_type": "git", "lister_name": "github", "last_update": "2025-01-01T00:00:00Z"}` + "\n"
	}
	r := h.runIn(lines, "--server", base, "origin", "record", "-")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "inserted 3")
	listed := h.jsonList("--server", base, "origin", "list")
	require.Len(t, listed, 3)

	wctx, stopWorker := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() {
		worked <- worker.Run(wctx, worker.Config{Server: base, Queue: queue, Name: "e2e", Wait: time.Second,
			Handler: func(context.Context, worker.Task) (worker.Result, error) {
				return worker.Result{Status: "eventful", Snapshot: "0123456789abcdef0123456789abcdef01234567"}, nil
			}})
	}()
	defer func() {
		stopWorker()
		require.NoError(t, <-worked)
	}()

	keys := make([]revisit.OriginKey, len(urls))
	for i, u := range urls {
		keys[i] = revisit.OriginKey{URL: u, VisitType: "git"}
	}
	require.Eventually(t, func() bool {
		stats, err := c.VisitStatsGet(ctx, keys)
		require.NoError(t, err)
		done := 0
		for _, s := range stats {
			if s.LastVisitStatus != nil && *s.LastVisitStatus == revisit.VisitSuccessful {
				done++
			}
		}
		return done == len(urls)
	}, time.Minute, 200*time.Millisecond, "every origin visited")

	show := h.jsonObject("--server", base, "visit-stats", "show", urls[0], "git")
	require.Equal(t, "successful", show["last_visit_status"])
	require.Equal(t, "0123456789abcdef0123456789abcdef01234567", show["last_snapshot"])
	tts := h.jsonList("--server", base, "task-type", "list")
	require.Equal(t, queue, tts[0]["backend_name"])
	ms := h.jsonList("--server", base, "origin", "update-metrics")
	require.EqualValues(t, 3, ms[0]["origins_known"])
	require.EqualValues(t, 0, ms[0]["origins_never_visited"])
	require.Len(t, h.jsonList("--server", base, "origin", "metrics"), 1)
	require.Empty(t, h.jsonList("--server", base, "origin", "peek-next", "git", "5"), "every origin is in its cooldown")
	qs, err := c.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	require.Zero(t, qs[0].Sent, "no visit in flight once results are in")

	got := rpcCall(t, base+"/swh/task_type/get_all")
	require.Len(t, got, 1, "the default roles serve the Software Heritage RPC")
}

// rpcCall calls an endpoint of the Software Heritage RPC without
// parameters, as its Python client does, and returns the decoded result.
func rpcCall(t *testing.T, url string) []any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte{0x80}))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-msgpack")
	req.Header.Set("Accept", "application/x-msgpack")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%q", body)
	v, err := swhwire.Decode(body)
	require.NoError(t, err)
	list, ok := v.([]any)
	require.True(t, ok, "%#v", v)
	return list
}

// TestServeRPCRole runs the rpc role alone: the Software Heritage RPC under
// /swh/ with health and metrics, without the JSON API.
func TestServeRPCRole(t *testing.T) {
	t.Parallel()
	bin := buildRevisit(t)
	base := startServe(t, bin, t.TempDir(), "serve", "--roles", "rpc")
	require.Empty(t, rpcCall(t, base+"/swh/task_type/get_all"))
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/swh/": 200,
		"/swh/site-map": 200, "/api/v1/task-types": 404} {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, path)
	}
}

// TestServeIndexesRecordedURLs: a server whose roles serve no search
// (rpc alone, on PostgreSQL) still indexes the URLs recordings listed for
// the first time, emptying their backlog.
func TestServeIndexesRecordedURLs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.url = pgtest.URL(t)
	h.ok("db", "migrate")
	ctx := context.Background()
	st := h.store()
	l, err := st.ListerGetOrCreate(ctx, "gitlab", "")
	require.NoError(t, err)
	_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
		{ListerID: l.ID, URL: "https://forge.example/a", VisitType: "git", Enabled: true},
		{ListerID: l.ID, URL: "https://forge.example/b", VisitType: "git", Enabled: true}})
	require.NoError(t, err)
	st.Close()
	conn, err := pgx.Connect(ctx, h.url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	count := func(table string) int {
		var n int
		require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n))
		return n
	}
	require.Equal(t, 2, count("origin_url_backlog"))
	require.Zero(t, count("origin_url"))

	startServe(t, buildRevisit(t), h.dir, "serve", "--store", h.url, "--roles", "rpc")
	require.Eventually(t, func() bool { return count("origin_url_backlog") == 0 }, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, 2, count("origin_url"))
}

func TestServeRefusesOpenNonLoopback(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	msg := h.fails(ExitError, "serve", "--listen", "0.0.0.0:0")
	require.Contains(t, msg, "refusing to listen on 0.0.0.0:0 without API tokens")
	msg = h.fails(ExitUsage, "serve", "--roles", "api,cook")
	require.Contains(t, msg, `"cook" is not one of api, orchestrator, listener`)
	msg = h.fails(ExitUsage, "--server", "http://127.0.0.1:1", "db", "migrate")
	require.Contains(t, msg, "works on the store only")
}

// TestScheduleRecurrentServesHealth: schedule-recurrent --metrics-listen
// answers /healthz and /readyz as revisit serve does, besides /metrics.
func TestScheduleRecurrentServesHealth(t *testing.T) {
	t.Parallel()
	bin := buildRevisit(t)
	dir := t.TempDir()
	h := newHarness(t)
	h.url = "sqlite://" + filepath.Join(dir, "revisit.db")
	h.ok("task-type", "add", "load-git", "--backend-name", "swh.loader.git.tasks.UpdateGitRepository")
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--store", h.url, "schedule-recurrent", "--metrics-listen", addr)
	cmd.Dir, cmd.Env = dir, cleanEnviron()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for path, want := range map[string]string{"/healthz": `"status":"ok"`, "/readyz": `"store":"ok"`, "/metrics": "revisit_"} {
		var body string
		require.Eventually(t, func() bool {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body = string(b)
			return resp.StatusCode == http.StatusOK
		}, 20*time.Second, 100*time.Millisecond, path)
		require.Contains(t, body, want, path)
	}
}
