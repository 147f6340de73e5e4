package report

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/simulate"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// result is a hand-made run of three days over git and hg, sampled every
// six hours; shift tells runs apart.
func result(name string, shift int) simulate.Result {
	r := simulate.Result{
		Name:       name,
		Settings:   []string{"seed: 1", "origins: 1000", "workers: git 4, hg 1"},
		VisitTypes: []string{"git", "hg"},
		Start:      start,
		End:        start.Add(72 * time.Hour),
		Counters:   simulate.Counters{Total: 300 + int64(shift), Uneventful: 120, Eventful: 170, VeryLong: 3},
		Runtimes: simulate.Histogram{
			Bounds: []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, time.Hour},
			Counts: []int64{40, 70 + int64(shift), 45, 12, 3},
		},
		Events: 123456,
	}
	for i := range 13 {
		h := time.Duration(i*6) * time.Hour
		lag := h * time.Duration(10+shift) / 10
		n := int64(i + shift)
		r.Samples = append(r.Samples, simulate.Sample{
			Time: start.Add(h), Known: 1000 + 10*n, Enabled: 990 + 10*n, NeverVisited: max(0, 900-60*n),
			PendingChanges: 50 + 3*n, Visits: 25 * int64(i),
			ByType: []simulate.TypeSample{
				{QueueDepth: 100 - i - shift, Utilization: 0.5 + 0.03*float64(i+shift), Visited: 40 * i,
					Freshness: simulate.Quantiles{P50: lag / 4, P90: lag / 2, P99: lag}},
				{QueueDepth: 20 + i%3, Utilization: 0.25, Visited: 5 * i,
					Freshness: simulate.Quantiles{P50: lag / 3, P90: lag, P99: 2 * lag}},
			},
		})
	}
	r.Policies = []simulate.PolicyFigures{
		{VisitType: "git", Policy: revisit.AlreadyVisitedOrderByLag, Weight: 50, Configured: 0.5,
			Visits: 120 + int64(shift), Share: 0.48, Eventful: 90},
		{VisitType: "git", Policy: revisit.NeverVisitedOldestUpdateFirst, Weight: 50, Configured: 0.5,
			Visits: 130, Share: 0.52, Eventful: 60},
		{VisitType: "hg", Policy: revisit.OldestScheduledFirst, Weight: 1, Configured: 1, Visits: 50, Share: 1},
	}
	r.FirstVisits = []simulate.Latency{
		{VisitType: "git", New: 30, Visited: 28,
			Quantiles: simulate.Quantiles{P50: 3 * time.Hour, P90: 9 * time.Hour, P99: 20 * time.Hour}},
		{VisitType: "hg", New: 4},
	}
	return r
}

func TestPythonTime(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{start, "2026-01-01 00:00:00+00:00"},
		{time.Date(2026, 3, 4, 5, 6, 7, 250_000, time.UTC), "2026-03-04 05:06:07.000250+00:00"},
		{time.Date(2026, 3, 4, 5, 6, 7, 123_456_789, time.UTC), "2026-03-04 05:06:07.123456+00:00"},
		// Python keeps microseconds: less is no fraction.
		{time.Date(2026, 3, 4, 5, 6, 7, 999, time.UTC), "2026-03-04 05:06:07+00:00"},
		{time.Date(2026, 3, 4, 7, 6, 7, 0, time.FixedZone("CEST", 2*3600)), "2026-03-04 05:06:07+00:00"},
	} {
		require.Equal(t, c.want, pythonTime(c.t), "%s", c.t)
	}
}

func TestMetricsCSV(t *testing.T) {
	r := result("one", 0)
	r.Samples = r.Samples[:3]
	r.Samples[2].Time = r.Samples[2].Time.Add(1500 * time.Microsecond)
	dir := t.TempDir()
	require.NoError(t, Write(dir, []simulate.Result{r}))
	got, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	require.NoError(t, err)
	require.Equal(t, "timestamp,known_origins,enabled_origins,never_visited_origins,origins_with_pending_changes\r\n"+
		"2026-01-01 00:00:00+00:00,1000,990,900,50\r\n"+
		"2026-01-01 06:00:00+00:00,1010,1000,840,53\r\n"+
		"2026-01-01 12:00:00.001500+00:00,1020,1010,780,56\r\n", string(got))
}

func TestSamplesCSV(t *testing.T) {
	r := result("one", 0)
	r.Samples = r.Samples[:2]
	got, err := samplesCSV(r)
	require.NoError(t, err)
	require.Equal(t, "time,visits,"+
		"git_queue_depth,git_utilization,git_visited,git_freshness_p50_seconds,git_freshness_p90_seconds,git_freshness_p99_seconds,"+
		"hg_queue_depth,hg_utilization,hg_visited,hg_freshness_p50_seconds,hg_freshness_p90_seconds,hg_freshness_p99_seconds\n"+
		"2026-01-01T00:00:00Z,0,100,0.5000,0,0,0,0,20,0.2500,0,0,0,0\n"+
		"2026-01-01T06:00:00Z,25,99,0.5300,40,5400,10800,21600,21,0.2500,5,7200,21600,43200\n", string(got))
}

