package cli

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/config"
)

// grabFlags are the flags of the commands that choose origins with a
// policy: the policy, the lister, enabled or disabled origins, sampling,
// the cooldowns and the scheduling instant.
type grabFlags struct {
	lister      listerFlag
	policy      string
	disabled    bool
	sample      float64
	noCooldowns bool
	now         string
	cooldowns   []cooldownFlag
}

// cooldownFlag is one cooldown's flag and value.
type cooldownFlag struct {
	name, usage string
	value       config.Duration
	dst         func(*revisit.Cooldowns) *time.Duration
}

// grabHelp is the part of the commands' help that explains grabFlags.
func grabHelp() string {
	return `Policies: ` + policyNames() + `.
Cooldowns are durations (12h, 7d, "14 days"); 0 disables one, --no-cooldowns
disables them all (cooldown flags given with it still apply).`
}

// register adds the flags to cmd, with --policy defaulting to policy.
// --tablesample, upstream's name, is taken for --sample.
func (g *grabFlags) register(cmd *cobra.Command, policy revisit.Policy) {
	fl := cmd.Flags()
	fl.StringVar(&g.policy, "policy", string(policy), "scheduling `policy`")
	g.lister.register(cmd)
	fl.BoolVar(&g.disabled, "disabled", false, "choose among disabled origins instead of enabled ones")
	fl.Float64Var(&g.sample, "sample", 0, "consider each eligible origin with this probability, in (0, 1) (also --tablesample)")
	fl.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "tablesample" {
			name = "sample"
		}
		return pflag.NormalizedName(name)
	})
	d := revisit.DefaultCooldowns()
	g.cooldowns = []cooldownFlag{
		{"absolute-cooldown", "not scheduled within this long", config.Duration(d.Absolute),
			func(c *revisit.Cooldowns) *time.Duration { return &c.Absolute }},
		{"scheduled-cooldown", "not scheduled since the last visit, unless this long ago", config.Duration(d.Scheduled),
			func(c *revisit.Cooldowns) *time.Duration { return &c.Scheduled }},
		{"failed-cooldown", "last visit not failed within this long", config.Duration(d.Failed),
			func(c *revisit.Cooldowns) *time.Duration { return &c.Failed }},
		{"not-found-cooldown", "last visit not \"not found\" within this long", config.Duration(d.NotFound),
			func(c *revisit.Cooldowns) *time.Duration { return &c.NotFound }},
	}
	for i := range g.cooldowns {
		c := &g.cooldowns[i]
		fl.Var(&c.value, c.name, c.usage)
	}
	fl.BoolVar(&g.noCooldowns, "no-cooldowns", false, "disable every cooldown")
	fl.StringVar(&g.now, "now", "", "schedule as of this RFC 3339 `time` (default: now)")
}

// params checks the flags and the VISIT_TYPE argument without the store,
// and returns the grab they describe, without its count and lister (the
// caller sets them) and with Now set only when --now is given.
func (g *grabFlags) params(cmd *cobra.Command, visitType string) (revisit.GrabParams, error) {
	p := revisit.GrabParams{VisitType: visitType, Disabled: g.disabled, Sample: g.sample}
	if err := revisit.ValidateVisitType(visitType); err != nil {
		return p, usageError{named("VISIT_TYPE", err)}
	}
	var err error
	if p.Policy, err = revisit.ParsePolicy(g.policy); err != nil {
		return p, usageError{err}
	}
	if g.now != "" {
		if p.Now, err = revisit.ParseTime("--now", g.now); err != nil {
			return p, usageError{named("--now", err)}
		}
	}
	c := revisit.Cooldowns{}
	if !g.noCooldowns {
		c = revisit.DefaultCooldowns()
	}
	for _, f := range g.cooldowns {
		if changed(cmd.Flags(), f.name) {
			*f.dst(&c) = time.Duration(f.value)
		}
	}
	p.Cooldowns = &c
	if _, _, _, err := g.lister.parse(); err != nil {
		return p, err
	}
	return p, nil
}
