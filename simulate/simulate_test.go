package simulate_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/simulate"
	"github.com/revisit-sched/revisit/simulate/report"
	"github.com/revisit-sched/revisit/simulate/world"
	"github.com/revisit-sched/revisit/store"
)

// config returns the configuration of a world of n git origins simulated
// for d, with the origins' last updates listed again every hour and no new
// origin. Tests change the fields they exercise.
func config(n int, d time.Duration) simulate.Config {
	return simulate.Config{
		Origins:       n,
		Duration:      d,
		VisitTypes:    []string{"git"},
		Workers:       map[string]int{"git": 32},
		QueueCapacity: 1000,
		Relist:        time.Hour,
		Seed:          1,
	}
}

// run runs the scenario on cfg and fails the test on an error.
func run(t *testing.T, cfg simulate.Config, sc simulate.Scenario) simulate.Result {
	t.Helper()
	res, err := simulate.Run(context.Background(), cfg, sc)
	require.NoError(t, err)
	require.NotEmpty(t, res.Samples)
	return res
}

// policy returns the figures of one policy of git in res.
func policy(t *testing.T, res simulate.Result, p revisit.Policy) simulate.PolicyFigures {
	t.Helper()
	for _, f := range res.Policies {
		if f.VisitType == "git" && f.Policy == p {
			return f
		}
	}
	require.Failf(t, "policy missing", "the result has no figures for git's %s: %+v", p, res.Policies)
	return simulate.PolicyFigures{}
}

// metricsCSV writes the report of res in a temporary folder and returns
// its metrics.csv.
func metricsCSV(t *testing.T, res simulate.Result) []byte {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, report.Write(dir, []simulate.Result{res}))
	b, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	require.NoError(t, err)
	return b
}

// TestSameSeedSameResult checks that a seed gives the same Result and metrics.csv every time, and
// another seed another, on a world where a Poisson-distributed number of new origins arrive.
func TestSameSeedSameResult(t *testing.T) {
	cfg := config(300, 24*time.Hour)
	cfg.ListerRate, cfg.ListerEvery, cfg.SteadyListing = 20, time.Hour, false
	sc := simulate.Scenario{Name: "determinism"}

	first, second := run(t, cfg, sc), run(t, cfg, sc)
	require.Equal(t, first, second)
	csv := metricsCSV(t, first)
	require.Equal(t, csv, metricsCSV(t, second))

	cfg.Seed = 2
	other := run(t, cfg, sc)
	require.NotEqual(t, first.Samples, other.Samples)
	require.NotEqual(t, csv, metricsCSV(t, other))
}

// revisits runs a fresh world of a few thousand origins, with workers
// enough to visit them all, long enough for visited origins to change
// and become eligible again.
func revisits(t *testing.T, sc simulate.Scenario) simulate.Result {
	cfg := config(2000, 36*time.Hour)
	cfg.Workers["git"] = 200
	return run(t, cfg, sc)
}

// TestProductionWeightsVisitEveryPolicyWithEligibleOrigins checks that the never-visited origins
// decrease and that both policies with eligible origins choose visits under the production weights.
func TestProductionWeightsVisitEveryPolicyWithEligibleOrigins(t *testing.T) {
	res := revisits(t, simulate.Scenario{Name: "production weights"})

	first, last := res.Samples[0], res.Samples[len(res.Samples)-1]
	require.Less(t, last.NeverVisited, first.NeverVisited)
	require.Positive(t, policy(t, res, revisit.NeverVisitedOldestUpdateFirst).Visits)
	require.Positive(t, policy(t, res, revisit.AlreadyVisitedOrderByLag).Visits)
	// The default world lists a tenth of the origins without a last update.
	require.Positive(t, policy(t, res, revisit.OriginsWithoutLastUpdate).Visits)
}

