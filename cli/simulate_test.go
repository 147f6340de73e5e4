package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// simulateRun runs revisit simulate with args on its temporary store, in
// dir.
func simulateRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb},
		append([]string{"simulate"}, args...))
	return out.String(), errb.String(), code
}

// TestSimulateComparesConfigurations simulates the built-in weights and a
// configuration file side by side, and checks the report's files and
// what the command prints.
func TestSimulateComparesConfigurations(t *testing.T) {
	dir := t.TempDir()
	lagOnly := filepath.Join(dir, "never-only.yaml")
	require.NoError(t, os.WriteFile(lagOnly, []byte(`orchestrator:
  scheduling_policy:
    default:
      - {policy: never_visited_oldest_update_first, weight: 1}
`), 0o644))
	out := filepath.Join(dir, "out")
	stdout, stderr, code := simulateRun(t, "--origins", "300", "--days", "0.5", "--workers", "4",
		"--visit-types", "git,hg", "--lister-rate", "240/d", "--compare", lagOnly, "--out", out)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "built-in weights: 12h0m0s simulated, ")
	require.Contains(t, stdout, "never-only: 12h0m0s simulated, ")
	require.Regexp(t, `simulated in [0-9.]+m?s \([0-9]+ events, [0-9]+ events/s\)`, stdout)
	require.Contains(t, stdout, "report: "+filepath.Join(out, "report.html"))
	for _, f := range []string{"report.html", "plots/origins.svg", "plots/origins.png",
		"built-in-weights/metrics.csv", "never-only/metrics.csv", "never-only/summary.txt"} {
		require.FileExists(t, filepath.Join(out, f))
	}
	csv, err := os.ReadFile(filepath.Join(out, "built-in-weights", "metrics.csv"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	require.Equal(t, "timestamp,known_origins,enabled_origins,never_visited_origins,origins_with_pending_changes",
		strings.TrimSpace(lines[0]))
	require.Len(t, lines, 1+13, "a sample every hour, both ends included")
	require.True(t, strings.HasPrefix(lines[1], "2026-01-01 00:00:00+00:00,300,300,300,"), lines[1])
	summary, err := os.ReadFile(filepath.Join(out, "never-only", "summary.txt"))
	require.NoError(t, err)
	require.Contains(t, string(summary), "never_visited_oldest_update_first")
	require.NotContains(t, string(summary), "already_visited_order_by_lag")
}

func TestSimulateBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--days", "0"}, "--days: 0, want a positive number of days"},
		{[]string{"--workers", "git=none"}, `--workers "git=none": want VT=N or N`},
		{[]string{"--workers", "svn=2"}, "workers: svn is not a simulated visit type"},
		{[]string{"--lister-rate", "10/week"}, `--lister-rate: "10/week" is not a rate such as 100/h or 2400/d`},
		{[]string{"--policy", "newest_first"}, "--policy:"},
		{[]string{"--loss-rate", "1.5"}, "loss rate: 1.5 is not between 0 and 1"},
		{[]string{"--visit-types", "Git"}, "visit types:"},
		{[]string{"--start", "yesterday"}, `--start: "yesterday" is not a time`},
		{[]string{"--compare", "/nonexistent.yaml"}, "--compare /nonexistent.yaml"},
		{[]string{"--store", "sqlite://x.db", "--compare", "/dev/null"}, "--store runs one configuration"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			stdout, stderr, code := simulateRun(t, append([]string{"--origins", "10", "--days", "0.1"}, c.args...)...)
			require.NotEqual(t, 0, code, stdout)
			require.Contains(t, stderr, c.want)
			require.NotContains(t, stderr, "goroutine")
		})
	}
}