func TestSummary(t *testing.T) {
	require.Equal(t, `Total visits: 300
Uneventful visits: 120
Eventful visits: 170
Very long running tasks: 3

Visits by policy:
visit type  policy                             weight  configured %  visits  share %  eventful  eventful %
git         already_visited_order_by_lag           50          50.0     120     48.0        90        75.0
git         never_visited_oldest_update_first      50          50.0     130     52.0        60        46.2
hg          oldest_scheduled_first                  1         100.0      50    100.0         0         0.0

First-visit latency (from listing to the end of the first visit):
visit type  new origins  visited    p50    p90     p99
git                  30       28  3.0 h  9.0 h  20.0 h
hg                    4        0      -      -       -
`, string(summary(result("one", 0))))
}

// files lists the files under dir, relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return err
	}))
	slices.Sort(names)
	return names
}

// plotNames are the plots of result's runs, without extension.
var plotNames = []string{"origins",
	"freshness-git", "queue-depth-git", "utilization-git", "policies-git",
	"freshness-hg", "queue-depth-hg", "utilization-hg", "policies-hg",
	"first-visit-latency", "runtimes"}

func plotFiles() []string {
	var names []string
	for _, p := range plotNames {
		names = append(names, "plots/"+p+".png", "plots/"+p+".svg")
	}
	return names
}

func TestLayoutOne(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made")
	require.NoError(t, Write(dir, []simulate.Result{result("production weights", 0)}))
	want := append([]string{"metrics.csv", "report.html", "samples.csv", "summary.txt"}, plotFiles()...)
	slices.Sort(want)
	require.Equal(t, want, files(t, dir))
}

func TestLayoutSeveral(t *testing.T) {
	dir := t.TempDir()
	runs := []simulate.Result{result("Production weights", 0), result("production  weights!", 5),
		result("Plots", 2), result("été", 1)}
	require.NoError(t, Write(dir, runs))
	var want []string
	for _, d := range []string{"production-weights", "production-weights-2", "plots-2", "t"} {
		want = append(want, d+"/metrics.csv", d+"/samples.csv", d+"/summary.txt")
	}
	want = append(want, "report.html")
	want = append(want, plotFiles()...)
	slices.Sort(want)
	require.Equal(t, want, files(t, dir))
}

func TestSlugs(t *testing.T) {
	require.Equal(t, []string{"a-b", "a-b-2", "run", "run-2", "plots-2", "x1"},
		slugs([]string{" A  b ", "a-b", "", "!!", "plots", "x1"}, "run", "plots"))
}

// TestDeterministic writes the same report twice: every file has the same
// bytes.
func TestDeterministic(t *testing.T) {
	runs := []simulate.Result{result("baseline", 0), result("more hg workers", 3)}
	a, b := t.TempDir(), t.TempDir()
	require.NoError(t, Write(a, runs))
	require.NoError(t, Write(b, runs))
	names := files(t, a)
	require.Equal(t, names, files(t, b))
	for _, n := range names {
		x, err := os.ReadFile(filepath.Join(a, n))
		require.NoError(t, err)
		y, err := os.ReadFile(filepath.Join(b, n))
		require.NoError(t, err)
		require.True(t, slices.Equal(x, y), "%s differs between two writes", n)
	}
}

func TestWriteRejects(t *testing.T) {
	require.EqualError(t, Write(t.TempDir(), nil), "simulation report: no run to report on")

	r := result("short", 0)
	r.Samples[4].ByType = r.Samples[4].ByType[:1]
	require.EqualError(t, Write(t.TempDir(), []simulate.Result{r}),
		`simulation report: run "short": the sample of 2026-01-02 00:00:00 has 1 visit types, the run 2 (git, hg)`)

	r = result("histogram", 0)
	r.Runtimes.Counts = r.Runtimes.Counts[:4]
	require.EqualError(t, Write(t.TempDir(), []simulate.Result{r}),
		`simulation report: run "histogram": the runtime histogram has 4 bounds and 4 counts: it needs a count more than bounds`)

	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	err := Write(file, []simulate.Result{result("one", 0)})
	require.ErrorContains(t, err, "simulation report: mkdir "+file+": not a directory")
}

// TestRuntimeBuckets: runs whose histograms differ get a chart each.
func TestRuntimeBuckets(t *testing.T) {
	a, b := result("a", 0), result("b", 0)
	b.Runtimes = simulate.Histogram{Bounds: []time.Duration{time.Hour}, Counts: []int64{3, 1}}
	charts, err := newFigures([]simulate.Result{a, b}).charts()
	require.NoError(t, err)
	var names []string
	for _, c := range charts {
		if strings.HasPrefix(c.name, "runtimes") {
			names = append(names, c.name)
		}
	}
	require.Equal(t, []string{"runtimes-1", "runtimes-2"}, names)
	require.Equal(t, []string{"≤ 1m", "≤ 5m", "≤ 30m", "≤ 1h", "> 1h"}, bucketLabels(a.Runtimes.Bounds))
}

// TestWriteSparse: a run that measured nothing still has its files, and
// plots only of what it has.
func TestWriteSparse(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Write(dir, []simulate.Result{{Name: "empty", VisitTypes: []string{"git"}, Start: start,
		End: start}}))
	require.Equal(t, []string{"metrics.csv", "plots/freshness-git.png", "plots/freshness-git.svg",
		"plots/origins.png", "plots/origins.svg", "plots/queue-depth-git.png", "plots/queue-depth-git.svg",
		"plots/utilization-git.png", "plots/utilization-git.svg", "report.html", "samples.csv", "summary.txt"},
		files(t, dir))
}
