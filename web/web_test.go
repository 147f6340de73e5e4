package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
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
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/listener"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres"
	"github.com/revisit-sched/revisit/store/sqlite"
	"github.com/revisit-sched/revisit/web"
)

// TestMain checks that no goroutine outlives the tests, but the health
// check of a closed PostgreSQL pool, which ends on its own shortly after.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).backgroundHealthCheck"))
}

const queue = "swh.loader.git.tasks.UpdateGitRepository"

// artifactDir is where screenshots go: $TEST_SCREENSHOTS, else a
// temporary directory of the test.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("TEST_SCREENSHOTS"); d != "" {
		require.NoError(t, os.MkdirAll(d, 0o755))
		return d
	}
	return t.TempDir()
}

// screenshot writes a screenshot of the whole page to name in
// artifactDir.
func screenshot(t *testing.T, bctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(artifactDir(t), name)
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot: %s", shot)
}

// engine opens stores on the same data, one for each start of revisit
// serve, as successive processes would.
type engine struct {
	name string
	open func(t *testing.T, ctx context.Context) (store.Store, error)
}

// engines returns the engines of a test: a SQLite file, and a PostgreSQL
// schema made at the first open by the (sub)test t that opens it, which
// skips without PostgreSQL, unless CI is set.
func engines(t *testing.T) []engine {
	path := filepath.Join(t.TempDir(), "web.db")
	url := ""
	return []engine{
		{"sqlite", func(_ *testing.T, ctx context.Context) (store.Store, error) {
			return sqlite.Open(ctx, path, store.Options{})
		}},
		{"postgres", func(t *testing.T, ctx context.Context) (store.Store, error) {
			if url == "" {
				_, url = teststore.Postgres(t)
			}
			return postgres.Open(ctx, url, store.Options{})
		}},
	}
}

// stack is revisit serve in-process: store, embedded broker, orchestrator,
// listener, the history of the last 24 h, and the API behind the
// dashboard; with a journal client when newStack is given one.
type stack struct {
	st   store.Store
	b    *embedded.Broker
	srv  *httptest.Server
	stop func()
}

// newStack runs the roles of revisit serve over st until stop, which
// closes st too (and runs at the test's end).
func newStack(t *testing.T, ctx context.Context, st store.Store, journal api.JournalLag) *stack {
	t.Helper()
	b := embedded.New(st, embedded.Config{PollInterval: 50 * time.Millisecond})
	reg := prometheus.NewRegistry()
	o, err := orchestrator.New(st, b, orchestrator.Config{NoOriginsBackoff: time.Second, QueueFullBackoff: time.Second,
		RoundJitter: 50 * time.Millisecond, SingleProcess: st.Capabilities().SingleProcess, GracePeriod: time.Second,
		Metrics: orchestrator.NewMetrics(reg)})
	require.NoError(t, err)
	lis := listener.New(st, b, listener.Config{Metrics: listener.NewMetrics(reg)})
	hist := history.New(history.Config{Store: st, Metrics: reg, Queues: o.Queues().Queues, Every: 100 * time.Millisecond})
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = o.Run(runCtx) })
	wg.Go(func() { _ = lis.Run(runCtx) })
	wg.Go(func() { _ = hist.Run(runCtx) })
	a := api.New(api.Config{Store: st, Broker: b, Queues: b, Live: o.Queues(), Orchestrator: o, Journal: journal,
		Metrics: reg, History: hist})
	srv := httptest.NewServer(web.Handler(a, ""))
	var once sync.Once
	stop := func() {
		once.Do(func() {
			srv.Close()
			cancel()
			wg.Wait()
			b.Close()
			st.Close()
		})
	}
	t.Cleanup(stop)
	return &stack{st: st, b: b, srv: srv, stop: stop}
}

// seed registers load-git (a queue of 100) and four never visited git
// origins of github, and computes the scheduler metrics.
func seed(t *testing.T, ctx context.Context, st store.Store) {
	t.Helper()
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
}

