package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/require"
)

// childEnv, set in a process's environment, has the test binary run the
// command line of its arguments instead of the tests: the test binary is
// then the revisit program of Env.Executable.
const childEnv = "TEST_RUN_REVISIT_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(Run(context.Background(), OSEnv(), os.Args[1:]))
	}
	os.Exit(m.Run())
}

// simulateRun runs revisit simulate with args on its temporary store, in
// this process.
func simulateRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return simulateIn(t, Env{}, args...)
}

// simulateIn runs revisit simulate with args in env, given empty streams.
func simulateIn(t *testing.T, env Env, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdin, env.Stdout, env.Stderr = strings.NewReader(""), &out, &errb
	code = Run(context.Background(), env, append([]string{"simulate"}, args...))
	return out.String(), errb.String(), code
}

// childrenEnv is the environment of a run whose simulate runs its parts in
// child processes of exe: the test's, without the REVISIT_ variables of the
// test harness, which revisit would refuse as unknown.
func childrenEnv(exe string) Env {
	environ := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "REVISIT_") })
	return Env{Executable: exe, Environ: append(environ, childEnv+"=1")}
}

// policyFile writes in dir the configuration file name.yaml whose
// scheduling policy is shares (YAML flow mappings) for every visit type,
// and returns its path.
func policyFile(t *testing.T, dir, name string, shares ...string) string {
	t.Helper()
	path := filepath.Join(dir, name+".yaml")
	body := "orchestrator:\n  scheduling_policy:\n    default:\n"
	for _, sh := range shares {
		body += "      - " + sh + "\n"
	}
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// TestSimulatePartsInChildProcesses runs a comparison of two
// configurations on two visit types with each part in a child process (the
// test binary), and checks that every file of the report is the same as
// when the parts run in this process.
func TestSimulatePartsInChildProcesses(t *testing.T) {
	dir := t.TempDir()
	other := policyFile(t, dir, "lag-first",
		"{policy: already_visited_order_by_lag, weight: 3}", "{policy: never_visited_oldest_update_first, weight: 1}")
	exe, err := os.Executable()
	require.NoError(t, err)
	args := []string{"--origins", "400", "--days", "1", "--workers", "4", "--visit-types", "git,pypi",
		"--lister-rate", "240/d", "--loss-rate", "0.05", "--compare", other}
	here, children := filepath.Join(dir, "here"), filepath.Join(dir, "children")
	stdout, stderr, code := simulateRun(t, append(args, "--out", here)...)
	require.Equal(t, 0, code, stderr)
	childOut, stderr, code := simulateIn(t, childrenEnv(exe), append(args, "--out", children)...)
	require.Equal(t, 0, code, stderr)
	figures := func(s string) string { return s[:strings.Index(s, "simulated in")] }
	require.Equal(t, figures(stdout), figures(childOut))
	require.Contains(t, childOut, "lag-first: 24h0m0s simulated")

	var files []string
	require.NoError(t, filepath.WalkDir(here, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	}))
	require.Greater(t, len(files), 10)
	for _, f := range files {
		rel, err := filepath.Rel(here, f)
		require.NoError(t, err)
		want, err := os.ReadFile(f)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(children, rel))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, got), "%s differs when the parts run in child processes", rel)
	}
}

// TestSimulateChildFailures checks what a simulation says when the
// process of a part fails, or answers what is not a part's result.
func TestSimulateChildFailures(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		return path
	}
	for _, c := range []struct {
		exe, want string
	}{
		{script("fails", `echo "revisit: simulating: the disk is full" >&2; exit 1`),
			"simulating: git: simulating: the disk is full"},
		{script("silent", "exit 3"), "simulating: git: its process (" + filepath.Join(dir, "silent") + "): exit status 3"},
		{script("garbage", "echo hello"), "simulating: git: reading what its process"},
		{filepath.Join(dir, "missing"), "no such file or directory"},
	} {
		t.Run(filepath.Base(c.exe), func(t *testing.T) {
			stdout, stderr, code := simulateIn(t, Env{Executable: c.exe},
				"--origins", "10", "--days", "0.1", "--visit-types", "git", "--out", filepath.Join(dir, "out"))
			require.Equal(t, ExitError, code, stdout)
			require.Contains(t, stderr, c.want)
			require.NoFileExists(t, filepath.Join(dir, "out", "report.html"))
		})
	}
}

