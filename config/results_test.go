package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResultsSection(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{})
	require.NoError(t, err)
	require.Equal(t, Duration(time.Hour), cfg.Results.MaxFuture, "the default tolerance")

	cfg, err = loadYAML(t, "results: {max_future: 10m}")
	require.NoError(t, err)
	require.Equal(t, Duration(10*time.Minute), cfg.Results.MaxFuture)

	cfg, err = Load(Sources{Environ: []string{"REVISIT_RESULTS_MAX_FUTURE=2h"}})
	require.NoError(t, err)
	require.Equal(t, Duration(2*time.Hour), cfg.Results.MaxFuture)

	_, err = loadYAML(t, "results: {max_future: 0}")
	require.EqualError(t, err, "results.max_future: 0 is not positive")
}
