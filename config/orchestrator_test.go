package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/orchestrator"
)

func loadYAML(t *testing.T, text string, env ...string) (Config, error) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "revisit.yaml")
	require.NoError(t, os.WriteFile(name, []byte(text), 0o600))
	return Load(Sources{File: name, Environ: env})
}

func TestOrchestratorSection(t *testing.T) {
	t.Parallel()
	cfg, err := loadYAML(t, `
orchestrator:
  max_per_round: 500
  visit_timeout: 2d
  visit_timeouts: {content: 2h}
  scheduling_policy:
    git:
      - {policy: already_visited_order_by_lag, weight: 49}
      - policy: origins_without_last_update
        weight: 0
        lister: gitlab/gitlab.com
        sample: 0.5
        cooldowns: {scheduled: 3d}
`, "REVISIT_ORCHESTRATOR_LEASE_TTL=20s")
	require.NoError(t, err)
	o := cfg.Orchestrator
	require.Equal(t, 500, o.MaxPerRound)
	require.Equal(t, Duration(48*time.Hour), o.VisitTimeout)
	require.Equal(t, Duration(2*time.Hour), o.VisitTimeouts["content"])
	require.Equal(t, Duration(20*time.Second), o.LeaseTTL, "from the environment")
	require.Equal(t, Duration(time.Minute), o.QueueFullBackoff, "default kept")
	git := o.SchedulingPolicy["git"]
	require.Len(t, git, 2)
	require.Equal(t, 0, *git[1].Weight)
	name, instance := git[1].ListerName()
	require.Equal(t, []string{"gitlab", "gitlab.com"}, []string{name, instance})
	require.Equal(t, Duration(72*time.Hour), *git[1].Cooldowns.Scheduled)
	require.Nil(t, git[1].Cooldowns.Failed)
	c := git[1].Cooldowns.Resolve()
	want := revisit.DefaultCooldowns()
	want.Scheduled = 72 * time.Hour
	require.Equal(t, want, c, "the cooldowns left out keep their defaults")
}

func TestOrchestratorErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ yaml, want string }{
		{"orchestrator: {scheduling_policy: {git: [{policy: nope, weight: 1}]}}", "orchestrator.scheduling_policy.git[0].policy"},
		{"orchestrator: {scheduling_policy: {git: [{policy: stop_after_success}]}}", "orchestrator.scheduling_policy.git[0].weight: missing"},
		{"orchestrator: {scheduling_policy: {git: [{policy: stop_after_success, weight: -1}]}}", "weight: -1 is negative"},
		{"orchestrator: {scheduling_policy: {git: [{policy: stop_after_success, weight: 1, wieght: 2}]}}", `unknown key "orchestrator.scheduling_policy.git[0].wieght"`},
		{"orchestrator: {scheduling_policy: {Git Hub: [{policy: stop_after_success, weight: 1}]}}", "not a visit type"},
		{"orchestrator: {min_free_ratio: 2}", "orchestrator.min_free_ratio: 2 is not between 0 and 1"},
		{"orchestrator: {min_free_ratio: -0.1}", "orchestrator.min_free_ratio: -0.1 is not between 0 and 1"},
		{"orchestrator: {round_jitter: 0s}", "orchestrator.round_jitter: 0s is not positive"},
		{"orchestrator: {queue_poll_interval: 0s}", "orchestrator.queue_poll_interval: 0s is not positive"},
		{"orchestrator: {scheduling_policy: {git: [{policy: stop_after_success, weight: 0}]}}",
			"orchestrator.scheduling_policy.git: no policy has a positive weight"},
		{"orchestrator: {scheduling_policy: {git: [{policy: stop_after_success, weight: 1, sample: 1}]}}",
			"orchestrator.scheduling_policy.git[0].sample: 1 is not in [0, 1)"},
		{"orchestrator: {scheduling_policy: {git: [{policy: stop_after_success, weight: 1, lister: a/b/c}]}}",
			`orchestrator.scheduling_policy.git[0].lister: "a/b/c" is not name or name/instance`},
		{"orchestrator: {scheduling_policy: {git: [{policy: first_visits_after_listing, weight: 1}]}}",
			"orchestrator.scheduling_policy.git[0].lister: first_visits_after_listing needs a lister"},
		{"orchestrator: {max_per_round: 0}", "orchestrator.max_per_round: must be between 1 and 100000, not 0"},
		{"orchestrator: {max_per_round: 500000}", "orchestrator.max_per_round: must be between 1 and 100000, not 500000"},
		{"orchestrator: {visit_timeout: 0s}", "orchestrator.visit_timeout: 0s is not positive"},
		{"orchestrator: {visit_timeouts: {git: 0s}}", "orchestrator.visit_timeouts.git: 0s is not positive"},
		{"orchestrator: {visit_timeouts: {git: soon}}", "visit_timeouts"},
	} {
		_, err := loadYAML(t, c.yaml)
		require.ErrorContains(t, err, c.want, c.yaml)
	}
}

func TestOrchestratorDefaultsAreTheOrchestrators(t *testing.T) {
	t.Parallel()
	want := orchestrator.DefaultConfig()
	want.RestartMin, want.RestartMax, want.UnhealthyAfter = 0, 0, 0 // not in the file
	require.Equal(t, want, Default().Orchestrator.Config())
}

func TestOrchestratorZeroFreeRatioIsAnyFreeSlot(t *testing.T) {
	t.Parallel()
	cfg, err := loadYAML(t, "orchestrator: {min_free_ratio: 0}")
	require.NoError(t, err)
	require.Equal(t, orchestrator.AnyFreeSlot, cfg.Orchestrator.Config().MinFreeRatio,
		"0 publishes as soon as one slot is free; it does not fall back to the default")
	cfg, err = loadYAML(t, "orchestrator: {min_free_ratio: 0.2}")
	require.NoError(t, err)
	require.InDelta(t, 0.2, cfg.Orchestrator.Config().MinFreeRatio, 0)
}
