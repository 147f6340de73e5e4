package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// harness runs the command line in-process against one SQLite store
// (--store url, unless url is empty), at clock (nil: the real time).
type harness struct {
	t       *testing.T
	dir     string
	url     string
	environ []string
	clock   revisit.Clock
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	return &harness{t: t, dir: dir, url: "sqlite://" + filepath.Join(dir, "revisit.db"),
		clock: func() time.Time { return testNow }}
}

type result struct {
	stdout, stderr string
	code           int
}

// runIn runs revisit with args (and --store) and standard input stdin.
func (h *harness) runIn(stdin string, args ...string) result {
	h.t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Environ: h.environ, Clock: h.clock}
	if h.url != "" {
		args = append([]string{"--store", h.url}, args...)
	}
	code := Run(context.Background(), env, args)
	return result{out.String(), errb.String(), code}
}

func (h *harness) run(args ...string) result { h.t.Helper(); return h.runIn("", args...) }

// ok runs and requires success.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, 0, r.code, "revisit %s: %s", strings.Join(args, " "), r.stderr)
	return r.stdout
}

// fails runs and requires a failure reported on one line of standard error.
func (h *harness) fails(code int, args ...string) string {
	h.t.Helper()
	r := h.run(args...)
	require.Equal(h.t, code, r.code, "revisit %s: %s", strings.Join(args, " "), r.stdout)
	require.Empty(h.t, r.stdout)
	require.Equal(h.t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	require.True(h.t, strings.HasPrefix(r.stderr, "revisit: "), r.stderr)
	require.NotContains(h.t, r.stderr, "goroutine")
	return r.stderr
}

func (h *harness) file(name, content string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	require.NoError(h.t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func (h *harness) jsonList(args ...string) []map[string]any {
	h.t.Helper()
	var v []map[string]any
	out := h.ok(append(args, "--format", "json")...)
	require.NoError(h.t, json.Unmarshal([]byte(out), &v), out)
	return v
}

func (h *harness) jsonObject(args ...string) map[string]any {
	h.t.Helper()
	var v map[string]any
	out := h.ok(append(args, "--format", "json")...)
	require.NoError(h.t, json.Unmarshal([]byte(out), &v), out)
	return v
}

func originLines(n int, visitType string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"url": "https://example.org/r%d", "visit_type": %q, "lister_name": "gitlab", "lister_instance_name": "example.org", "last_update": "2024-0%d-01T00:00:00Z"}`+"\n",
			i, visitType, i%9+1)
	}
	return b.String()
}

func TestRecordAndList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.file("origins.jsonl", originLines(3, "git")+"\n   \n")
	require.Equal(t, "inserted 3, updated 0\n", h.ok("origin", "record", f))
	require.Equal(t, "inserted 0, updated 3\n", h.ok("origin", "record", f))

	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("origin", "record", f, "--format", "json")), &rec))
	require.Equal(t, map[string]any{"inserted": 0.0, "updated": 3.0, "invalid": 0.0}, rec)

	os := h.jsonList("origin", "list")
	require.Len(t, os, 3)
	require.Equal(t, "https://example.org/r0", os[0]["url"])
	require.Equal(t, "git", os[0]["visit_type"])
	require.Equal(t, "gitlab/example.org", os[0]["lister"])
	require.Equal(t, true, os[0]["enabled"])
	require.Equal(t, "2024-01-01T00:00:00Z", os[0]["last_update"])
	require.Equal(t, map[string]any{}, os[0]["extra_loader_arguments"])

	// The lister exists now, and can be named by id.
	ls := h.jsonList("lister", "list")
	require.Len(t, ls, 1)
	id := ls[0]["id"].(string)
	f2 := h.file("byid.jsonl", `{"url": "https://example.org/hg", "visit_type": "hg", "lister_id": "`+id+`", "enabled": false}`+"\n")
	require.Equal(t, "inserted 1, updated 0\n", h.ok("origin", "record", f2))

	show := h.jsonObject("lister", "show", "gitlab", "example.org")
	require.Equal(t, id, show["id"])
	require.Equal(t, []any{"git", "hg"}, show["visit_types"])
	require.Equal(t, show, h.jsonObject("lister", "show", "--id", id))
	require.Contains(t, h.ok("lister", "show", "gitlab/example.org"), "visit_types:")
	require.Contains(t, h.fails(1, "lister", "show", "nope"), "no lister nope")

	// Filters.
	require.Len(t, h.jsonList("origin", "list", "--enabled", "any"), 4)
	require.Len(t, h.jsonList("origin", "list", "--enabled", "false"), 1)
	require.Len(t, h.jsonList("origin", "list", "--visit-type", "hg", "--enabled", "any"), 1)
	require.Len(t, h.jsonList("origin", "list", "--url", "https://example.org/r1", "--url", "https://example.org/r2"), 2)
	require.Len(t, h.jsonList("origin", "list", "--lister", "gitlab/example.org"), 3)
	require.Len(t, h.jsonList("origin", "list", "--lister-id", id), 3)
	require.Len(t, h.jsonList("origin", "list", "--lister", "gitlab"), 3, "a name alone: the one lister of that name")
	require.Contains(t, h.fails(1, "origin", "list", "--lister", "gitlab/"), "no lister gitlab")
	require.Contains(t, h.fails(1, "origin", "list", "--lister", "nobody"), "no lister nobody")
	require.Contains(t, h.fails(2, "origin", "list", "--lister", "a", "--lister-id", id), "not both")
	require.Contains(t, h.fails(2, "origin", "list", "--enabled", "maybe"), `--enabled: "maybe"`)

	// Pages.
	r := h.run("origin", "list", "--limit", "2", "--format", "json")
	require.Equal(t, 0, r.code)
	var page []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	require.Len(t, page, 2)
	_, token, ok := strings.Cut(strings.TrimSpace(r.stderr), "--page-token ")
	require.True(t, ok, r.stderr)
	rest := h.jsonList("origin", "list", "--limit", "2", "--page-token", token)
	require.Len(t, rest, 1)
	r = h.run("origin", "list", "--limit", "1", "--all", "--format", "json")
	require.Empty(t, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &page))
	require.Len(t, page, 3)
}

func TestRecordFromStandardInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("task-type", "add", "load-git", "--backend-name", "swh.loader.git.tasks.UpdateGitRepository")
	r := h.runIn(originLines(2, "git"), "origin", "record", "-")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "inserted 2, updated 0\n", r.stdout)
	require.Empty(t, r.stderr, "no progress bar when standard error is not a terminal")
}

func TestRecordInvalidWritesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	good := originLines(2, "git")
	bad := `{"url": "https://example.org/x", "visit_type": "git", "lister_name": "l", "last_update": "2024-01-01"}` + "\n" +
		`{"url": "https://example.org/y", "visit_type": "git", "lister_id": "6f1f5c3e-52a6-4a5e-9f0e-6d1d3a1b2c3d"}` + "\n" +
		"{oops\n"
	f := h.file("bad.jsonl", good+bad)
	r := h.run("origin", "record", f)
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Equal(t, []string{
		`line 3: last_update: want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "2024-01-01"`,
		`line 4: lister_id: no lister with id 6f1f5c3e-52a6-4a5e-9f0e-6d1d3a1b2c3d`,
		`line 5: malformed JSON: invalid character 'o' looking for beginning of object key string`,
		"revisit: " + f + ": 3 invalid line(s) of 5; nothing written (--skip-invalid writes the valid ones)",
	}, lines)
	require.Empty(t, h.jsonList("origin", "list", "--enabled", "any"))
	require.Empty(t, h.jsonList("lister", "list"), "listers named by valid lines are not created either")

	r = h.run("origin", "record", f, "--skip-invalid")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "inserted 2, updated 0, skipped 3 invalid line(s)\n", r.stdout)
	require.Contains(t, r.stderr, "line 3: last_update")
	require.Len(t, h.jsonList("origin", "list"), 2)
}

func TestRecordManyInvalidLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var b strings.Builder
	for range 30 {
		b.WriteString(`{"url": "x"}` + "\n")
	}
	b.WriteString(strings.Repeat("z", maxLineLength+10) + "\n")
	r := h.run("origin", "record", h.file("bad.jsonl", b.String()))
	require.Equal(t, 1, r.code)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 22)
	require.Equal(t, `line 1: url: "x" is not an absolute URL`, lines[0])
	require.Equal(t, "... and 11 more invalid line(s)", lines[20])
	require.Contains(t, lines[21], "31 invalid line(s) of 31")
}

func TestRecordBatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.file("o.jsonl", originLines(25, "git"))
	require.Equal(t, "inserted 25, updated 0\n", h.ok("origin", "record", f, "--batch-size", "7"))
	h.fails(2, "origin", "record", f, "--batch-size", "0")
}

// Several writers store what one writer stores: each origin's lines are
// written in input order, so the last line of an origin wins, however the
// lines are cut into batches and written side by side.
func TestRecordWritersKeepEachOriginsOrder(t *testing.T) {
	t.Parallel()
	const origins, versions = 60, 5
	rng := rand.New(rand.NewPCG(7, 7))
	// Each origin's lines at random places, its versions in order.
	var order []int
	for i := range origins {
		for range versions {
			order = append(order, i)
		}
	}
	rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	listers := []string{`"lister_name": "gitlab", "lister_instance_name": "example.org"`, `"lister_name": "github"`}
	version := make([]int, origins)
	var b strings.Builder
	for _, i := range order {
		v := version[i]
		version[i]++
		for l, lister := range listers[:1+i%2] {
			fmt.Fprintf(&b, `{"url": "https://example.org/r%d", "visit_type": "git", %s, "enabled": %t, "last_update": "2024-%02d-%02dT00:00:00Z", "extra_loader_arguments": {"v": %d, "l": %d}}`+"\n",
				i, lister, (v+i)%3 != 0, v+1, i%27+1, v, l)
		}
	}
	lines := b.String()
	stored := func(writers string) []map[string]any {
		h := newHarness(t)
		var rec map[string]any
		out := h.ok("origin", "record", h.file("o.jsonl", lines), "--batch-size", "4", "--writers", writers, "--format", "json")
		require.NoError(t, json.Unmarshal([]byte(out), &rec))
		require.Equal(t, float64(origins*3/2), rec["inserted"], "one insert a listed origin, its first line")
		list := h.jsonList("origin", "list", "--enabled", "any")
		require.Len(t, list, origins*3/2)
		for _, o := range list {
			// The times of the recording, and the listers' ids, are not
			// the same in two stores.
			delete(o, "first_seen")
			delete(o, "last_seen")
			delete(o, "lister_id")
		}
		slices.SortFunc(list, func(a, b map[string]any) int {
			return cmp.Or(cmp.Compare(a["lister"].(string), b["lister"].(string)), cmp.Compare(a["url"].(string), b["url"].(string)))
		})
		return list
	}
	one := stored("1")
	for _, o := range one {
		require.Equal(t, float64(versions-1), o["extra_loader_arguments"].(map[string]any)["v"], "the last line wins: %v", o)
	}
	require.Equal(t, one, stored("4"))
	require.Contains(t, newHarness(t).fails(2, "origin", "record", "-", "--writers", "0"), "--writers: must be positive")
}

func TestGrabNext(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("origin", "record", h.file("o.jsonl", originLines(3, "git")))

	peek := h.jsonList("origin", "peek-next", "git", "2")
	require.Len(t, peek, 2)
	first := h.jsonList("origin", "grab-next", "git", "2")
	require.Equal(t, peek, first, "peek-next does not mark")
	second := h.jsonList("origin", "grab-next", "git", "2")
	require.Len(t, second, 1, "the absolute cooldown keeps the first two")
	for _, o := range first {
		require.NotEqual(t, o["url"], second[0]["url"])
	}
	require.Empty(t, h.jsonList("origin", "grab-next", "git", "5"))
	// Twelve hours and a minute later the absolute cooldown is over, but the
	// scheduled cooldown (no visit since) still holds; without cooldowns all
	// three are back.
	later := testNow.Add(12*time.Hour + time.Minute).Format(time.RFC3339)
	require.Empty(t, h.jsonList("origin", "grab-next", "git", "5", "--now", later, "--dry-run"))
	require.Len(t, h.jsonList("origin", "grab-next", "git", "5", "--now", later, "--dry-run", "--scheduled-cooldown", "0"), 3)
	require.Len(t, h.jsonList("origin", "peek-next", "git", "5", "--no-cooldowns"), 3)
	require.Len(t, h.jsonList("origin", "peek-next", "git", "5", "--no-cooldowns", "--lister", "gitlab/example.org",
		"--policy", "never_visited_oldest_update_first"), 3)

	// Stats of a grabbed origin.
	url := first[0]["url"].(string)
	st := h.jsonObject("visit-stats", "show", url, "git")
	require.Equal(t, "2025-03-01T12:00:00Z", st["last_scheduled"])
	require.Nil(t, st["last_visit"])
	text := h.ok("visit-stats", "show", url, "git")
	require.Contains(t, text, "last_visit:                 never")
	require.Contains(t, h.fails(1, "visit-stats", "show", "https://nowhere.org/x", "git"), "no visit stats for https://nowhere.org/x")

	// Table output has a header and one line per origin.
	table := h.ok("origin", "peek-next", "git", "5", "--no-cooldowns")
	require.Len(t, strings.Split(strings.TrimSpace(table), "\n"), 4)
	require.True(t, strings.HasPrefix(table, "URL"), table)
}

func TestGrabErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "5", "--policy", "fastest_first"),
		`unknown policy "fastest_first" (known: oldest_scheduled_first,`)
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "-5"), "-5: negative numbers are not valid arguments")
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "--", "-5"), `COUNT: must be between 1 and 100000, not -5`)
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "0"), `COUNT: must be between 1 and 100000, not 0`)
	require.Contains(t, h.fails(2, "origin", "peek-next", "git", "500000"), `COUNT: must be between 1 and 100000, not 500000`)
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "many"), `COUNT: want an integer between 1 and 100000, got "many"`)
	require.Contains(t, h.fails(2, "origin", "grab-next", "Git!", "1"), `VISIT_TYPE: "Git!" is not a visit type`)
	require.Contains(t, h.fails(2, "origin", "grab-next", "git"), "want 2 argument(s) VISIT_TYPE COUNT, got 1")
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "1", "--absolute-cooldown", "soon"), `"soon" is not a duration`)
	require.Contains(t, h.fails(2, "origin", "grab-next", "git", "1", "--now", "yesterday"),
		`--now: want an RFC 3339 time such as 2026-03-01T12:00:00Z, got "yesterday"`)
	require.Contains(t, h.fails(2, "origin", "list", "--lister-id", "abc"),
		`--lister-id: want a UUID such as 0190a4e2-7c1f-7b3e-9d2a-5f6e7d8c9b0a, got "abc"`)
	require.Contains(t, h.fails(2, "origin", "list", "--limit", "0"), `--limit: must be between 1 and 10000, not 0`)
	require.Contains(t, h.fails(1, "origin", "grab-next", "git", "1", "--sample", "2"), "sample")
	require.Contains(t, h.fails(1, "origin", "grab-next", "git", "1", "--policy", "first_visits_after_listing"), "needs a lister")
	require.Contains(t, h.fails(1, "origin", "record", filepath.Join(h.dir, "missing.jsonl")), "no such file or directory")
	require.Contains(t, h.fails(2, "origin", "list", "--format", "xml"), `--format: "xml" is not one of table, json, csv`)
	require.Contains(t, h.fails(2, "nonsense"), `unknown command "nonsense"`)
	require.Contains(t, h.fails(2, "origin", "list", "--bogus"), "unknown flag: --bogus")
	require.Contains(t, h.fails(2, "serve", "--listen", "5093"), `--listen: "5093" is not host:port (as 127.0.0.1:5093`)
	missing := "sqlite://" + filepath.Join(h.dir, "nowhere", "revisit.db")
	require.Contains(t, h.fails(1, "--store", missing, "origin", "record", h.file("o.jsonl", originLines(1, "git"))),
		"its directory "+filepath.Join(h.dir, "nowhere")+" does not exist")
}

func TestFormats(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("origin", "record", h.file("o.jsonl", originLines(2, "git")))

	out := h.ok("origin", "list", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, []string{"url", "visit_type", "lister", "lister_id", "enabled", "last_update", "first_seen",
		"last_seen", "is_fork", "forked_from_url", "extra_loader_arguments"}, recs[0])
	require.Equal(t, "https://example.org/r1", recs[2][0])
	require.Equal(t, "true", recs[2][4])
	require.Equal(t, "2024-02-01T00:00:00Z", recs[2][5])
	require.Equal(t, "{}", recs[2][10])

	// Empty lists are still well-formed.
	require.Equal(t, "[]\n", h.ok("origin", "list", "--visit-type", "svn", "--format", "json"))
	out = h.ok("origin", "list", "--visit-type", "svn", "--format", "csv")
	require.Equal(t, "url,visit_type,lister,lister_id,enabled,last_update,first_seen,last_seen,is_fork,forked_from_url,extra_loader_arguments\n", out)

	// Metrics, in the three formats.
	ms := h.jsonList("origin", "update-metrics")
	require.Len(t, ms, 1)
	require.Equal(t, 2.0, ms[0]["origins_known"])
	require.Equal(t, 2.0, ms[0]["origins_never_visited"])
	require.Equal(t, ms, h.jsonList("origin", "metrics", "--visit-type", "git", "--lister", "gitlab/example.org"))
	require.Empty(t, h.jsonList("origin", "metrics", "--visit-type", "hg"))
	recs, err = csv.NewReader(strings.NewReader(h.ok("origin", "metrics", "--format", "csv"))).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Contains(t, h.ok("origin", "metrics"), "gitlab/example.org")
}

func TestTaskTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.file("tt.yaml", `
- type: load-git
  backend_name: swh.loader.git.tasks.UpdateGitRepository
  description: Update a git repository
  default_interval: 64 days
  min_interval: 12h
  max_interval: 64d
  backoff_factor: 2
  max_queue_length: 5000
- type: load-hg
  backend_name: swh.loader.mercurial.tasks.LoadMercurial
  num_retries: 3
  retry_delay: 1 hour
  run_timeout: 3h
`)
	require.Equal(t, "created 2, updated 0 task types\n", h.ok("task-type", "register", f))
	require.Equal(t, "created 0, updated 2 task types\n", h.ok("task-type", "register", f))

	git := h.jsonObject("task-type", "show", "load-git")
	require.Equal(t, map[string]any{"type": "load-git", "backend_name": "swh.loader.git.tasks.UpdateGitRepository",
		"description": "Update a git repository", "default_interval": "64d", "min_interval": "12h",
		"max_interval": "64d", "backoff_factor": 2.0, "max_queue_length": 5000.0, "num_retries": 0.0,
		"retry_delay": nil, "run_timeout": nil}, git)
	hg := h.jsonObject("task-type", "show", "load-hg")
	require.Equal(t, 1000.0, hg["max_queue_length"])
	require.Equal(t, "1h", hg["retry_delay"])
	require.Equal(t, "3h", hg["run_timeout"])

	out := h.ok("task-type", "add", "load-svn", "--backend-name", "swh.loader.svn.tasks.LoadSvnRepository",
		"--default-interval", "1 day, 12:00:00", "--max-interval", "90 days")
	require.Equal(t, "created task type load-svn\n", out)
	svn := h.jsonObject("task-type", "show", "load-svn")
	require.Equal(t, "1d12h", svn["default_interval"])
	require.Equal(t, "90d", svn["max_interval"])
	require.Len(t, h.jsonList("task-type", "list"), 3)
	require.Contains(t, h.ok("task-type", "list"), "load-svn")

	require.Contains(t, h.fails(1, "task-type", "add", "load-svn", "--backend-name", "x"), "exists already")
	require.Contains(t, h.fails(2, "task-type", "add", "load-cvs"), "--backend-name is required")
	require.Contains(t, h.fails(2, "task-type", "add", "load-cvs", "--backend-name", "x", "--min-interval", "soon"), `"soon" is not a duration`)
	require.Contains(t, h.fails(1, "task-type", "add", "load-cvs", "--backend-name", "x", "--min-interval", "2d", "--max-interval", "1d"),
		"min_interval")
	require.Contains(t, h.fails(1, "task-type", "show", "load-nope"), "load-nope")

	bad := h.file("bad.yaml", "- type: load-git\n  backend_name: x\n- type: load-hg\n  backend: y\n")
	require.Contains(t, h.fails(1, "task-type", "register", bad), `bad.yaml: entry 2 (line 3): unknown key "backend" (line 4)`)
	bad = h.file("bad2.yaml", "- type: load-git\n  backend_name: x\n  num_retries: lots\n")
	require.Contains(t, h.fails(1, "task-type", "register", bad), `entry 1 (line 1): num_retries: want an integer, got "lots"`)
	bad = h.file("bad3.yaml", "- type: load-git\n")
	require.Contains(t, h.fails(1, "task-type", "register", bad), `entry 1 (load-git, line 1): backend_name: missing`)
	bad = h.file("bad4.yaml", "type: load-git\n")
	require.Contains(t, h.fails(1, "task-type", "register", bad), `want a list of task types`)
	bad = h.file("bad5.yaml", "- {type: load-git, backend_name: x}\n- {type: load-git, backend_name: y}\n")
	require.Contains(t, h.fails(1, "task-type", "register", bad), `task type load-git is also entry 1`)
	require.Contains(t, h.fails(1, "task-type", "register", filepath.Join(h.dir, "none.yaml")), "no such file")
	// Nothing of a bad file was written.
	require.Equal(t, "swh.loader.git.tasks.UpdateGitRepository", h.jsonObject("task-type", "show", "load-git")["backend_name"])
}

func TestDatabase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// SQLite stores migrate when opened: migrate finds nothing to do.
	require.Contains(t, h.ok("db", "migrate"), "schema up to date (version ")
	mig := h.jsonObject("db", "migrate")
	require.Equal(t, mig["from"], mig["to"])
	st := h.jsonObject("db", "status")
	require.Equal(t, true, st["up_to_date"])
	require.Equal(t, st["current"], st["latest"])
	require.Contains(t, h.ok("db", "status"), "up to date")
}

func TestConfiguration(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("db", "migrate") // creates the store the read-only commands below read
	// The store comes from the file when no flag names it.
	cfg := h.file("revisit.yaml", "store: "+h.url+"\nlog:\n  level: debug\n")
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	require.Equal(t, 0, Run(context.Background(), env, []string{"--config", cfg, "lister", "list", "--format", "json"}), errb.String())
	require.Equal(t, "[]\n", out.String())
	require.Contains(t, errb.String(), "level=DEBUG", "log.level from the file")

	h.environ = []string{"REVISIT_STROE=x"}
	require.Contains(t, h.fails(1, "lister", "list"), "unknown environment variable REVISIT_STROE")
	h.environ = []string{"REVISIT_LOG_LEVEL=loud"}
	require.Contains(t, h.fails(1, "lister", "list"), `log.level: "loud" is not one of debug, info, warn, error (set by REVISIT_LOG_LEVEL)`)
	require.Equal(t, 0, h.run("lister", "list", "--log-level", "warn").code, "the flag wins over the environment")
	h.environ = nil
	require.Contains(t, h.fails(1, "--config", filepath.Join(h.dir, "none.yaml"), "lister", "list"), "none.yaml: no such file")
	bad := h.file("bad.yaml", "stroe: x\n")
	require.Contains(t, h.fails(1, "--config", bad, "lister", "list"), `bad.yaml: unknown key "stroe"`)
}

// TestEmbeddedStoreNotice changes the working directory: it must not run in
// parallel.
func TestEmbeddedStoreNotice(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	abs, err := filepath.Abs("revisit.db")
	require.NoError(t, err)
	notice := "revisit: using the embedded SQLite store at " + abs + " (set --store or REVISIT_STORE to change)\n"
	for _, args := range [][]string{{"lister", "list"}, {"db", "status"}, {"origin", "peek-next", "git", "3"},
		{"visit-stats", "show", "https://a.example/b", "git"}, {"task", "list"}, {"task-type", "show", "load-git"}} {
		errb.Reset()
		require.Equal(t, 1, Run(context.Background(), env, args), "revisit %v", args)
		require.Equal(t, notice+"revisit: no SQLite store at "+abs+": nothing was recorded there yet "+
			"(a command that writes, such as `revisit origin record` or `revisit serve`, creates it)\n", errb.String())
		require.NoFileExists(t, filepath.Join(dir, "revisit.db"), "revisit %v created the store", args)
	}

	errb.Reset()
	require.Equal(t, 0, Run(context.Background(), env, []string{"task-type", "add", "load-git", "--backend-name", "g"}),
		errb.String())
	require.Equal(t, notice, errb.String(), "the notice is printed once")
	require.FileExists(t, filepath.Join(dir, "revisit.db"))
	errb.Reset()
	require.Equal(t, 0, Run(context.Background(), env, []string{"lister", "list"}), errb.String())

	errb.Reset()
	env.Environ = []string{"REVISIT_STORE=sqlite://other.db"}
	require.Equal(t, 0, Run(context.Background(), env, []string{"task-type", "add", "load-git", "--backend-name", "g"}),
		errb.String())
	require.Empty(t, errb.String(), "no notice for a configured store")
}

func TestUnknownCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct{ args, want string }{
		{"origin lst", `unknown command "lst" for "revisit origin" (did you mean "list"?)`},
		{"orgin list", `unknown command "orgin" for "revisit" (did you mean "origin"?)`},
		{"task-type xyz", `unknown command "xyz" for "revisit task-type" (commands: add, list, register, show)`},
		{"db migrat now", `unknown command "migrat" for "revisit db" (did you mean "migrate"?)`},
	} {
		require.Contains(t, h.fails(ExitUsage, strings.Fields(c.args)...), c.want)
	}
	require.Contains(t, h.ok("origin"), "Available Commands:", "a group alone prints its help")
	require.NoFileExists(t, filepath.Join(h.dir, "revisit.db"))
}

func TestHelp(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	require.Equal(t, 0, Run(context.Background(), env, []string{"origin", "grab-next", "--help"}))
	require.Contains(t, out.String(), "--absolute-cooldown")
	require.Contains(t, out.String(), "oldest_scheduled_first")
}

// Origins and statuses of a visit type that no task type serves are
// written with a warning naming it; schedule-recurrent refuses such a
// visit type before it starts.
func TestUnservedVisitTypes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("task-type", "add", "load-git", "--backend-name", "swh.loader.git.tasks.UpdateGitRepository")
	r := h.run("origin", "record", h.file("origins.jsonl", originLines(2, "git")+originLines(3, "gti")))
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "inserted 5, updated 0\n", r.stdout, "the origins of every visit type are written")
	require.Contains(t, r.stderr, "warning: no task type serves visit type gti (3 line(s))")
	require.NotContains(t, r.stderr, "visit type git ")

	r = h.run("visit-status", "ingest", h.file("s.jsonl",
		`{"origin": "https://example.org/r0", "visit_type": "gti", "status": "full", "date": "2025-02-01T00:00:00Z"}`+"\n"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "warning: no task type serves visit type gti (1 line(s))")

	start := time.Now()
	require.Contains(t, h.fails(1, "schedule-recurrent", "--visit-type", "gti"), "--visit-type gti: no task type load-gti")
	require.Less(t, time.Since(start), 5*time.Second, "refused up front, not after restarts")
	require.Contains(t, h.fails(2, "schedule-recurrent", "--visit-type", "Git!"), "--visit-type")
}

// An origin record interrupted while it writes says how much it wrote and
// how to go on; the same command then finishes it.
func TestRecordInterrupted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("task-type", "add", "load-git", "--backend-name", "swh.loader.git.tasks.UpdateGitRepository")
	const n = 100_000
	f := h.file("o.jsonl", originLines(n, "git"))
	st := h.store()
	defer st.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Clock: func() time.Time { return testNow }}, []string{"--store", h.url, "origin", "record", "--batch-size", "500", f})
	}()
	require.Eventually(t, func() bool {
		page, err := st.ListedOriginsGet(context.Background(), revisit.ListedOriginFilter{Limit: 1})
		return err == nil && len(page.Origins) > 0
	}, time.Minute, 5*time.Millisecond, "recording starts")
	cancel()
	require.Equal(t, ExitError, <-done)
	require.Regexp(t, `^revisit: interrupted: \d+ of 100000 origin\(s\) written \(inserted \d+, updated 0\); the same command `+
		`records the rest`, errb.String())
	var inserted, updated int
	_, err := fmt.Sscanf(h.ok("origin", "record", f), "inserted %d, updated %d", &inserted, &updated)
	require.NoError(t, err)
	require.Equal(t, n, inserted+updated, "the same command finishes the recording")
	require.Positive(t, updated, "what the first run wrote is written again")
	require.Positive(t, inserted)
}

// --lister NAME names the one lister of that name, whatever its instance;
// with several, the error names them.
func TestListerByNameAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("origin", "record", h.file("a.jsonl", `{"url": "https://github.com/torvalds/linux", "visit_type": "git", "lister_name": "github", "lister_instance_name": "github"}`+"\n"))
	require.Contains(t, h.ok("origin", "list", "--lister", "github"), "https://github.com/torvalds/linux")
	h.ok("origin", "record", h.file("b.jsonl", `{"url": "https://ghe.example.org/a/b", "visit_type": "git", "lister_name": "github", "lister_instance_name": "ghe"}`+"\n"))
	require.Contains(t, h.fails(1, "origin", "list", "--lister", "github"), "2 listers are named github: give one of github/")
	require.Contains(t, h.ok("origin", "list", "--lister", "github/ghe"), "https://ghe.example.org/a/b")
}
