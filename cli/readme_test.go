package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/bench"
	"github.com/revisit-sched/revisit/internal/testkit/journaltest"
	"github.com/revisit-sched/revisit/journal"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/store/postgres/pgtest"
	"github.com/revisit-sched/revisit/store/sqlite"
)

// readmeCommandLines returns the command lines of the README's sh blocks,
// each once, in order: continuation lines joined, comments (from " #")
// and blank lines dropped, white space between words made one space.
func readmeCommandLines(t *testing.T, readme string) []string {
	t.Helper()
	var lines []string
	inBlock, pending := false, ""
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		text := sc.Text()
		switch {
		case !inBlock:
			inBlock = text == "```sh"
			continue
		case strings.HasPrefix(text, "```"):
			require.Empty(t, pending, "a continuation ends an sh block")
			inBlock = false
			continue
		}
		if i := strings.Index(text, " #"); i >= 0 {
			text = text[:i]
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(text, " "), `\`); ok {
			pending += cont + " "
			continue
		}
		line := strings.Join(strings.Fields(pending+text), " ")
		pending = ""
		if line != "" && !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	require.NoError(t, sc.Err())
	return lines
}

// shellWords splits a README command line into its words as the shell
// does for the quoting the README uses: single and double quotes.
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ':
			if inWord {
				words = append(words, word.String())
				word.Reset()
			}
			inWord = false
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// readmeStep is how TestREADMECommands runs one command line of the README.
type readmeStep struct {
	line string
	// run runs the line (args: its words, without the leading "revisit")
	// and checks what it printed.
	run func(s *readmeScenario, args []string)
}

// readmeScenario is the world the README's commands run in, one after the
// other: a temporary directory as the working directory, with the
// repository's examples/ in it and the default store revisit.db.
type readmeScenario struct {
	*harness
	root       string            // the repository
	server     string            // the URL of the revisit serve of the scenario
	background []*background     // the commands still running
	shellVars  map[string]string // the variables the README's shell lines set
	rabbitQ    string            // the RabbitMQ queue of the broker commands
	line       string            // the README line of the step running now
	pgSmall    string            // the store of bench store --origins 1M
	pgLarge    string            // the store of the benches of the 10M data set
}

// background is a command run in-process until stopped.
type background struct {
	args           []string
	cancel         context.CancelFunc
	exited         chan struct{} // closed once the command returned code
	code           int
	stdout, stderr *lockedBuffer
	stopped        bool
}

// start runs args until stop (or the end of the test), once ready(its
// standard error) holds.
func (s *readmeScenario) start(ready func(stderr string) bool, args ...string) *background {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{args: args, cancel: cancel, exited: make(chan struct{}), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	env := Env{Stdin: strings.NewReader(""), Stdout: b.stdout, Stderr: b.stderr, Environ: s.environ}
	go func() {
		defer close(b.exited)
		b.code = Run(ctx, env, args)
	}()
	s.t.Cleanup(func() {
		cancel()
		select {
		case <-b.exited:
		case <-time.After(30 * time.Second):
		}
	})
	s.background = append(s.background, b)
	require.Eventually(s.t, func() bool {
		select {
		case <-b.exited:
			return true
		default:
			return ready(b.stderr.String())
		}
	}, 30*time.Second, 20*time.Millisecond, "revisit %s did not start:\n%s", strings.Join(args, " "), b.stderr)
	select {
	case <-b.exited:
		s.t.Fatalf("revisit %s exited (%d):\n%s", strings.Join(args, " "), b.code, b.stderr)
	default:
	}
	return b
}

// stop interrupts the command, requires that it exits 0 and logged no
// error, and returns what it printed.
func (b *background) stop(t *testing.T) string {
	t.Helper()
	b.cancel()
	b.stopped = true
	select {
	case <-b.exited:
		require.Equal(t, ExitOK, b.code, "revisit %s:\n%s", strings.Join(b.args, " "), b.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("revisit %s did not stop:\n%s", strings.Join(b.args, " "), b.stderr)
	}
	require.NotContains(t, b.stderr.String(), "level=ERROR", "revisit %s:\n%s", strings.Join(b.args, " "), b.stderr)
	return b.stdout.String()
}

// upAt returns a readiness check: the URL path of the command's address
// answers 200.
func upAt(url string) func(string) bool {
	return func(string) bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// shell runs a line of the README's shell examples with bash, given the
// variables earlier lines set; a line that sets a variable (NAME=...)
// keeps its value for the next ones. It returns what the line printed.
func (s *readmeScenario) shell(line string) string {
	s.t.Helper()
	script := line
	name, _, assigns := strings.Cut(line, "=")
	assigns = assigns && regexp.MustCompile(`^[A-Za-z_]+$`).MatchString(name)
	if assigns {
		script += `; printf %s "$` + name + `"`
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range s.shellVars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	require.NoError(s.t, err, "%s: %s", line, out)
	if assigns {
		s.shellVars[name] = string(out)
	}
	return string(out)
}

// coveredBy is the step of a line that another test runs: it requires
// that the test exists.
func coveredBy(test string) func(*readmeScenario, []string) {
	return func(s *readmeScenario, _ []string) {
		sources, err := filepath.Glob(filepath.Join(s.root, "*", "*_test.go"))
		require.NoError(s.t, err)
		for _, f := range sources {
			text, err := os.ReadFile(f)
			require.NoError(s.t, err)
			if strings.Contains(string(text), "\nfunc "+test+"(t *testing.T) {") {
				return
			}
		}
		s.t.Fatalf("no test %s", test)
	}
}

// withWord returns args with the word old (which args must have) replaced
// by new.
func withWord(t *testing.T, args []string, old, new string) []string {
	t.Helper()
	i := slices.Index(args, old)
	require.GreaterOrEqual(t, i, 0, "%s has no %s", args, old)
	return slices.Concat(args[:i], []string{new}, args[i+1:])
}

// withFlags returns args with the value of each flag of the pairs (flag,
// value; args must have the flag) replaced.
func withFlags(t *testing.T, args []string, pairs ...string) []string {
	t.Helper()
	for p := 0; p < len(pairs); p += 2 {
		i := slices.Index(args, pairs[p])
		require.True(t, i >= 0 && i+1 < len(args), "%s has no %s", args, pairs[p])
		args = slices.Concat(args[:i+1], []string{pairs[p+1]}, args[i+2:])
	}
	return args
}

// tableRows returns the rows of a table a command printed, header first,
// each row's cells.
func tableRows(out string) [][]string {
	var rows [][]string
	for line := range strings.Lines(strings.TrimSpace(out)) {
		rows = append(rows, strings.Fields(line))
	}
	return rows
}

// readmeSteps are the README's command lines, each with how
// TestREADMECommands runs it, in the order they run: the README's, but
// that the commands through a server run once the serve of the README's
// `revisit serve` section runs, a search of disabled origins after the
// disable, the task commands naming task ids once the tasks exist, and
// journal-client -m before the journal client that runs until stopped
// (which would take the messages). Sizes, addresses and durations are
// made small or local where the README's would not do in a test: each
// substitution is written out in its step.
var readmeSteps = []readmeStep{
	{"go run ./cmd/revisit serve --demo", coveredBy("TestServeDemo")},
	{"scripts/test", func(s *readmeScenario, _ []string) {
		text, err := os.ReadFile(filepath.Join(s.root, "scripts", "test"))
		require.NoError(s.t, err)
		require.Contains(s.t, string(text), "\ngo test ./... -count=1\n", "scripts/test runs every test, this one included")
	}},
	{"go install ./cmd/revisit", coveredBy("TestServeEndToEnd")}, // builds ./cmd/revisit and runs it

	{"revisit task-type register examples/task-types.yaml", func(s *readmeScenario, args []string) {
		require.Equal(s.t, "created 3, updated 0 task types\n", s.ok(args...))
		require.Equal(s.t, []any{"load-git", "load-hg", "load-pypi"}, valuesOf(s.jsonList("task-type", "list"), "type"))
	}},
	{"revisit origin record examples/origins.jsonl", func(s *readmeScenario, args []string) {
		require.Equal(s.t, "inserted 41, updated 0\n", s.ok(args...))
	}},
	{"revisit lister list", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Equal(s.t, []string{"ID", "NAME", "INSTANCE_NAME"}, rows[0][:3])
		var names []string
		for _, r := range rows[1:] {
			names = append(names, r[1]+"/"+r[2])
		}
		require.Equal(s.t, []string{"github/github.com", "gitlab/gitlab.com", "heptapod/foss.heptapod.net", "pypi/-"}, names,
			"the listers of examples/origins.jsonl")
	}},
	{"revisit origin list --lister gitlab/gitlab.com --visit-type git", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Equal(s.t, "URL", rows[0][0])
		require.Len(s.t, rows, 1+9, "the git origins of gitlab.com of examples/origins.jsonl")
		for _, r := range rows[1:] {
			require.True(s.t, strings.HasPrefix(r[0], "https://gitlab.com/"), "%s", r)
			require.Equal(s.t, []string{"git", "gitlab/gitlab.com"}, r[1:3])
		}
	}},
	{"revisit origin peek-next git 10 --policy already_visited_order_by_lag", func(s *readmeScenario, args []string) {
		require.Len(s.t, tableRows(s.ok(args...)), 1, "no origin was visited yet: a header alone")
	}},
	{"revisit origin grab-next git 10 --policy never_visited_oldest_update_first", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Len(s.t, rows, 1+10)
		require.Contains(s.t, valuesOf(s.jsonList("origin", "peek-next", "git", "100", "--no-cooldowns"), "url"), rows[1][0])
		require.NotContains(s.t, valuesOf(s.jsonList("origin", "peek-next", "git", "100"), "url"), rows[1][0],
			"the grabbed origins are held back by the absolute cooldown")
	}},
	{"revisit visit-stats show https://github.com/org0/repo1 git", func(s *readmeScenario, args []string) {
		out := s.ok(args...)
		require.Contains(s.t, out, "last_visit:                 never")
		require.Regexp(s.t, `last_scheduled:\s+\d{4}-`, out, "grabbed by grab-next")
	}},
	{"revisit visit-status ingest examples/results.jsonl", func(s *readmeScenario, args []string) {
		require.Contains(s.t, s.ok(args...),
			"processed 10 status(es): 6 stats changed, 1 ignored (not final, late or duplicate), 1 origin(s) disabled, 0 visit(s) in flight closed")
		stats := s.jsonObject("visit-stats", "show", "https://github.com/org0/repo1", "git")
		require.Equal(s.t, "9a3c2e1f0b8d7c6a5e4f3d2c1b0a998877665544", stats["last_snapshot"])
	}},
	{"revisit origin update-metrics && revisit origin metrics", func(s *readmeScenario, args []string) {
		i := slices.Index(args, "&&")
		updated := tableRows(s.ok(args[:i]...))
		require.Equal(s.t, updated, tableRows(s.ok(args[i+2:]...)), "metrics prints what update-metrics stored")
		require.Len(s.t, updated, 1+4, "a row for each lister and visit type")
		require.True(s.t, slices.ContainsFunc(updated, func(r []string) bool {
			return slices.Equal(r[:4], []string{"github/github.com", "git", "11", "9"})
		}), "github's 11 git origins, two disabled (one from the start, one by its failures): %s", updated)
	}},
	{"revisit origin search https://github.com/torvalds/", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Len(s.t, rows, 2)
		require.Equal(s.t, []string{"https://github.com/torvalds/linux", "git", "github/github.com", "true"}, rows[1][:4])
	}},
	{"revisit origin browse git", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Equal(s.t, "URL", rows[0][0])
		require.Equal(s.t, "LAST_SCHEDULED", rows[0][7])
		require.Len(s.t, rows, 1+18, "the 20 git origins but the one listed disabled and repo13, disabled by its failures")
		waited := slices.IndexFunc(rows[1:], func(r []string) bool { return r[7] != "-" })
		require.Equal(s.t, 18-9, waited, "those never scheduled first, then the 10 grabbed (but repo13): %s", rows)
		require.False(s.t, slices.ContainsFunc(rows[1+waited:], func(r []string) bool { return r[7] == "-" }), "%s", rows)
	}},
	{"revisit origin show https://github.com/torvalds/linux", func(s *readmeScenario, args []string) {
		out := s.ok(args...)
		require.Contains(s.t, out, "url:         https://github.com/torvalds/linux\nvisit_type:  git\n")
		require.Contains(s.t, out, "\ngithub/github.com  true     2026-03-01T12:00:00Z")
		require.Contains(s.t, out, "in flight:\n  no visit\n")
	}},
	{"revisit origin visit-now https://github.com/torvalds/linux git", func(s *readmeScenario, args []string) {
		require.Regexp(s.t, `^sent visit \S+ of https://github.com/torvalds/linux \(git\) to queue `+gitQueue+"\n$", s.ok(args...))
		require.EqualValues(s.t, 1, s.jsonObject("broker", "depth", gitQueue)["depth"], "the visit is in load-git's queue")
		require.Regexp(s.t, `in flight:\n.*\n\S+\s+sent\s+operator\s`, s.ok("origin", "show", "https://github.com/torvalds/linux"))
	}},
	{"revisit origin disable https://github.com/torvalds/linux git", func(s *readmeScenario, args []string) {
		require.Equal(s.t, "disabled https://github.com/torvalds/linux (git): 1 listed row(s) changed\n", s.ok(args...))
		require.Equal(s.t, []any{false}, valuesOf(s.jsonList("origin", "list", "--url", "https://github.com/torvalds/linux",
			"--enabled", "any"), "enabled"))
	}},
	{"revisit origin search --contains linux --visit-type git --enabled false --lister github", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Len(s.t, rows, 2, "the origin disabled above")
		require.Equal(s.t, []string{"https://github.com/torvalds/linux", "git", "github/github.com", "false"}, rows[1][:4])
	}},
	// The loop of git stays paused: the only message of its queue is the
	// visit sent above, for the worker's lines below.
	{"revisit visit-type pause git", func(s *readmeScenario, args []string) {
		require.Regexp(s.t, `^git paused by cli at \d{4}-`, s.ok(args...), "cli: no $USER in the test's environment")
	}},

	{"revisit schedule-recurrent --metrics-listen 127.0.0.1:9471", func(s *readmeScenario, args []string) {
		addr := freeAddr(s.t)
		b := s.start(upAt("http://"+addr+"/readyz"), withFlags(s.t, args, "--metrics-listen", addr)...)
		for _, q := range []string{"swh.loader.mercurial.tasks.LoadMercurial", "swh.loader.package.pypi.tasks.LoadPyPI"} {
			require.Eventually(s.t, func() bool {
				return s.jsonObject("broker", "depth", q)["depth"].(float64) > 0
			}, 30*time.Second, 50*time.Millisecond, "schedule-recurrent sends visits to %s:\n%s", q, b.stderr)
		}
		require.EqualValues(s.t, 1, s.jsonObject("broker", "depth", gitQueue)["depth"], "git is paused")
		b.stop(s.t)
	}},
	{"revisit journal-client -m 1000", func(s *readmeScenario, args []string) {
		brokers := journaltest.Cluster(s.t, 1)
		w := journaltest.NewWorkload("readme", 6, 1, 2, 1, time.Now().Add(-time.Hour).UTC(), 9)
		st, err := sqlite.Open(context.Background(), filepath.Join(s.dir, "revisit.db"), store.Options{})
		require.NoError(s.t, err)
		defer st.Close()
		w.Record(s.t, st)
		journaltest.Produce(s.t, brokers, w.Statuses)
		// The journal's brokers come from the configuration, as in the
		// README's example of it.
		cfg := journalConfig(s.t, s.dir, brokers, "")
		s.environ = append(s.environ, "REVISIT_CONFIG="+cfg)
		s.ok(withFlags(s.t, args, "-m", fmt.Sprint(len(w.Statuses)))...)
		require.Equal(s.t, w.Expected(s.t), w.Outcomes(s.t, st))
		require.Equal(s.t, journaltest.Ends(s.t, brokers), journaltest.Committed(s.t, brokers, journal.DefaultGroup))
	}},
	{"revisit journal-client --metrics-listen 127.0.0.1:9475", func(s *readmeScenario, args []string) {
		addr := freeAddr(s.t)
		b := s.start(upAt("http://"+addr+"/readyz"), withFlags(s.t, args, "--metrics-listen", addr)...)
		b.stop(s.t)
		s.environ = slices.DeleteFunc(s.environ, func(kv string) bool { return strings.HasPrefix(kv, "REVISIT_CONFIG=") })
	}},

	// The queue actions act on the queues schedule-recurrent filled: git's
	// holds only the visit the worker's lines below take.
	{"revisit broker purge swh.loader.git.tasks.UpdateGitRepository", func(s *readmeScenario, args []string) {
		const hg = "swh.loader.mercurial.tasks.LoadMercurial"
		depth := s.jsonObject("broker", "depth", hg)["depth"].(float64)
		require.Positive(s.t, depth)
		require.Equal(s.t, fmt.Sprintf("purged %d message(s) from %s; %d visit(s) declared lost, their origins are offered again\n",
			int(depth), hg, int(depth)), s.ok(withWord(s.t, args, gitQueue, hg)...))
		require.EqualValues(s.t, 0, s.jsonObject("broker", "depth", hg)["depth"])
	}},
	{"revisit broker drop 0b6e…", func(s *readmeScenario, args []string) {
		const pypi = "swh.loader.package.pypi.tasks.LoadPyPI"
		st, err := sqlite.Open(context.Background(), filepath.Join(s.dir, "revisit.db"), store.Options{})
		require.NoError(s.t, err)
		page, err := st.QueueMessagesList(context.Background(), revisit.QueueMessageFilter{Queue: pypi, Listing: revisit.QueueListWaiting, Now: time.Now()})
		require.NoError(s.t, st.Close())
		require.NoError(s.t, err)
		require.NotEmpty(s.t, page.Messages)
		id := page.Messages[0].ID
		require.Equal(s.t, "dropped "+id+" from "+pypi+"; its visit was declared lost, its origin is offered again\n",
			s.ok(withWord(s.t, args, "0b6e…", id)...))
	}},
	// The pause above was by the CLI, as "cli" without $USER.
	{"revisit history --actions --action pause --by ops", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(withFlags(s.t, args, "--by", "cli")...))
		require.Len(s.t, rows, 1+1, "%s", rows)
		require.Contains(s.t, rows[1], "pause")
		require.Contains(s.t, rows[1], "git")
		require.Empty(s.t, tableRows(s.ok(args...))[1:], "nobody named ops paused anything")
	}},

	{"revisit task-type add list-gitlab --backend-name swh.lister.gitlab.tasks.IncrementalGitLabLister --default-interval 1d",
		func(s *readmeScenario, args []string) {
			require.Equal(s.t, "created task type list-gitlab\n", s.ok(args...))
		}},
	{"revisit task add list-gitlab url=https://gitlab.com --policy recurring", func(s *readmeScenario, args []string) {
		out := s.ok(args...)
		require.Regexp(s.t, `(?m)^id:\s+1$`, out)
		require.Regexp(s.t, `(?m)^kwargs:\s+\{"url":"https://gitlab.com"\}$`, out)
	}},
	{"revisit task schedule examples/tasks.csv", func(s *readmeScenario, args []string) {
		require.Contains(s.t, s.ok(args...), "scheduled 3 line(s) as 3 task(s)")
	}},
	{"revisit task list --status next_run_not_scheduled --format json", func(s *readmeScenario, args []string) {
		var tasks []map[string]any
		out := s.ok(args...)
		require.NoError(s.t, json.Unmarshal([]byte(out), &tasks), out)
		require.Equal(s.t, []any{1.0, 2.0, 3.0, 4.0}, valuesOf(tasks, "id"))
	}},
	{"revisit task list-pending list-gitlab", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(args...))
		require.Len(s.t, rows, 2, "the task of url=https://gitlab.com is due; the one of tasks.csv is not yet")
		require.Equal(s.t, []string{"1", "list-gitlab", "recurring"}, rows[1][:3])
	}},
	// Tasks 12 and 13 are 2 and 4 here: the two of tasks.csv that are not
	// due yet.
	{"revisit task disable 12 13", func(s *readmeScenario, args []string) {
		s.ok(withWord(s.t, withWord(s.t, args, "12", "2"), "13", "4")...)
		require.Equal(s.t, []any{"disabled", "disabled"}, valuesOf(s.jsonList("task", "list", "--status", "disabled"), "status"))
	}},
	{"revisit runner", func(s *readmeScenario, args []string) {
		b := s.start(func(string) bool { return true }, args...)
		require.Eventually(s.t, func() bool {
			return len(s.jsonList("task", "list", "--runs")) == 2
		}, 30*time.Second, 50*time.Millisecond, "the runner dispatches tasks 1 and 3, the due ones:\n%s", b.stderr)
		b.stop(s.t)
		require.EqualValues(s.t, 1, s.jsonObject("broker", "depth", "swh.lister.gitlab.tasks.IncrementalGitLabLister")["depth"])
	}},
	{"revisit task archive --older-than 30d --to runs-2026-11.jsonl", func(s *readmeScenario, args []string) {
		require.Equal(s.t, "archived 0 task run(s) and 0 task(s) to runs-2026-11.jsonl\n", s.ok(args...),
			"the runs are minutes old")
		require.FileExists(s.t, filepath.Join(s.dir, "runs-2026-11.jsonl"))
	}},

	// On a free port: 5080 may be taken on the machine.
	{"revisit serve", func(s *readmeScenario, args []string) {
		b := s.start(listenLine.MatchString, append(args, "--listen", "127.0.0.1:0")...)
		s.server = listenLine.FindStringSubmatch(b.stderr.String())[1]
	}},
	{"revisit import swh --from postgres://swh@db.example.org/swh-scheduler", coveredBy("TestImportSWH")},
	{"revisit serve &", func(s *readmeScenario, _ []string) {
		// The serve above, run in the background.
		resp, err := http.Get(s.server + "/")
		require.NoError(s.t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(s.t, err)
		require.Equal(s.t, http.StatusOK, resp.StatusCode)
		require.Contains(s.t, string(body), "<html")
	}},
	{"revisit --server http://sched:5080 queue list", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(withWord(s.t, args, "http://sched:5080", s.server)...))
		require.Contains(s.t, rows, []string{gitQueue, "git", "1", "0", "-", "false", "-"}, "the visit sent by visit-now: %s", rows)
	}},
	{"API=http://127.0.0.1:5080/api/v1", func(s *readmeScenario, args []string) {
		require.Equal(s.t, s.server+"/api/v1", s.shell(strings.Replace(args[0], "http://127.0.0.1:5080", s.server, 1)))
	}},
	{"Q=swh.loader.git.tasks.UpdateGitRepository", func(s *readmeScenario, args []string) {
		require.Equal(s.t, gitQueue, s.shell(args[0]))
	}},
	{`msg=$(curl -s -X POST $API/queues/$Q/lease -H 'Content-Type: application/json' -d '{"worker": "w1", "max": 1, "lease_seconds": 300, "wait_seconds": 20}')`,
		func(s *readmeScenario, _ []string) {
			msg := s.shell(s.line)
			require.Contains(s.t, msg, `"url":"https://github.com/torvalds/linux"`)
		}},
	{`id=$(echo "$msg" | jq -r '.messages[0].id')`, func(s *readmeScenario, _ []string) {
		require.Regexp(s.t, `^[0-9a-f-]{36}$`, s.shell(s.line))
	}},
	{"revisit --server http://sched:5080 queue messages swh.loader.git.tasks.UpdateGitRepository --state leased",
		func(s *readmeScenario, args []string) {
			out := s.ok(withWord(s.t, args, "http://sched:5080", s.server)...)
			require.Contains(s.t, out, s.shellVars["id"])
			require.Contains(s.t, out, "w1")
		}},
	{"revisit --server http://sched:5080 worker list", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(withWord(s.t, args, "http://sched:5080", s.server)...))
		require.Len(s.t, rows, 2)
		require.Equal(s.t, "w1", rows[1][0])
	}},
	{`curl -s -X POST $API/messages/$id/heartbeat -H 'Content-Type: application/json' -d '{"worker": "w1", "lease_seconds": 300}'`,
		func(s *readmeScenario, _ []string) {
			var lease struct {
				ExpiresAt time.Time `json:"lease_expires_at"`
			}
			out := s.shell(s.line)
			require.NoError(s.t, json.Unmarshal([]byte(out), &lease), out)
			require.WithinDuration(s.t, time.Now().Add(300*time.Second), lease.ExpiresAt, time.Minute, "lease_seconds 300")
		}},
	{`curl -s -X POST $API/messages/$id/result -H 'Content-Type: application/json' -d '{"worker": "w1", "status": "eventful", "snapshot": "0123456789abcdef0123456789abcdef01234567"}'`,
		func(s *readmeScenario, _ []string) {
			s.shell(s.line)
			require.Eventually(s.t, func() bool {
				st := s.jsonObject("visit-stats", "show", "https://github.com/torvalds/linux", "git")
				return st["last_snapshot"] == "0123456789abcdef0123456789abcdef01234567"
			}, 10*time.Second, 50*time.Millisecond, "the result is folded into the visit stats")
		}},
	{"revisit --server http://sched:5080 history --minutes 30", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(withWord(s.t, args, "http://sched:5080", s.server)...))
		require.Greater(s.t, len(rows), 1)
		require.Equal(s.t, "VISIT_TYPE", rows[0][0])
	}},

	{"export REVISIT_BROKER=amqp://guest:guest@127.0.0.1:5672/", func(s *readmeScenario, args []string) {
		s.environ = append(s.environ, args[1])
		ch := rabbit(s.t)
		s.rabbitQ = "revisit.test.readme." + uuid.NewString()[:8]
		_, err := ch.QueueDeclare(s.rabbitQ, true, false, false, false, nil)
		require.NoError(s.t, err)
		s.t.Cleanup(func() { _, _ = ch.QueueDelete(s.rabbitQ, false, false, false) })
	}},
	// RabbitMQ is shared: the broker commands use a queue of their own.
	{`revisit broker send swh.loader.git.tasks.UpdateGitRepository --queue swh.loader.git.tasks.UpdateGitRepository --kwargs '{"url": "https://github.com/org0/repo1", "lister_name": "github"}'`,
		func(s *readmeScenario, args []string) {
			require.Contains(s.t, s.ok(withFlags(s.t, args, "--queue", s.rabbitQ)...), "confirmed")
		}},
	{"revisit broker depth swh.loader.git.tasks.UpdateGitRepository", func(s *readmeScenario, args []string) {
		require.Equal(s.t, "1 message(s) ready in "+s.rabbitQ+"\n", s.ok(withWord(s.t, args, gitQueue, s.rabbitQ)...),
			"the message sent above, on RabbitMQ")
	}},
	{"revisit broker events", func(s *readmeScenario, args []string) {
		b := s.start(func(string) bool { return true }, args...)
		id := uuid.NewString()
		ch := rabbit(s.t)
		require.Eventually(s.t, func() bool {
			publishTaskFailed(s.t, ch, id)
			return strings.Contains(b.stdout.String(), id)
		}, 20*time.Second, 200*time.Millisecond, "broker events prints a worker's event")
		require.Contains(s.t, b.stop(s.t), "ValueError: boom")
	}},

	{"revisit simulate --origins 20000 --days 30 --visit-types git,hg --workers git=64 --config prod.yaml --compare more-lag.yaml --out what-if",
		func(s *readmeScenario, args []string) {
			policyFile(s.t, s.dir, "prod", "{policy: already_visited_order_by_lag, weight: 1}",
				"{policy: never_visited_oldest_update_first, weight: 1}")
			policyFile(s.t, s.dir, "more-lag", "{policy: already_visited_order_by_lag, weight: 3}",
				"{policy: never_visited_oldest_update_first, weight: 1}")
			out := s.ok(withFlags(s.t, args, "--origins", "400", "--days", "0.25")...)
			require.Contains(s.t, out, "report: what-if/report.html")
			require.FileExists(s.t, filepath.Join(s.dir, "what-if", "report.html"))
			require.DirExists(s.t, filepath.Join(s.dir, "what-if", "prod"), "the configuration of --config")
			require.DirExists(s.t, filepath.Join(s.dir, "what-if", "more-lag"), "the one of --compare")
		}},
	{"revisit simulate --upstream --policy never_visited_oldest_update_first --days 2", func(s *readmeScenario, args []string) {
		out := s.ok(append(withFlags(s.t, args, "--days", "0.1"), "--origins", "400")...)
		require.Contains(s.t, out, "report: simulation/report.html")
		require.FileExists(s.t, filepath.Join(s.dir, "simulation", "metrics.csv"), "upstream's metrics")
	}},

	{"revisit bench store --origins 1M --store postgres://postgres@127.0.0.1/revisit_bench --format json > 1m.json",
		func(s *readmeScenario, args []string) {
			i := slices.Index(args, ">")
			out := s.ok(append(withFlags(s.t, args[:i], "--origins", "1000", "--store", s.pgSmall), smallBenchStore...)...)
			require.Contains(s.t, out, `"measure": "grab git oldest_scheduled_first"`)
			require.NoError(s.t, os.WriteFile(filepath.Join(s.dir, args[i+1]), []byte(out), 0o600))
		}},
	{"revisit bench store --origins 10M --store postgres://postgres@127.0.0.1/revisit_bench10m --baseline 1m.json",
		func(s *readmeScenario, args []string) {
			out := s.ok(append(withFlags(s.t, args, "--origins", "2000", "--store", s.pgLarge), smallBenchStore...)...)
			require.Contains(s.t, out, "growth from the baseline: grab git oldest_scheduled_first")
		}},
	{"revisit bench store --origins 1M --store sqlite:///tmp/revisit-bench.db", func(s *readmeScenario, args []string) {
		out := s.ok(append(withFlags(s.t, args, "--origins", "1000", "--store", "sqlite://revisit-bench.db"), smallBenchStore...)...)
		require.Contains(s.t, out, "load 1000 origins")
	}},
	{"revisit bench feedback --origins 10M --store postgres://postgres@127.0.0.1/revisit_bench10m", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(append(withFlags(s.t, args, "--origins", "2000", "--store", s.pgLarge), "--statuses", "300")...))
		require.Equal(s.t, []string{"300", "4"}, rows[1][:2], "statuses, workers")
	}},
	{"revisit bench broker --broker amqp://guest:guest@127.0.0.1:5672/ --messages 300000 --queues 3", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(withFlags(s.t, args, "--messages", "300")...))
		require.Equal(s.t, []string{"300", "3", "300", "0", "0"}, rows[1][:5], "messages, queues, confirmed, returned, failed")
	}},
	{"revisit bench broker --broker embedded --store sqlite:///tmp/revisit-bench-broker.db", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(append(withFlags(s.t, args, "--store", "sqlite://revisit-bench-broker.db"), "--messages", "300")...))
		require.Equal(s.t, []string{"300", "1", "300", "0", "0"}, rows[1][:5], "messages, queues, confirmed, returned, failed")
	}},
	{"revisit bench orchestrator --origins 10M --visits 1000000 --store postgres://postgres@127.0.0.1/revisit_bench10m --broker amqp://guest:guest@127.0.0.1:5672/",
		func(s *readmeScenario, args []string) {
			rows := tableRows(s.ok(withFlags(s.t, args, "--origins", "2000", "--visits", "300", "--store", s.pgLarge)...))
			require.Equal(s.t, "2000", rows[1][0])
		}},
	{"revisit bench listener --origins 10M --visits 100000 --store postgres://postgres@127.0.0.1/revisit_bench10m --broker amqp://guest:guest@127.0.0.1:5672/",
		func(s *readmeScenario, args []string) {
			rows := tableRows(s.ok(withFlags(s.t, args, "--origins", "2000", "--visits", "300", "--store", s.pgLarge)...))
			require.Equal(s.t, []string{"2000", "300", "900"}, rows[1][:3], "origins, visits, events")
		}},
	{"revisit bench journal --origins 10M --store postgres://postgres@127.0.0.1/revisit_bench10m", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(append(withFlags(s.t, args, "--origins", "2000", "--store", s.pgLarge), "--statuses", "300")...))
		require.Len(s.t, rows, 1+2, "batches 200 and 1000")
		require.Equal(s.t, []string{"300", "200"}, rows[1][:2])
		require.Equal(s.t, []string{"300", "1000"}, rows[2][:2])
	}},
	{"revisit --server http://127.0.0.1:5080 bench api --clients 200 --duration 10s", func(s *readmeScenario, args []string) {
		out := s.ok(withFlags(s.t, withWord(s.t, args, "http://127.0.0.1:5080", s.server), "--clients", "4", "--duration", "1s")...)
		require.Contains(s.t, out, "reads")
	}},
	{"revisit bench rpc --origins 10M --store postgres://postgres@127.0.0.1/revisit_bench10m", func(s *readmeScenario, args []string) {
		out := s.ok(append(withFlags(s.t, args, "--origins", "2000", "--store", s.pgLarge), "--record-batches", "1", "--grabs", "2")...)
		require.Contains(s.t, out, "record 1000-origin batches")
		require.Contains(s.t, out, "grab p50 ms: git oldest_scheduled_first")
	}},
	{"revisit bench drain --store sqlite:///tmp/revisit-drain.db", func(s *readmeScenario, args []string) {
		rows := tableRows(s.ok(append(withFlags(s.t, args, "--store", "sqlite://revisit-drain.db"),
			"--origins", "3000", "--duration", "2s")...))
		require.Equal(s.t, []string{"25", "500", "1000"}, rows[1][:3], "workers, rate, queue")
		seconds, err := strconv.ParseFloat(rows[1][3], 64)
		require.NoError(s.t, err)
		require.InDelta(s.t, 2.5, seconds, 0.5, "seconds measured: the run's 2 s and the end of its last visits")
	}},
	// wrk is not installed for the tests: its script must read what
	// bench api reads, and the server answers each of its paths.
	{"wrk -t2 -c200 -d10s --latency -s bench/api-reads.lua http://127.0.0.1:5080", func(s *readmeScenario, args []string) {
		script, err := os.ReadFile(args[slices.Index(args, "-s")+1])
		require.NoError(s.t, err)
		var paths []string
		for _, m := range regexp.MustCompile(`"(/api/[^"]+)"`).FindAllStringSubmatch(string(script), -1) {
			paths = append(paths, m[1])
			require.True(s.t, upAt(s.server+m[1])(""), m[1])
		}
		require.Equal(s.t, bench.APIGroups()[0].Paths, paths)
	}},
}

