package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/orchestrator"
	"github.com/revisit-sched/revisit/simulate"
	"github.com/revisit-sched/revisit/simulate/report"
	"github.com/revisit-sched/revisit/simulate/world"
)

func (a *app) simulateCommand() *cobra.Command {
	var (
		cfg        simulate.Config
		days       float64
		visitTypes []string
		workers    []string
		listerRate string
		policy     string
		compare    []string
		worldFile  string
		out        string
		upstream   bool
		start      string
		part       string
		variation  int
		cpuProfile string
	)
	cmd := &cobra.Command{
		Use:   "simulate [flags]",
		Short: "Simulate the scheduling of a world of origins to compare policies before changing them",
		Long: `Runs revisit's own store, orchestrator rounds and fold of results on a
simulated world with a simulated clock: origins whose commits come at a
steady pace derived from their URL (the model of Software Heritage's
simulator), listers that find new ones and list them again, forges down
for a while, and workers that visit them. A day of simulated time takes
seconds. --world FILE sets the world's parameters (docs/simulate.md).

The scheduling policy is the configuration's (--config FILE, its
orchestrator section: scheduling_policy and the thresholds and waits), or
one policy for every visit type (--policy), else the built-in weights.
--compare FILE runs the configuration of each FILE too, on the same world
and seed, and puts them side by side in one report; every configuration
also runs in four variations of the world, smaller, and the report says
where each wins, flagging one that wins in one world only.

Each visit type of each configuration runs apart, on its own clock, in its
own temporary SQLite store held in memory and in its own process (revisit
again), as many at once as there are cores. With
--store URL (a single configuration then), which must list no origin of
the simulated visit types, they run one after another in that store.

Writes into --out: metrics.csv (Software Heritage's simulator's columns),
samples.csv, summary.txt, plots/ (SVG and PNG) and report.html; with
several configurations, one directory of CSVs each. The same seed gives the
same files.

--upstream runs Software Heritage's simulator's settings: one visit type
(git), 48 workers, a queue of 10,000, rounds of at least 1,000 every 10 s
queued in the policy's order, its lister (at hour h it lists the world's
first 100·(h+1) origins again, new ones beyond), results folded by 100.
Flags given keep their value (--lister-rate 0: a lister that lists
nothing); --visit-types, --relist-every and --world conflict with it.`,
		Example: `  revisit simulate --origins 100000 --days 30 --visit-types git,hg,svn,pypi
  revisit simulate --policy never_visited_oldest_update_first --days 2
  revisit simulate --config prod.yaml --compare more-lag.yaml --out what-if`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if f.Changed("days") {
				if days <= 0 {
					return usagef("--days: %g, want a positive number of days", days)
				}
				cfg.Duration = time.Duration(days * float64(24*time.Hour))
			}
			cfg.VisitTypes = visitTypes
			var err error
			if cfg.Workers, err = parseWorkers(workers, visitTypes); err != nil {
				return usageError{err}
			}
			if listerRate == worldRate {
				cfg.WorldListerRate = true
			} else if cfg.ListerRate, err = parseRate(listerRate); err != nil {
				return usagef("--lister-rate: %v", err)
			}
			if start != "" {
				if cfg.Start, err = time.Parse(time.RFC3339, start); err != nil {
					return usagef("--start: %q is not a time such as 2026-01-01T00:00:00Z", start)
				}
			}
			cfg.Store = a.storeURL
			scenarios, err := a.scenarios(cmd, policy, compare)
			if err != nil {
				return err
			}
			if cfg.Store != "" && len(scenarios) > 1 {
				return usagef("--store runs one configuration: compare on the temporary store")
			}
			if upstream {
				if cfg, err = upstreamSettings(f, cfg, scenarios); err != nil {
					return err
				}
			} else if worldFile != "" {
				if cfg.World, err = readWorld(worldFile); err != nil {
					return err
				}
			}
			if part != "" {
				if variation > 0 {
					vs := simulate.Variations(cfg)
					if variation > len(vs) {
						return usagef("--%s: %d, there are %d variations", variationFlag, variation, len(vs))
					}
					cfg = vs[variation-1].Config
				}
				return runPart(cmd.Context(), a.env.Stdout, part, cfg, scenarios, cpuProfile)
			}
			return profiled(cpuProfile, func() error { return a.simulate(cmd.Context(), cfg, scenarios, out) })
		},
	}
	f := cmd.Flags()
	d := simulate.Defaults
	f.IntVar(&cfg.Origins, "origins", d.Origins, "origins at the start, spread evenly over the visit types")
	f.Float64Var(&days, "days", d.Duration.Hours()/24, "simulated `days`")
	f.StringSliceVar(&visitTypes, "visit-types", d.VisitTypes, "visit types of the origins, comma-separated")
	f.StringArrayVar(&workers, "workers", nil, "workers of a visit type, `VT=N` (repeatable), or N for every visit type (default 48)")
	f.IntVar(&cfg.QueueCapacity, "queue-capacity", d.QueueCapacity, "length of each visit type's queue")
	f.StringVar(&listerRate, "lister-rate", worldRate, "new origins the lister finds, `N/h` or N/d; "+worldRate+
		": as many as take the world's new_origins_load of the workers' time")
	f.StringVar(&worldFile, "world", "", "read the world's parameters from this YAML `file` (docs/simulate.md)")
	f.DurationVar(&cfg.ListerEvery, "lister-every", d.ListerEvery, "how often the lister records the origins it found")
	f.DurationVar(&cfg.Relist, "relist-every", 0, "how often every lister lists its origins again with their "+
		"last update (default: each lister's own cadence, from the world)")
	f.IntVar(&cfg.FoldBatch, "fold-batch", d.FoldBatch, "results folded at once")
	f.DurationVar(&cfg.FoldWait, "fold-wait", d.FoldWait, "the longest a result waits for its batch")
	f.Float64Var(&cfg.LossRate, "loss-rate", 0, "fraction of visits whose worker never answers (0 to 1)")
	f.StringVar(&policy, "policy", "", "one `policy` for every visit type, instead of the configuration's")
	f.StringArrayVar(&compare, "compare", nil, "also simulate the configuration of this `file` (repeatable)")
	f.Uint64Var(&cfg.Seed, "seed", d.Seed, "seed of every random choice")
	f.StringVar(&start, "start", d.Start.Format(time.RFC3339), "simulated `time` at the start")
	f.StringVar(&out, "out", "simulation", "`directory` of the report")
	f.BoolVar(&upstream, "upstream", false, "Software Heritage's simulator's settings, to compare both on the same world")
	f.StringVar(&part, partFlag, "", "run one part, SCENARIO/VISIT-TYPE, and write what it measured (gob)")
	f.StringVar(&cpuProfile, "cpu-profile", "", "write a CPU profile of the simulation to `file`; each part run "+
		"in its own process writes its own next to it (cpu.prof: cpu-0-git.prof for the first configuration's git)")
	f.IntVar(&variation, variationFlag, 0, "run the part in this variation of the world (1: the first)")
	_ = f.MarkHidden(partFlag)
	_ = f.MarkHidden(variationFlag)
	return cmd
}

