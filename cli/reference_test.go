package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/golden"
)

// TestCLIReference holds docs/cli.md to the commands' help.
func TestCLIReference(t *testing.T) {
	var b strings.Builder
	require.NoError(t, Reference(&b))
	golden.File(t, filepath.Join("..", "docs", "cli.md"), b.String(), "TEST_UPDATE=1 go test ./cli -run TestCLIReference")
	for _, cmd := range []string{"## revisit origin browse", "## revisit history", "## revisit broker purge", "## revisit serve"} {
		require.Contains(t, b.String(), "\n"+cmd+"\n")
	}
}
