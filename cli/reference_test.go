package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCLIReference holds docs/cli.md to the commands' help: with
// TEST_UPDATE=1 it writes it again.
func TestCLIReference(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Reference(&b))
	path := filepath.Join("..", "docs", "cli.md")
	if os.Getenv("TEST_UPDATE") != "" {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(),
		"docs/cli.md is not the commands' help: TEST_UPDATE=1 go test ./cli -run TestCLIReference writes it again")
	for _, cmd := range []string{"## revisit origin browse", "## revisit history", "## revisit broker purge", "## revisit serve"} {
		require.Contains(t, b.String(), "\n"+cmd+"\n")
	}
}