// pastHour records git origins visited over the last hour, as a previous
// process would have left them: a few a minute, mostly successful, each
// scheduled two minutes before its visit. It returns the visits by
// outcome.
func pastHour(t *testing.T, ctx context.Context, st store.Store) map[revisit.VisitStatus]int {
	t.Helper()
	l, err := st.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	now := time.Now()
	updated := now.Add(-48 * time.Hour)
	var (
		origins []revisit.ListedOrigin
		stats   []revisit.VisitStats
		byOut   = map[revisit.VisitStatus]int{}
	)
	for k := 5; k < 58; k++ {
		for j := range 4 + int(3*math.Sin(float64(k)/7)) {
			url := fmt.Sprintf("https://gitlab.com/past/%d-%d", k, j)
			visited := now.Add(-time.Duration(k)*time.Minute - time.Duration(j)*time.Second)
			scheduled := visited.Add(-2 * time.Minute)
			status := revisit.VisitSuccessful
			switch {
			case (k+j)%11 == 0:
				status = revisit.VisitNotFound
			case (k+j)%5 == 0:
				status = revisit.VisitFailed
			}
			byOut[status]++
			s := revisit.VisitStats{URL: url, VisitType: "git", LastVisit: &visited, LastVisitStatus: &status,
				LastScheduled: &scheduled, NextPositionOffset: 4, SuccessiveVisits: 1}
			if status == revisit.VisitSuccessful {
				s.LastSuccessful = &visited
			}
			origins = append(origins, revisit.ListedOrigin{ListerID: l.ID, URL: url, VisitType: "git",
				Enabled: true, LastUpdate: &updated})
			stats = append(stats, s)
		}
	}
	_, err = st.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
	require.NoError(t, st.VisitStatsUpsert(ctx, stats))
	return byOut
}

// counts returns the visits of git in flight.
func counts(t *testing.T, ctx context.Context, st store.Store) revisit.VisitCounts {
	cs, err := st.VisitsCount(ctx)
	require.NoError(t, err)
	for _, c := range cs {
		if c.VisitType == "git" {
			return c
		}
	}
	return revisit.VisitCounts{}
}

// complete leases n messages of git's queue as worker w and posts the
// results of statuses, one each.
func complete(t *testing.T, ctx context.Context, b *embedded.Broker, statuses ...celery.VisitStatus) {
	t.Helper()
	tasks, err := b.Lease(ctx, embedded.LeaseParams{Queue: queue, Worker: "w", Max: len(statuses), LeaseFor: time.Minute})
	require.NoError(t, err)
	require.Len(t, tasks, len(statuses))
	for i, task := range tasks {
		_, err := b.Complete(ctx, embedded.Result{ID: task.ID, Worker: "w", Status: statuses[i],
			Snapshot: "0123456789abcdef0123456789abcdef01234567"})
		require.NoError(t, err)
	}
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

// text returns the rendered text of the first element sel selects, an
// error while there is none. It asks the page itself: chromedp's copy of
// the DOM, with Chromium 156, missed elements added after a query that had
// not found them, and kept missing them.
func text(ctx context.Context, sel string) (string, error) {
	quoted, err := json.Marshal(sel)
	if err != nil {
		return "", err
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[*string](
		`(e => e ? e.innerText : null)(document.querySelector(`+string(quoted)+`))`))
	if err != nil {
		return "", err
	}
	if s == nil {
		return "", fmt.Errorf("no element %s in the page", sel)
	}
	return strings.TrimSpace(*s), nil
}

// waitMatch waits until the text of the element sel matches.
func waitMatch(t *testing.T, ctx context.Context, sel, want string, match func(got string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err := text(tctx, sel)
		cancel()
		if err == nil && match(got) {
			return
		}
		last = got
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s shows %q, want %q", sel, last, want)
}

// waitText waits until the element sel shows want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	waitMatch(t, ctx, sel, want, func(got string) bool { return got == want })
}

// waitPrefix waits until the text of the element sel starts with want.
func waitPrefix(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	waitMatch(t, ctx, sel, want+"…", func(got string) bool { return strings.HasPrefix(got, want) })
}

// evaluate evaluates a script in the page.
func evaluate[T any](t *testing.T, ctx context.Context, script string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](script))
	require.NoError(t, err)
	return v
}