// TestSimulateBadPart checks the hidden flag that runs one part.
func TestSimulateBadPart(t *testing.T) {
	for _, c := range []struct{ part, want string }{
		{"x", `--part: "x" is not SCENARIO/VISIT-TYPE`},
		{"0/2", "part 0/2: no such part of 1 scenarios of 2 visit types"},
		{"1/0", "part 1/0: no such part"},
	} {
		stdout, stderr, code := simulateRun(t, "--origins", "10", "--days", "0.1", "--visit-types", "git,hg",
			"--part", c.part)
		require.NotEqual(t, 0, code, stdout)
		require.Contains(t, stderr, c.want)
	}
}

// TestSimulateComparesConfigurations simulates the built-in weights and a
// configuration file side by side, and checks the report's files and
// what the command prints.
func TestSimulateComparesConfigurations(t *testing.T) {
	dir := t.TempDir()
	lagOnly := policyFile(t, dir, "never-only", "{policy: never_visited_oldest_update_first, weight: 1}")
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

// TestSimulateWorldFileChangesTheWinner compares never_visited_oldest_update_first
// with oldest_scheduled_first on 2,000 origins, 24 workers and a queue of
// 1,000, so that the first round takes the half of the world the policy
// puts first. In the default world, where a first visit costs what it
// costs whatever the origin's activity, they tie; a world file coupling
// the cost to activity, as upstream's world does, puts first the quiet
// origins, cheap to visit, and never visited wins by twice the eventful
// visits. The report flags, in the default world, that never visited wins
// only in the coupled variation, and with the world file, that it wins in
// all worlds but the uncoupled one.
func TestSimulateWorldFileChangesTheWinner(t *testing.T) {
	dir := t.TempDir()
	never := policyFile(t, dir, "never", "{policy: never_visited_oldest_update_first, weight: 1}")
	oldest := policyFile(t, dir, "oldest", "{policy: oldest_scheduled_first, weight: 1}")
	coupled := filepath.Join(dir, "coupled.yaml")
	require.NoError(t, os.WriteFile(coupled, []byte("visits: {first_visit_cost: coupled}\n"), 0o644))
	compare := func(args ...string) (stdout, summary, page string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		stdout, stderr, code := simulateRun(t, append([]string{"--config", never, "--compare", oldest,
			"--origins", "2000", "--days", "1", "--workers", "24", "--lister-rate", "0", "--out", out}, args...)...)
		require.Equal(t, 0, code, stderr)
		s, err := os.ReadFile(filepath.Join(out, "never", "summary.txt"))
		require.NoError(t, err)
		p, err := os.ReadFile(filepath.Join(out, "report.html"))
		require.NoError(t, err)
		return stdout, string(s), string(p)
	}
	stdout, summary, page := compare()
	flag := "never across 5 worlds: FLAGGED: wins only in first visits' cost coupled (2000 origins, 24h0m0s, seed 3)"
	require.Contains(t, stdout, flag)
	require.Contains(t, stdout, "oldest across 5 worlds: wins in no world")
	require.Contains(t, summary, strings.TrimPrefix(flag, "never across 5 worlds: "))
	require.Contains(t, page, "never: FLAGGED: wins only in first visits&#39; cost coupled")
	require.Regexp(t, `this world +1 +\d+\n`, summary, "a tie in this world")

	stdout, summary, _ = compare("--world", coupled)
	require.Contains(t, stdout, "never across 5 worlds: wins in 4 of 5 worlds: the ranking depends on the world")
	require.Regexp(t, `first visits' cost independent \(2000 origins, 24h0m0s, seed 3\) +1 +\d+\n`, summary,
		"a tie where the cost is not coupled")
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
		{[]string{"--upstream", "--visit-types", "git,hg"}, "--visit-types conflicts with --upstream: upstream's simulator has one visit type, git"},
		{[]string{"--upstream", "--relist-every", "24h"}, "--relist-every conflicts with --upstream"},
		{[]string{"--upstream", "--world", "w.yaml"}, "--world conflicts with --upstream"},
		{[]string{"--world", "/nonexistent.yaml"}, "--world: open /nonexistent.yaml"},
		{[]string{"--world", "bad.yaml"}, `--world bad.yaml: unknown key "origins.lost" (line 1)`},
		{[]string{"--lister-rate", "automatic"}, `--lister-rate: "automatic" is not a rate`},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			require.NoError(t, os.WriteFile("bad.yaml", []byte("origins: {lost: 0.1}\n"), 0o644))
			stdout, stderr, code := simulateRun(t, append([]string{"--origins", "10", "--days", "0.1"}, c.args...)...)
			require.NotEqual(t, 0, code, stdout)
			require.Contains(t, stderr, c.want)
			require.NotContains(t, stderr, "goroutine")
		})
	}
}

