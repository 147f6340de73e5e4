package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The example production configuration of docs/deploy loads.
func TestDeployExampleLoads(t *testing.T) {
	t.Parallel()
	cfg, err := Load(Sources{File: "../docs/deploy/revisit.yaml"})
	require.NoError(t, err)
	require.Equal(t, "json", cfg.Log.Format)
	require.Len(t, cfg.API.Tokens, 2)
	require.Len(t, cfg.Orchestrator.SchedulingPolicy["git"], 3)
}