// TestZeroWeightPolicyGetsNoVisit checks that already_visited_order_by_lag with a weight of 0 chooses
// no visit on a world where it has eligible origins, while the other policies choose visits.
func TestZeroWeightPolicyGetsNoVisit(t *testing.T) {
	shares := orchestrator.DefaultShares("git")
	for i := range shares {
		if shares[i].Policy == revisit.AlreadyVisitedOrderByLag {
			shares[i].Weight = 0
		}
	}
	res := revisits(t, simulate.Scenario{Name: "no revisits",
		Orchestrator: orchestrator.Config{Shares: map[string][]orchestrator.Share{"git": shares}}})

	require.Zero(t, policy(t, res, revisit.AlreadyVisitedOrderByLag).Visits)
	require.Positive(t, policy(t, res, revisit.NeverVisitedOldestUpdateFirst).Visits)
}

// TestOneWorkerKeepsItsQueueFull checks that one worker is always busy and that from the first
// round on its queue, smaller than the world, holds at least 1 − MinFreeRatio of its capacity.
func TestOneWorkerKeepsItsQueueFull(t *testing.T) {
	cfg := config(1000, 12*time.Hour)
	cfg.Workers["git"], cfg.QueueCapacity = 1, 100
	// The rounds follow room in the queue sooner than the shortest visit, so that the worker
	// cannot take a message between the moment the queue has room and the round that fills it.
	oc := orchestrator.Config{MinFreeRatio: 0.05, QueuePollInterval: world.MinRunTime / 2,
		RoundJitter: world.MinRunTime / 2}
	res := run(t, cfg, simulate.Scenario{Name: "one worker", Orchestrator: oc})

	least := int(math.Ceil(float64(cfg.QueueCapacity) * (1 - oc.MinFreeRatio)))
	for _, s := range res.Samples[1:] {
		q := s.ByType[0]
		require.GreaterOrEqual(t, q.QueueDepth, least, "queue depth at %s", s.Time)
		require.LessOrEqual(t, q.QueueDepth, cfg.QueueCapacity, "queue depth at %s", s.Time)
		require.InDelta(t, 1, q.Utilization, 0.001, "utilization until %s", s.Time)
	}
}

// lostVisits runs a world of a few origins whose visits never report a
// result, with the visit timeout given and the default cooldowns: they
// keep an origin whose visit is in flight from being grabbed again, until
// its loss gives it back the last_scheduled it had before.
func lostVisits(t *testing.T, origins int, timeout time.Duration) simulate.Result {
	cfg := config(origins, 24*time.Hour)
	cfg.LossRate = 1
	return run(t, cfg, simulate.Scenario{Name: "lost visits", Orchestrator: orchestrator.Config{VisitTimeout: timeout}})
}

// TestLostVisitsAreDispatchedAgainAfterTheTimeout checks that origins whose visits never report a
// result are dispatched again once the visit timeout passed, and not before.
func TestLostVisitsAreDispatchedAgainAfterTheTimeout(t *testing.T) {
	const origins, timeout = 5, 2 * time.Hour
	res := lostVisits(t, origins, timeout)
	require.Greater(t, res.Counters.Total, int64(origins))
	// At most one dispatch of an origin every timeout, from the start to the end included.
	runs := int64(res.End.Sub(res.Start)/timeout) + 1
	require.LessOrEqual(t, res.Counters.Total, origins*runs)
	for _, s := range res.Samples {
		require.Equal(t, s.Known, s.NeverVisited, "never visited at %s", s.Time)
		require.Zero(t, s.ByType[0].Visited, "visited at %s", s.Time)
	}

	res = lostVisits(t, origins, res.End.Sub(res.Start)+timeout)
	require.LessOrEqual(t, res.Counters.Total, int64(origins))
}