// TestSimulateUpstreamHonoursTheFlagsGiven checks that --upstream keeps
// the value of a flag given: upstream's lister, 100 origins an hour, finds
// new origins once its count passes the world's 200 (at the second hour:
// 300, then 100 more an hour), and none with --lister-rate 0; and
// --workers 1 visits fewer origins than upstream's 48 workers.
func TestSimulateUpstreamHonoursTheFlagsGiven(t *testing.T) {
	lastRow := func(args ...string) (known string, visits int) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		stdout, stderr, code := simulateRun(t, append([]string{"--upstream", "--origins", "200", "--days", "0.25",
			"--policy", "never_visited_oldest_update_first", "--out", out}, args...)...)
		require.Equal(t, 0, code, stderr)
		csv, err := os.ReadFile(filepath.Join(out, "metrics.csv"))
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
		_, err = fmt.Sscanf(stdout[strings.Index(stdout, "visits "):], "visits %d:", &visits)
		require.NoError(t, err, stdout)
		return strings.Split(lines[len(lines)-1], ",")[1], visits
	}
	known, upstreamVisits := lastRow()
	require.Equal(t, "700", known, "runs at 0 h to 6 h: 100·7 origins")
	known, _ = lastRow("--lister-rate", "0")
	require.Equal(t, "200", known)
	_, oneWorker := lastRow("--lister-rate", "0", "--workers", "1")
	require.Less(t, oneWorker, upstreamVisits)
}

// TestSimulateCPUProfile checks --cpu-profile: a simulation in this
// process writes one profile of it, and one whose parts run in child
// processes has each child profile its part next to the parent's file.
func TestSimulateCPUProfile(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	args := []string{"--origins", "2000", "--days", "2", "--visit-types", "git,hg"}
	for _, c := range []struct {
		name  string
		env   Env
		parts []string
	}{
		{"in this process", Env{}, []string{"cpu.prof"}},
		{"in child processes", childrenEnv(exe), []string{"cpu-0-git.prof", "cpu-0-hg.prof"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			_, stderr, code := simulateIn(t, c.env, append(args, "--out", dir, "--cpu-profile", filepath.Join(dir, "cpu.prof"))...)
			require.Equal(t, 0, code, stderr)
			require.FileExists(t, filepath.Join(dir, "cpu.prof"))
			for _, name := range c.parts {
				f, err := os.Open(filepath.Join(dir, name))
				require.NoError(t, err)
				p, err := profile.Parse(f)
				f.Close()
				require.NoError(t, err, name)
				require.True(t, profiles(p, "simulate.(*run).round"), "%s has no sample of a round", name)
				require.True(t, profiles(p, "modernc.org/sqlite"), "%s has no sample of SQLite", name)
			}
		})
	}
	dir := t.TempDir()
	_, stderr, code := simulateIn(t, childrenEnv(exe), append(args, "--out", dir,
		"--cpu-profile", filepath.Join(dir, "missing", "cpu.prof"))...)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "cpu profile: open "+filepath.Join(dir, "missing", "cpu.prof"))
	require.NoFileExists(t, filepath.Join(dir, "report.html"))
}

// profiles tells whether a sample of p has a function whose name contains
// name in its stack.
func profiles(p *profile.Profile, name string) bool {
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && strings.Contains(line.Function.Name, name) {
					return true
				}
			}
		}
	}
	return false
}
