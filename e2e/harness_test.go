package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		_ = os.RemoveAll(filepath.Dir(binary))
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// loaderModule is a Celery app with one loader task, named by
// $TEST_TASK, that records each visit and answers by URL: /fail-…
// raises, /gone-… is not found, anything else is eventful with a snapshot
// id derived from the URL.
const loaderModule = `
import hashlib, json, os
from celery import Celery

app = Celery('revisit_test', broker=os.environ['TEST_CELERY_BROKER'])
app.conf.update(worker_send_task_events=True, task_serializer='json', accept_content=['json'],
                worker_hijack_root_logger=False, broker_connection_retry_on_startup=True,
                worker_prefetch_multiplier=1)

@app.task(name=os.environ['TEST_TASK'], bind=True)
def load(self, url, **kwargs):
    with open(os.environ['TEST_OUT'], 'a') as f:
        f.write(json.dumps({'id': self.request.id, 'url': url, 'kwargs': kwargs}) + '\n')
    if '/fail-' in url:
        raise RuntimeError('cannot reach ' + url)
    if '/gone-' in url:
        result = {'status': 'not_found'}
    else:
        result = {'status': 'eventful', 'snapshot_id': hashlib.sha1(url.encode()).hexdigest()}
    self.send_event('task-result', result=result)
    return result
`

// testLogger logs through t at info and above.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// world is a store with a load-git task type sending to queue, and a
// lister.
type world struct {
	t      *testing.T
	st     store.Store
	lister revisit.Lister
	ctx    context.Context
}

func newWorld(t *testing.T, st store.Store, queue string, maxQueue int) *world {
	ctx := context.Background()
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: queue, MaxQueueLength: maxQueue}))
	l, err := st.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	return &world{t: t, st: st, lister: l, ctx: ctx}
}

// url names an origin of the world.
func url(name string) string { return "https://forge.example/" + name }

// addNeverVisited records origins never visited, their last update an hour
// apart, the first name the oldest.
func (w *world) addNeverVisited(names ...string) {
	base := time.Now().UTC().Add(-1000 * time.Hour)
	var origins []revisit.ListedOrigin
	for i, n := range names {
		updated := base.Add(time.Duration(i) * time.Hour)
		origins = append(origins, revisit.ListedOrigin{ListerID: w.lister.ID, URL: url(n), VisitType: "git",
			Enabled: true, LastUpdate: &updated, ExtraLoaderArguments: map[string]any{"incremental": true}})
	}
	_, err := w.st.ListedOriginsRecord(w.ctx, origins)
	require.NoError(w.t, err)
}

// addLagging records origins visited successfully before their last
// update, the first name lagging most.
func (w *world) addLagging(names ...string) {
	now := time.Now().UTC()
	var origins []revisit.ListedOrigin
	var stats []revisit.VisitStats
	ok := revisit.VisitSuccessful
	for i, n := range names {
		updated := now.Add(-time.Hour)
		visited := updated.Add(-time.Duration(len(names)-i) * 24 * time.Hour)
		origins = append(origins, revisit.ListedOrigin{ListerID: w.lister.ID, URL: url(n), VisitType: "git",
			Enabled: true, LastUpdate: &updated})
		stats = append(stats, revisit.VisitStats{URL: url(n), VisitType: "git", LastSuccessful: &visited,
			LastVisit: &visited, LastVisitStatus: &ok, NextPositionOffset: 4, SuccessiveVisits: 1})
	}
	_, err := w.st.ListedOriginsRecord(w.ctx, origins)
	require.NoError(w.t, err)
	require.NoError(w.t, w.st.VisitStatsUpsert(w.ctx, stats))
}

// stats returns the visit stats of named origins, by name.
func (w *world) stats(names ...string) map[string]revisit.VisitStats {
	keys := make([]revisit.OriginKey, len(names))
	for i, n := range names {
		keys[i] = revisit.OriginKey{URL: url(n), VisitType: "git"}
	}
	got, err := w.st.VisitStatsGet(w.ctx, keys)
	require.NoError(w.t, err)
	out := map[string]revisit.VisitStats{}
	for _, s := range got {
		out[strings.TrimPrefix(s.URL, url(""))] = s
	}
	return out
}

// enabled reports whether the named origin is enabled.
func (w *world) enabled(name string) bool {
	page, err := w.st.ListedOriginsGet(w.ctx, revisit.ListedOriginFilter{URLs: []string{url(name)}, Enabled: revisit.AnyEnabled})
	require.NoError(w.t, err)
	require.Len(w.t, page.Origins, 1)
	return page.Origins[0].Enabled
}

// inFlight returns the in-flight counts of git.
func (w *world) inFlight() revisit.VisitCounts {
	cs, err := w.st.VisitsCount(w.ctx)
	require.NoError(w.t, err)
	for _, c := range cs {
		if c.VisitType == "git" {
			return c
		}
	}
	return revisit.VisitCounts{VisitType: "git"}
}

// names returns prefix-0 … prefix-(n-1).
func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

// run runs f(ctx) until the test ends and requires it to return nil.
func run(t *testing.T, what string, f func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, what)
		case <-time.After(40 * time.Second):
			t.Errorf("%s did not stop", what)
		}
	})
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// revisitBinary builds cmd/revisit once per test run.
func revisitBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "revisit-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "revisit")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/revisit-sched/revisit/cmd/revisit").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binary
}