// TestInvalidConfigNamesTheOption checks that Validate, and Run, refuse a wrong configuration with
// an error that names the option.
func TestInvalidConfigNamesTheOption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*simulate.Config)
		option string
	}{
		{"negative origins", func(c *simulate.Config) { c.Origins = -1 }, "origins:"},
		{"loss rate above 1", func(c *simulate.Config) { c.LossRate = 2 }, "loss rate:"},
		{"workers of an unknown visit type", func(c *simulate.Config) { c.Workers = map[string]int{"hg": 4} }, "workers:"},
		{"visit type twice", func(c *simulate.Config) { c.VisitTypes = []string{"git", "hg", "git"} }, "visit types:"},
		{"no worker", func(c *simulate.Config) { c.Workers["git"] = 0 }, "workers of git:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(10, time.Hour)
			tc.change(&cfg)
			require.ErrorContains(t, cfg.Validate(), tc.option)
			_, err := simulate.Run(context.Background(), cfg, simulate.Scenario{})
			require.ErrorContains(t, err, tc.option)
		})
	}
}

// TestStoreWithOriginsIsRefused checks that Run refuses a store that lists origins of a simulated
// visit type already, saying which.
func TestStoreWithOriginsIsRefused(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(t.TempDir(), "filled.db")
	st, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	lister, err := st.ListerGetOrCreate(ctx, "example", "filled")
	require.NoError(t, err)
	_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: lister.ID,
		URL: "https://example.com/filled.git", VisitType: "git", Enabled: true}})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	cfg := config(10, time.Hour)
	cfg.Store = url
	_, err = simulate.Run(ctx, cfg, simulate.Scenario{Name: "filled store"})
	require.ErrorContains(t, err, "the store lists git origins already (1)")
}

// TestVisitTypesApartOrInOneStore checks that the visit types simulated at
// once, each in its own store in memory, give the same Result as one after
// another in one store file: no visit type's run depends on another's.
func TestVisitTypesApartOrInOneStore(t *testing.T) {
	cfg := config(400, 12*time.Hour)
	cfg.VisitTypes, cfg.Workers = []string{"git", "hg", "pypi"}, nil
	cfg.ListerRate, cfg.SteadyListing = 31, true
	sc := simulate.Scenario{Name: "apart"}
	apart := run(t, cfg, sc)
	cfg.Store = "sqlite://" + filepath.Join(t.TempDir(), "one.db")
	require.Equal(t, apart, run(t, cfg, sc))

	var newOrigins int
	for _, l := range apart.FirstVisits {
		newOrigins += l.New
	}
	require.Equal(t, 31*12, newOrigins, "the lister's steady 31 an hour, spread over the visit types")
	last := apart.Samples[len(apart.Samples)-1]
	require.Equal(t, int64(400+31*12), last.Known)
	require.Len(t, last.ByType, 3)
	require.Len(t, apart.Policies, 9, "three policies of each visit type")
}

// TestSchedulerMetricsAreTheStores checks, at every sample, the scheduler
// metrics the simulation keeps against those the store computes, on a
// world where the origins that change every second fail each daily visit
// (more than two hours of commits to fetch), are disabled after three,
// and are enabled again when listed anew; the gone origins stay disabled.
func TestSchedulerMetricsAreTheStores(t *testing.T) {
	cfg := config(1000, 5*24*time.Hour)
	cfg.CheckMetrics, cfg.ListerRate, cfg.Relist = true, 10, 36*time.Hour
	daily := revisit.Cooldowns{Absolute: 24 * time.Hour, Failed: 24 * time.Hour}
	sc := simulate.Scenario{Name: "daily", Orchestrator: orchestrator.Config{Shares: map[string][]orchestrator.Share{
		"git": {{Policy: revisit.OldestScheduledFirst, Weight: 1, Grab: revisit.GrabParams{Cooldowns: &daily}}}}}}
	res := run(t, cfg, sc)
	disabled, enabledAgain := int64(0), false
	for _, s := range res.Samples {
		enabledAgain = enabledAgain || s.Known-s.Enabled < disabled
		disabled = s.Known - s.Enabled
	}
	require.Positive(t, disabled, "origins that keep failing are disabled")
	require.True(t, enabledAgain, "and enabled again when listed anew")
	require.Greater(t, res.Samples[len(res.Samples)-1].Known, int64(1000), "new origins were listed")
}
