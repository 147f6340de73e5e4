package world

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseSetsWhatTheFileNames checks that a world file changes the
// keys it names and keeps the defaults of the others, and that listers
// named replace the default ones.
func TestParseSetsWhatTheFileNames(t *testing.T) {
	p, err := Parse([]byte(`
visits:
  first_visit_cost: coupled
  max_run_time: 1h
origins: {gone: 0.1}
listers:
  - {name: gitlab, share: 1, relist_every: 2d, incremental: true}
`))
	require.NoError(t, err)
	want := Default()
	want.Visits.FirstVisitCost, want.Visits.MaxRunTime = Coupled, want.Visits.MaxRunTime/2
	want.Origins.Gone = 0.1
	want.Listers = []Lister{{Name: "gitlab", Share: 1, RelistEvery: want.Listers[0].RelistEvery * 2, Incremental: true}}
	require.Equal(t, want, p)

	p, err = Parse(nil)
	require.NoError(t, err)
	require.Equal(t, Default(), p, "an empty file is the default world")
}

// TestBadWorldFilesNameTheKey checks the errors of world files.
func TestBadWorldFilesNameTheKey(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"visits: {min_runtime: 1s}", `unknown key "visits.min_runtime" (line 1)`},
		{"origins: {gone: lots}", `origins.gone: want a number, got "lots"`},
		{"origins: {gone: 1.5}", "origins.gone: 1.5 is not between 0 and 1"},
		{"visits: {first_visit_cost: cheap}", `visits.first_visit_cost: "cheap" is neither coupled nor independent`},
		{"visits: {max_run_time: 2 fortnights}", `visits.max_run_time: "2 fortnights" is not a duration`},
		{"visits: {max_run_time: 0.1s}", "visits.max_run_time: 100ms is below min_run_time 500ms"},
		{"commits: {max_interval: 0}", "commits.max_interval: 0 is not positive"},
		{"listers: []", "listers: none"},
		{"listers: [{name: a, share: 0.5, relist_every: 1d}]", "listers: their shares add up to 0.5, not 1"},
		{"listers: [{name: a, share: 1}]", "listers[0].relist_every: 0 is not positive"},
		{"listers: [{share: 1, relist_every: 1d}]", "listers[0].name: missing"},
		{"forges: {outage_length: 60d}", "forges: an outage of 60d every 30d: want 0 < outage_length < outage_every"},
		{"- just a list", "(document): want a mapping, got a list"},
	} {
		t.Run(c.file, func(t *testing.T) {
			_, err := Parse([]byte(c.file))
			require.ErrorContains(t, err, c.want)
		})
	}
}

// origins returns the model's first n origins.
func origins(m *Model, n int) []Origin {
	out := make([]Origin, n)
	for i := range out {
		out[i] = m.NewOrigin(fmt.Sprintf("https://example.com/%06d.git", i+1), "git")
	}
	return out
}

// TestDefaultWorldDrawsItsFractions checks, over 20,000 origins of the
// default world, the fractions of origins without a last update, gone and
// of each lister, and that the first visit's cost no longer follows the
// origin's pace while upstream's does.
func TestDefaultWorldDrawsItsFractions(t *testing.T) {
	m, err := New(Default())
	require.NoError(t, err)
	const n = 20_000
	var noUpdate, gone, incremental int
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Of the origins with a commit a day or less often, those whose first visit is cheap (under a minute).
	var quiet, quietCheap, upstreamQuietCheap int
	for _, o := range origins(m, n) {
		if o.NoLastUpdate {
			noUpdate++
		}
		if o.Gone {
			gone++
			continue
		}
		if o.Lister == 0 {
			incremental++
		}
		v := o.Visit(now, time.Time{})
		if o.Interval >= 86400 && v.Outcome != Failed {
			quiet++
			if v.Duration < time.Minute {
				quietCheap++
			}
			if NewOrigin(o.URL, o.VisitType).Visit(now, time.Time{}).Duration < time.Minute {
				upstreamQuietCheap++
			}
		}
	}
	require.InDelta(t, 0.1, float64(noUpdate)/n, 0.01)
	require.InDelta(t, 0.02, float64(gone)/n, 0.005)
	require.InDelta(t, 0.5, float64(incremental)/float64(n-gone), 0.02)
	require.Equal(t, quiet, upstreamQuietCheap, "upstream's: a quiet origin's first visit is cheap")
	// A first visit under a minute fetches fewer than 595 commits: a pace slower than a year / 595.
	cheap := 1 - math.Log(FirstLookBack.Seconds()/595)/math.Log(MaxInterval.Seconds())
	require.InDelta(t, cheap, float64(quietCheap)/float64(quiet), 0.03, "independent: as cheap as any origin's")
}

// TestForgesAreDownForTheirOutage checks that each forge is down for the
// outage's length in each period, and that its origins' visits then fail
// at once without fetching.
func TestForgesAreDownForTheirOutage(t *testing.T) {
	p := Default()
	m, err := New(p)
	require.NoError(t, err)
	every, length := time.Duration(p.Forges.OutageEvery), time.Duration(p.Forges.OutageLength)
	start := Epoch.Add(100 * every)
	for forge := range p.Forges.Count {
		down := 0
		for at := start; at.Before(start.Add(3 * every)); at = at.Add(time.Hour) {
			if m.down(forge, at) {
				down++
			}
		}
		require.Equal(t, 3*int(length/time.Hour), down, "forge %d: hours down in three periods", forge)
	}
	for _, o := range origins(m, 200) {
		if o.Gone {
			require.Equal(t, NotFound, o.Visit(start, time.Time{}).Outcome)
			continue
		}
		for at := start; ; at = at.Add(time.Hour) {
			if m.down(o.forge, at) {
				require.Equal(t, Visit{Duration: MinRunTime, Outcome: Failed}, o.Visit(at, time.Time{}))
				break
			}
		}
	}
}

// TestMeanFirstVisitIsTheOriginsMean checks MeanFirstVisit against the
// mean of the first visits of 20,000 origins of upstream's world.
func TestMeanFirstVisitIsTheOriginsMean(t *testing.T) {
	m, err := New(Upstream())
	require.NoError(t, err)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var sum time.Duration
	const n = 20_000
	for _, o := range origins(m, n) {
		sum += o.Visit(now, time.Time{}).Duration
	}
	require.InEpsilon(t, (sum / n).Seconds(), m.MeanFirstVisit().Seconds(), 0.03)
}
