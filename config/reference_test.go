package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/golden"
)

// TestConfigurationReference holds docs/configuration.md to the
// configuration's definition: every key is there, with its environment
// variable.
func TestConfigurationReference(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Reference(&b))
	golden.File(t, "../docs/configuration.md", b.String(), "TEST_UPDATE=1 go test ./config -run TestConfigurationReference")
	for _, key := range Keys() {
		require.Contains(t, b.String(), "| `"+key+"` | `"+EnvVar(key)+"` |", key)
	}
	require.Contains(t, b.String(), "| `store` | `REVISIT_STORE` | `"+DefaultStore+"` |")
	require.Contains(t, b.String(), "| `orchestrator.scheduling_policy` | — |")
}
