package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/store/postgres/pgtest"
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

// A bench on a server whose settings are known to slow revisit down logs
// a warning before its figures, as the long-running commands do.
func TestBenchWarnsOfSlowServerSettings(t *testing.T) {
	h := newHarness(t)
	h.url = pgtest.URL(t) + "&wal_compression=pglz"
	r := h.run("bench", "feedback", "--origins", "500", "--statuses", "10")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "level=WARN")
	require.Contains(t, r.stderr, "database server setting: wal_compression = pglz")

	h.url = pgtest.URL(t) + "&wal_compression=lz4"
	r = h.run("bench", "feedback", "--origins", "500", "--statuses", "10")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "database server setting")
}
