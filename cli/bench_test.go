package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBenchFeedbackWorkersAndCPUProfile(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(h.dir, "cpu.prof")
	rows := h.jsonList("bench", "feedback", "--origins", "500", "--statuses", "300", "--batch", "100",
		"--workers", "2", "--cpu-profile", path)
	require.Len(t, rows, 1)
	require.EqualValues(t, 300, rows[0]["statuses"])
	require.EqualValues(t, 2, rows[0]["workers"])
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b, "a pprof profile (gzip)")

	msg := h.fails(1, "bench", "feedback", "--origins", "500", "--statuses", "10",
		"--cpu-profile", filepath.Join(h.dir, "missing", "cpu.prof"))
	require.Contains(t, msg, "cpu profile")
	msg = h.fails(2, "bench", "feedback", "--workers", "0")
	require.Contains(t, msg, "--workers")
}
