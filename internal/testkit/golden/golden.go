// Package golden holds generated files of the repository to what
// generates them: a test compares a file with the text its generator
// gives, and writes the text over the file when TEST_UPDATE is set.
package golden

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// File requires the file at path to hold got; with TEST_UPDATE set, it
// writes got there first. how says how to write it again.
func File(t *testing.T, path, got, how string) {
	t.Helper()
	if os.Getenv("TEST_UPDATE") != "" {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "%s is not what generates it: %s writes it again", path, how)
}
