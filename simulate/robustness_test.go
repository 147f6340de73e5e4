package simulate_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/simulate"
	"github.com/revisit-sched/revisit/simulate/world"
)

// TestVariationsChangeOneTraitSmaller checks the variations of a world of
// 10,000 origins over a week: at most 2,000 origins over three days, the
// workers, queue and lister rate a fifth, a seed each, and each changes
// its one trait.
func TestVariationsChangeOneTraitSmaller(t *testing.T) {
	cfg := simulate.Config{Origins: 10_000, Duration: 7 * 24 * time.Hour, Workers: map[string]int{"git": 40},
		QueueCapacity: 1000, ListerRate: 50, Seed: 7}
	vs := simulate.Variations(cfg)
	require.Len(t, vs, 4)
	for k, v := range vs {
		c := v.Config
		require.Equal(t, 2000, c.Origins, v.Name)
		require.Equal(t, 3*24*time.Hour, c.Duration, v.Name)
		require.Equal(t, map[string]int{"git": 8}, c.Workers, v.Name)
		require.Equal(t, 200, c.QueueCapacity, v.Name)
		require.InDelta(t, 10, c.ListerRate, 1e-9, v.Name)
		require.Equal(t, uint64(8+k), c.Seed, v.Name)
	}
	require.Equal(t, world.Default(), *vs[0].Config.World)
	require.Equal(t, world.Coupled, vs[1].Config.World.Visits.FirstVisitCost)
	require.Equal(t, "first visits' cost coupled (2000 origins, 72h0m0s, seed 9)", vs[1].Name)
	require.Equal(t, 24*time.Hour, vs[2].Config.Relist)
	require.Equal(t, 7*24*time.Hour, vs[3].Config.Relist)
	require.Equal(t, world.Independent, world.Default().Visits.FirstVisitCost, "the world of cfg is left as it was")
}

// TestRankFlagsAWinInOneWorldOnly ranks three configurations in a world
// and two variations by eventful visits, less than 10 % apart a tie.
func TestRankFlagsAWinInOneWorldOnly(t *testing.T) {
	results := func(eventful ...int64) []simulate.Result {
		var rs []simulate.Result
		for i, e := range eventful {
			rs = append(rs, simulate.Result{Name: string(rune('a' + i)), Counters: simulate.Counters{Eventful: e}})
		}
		return rs
	}
	here := results(100, 95, 50)
	variations := []simulate.Variation{{Name: "v1"}, {Name: "v2"}}
	simulate.Rank(here, variations, [][]simulate.Result{results(200, 100, 50), results(100, 150, 50)})

	require.Equal(t, []simulate.WorldRank{{World: "this world", Eventful: 100, Rank: 1},
		{World: "v1", Eventful: 200, Rank: 1, Wins: true}, {World: "v2", Eventful: 100, Rank: 2}}, here[0].Worlds)
	require.Equal(t, "FLAGGED: wins only in v1: its lead is that world's, not the configuration's", here[0].Robustness())
	require.Equal(t, "FLAGGED: wins only in v2: its lead is that world's, not the configuration's", here[1].Robustness())
	require.Equal(t, "wins in no world", here[2].Robustness())
	require.Equal(t, []int{3, 3, 3}, []int{here[2].Worlds[0].Rank, here[2].Worlds[1].Rank, here[2].Worlds[2].Rank})

	here = results(300, 100)
	simulate.Rank(here, variations, [][]simulate.Result{results(200, 100), results(100, 50)})
	require.Equal(t, "wins in every world", here[0].Robustness())
	simulate.Rank(here, variations, [][]simulate.Result{results(200, 100), results(100, 100)})
	require.Equal(t, "wins in 2 of 3 worlds: the ranking depends on the world", here[0].Robustness())
	require.Empty(t, simulate.Result{}.Robustness(), "not compared")
}
