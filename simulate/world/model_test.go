package world

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/pytest"
)

// TestSameWorldAsUpstreamsModel checks the model against an independent
// Python rendering of Software Heritage's: intervals, last updates,
// snapshot ids and first-visit run times.
func TestSameWorldAsUpstreamsModel(t *testing.T) {
	py := pytest.Plain(t)
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	var urls []string
	for i := 1; i <= 300; i++ {
		urls = append(urls, fmt.Sprintf("https://example.com/%06d.git", i))
	}
	cmd := pytest.Command(py, "testdata/model.py", fmt.Sprint(now.Unix()))
	cmd.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	out, err := cmd.Output()
	require.NoError(t, err)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	partial := 0
	for i := 0; sc.Scan(); i++ {
		var want struct {
			URL        string  `json:"url"`
			Interval   float64 `json:"interval"`
			LastUpdate float64 `json:"last_update"`
			Snapshot   string  `json:"snapshot"`
			RunTime    float64 `json:"run_time"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &want))
		o := NewOrigin(urls[i], "git")
		require.Equal(t, want.URL, o.URL)
		require.InDelta(t, want.Interval, o.Interval, want.Interval*1e-12, o.URL)
		require.InDelta(t, want.LastUpdate, float64(o.LastUpdate(now).UnixMicro())/1e6, 1e-5, o.URL)
		v := o.Visit(now, time.Time{})
		if want.RunTime > 7200 {
			partial++
			require.Equal(t, Visit{Duration: MaxRunTime, Outcome: Partial}, v, o.URL)
			continue
		}
		require.Equal(t, Full, v.Outcome, o.URL)
		require.Equal(t, want.Snapshot, hex.EncodeToString(v.Snapshot), o.URL)
		require.InDelta(t, want.RunTime, v.Duration.Seconds(), 1e-6, o.URL)
	}
	require.NoError(t, sc.Err())
	require.Positive(t, partial, "some origins change too often for a first visit to finish")
	require.Less(t, partial, 300)
}

// TestIntervalsAreLogUniform checks the spread of commit intervals over
// many origins: a third of the decades below one hour hold about a third
// of the origins.
func TestIntervalsAreLogUniform(t *testing.T) {
	const n = 20_000
	below := 0
	for i := range n {
		o := NewOrigin(fmt.Sprintf("https://example.com/%06d.git", i), "git")
		require.GreaterOrEqual(t, o.Interval, 1.0)
		require.Less(t, o.Interval, MaxInterval.Seconds())
		if o.Interval < 3600 {
			below++
		}
	}
	want := math.Log(3600) / math.Log(MaxInterval.Seconds())
	require.InDelta(t, want, float64(below)/n, 0.02)
}

func TestVisitsFetchTheCommitsSinceThePreviousAttempt(t *testing.T) {
	o := Origin{URL: "https://example.com/x.git", VisitType: "git", Interval: 60}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := o.Visit(now, now.Add(-time.Hour))
	require.Equal(t, Full, v.Outcome)
	require.Equal(t, MinRunTime+60*PerCommit, v.Duration)
	require.Equal(t, o.Snapshot(now), v.Snapshot)
	require.NotEqual(t, o.Snapshot(now), o.Snapshot(now.Add(time.Minute)), "a new commit, a new snapshot")
	require.Equal(t, o.Snapshot(now), o.Snapshot(now.Add(59*time.Second)))
	require.Equal(t, now.Add(-time.Duration(math.Mod(now.Sub(Epoch).Seconds(), 60))*time.Second), o.LastUpdate(now))
}

// TestUpdatesBracketNow checks that Updates returns the last commit at or
// before now and the next one, the one a moment after it sees.
func TestUpdatesBracketNow(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 200 {
		o := NewOrigin(fmt.Sprintf("https://example.com/%06d.git", i), "git")
		last, next := o.Updates(now)
		require.Equal(t, o.LastUpdate(now), last)
		require.False(t, last.After(now), "origin %d: last commit %s after now", i, last)
		require.True(t, next.After(now), "origin %d: next commit %s not after now", i, next)
		require.Equal(t, seconds(o.Interval), next.Sub(last))
		require.WithinDuration(t, next, o.LastUpdate(next.Add(time.Millisecond)), time.Microsecond,
			"origin %d: the commit after %s", i, last)
	}
}

// TestModIsMathMod checks mod against math.Mod on the world's own
// operands (seconds since the epoch, commit intervals) and on dividends
// next to multiples of the divisor, where s/c rounds to the wrong quotient.
func TestModIsMathMod(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	check := func(s, c float64) {
		if got, want := mod(s, c), math.Mod(s, c); got != want {
			t.Fatalf("mod(%v, %v) = %v, want %v", s, c, got, want)
		}
	}
	for range 1_000_000 {
		c := math.Pow(MaxInterval.Seconds(), rnd.Float64())
		s := rnd.Float64() * 20 * 365 * 86400
		check(s, c)
		k := math.Floor(s / c)
		for _, near := range []float64{k * c, math.Nextafter(k*c, 0), math.Nextafter(k*c, math.Inf(1))} {
			check(near, c)
		}
	}
	check(0, 1)
	check(3, 3)
}