// smallBenchStore are the flags that make bench store's grabs and
// recordings few, for a test.
var smallBenchStore = []string{"--grabs", "2", "--count", "20", "--record-batches", "1"}

// valuesOf returns the values of key in rows.
func valuesOf(rows []map[string]any, key string) []any {
	var out []any
	for _, r := range rows {
		out = append(out, r[key])
	}
	return out
}

// tourFiles are the pages whose sh blocks TestREADMECommands runs: the
// README, and the page its benchmarks moved to.
var tourFiles = []string{"README.md", filepath.Join("docs", "benchmarks.md")}

// TestREADMECommands runs every command line of the sh blocks of the
// README (and of tourFiles), as its step in readmeSteps says; a line
// without a step, or a step whose line is no longer there, fails it.
func TestREADMECommands(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	var pages strings.Builder
	for _, f := range tourFiles {
		text, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		pages.Write(text)
	}
	lines := readmeCommandLines(t, pages.String())
	var stepLines []string
	for _, st := range readmeSteps {
		stepLines = append(stepLines, st.line)
	}
	missing := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return slices.Contains(stepLines, l) })
	require.Empty(t, missing, "the README's command lines without a step in readmeSteps")
	stale := slices.DeleteFunc(slices.Clone(stepLines), func(l string) bool { return slices.Contains(lines, l) })
	require.Empty(t, stale, "steps of readmeSteps whose lines the README no longer shows")
	require.Len(t, stepLines, len(lines), "a line has two steps")

	s := &readmeScenario{harness: newHarness(t), root: root, shellVars: map[string]string{},
		pgSmall: pgtest.URL(t), pgLarge: pgtest.URL(t)}
	s.url, s.clock = "", nil // the default store of the working directory, at the real time
	require.NoError(t, os.Symlink(filepath.Join(root, "examples"), filepath.Join(s.dir, "examples")))
	require.NoError(t, os.Symlink(filepath.Join(root, "bench"), filepath.Join(s.dir, "bench")))
	t.Chdir(s.dir)
	for _, st := range readmeSteps {
		start := time.Now()
		s.line = st.line
		args := shellWords(st.line)
		if args[0] == "revisit" {
			args = args[1:]
		}
		st.run(s, args)
		t.Logf("%5.1fs  %s", time.Since(start).Seconds(), st.line)
	}
	for _, b := range slices.Backward(s.background) {
		if !b.stopped {
			b.stop(t)
		}
	}
}