// simulate runs the scenarios on the world of cfg, each part in a child
// process when it can, and with several scenarios on the variations of the
// world too; it prints what each measured and writes the report into out.
func (a *app) simulate(ctx context.Context, cfg simulate.Config, scenarios []simulate.Scenario, out string) error {
	began := time.Now()
	results, err := a.runScenarios(ctx, cfg, scenarios, 0)
	if err != nil {
		return fmt.Errorf("simulating: %w", err)
	}
	var events int64
	for _, res := range results {
		c := res.Counters
		events += res.Events
		fmt.Fprintf(a.env.Stdout, "%s: %s simulated, %d events\n"+
			"  visits %d: eventful %d, uneventful %d, very long %d\n",
			res.Name, res.End.Sub(res.Start), res.Events, c.Total, c.Eventful, c.Uneventful, c.VeryLong)
	}
	if len(scenarios) > 1 {
		variations := simulate.Variations(cfg)
		varied := make([][]simulate.Result, len(variations))
		for k, v := range variations {
			if varied[k], err = a.runScenarios(ctx, v.Config, scenarios, k+1); err != nil {
				return fmt.Errorf("simulating %s: %w", v.Name, err)
			}
			for _, res := range varied[k] {
				events += res.Events
			}
		}
		simulate.Rank(results, variations, varied)
		for _, res := range results {
			fmt.Fprintf(a.env.Stdout, "%s across %d worlds: %s\n", res.Name, len(res.Worlds), res.Robustness())
		}
	}
	wall := time.Since(began)
	fmt.Fprintf(a.env.Stdout, "simulated in %s (%d events, %.0f events/s)\n",
		wall.Round(10*time.Millisecond), events, float64(events)/wall.Seconds())
	if err := report.Write(out, results); err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stdout, "report: %s\n", filepath.Join(out, "report.html"))
	return nil
}

