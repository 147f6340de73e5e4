package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFirstVisitsSection(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	require.NoError(t, err)
	require.Equal(t, Duration(time.Minute), cfg.FirstVisits.Interval, "the default interval")

	cfg, err = loadYAML(t, "first_visits: {interval: 5m}")
	require.NoError(t, err)
	require.Equal(t, Duration(5*time.Minute), cfg.FirstVisits.Interval)

	cfg, err = Load(Sources{Environ: []string{"REVISIT_FIRST_VISITS_INTERVAL=30s"}})
	require.NoError(t, err)
	require.Equal(t, Duration(30*time.Second), cfg.FirstVisits.Interval)

	_, err = loadYAML(t, "first_visits: {interval: 0}")
	require.EqualError(t, err, "first_visits.interval: 0 is not positive")
}