const git = `[data-visit-type="git"] `

// overviewPage is a seeded SQLite store served by a stack (with journal,
// if any) and the overview open in a browser whose console errors are
// collected.
type overviewPage struct {
	ctx, bctx context.Context
	st        store.Store
	s         *stack
	problems  func() []string
}

// openOverview opens the overview of a seeded store in a browser.
func openOverview(t *testing.T, journal api.JournalLag) overviewPage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "web.db"), store.Options{})
	require.NoError(t, err)
	seed(t, ctx, st)
	s := newStack(t, ctx, st, journal)
	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/")))
	return overviewPage{ctx: ctx, bctx: bctx, st: st, s: s, problems: problems}
}

func TestDashboard(t *testing.T) {
	o := openOverview(t, nil)
	ctx, s, bctx, problems := o.ctx, o.s, o.bctx, o.problems

	waitText(t, bctx, git+`[data-field="max_queue_length"]`, "100")
	waitText(t, bctx, `#listers [data-field="origins_known"]`, "4")
	waitText(t, bctx, `#listers [data-field="origins_never_visited"]`, "4")
	// The orchestrator publishes the four origins: the page follows.
	waitText(t, bctx, git+`[data-field="depth"]`, "4")
	waitText(t, bctx, git+`[data-field="in_flight"]`, "4")
	waitText(t, bctx, git+`[data-policy="never_visited_oldest_update_first"] [data-field="share"]`, "49.0 %")
	waitPrefix(t, bctx, git+`[data-field="loop"]`, "no eligible origins — next check at ")

	// Workers report results: the page shows them at its next refresh.
	complete(t, ctx, s.b, "eventful", "uneventful", "failed")
	waitText(t, bctx, git+`[data-field="results.successful"]`, "2")
	waitText(t, bctx, git+`[data-field="results.failed"]`, "1")
	waitText(t, bctx, git+`[data-field="in_flight"]`, "1")
	waitText(t, bctx, git+`[data-field="depth"]`, "1")
	waitText(t, bctx, git+`[data-field="lost_24h"]`, "0")
	screenshot(t, bctx, "dashboard.png")

	charts := evaluate[[]string](t, bctx, `[...document.querySelectorAll('[data-visit-type="git"] figure.chart')].map((f) => f.dataset.chart)`)
	require.Equal(t, []string{"scheduled", "results", "queue", "latency"}, charts)
	require.False(t, evaluate[bool](t, bctx, `document.body.innerText.includes("free_slots") || document.body.innerText.includes("lost_total")`),
		"no raw field name on the page")
	require.True(t, evaluate[bool](t, bctx, `document.getElementById("journal").hidden`),
		"no journal client runs: the journal panel stays hidden")
	// A loop resting for room does not say the queue is full: it may
	// have a few free slots, fewer than a round needs.
	waiting, err := chromedp.Run(bctx, chromedp.Evaluate[string](`import("/assets/loop.js").then((m) =>
		m.loopWords({state: "queue_full", check_every_seconds: 1}, new Date()))`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, "waiting for room in the queue — next check in 1 s", waiting)
	// A server up for one minute of the last ten shows the visits of that
	// minute per minute, the policies' rates adding up to the total.
	rates, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`import("/assets/visittype.js").then((m) => {
		const none = (n) => new Array(n).fill(null);
		const v = {visit_type: "git", task_type: "load-git", queue: "q", max_queue_length: 100, depth: 5, free_slots: 95,
			sent: 0, pending: 0, publishing: 0, lost: 0, loop: null, paused: null,
			policies: [{policy: "never_visited_oldest_update_first", weight: 1, share: 1}]};
		const h = {scheduled: {never_visited_oldest_update_first: [...none(9), 230]},
			scheduled_without_policy: [...new Array(10).fill(0)], results: {}, lost: none(10),
			queue_depth: [...none(9), 5], free_slots: [...none(9), 95], grab_p95_seconds: none(10),
			grab_mean_seconds: none(10), last_24h: null};
		const card = m.visitTypeCard(v, h, {start: new Date(Date.now() - 600000), minutes: 10, words: "10 minutes"}, true, new Date());
		return [card.querySelector('.figures [data-field="scheduled_rate"]').textContent,
			card.querySelector('[data-policy] [data-field="scheduled_rate"]').textContent];
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, []string{"230 visits/min", "230"}, rates)

	// The range of the page's URL sets the charts' and totals' window.
	_, err = chromedp.Run(bctx, chromedp.Navigate(s.srv.URL+"/?range=6h"))
	require.NoError(t, err)
	waitText(t, bctx, git+`.columns > div:last-child > h4`, "The last 6 hours")
	require.Equal(t, "6h", evaluate[string](t, bctx, `document.querySelector('[data-range][aria-current]').dataset.range`))
	require.Contains(t, mustText(t, bctx, git+`table.policies thead`), "visits (last 6 hours)")

	// Pointed at, a chart writes the values of the minute under the
	// pointer.
	tip, err := chromedp.Run(bctx, chromedp.Evaluate[string](`import("/assets/chart.js").then((m) => {
		const f = m.lineChart({name: "t", title: "t", unit: "visits/min", start: new Date(Date.UTC(2026, 0, 1, 10, 0)),
			minutes: 3, series: [{label: "lag", cls: "c0", values: [1, 2, 40]}, {label: "new", cls: "c1", values: [3, null, 5]}]});
		document.body.append(f);
		const svg = f.querySelector("svg"), box = svg.getBoundingClientRect();
		svg.dispatchEvent(new MouseEvent("mousemove", {clientX: box.right - 2, clientY: box.top + 20}));
		const text = f.querySelector('[data-field="tip"]').textContent;
		f.remove();
		return text;
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Equal(t, "10:02 UTC: lag 40, new 5 visits/min", tip, "a time in UTC, as every time of the console")
	require.Empty(t, problems(), "the page logs no error")
}

// TestOverviewAfterRestart runs revisit serve, makes it schedule visits,
// take results and lose a visit, and starts it again on the same store:
// the overview shows the loop's state and charts of the hour before the
// restart at once, recalled from the store.
func TestOverviewAfterRestart(t *testing.T) {
	for _, eng := range engines(t) {
		t.Run(eng.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			st, err := eng.open(t, ctx)
			require.NoError(t, err)
			seed(t, ctx, st)
			past := pastHour(t, ctx, st)
			first := newStack(t, ctx, st, nil)
			require.Eventually(t, func() bool { return counts(t, ctx, st).Sent == 4 }, 30*time.Second, 50*time.Millisecond)
			complete(t, ctx, first.b, "eventful", "uneventful", "failed")
			require.Eventually(t, func() bool { return counts(t, ctx, st).Sent == 1 }, 30*time.Second, 50*time.Millisecond,
				"the results close their visits")
			lost, err := st.VisitsExpire(ctx, "git", time.Now().Add(time.Hour))
			require.NoError(t, err)
			require.Equal(t, 1, lost)
			require.Eventually(t, func() bool { c := counts(t, ctx, st); return c.Lost == 1 && c.Sent == 1 },
				30*time.Second, 50*time.Millisecond, "the lost visit's origin goes again")
			first.stop()

			st, err = eng.open(t, ctx)
			require.NoError(t, err)
			s := newStack(t, ctx, st, nil)
			bctx := browser.New(t)
			problems := browser.Errors(t, bctx)
			require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/")))

			waitPrefix(t, bctx, git+`[data-field="loop"]`, "no eligible origins — next check at ")
			waitText(t, bctx, git+`[data-field="results.successful"]`, fmt.Sprint(past[revisit.VisitSuccessful]+2))
			waitText(t, bctx, git+`[data-field="results.failed"]`, fmt.Sprint(past[revisit.VisitFailed]+1))
			waitText(t, bctx, git+`[data-field="results.not_found"]`, fmt.Sprint(past[revisit.VisitNotFound]))
			waitText(t, bctx, git+`[data-field="lost_24h"]`, "1")
			waitText(t, bctx, git+`[data-field="in_flight"]`, "1")

			// The charts show the hour before the restart: the visits
			// scheduled and their results, recalled from the store.
			lines := func(chart string) []string {
				return evaluate[[]string](t, bctx, `[...document.querySelectorAll('[data-visit-type="git"] [data-chart="`+chart+
					`"] [data-series]')].map((e) => e.dataset.series)`)
			}
			require.Contains(t, lines("scheduled"), "policy not recorded (before the restart)")
			require.Contains(t, lines("results"), "successful")
			require.Contains(t, lines("results"), "failed")
			points := evaluate[[]int](t, bctx, `[...document.querySelectorAll('[data-visit-type="git"] svg.chart')].map((s) => Number(s.dataset.points))`)
			require.Len(t, points, 4)
			require.Positive(t, points[0], "visits scheduled")
			require.Positive(t, points[1], "results")

			resp, err := http.Get(s.srv.URL + "/api/v1/history?minutes=60")
			require.NoError(t, err)
			defer resp.Body.Close()
			var hist api.HistoryResponse
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&hist))
			require.Len(t, hist.VisitTypes, 1)
			successful := 0.0
			for _, v := range hist.VisitTypes[0].Results["successful"] {
				if v != nil {
					successful += *v
				}
			}
			require.GreaterOrEqual(t, successful, float64(past[revisit.VisitSuccessful]),
				"the hour before the restart, minute by minute")

			screenshot(t, bctx, "overview-"+eng.name+".png")
			require.Empty(t, problems(), "the page logs no error")
		})
	}
}

