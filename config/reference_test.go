package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfigurationReference holds docs/configuration.md to the
// configuration's definition: every key is there, with its environment
// variable; with TEST_UPDATE=1 it writes it again.
func TestConfigurationReference(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Reference(&b))
	path := "../docs/configuration.md"
	if os.Getenv("TEST_UPDATE") != "" {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(),
		"docs/configuration.md is not the configuration's definition: TEST_UPDATE=1 go test ./config -run TestConfigurationReference writes it again")
	for _, key := range Keys() {
		require.Contains(t, b.String(), "| `"+key+"` | `"+EnvVar(key)+"` |", key)
	}
	require.Contains(t, b.String(), "| `store` | `REVISIT_STORE` | `"+DefaultStore+"` |")
	require.Contains(t, b.String(), "| `orchestrator.scheduling_policy` | — |")
}
