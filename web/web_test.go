package web_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/broker/embedded"
	"github.com/revisit-sched/revisit/celery"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/listener"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/web"
)

// TestMain checks that no goroutine outlives the tests, but the health
// check of a closed PostgreSQL pool, which ends on its own shortly after.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

const queue = "swh.loader.git.tasks.UpdateGitRepository"

// artifactDir is where screenshots go: $REVISIT_SCREENSHOTS, else a
// temporary directory of the test.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("REVISIT_SCREENSHOTS"); d != "" {
		require.NoError(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

// stack is revisit serve in-process: store, embedded broker, orchestrator,
// listener, and the API behind the dashboard; with a journal client when
// newStack is given one.
type stack struct {
	st  store.Store
	b   *embedded.Broker
	srv *httptest.Server
}

func newStack(t *testing.T, ctx context.Context, journal api.JournalLag) *stack {
	t.Helper()
	return newStackOn(t, ctx, teststore.SQLite(t), journal)
}

// newStackOn is newStack on the store st, which the test closes.
func newStackOn(t *testing.T, ctx context.Context, st store.Store, journal api.JournalLag) *stack {
	t.Helper()
	b := embedded.New(st, embedded.Config{PollInterval: 50 * time.Millisecond})
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-git", BackendName: queue, MaxQueueLength: 100}))
	l, err := st.ListerGetOrCreate(ctx, "github", "github")
	require.NoError(t, err)
	var origins []revisit.ListedOrigin
	for i := range 4 {
		lu := time.Date(2025, 1, i+1, 0, 0, 0, 0, time.UTC)
		origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, URL: fmt.Sprintf("https://github.com/o/r%d", i),
			VisitType: "git", Enabled: true, LastUpdate: &lu})
	}
	_, err = st.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
	_, err = st.MetricsUpdate(ctx, nil, time.Now())
	require.NoError(t, err)

	reg := prometheus.NewRegistry()
	o, err := orchestrator.New(st, b, orchestrator.Config{NoOriginsBackoff: time.Second, QueueFullBackoff: time.Second,
		RoundJitter: 50 * time.Millisecond, SingleProcess: true, GracePeriod: time.Second,
		Metrics: orchestrator.NewMetrics(reg)})
	require.NoError(t, err)
	lis := listener.New(st, b, listener.Config{Metrics: listener.NewMetrics(reg)})
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = o.Run(runCtx) })
	wg.Go(func() { _ = lis.Run(runCtx) })
	a := api.New(api.Config{Store: st, Broker: b, Queues: b, Orchestrator: o, Journal: journal, Metrics: reg})
	srv := httptest.NewServer(web.Handler(a))
	t.Cleanup(func() {
		srv.Close()
		stop()
		wg.Wait()
		b.Close()
	})
	return &stack{st: st, b: b, srv: srv}
}

// fakeJournal is a journal client whose lag the test sets.
type fakeJournal struct {
	mu  sync.Mutex
	lag map[int32]int64
}

func (j *fakeJournal) Topic() string { return "swh.journal.objects.origin_visit_status" }

func (j *fakeJournal) Lag() map[int32]int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return maps.Clone(j.lag)
}

func (j *fakeJournal) setLag(lag map[int32]int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lag = lag
}

// text waits for the element sel and returns its text.
func text(ctx context.Context, sel string) (string, error) {
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	return strings.TrimSpace(s), err
}

// waitText waits until the element sel shows want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err := text(tctx, sel)
		cancel()
		if err == nil && got == want {
			return
		}
		last = got
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s shows %q, want %q", sel, last, want)
}

func TestDashboard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := newStack(t, ctx, nil)
	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/")))

	git := `[data-visit-type="git"] `
	waitText(t, bctx, git+`[data-field="max_queue_length"]`, "100")
	waitText(t, bctx, `#listers [data-field="origins_known"]`, "4")
	waitText(t, bctx, `#listers [data-field="origins_never_visited"]`, "4")
	// The orchestrator publishes the four origins: the page follows.
	waitText(t, bctx, git+`[data-field="depth"]`, "4")
	waitText(t, bctx, git+`[data-field="in_flight"]`, "4")
	waitText(t, bctx, git+`[data-policy="never_visited_oldest_update_first"] [data-field="fetched"]`, "4")
	waitText(t, bctx, git+`[data-policy="never_visited_oldest_update_first"] [data-field="share"]`, "49.0 %")

	// Workers report results: the page shows them at its next refresh.
	tasks, err := s.b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: 3, LeaseFor: time.Minute})
	require.NoError(t, err)
	require.Len(t, tasks, 3)
	statuses := []celery.VisitStatus{"eventful", "uneventful", "failed"}
	for i, task := range tasks {
		_, err := s.b.Complete(ctx, embedded.Result{ID: task.ID, Worker: "w", Status: statuses[i],
			Snapshot: "0123456789abcdef0123456789abcdef01234567"})
		require.NoError(t, err)
	}
	waitText(t, bctx, git+`[data-field="results.full"]`, "2")
	waitText(t, bctx, git+`[data-field="results.failed"]`, "1")
	waitText(t, bctx, git+`[data-field="in_flight"]`, "1")
	waitText(t, bctx, git+`[data-field="depth"]`, "1")

	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(artifactDir(t), "dashboard.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("dashboard screenshot: %s", shot)

	nodes, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSSAll(git+"svg.chart polyline")))
	require.NoError(t, err)
	require.NotEmpty(t, nodes, "the chart draws a line per policy")
	journalHidden, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById("journal").hidden`))
	require.NoError(t, err)
	require.True(t, journalHidden, "no journal client runs: the journal panel stays hidden")
	require.Empty(t, problems(), "the page logs no error")
}

func TestDashboardJournal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	j := &fakeJournal{lag: map[int32]int64{0: 1200, 2: 5, 10: 0}}
	s := newStack(t, ctx, j)
	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/")))

	waitText(t, bctx, `#journal [data-field="topic"]`, "swh.journal.objects.origin_visit_status")
	waitText(t, bctx, `#journal [data-field="total_lag"]`, "1,205")
	waitText(t, bctx, `#journal [data-partition="0"] [data-field="lag"]`, "1,200")
	waitText(t, bctx, `#journal [data-partition="2"] [data-field="lag"]`, "5")
	waitText(t, bctx, `#journal [data-partition="10"] [data-field="lag"]`, "0")
	partitions, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#journal [data-partition]")].map((r) => r.dataset.partition)`))
	require.NoError(t, err)
	require.Equal(t, []string{"0", "2", "10"}, partitions, "partitions in numeric order")
	visible, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById("journal").checkVisibility()`))
	require.NoError(t, err)
	require.True(t, visible, "the journal panel shows")

	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(artifactDir(t), "dashboard-journal.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("dashboard screenshot: %s", shot)

	// The client catches up: the page follows at its next refresh.
	j.setLag(map[int32]int64{0: 7, 2: 0, 10: 0})
	waitText(t, bctx, `#journal [data-field="total_lag"]`, "7")
	waitText(t, bctx, `#journal [data-partition="0"] [data-field="lag"]`, "7")
	waitText(t, bctx, `#journal [data-partition="2"] [data-field="lag"]`, "0")
	require.Empty(t, problems(), "the page logs no error")
}