func TestDashboardJournal(t *testing.T) {
	j := &fakeJournal{lag: map[int32]int64{0: 1200, 2: 5, 10: 0}}
	o := openOverview(t, j)
	bctx, problems := o.bctx, o.problems

	waitText(t, bctx, `#journal [data-field="topic"]`, "swh.journal.objects.origin_visit_status")
	waitText(t, bctx, `#journal [data-field="total_lag"]`, "1,205")
	waitText(t, bctx, `#journal [data-partition="0"] [data-field="lag"]`, "1,200")
	waitText(t, bctx, `#journal [data-partition="2"] [data-field="lag"]`, "5")
	waitText(t, bctx, `#journal [data-partition="10"] [data-field="lag"]`, "0")
	partitions := evaluate[[]string](t, bctx, `[...document.querySelectorAll("#journal [data-partition]")].map((r) => r.dataset.partition)`)
	require.Equal(t, []string{"0", "2", "10"}, partitions, "partitions in numeric order")
	require.True(t, evaluate[bool](t, bctx, `document.getElementById("journal").checkVisibility()`), "the journal panel shows")
	screenshot(t, bctx, "dashboard-journal.png")

	// The client catches up: the page follows at its next refresh.
	j.setLag(map[int32]int64{0: 7, 2: 0, 10: 0})
	waitText(t, bctx, `#journal [data-field="total_lag"]`, "7")
	waitText(t, bctx, `#journal [data-partition="0"] [data-field="lag"]`, "7")
	waitText(t, bctx, `#journal [data-partition="2"] [data-field="lag"]`, "0")
	require.Empty(t, problems(), "the page logs no error")
}