// runScenarios runs the scenarios on the world of cfg, the variation-th
// variation of the command line's world (0: itself), each part in a child
// process when it can.
func (a *app) runScenarios(ctx context.Context, cfg simulate.Config, scenarios []simulate.Scenario,
	variation int) ([]simulate.Result, error) {
	if a.env.Executable == "" || cfg.Store != "" {
		return simulate.RunAll(ctx, cfg, scenarios)
	}
	args := a.args
	if variation > 0 {
		args = append(slices.Clone(args), fmt.Sprintf("--%s=%d", variationFlag, variation))
	}
	return simulate.RunParts(ctx, cfg, scenarios, childParts(a.env.Executable, args, a.env.Environ))
}

// upstreamConflicts are the flags --upstream cannot honour, and why.
var upstreamConflicts = []struct{ flag, why string }{
	{"visit-types", "upstream's simulator has one visit type, git"},
	{"relist-every", "upstream's lister lists the world's first origins again at each run"},
	{"world", "upstream's world is its own"},
}

// upstreamSettings returns cfg with the settings of Software Heritage's
// simulator (simulate.Upstream), and sets them in the scenarios'
// orchestrator configurations; the flags given keep their value, and one
// that --upstream cannot honour is an error naming both.
func upstreamSettings(f *pflag.FlagSet, cfg simulate.Config, scenarios []simulate.Scenario) (simulate.Config, error) {
	for _, c := range upstreamConflicts {
		if f.Changed(c.flag) {
			return cfg, usagef("--%s conflicts with --upstream: %s", c.flag, c.why)
		}
	}
	given := cfg
	for i := range scenarios {
		cfg, scenarios[i].Orchestrator = simulate.Upstream(given, scenarios[i].Orchestrator)
	}
	for flag, keep := range map[string]func(){
		"workers":        func() { cfg.Workers = given.Workers },
		"queue-capacity": func() { cfg.QueueCapacity = given.QueueCapacity },
		"lister-rate":    func() { cfg.ListerRate, cfg.WorldListerRate = given.ListerRate, given.WorldListerRate },
		"lister-every":   func() { cfg.ListerEvery = given.ListerEvery },
		"fold-batch":     func() { cfg.FoldBatch = given.FoldBatch },
		"fold-wait":      func() { cfg.FoldWait = given.FoldWait },
	} {
		if f.Changed(flag) {
			keep()
		}
	}
	return cfg, nil
}

// scenarios returns the configurations to simulate: the configuration's
// (or one policy), then each file to compare.
func (a *app) scenarios(cmd *cobra.Command, policy string, compare []string) ([]simulate.Scenario, error) {
	c, err := a.config(cmd)
	if err != nil {
		return nil, err
	}
	base := simulate.Scenario{Name: "built-in weights", Orchestrator: c.Orchestrator.Config()}
	if a.configFile != "" {
		base.Name = fileName(a.configFile)
	}
	if policy != "" {
		p, err := revisit.ParsePolicy(policy)
		if err != nil {
			return nil, usagef("--policy: %v", err)
		}
		base.Name = string(p)
		base.Orchestrator.Shares = map[string][]orchestrator.Share{"default": {{Policy: p, Weight: 1}}}
	}
	scenarios := []simulate.Scenario{base}
	for _, file := range compare {
		c, err := config.Load(config.Sources{File: file})
		if err != nil {
			return nil, fmt.Errorf("--compare %s: %w", file, err)
		}
		scenarios = append(scenarios, simulate.Scenario{Name: fileName(file), Orchestrator: c.Orchestrator.Config()})
	}
	return scenarios, nil
}

// fileName is a file's base name without its extension.
func fileName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// parseWorkers reads --workers: VT=N, or N for every visit type.
func parseWorkers(specs, visitTypes []string) (map[string]int, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[string]int{}
	for _, s := range specs {
		vt, n, named := strings.Cut(s, "=")
		if !named {
			n = vt
		}
		count, err := strconv.Atoi(n)
		if err != nil || count < 1 {
			return nil, fmt.Errorf("--workers %q: want VT=N or N, N a positive number of workers", s)
		}
		if !named {
			for _, vt := range visitTypes {
				out[vt] = count
			}
			continue
		}
		out[vt] = count
	}
	return out, nil
}

// worldRate is the --lister-rate of new origins at the world's rate.
const worldRate = "auto"

// readWorld reads the world file at path.
func readWorld(path string) (*world.Params, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--world: %w", err)
	}
	w, err := world.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("--world %s: %w", path, err)
	}
	return &w, nil
}

// parseRate reads a number of origins an hour: N, N/h or N/d.
func parseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(s, "/")
	per := map[string]float64{"": 1, "h": 1, "d": 24}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || per == 0 || v < 0 {
		return 0, fmt.Errorf("%q is not a rate such as 100/h or 2400/d", s)
	}
	return v / per, nil
}
