package simulate

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/revisit-sched/revisit/simulate/world"
)

// Variation is a variation of a simulation's world that a comparison of
// configurations also runs, to see whether their ranking holds: the same
// world but for one trait, smaller, on another seed.
type Variation struct {
	Name   string
	Config Config
}

// The scale of the variations: at most this many origins and this long.
const (
	variationOrigins  = 2_000
	variationDuration = 3 * 24 * time.Hour
)

// Variations returns the variations of the world of cfg: itself, then
// with the first visits' cost coupled to activity or not (whichever cfg's
// is not), then with every lister listing again daily, and weekly; each
// at most variationOrigins origins over variationDuration, its workers,
// queues and explicit lister rate scaled as its origins, the k-th on seed
// cfg.Seed + k.
func Variations(cfg Config) []Variation {
	cfg = cfg.withDefaults()
	small := cfg
	small.Origins = min(cfg.Origins, variationOrigins)
	small.Duration = min(cfg.Duration, variationDuration)
	scale := float64(small.Origins) / float64(max(cfg.Origins, 1))
	scaled := func(n int) int { return max(1, int(math.Round(float64(n)*scale))) }
	small.Workers = map[string]int{}
	for _, vt := range cfg.VisitTypes {
		small.Workers[vt] = scaled(cfg.workers(vt))
	}
	small.QueueCapacity = scaled(cfg.QueueCapacity)
	if !cfg.WorldListerRate {
		small.ListerRate = cfg.ListerRate * scale
	}
	cost := world.Coupled
	if cfg.World.Visits.FirstVisitCost == world.Coupled {
		cost = world.Independent
	}
	vary := []struct {
		name   string
		change func(*Config, *world.Params)
	}{
		{"this world, smaller", func(*Config, *world.Params) {}},
		{"first visits' cost " + cost, func(_ *Config, w *world.Params) { w.Visits.FirstVisitCost = cost }},
		{"listed again daily", func(c *Config, _ *world.Params) { c.Relist = 24 * time.Hour }},
		{"listed again weekly", func(c *Config, _ *world.Params) { c.Relist = 7 * 24 * time.Hour }},
	}
	out := make([]Variation, len(vary))
	for k, v := range vary {
		c, w := small, *cfg.World
		w.Listers = slices.Clone(w.Listers)
		v.change(&c, &w)
		c.World, c.Seed = &w, cfg.Seed+uint64(k)+1
		out[k] = Variation{Name: fmt.Sprintf("%s (%d origins, %s, seed %d)", v.name, c.Origins, c.Duration, c.Seed),
			Config: c}
	}
	return out
}

// WorldRank is a configuration's place among those compared in one world.
type WorldRank struct {
	World string
	// Eventful counts its eventful visits, by which the configurations
	// rank: Rank is 1 plus the number of configurations with more than
	// RankMargin more.
	Eventful int64
	Rank     int
	// Wins says it ranks first alone.
	Wins bool
}

// RankMargin is how much more eventful visits a configuration needs to
// rank above another: less is a tie, within what another seed changes.
const RankMargin = 0.1

// Rank sets the Worlds of each result: its rank among results by eventful
// visits in this world, then in each variation; varied[k][i] is results[i]
// run in variations[k].
func Rank(results []Result, variations []Variation, varied [][]Result) {
	worlds := append([][]Result{results}, varied...)
	for i := range results {
		results[i].Worlds = nil
	}
	for k, rs := range worlds {
		name := "this world"
		if k > 0 {
			name = variations[k-1].Name
		}
		ranks, firsts := make([]int, len(rs)), 0
		for i, r := range rs {
			ranks[i] = 1
			for _, other := range rs {
				if float64(other.Counters.Eventful) > float64(r.Counters.Eventful)*(1+RankMargin) {
					ranks[i]++
				}
			}
			if ranks[i] == 1 {
				firsts++
			}
		}
		for i, r := range rs {
			results[i].Worlds = append(results[i].Worlds, WorldRank{World: name, Eventful: r.Counters.Eventful,
				Rank: ranks[i], Wins: ranks[i] == 1 && firsts == 1})
		}
	}
}

// Robustness says in which of the worlds it was compared in the
// configuration wins (ranks first alone), flagging one that wins in only
// one; "" when it was not compared.
func (r Result) Robustness() string {
	var wins []string
	for _, w := range r.Worlds {
		if w.Wins {
			wins = append(wins, w.World)
		}
	}
	switch {
	case len(r.Worlds) == 0:
		return ""
	case len(wins) == len(r.Worlds):
		return "wins in every world"
	case len(wins) == 0:
		return "wins in no world"
	case len(wins) == 1:
		return "FLAGGED: wins only in " + wins[0] + ": its lead is that world's, not the configuration's"
	}
	return fmt.Sprintf("wins in %d of %d worlds: the ranking depends on the world", len(wins), len(r.Worlds))
}
