package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// actionSummaries writes the actions of revisit history --actions as "by
// action target answer".
func actionSummaries(actions []map[string]any) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		answer, _ := json.Marshal(a["answer"])
		out[i] = strings.Join([]string{a["by"].(string), a["action"].(string), a["target"].(string), string(answer)}, " ")
	}
	return out
}

// TestHistoryActions does actions on the store and through the server,
// and lists them with revisit history --actions, on the store and through
// the server.
func TestHistoryActions(t *testing.T) {
	t.Parallel()
	w := newConsoleWorld(t)
	r1 := "https://github.com/o/r1"
	w.ok("task", "add", "load-git", "n=1")
	w.ok("visit-type", "pause", "git")
	w.ok("origin", "disable", r1, "git")
	w.ok(w.remote(testWriteToken, "visit-type", "resume", "git")...)
	w.fails(ExitError, w.remote(testReadToken, "visit-type", "pause", "git")...)
	w.fails(ExitError, "visit-type", "pause", "hg")
	w.ok("task", "disable", "1")
	w.ok(w.remote(testWriteToken, "task", "respawn", "1")...)
	w.ok("task", "run-now", "1")
	w.ok("origin", "update-metrics")
	w.ok(w.remote(testWriteToken, "visit-type", "requeue-lost", "git")...)

	want := []string{
		`writer requeue_lost git {"lost":0}`,
		`cli:tester refresh_metrics every lister {"metrics":2}`,
		`cli:tester run_task_now task 1 {"status":"next_run_not_scheduled"}`,
		`writer respawn_task task 1 {"status":"next_run_not_scheduled","type":"load-git"}`,
		`cli:tester disable_task task 1 {"status":"disabled"}`,
		`writer resume git {"was_paused":true}`,
		`cli:tester disable_origin ` + r1 + ` (git) {"changed":1,"lister":"every lister"}`,
		`cli:tester pause git {"paused_at":"2025-03-01T12:00:00Z","paused_by":"cli:tester"}`,
	}
	local := w.jsonList("history", "--actions")
	require.Equal(t, want, actionSummaries(local), "newest first, the refused and failed ones left out")
	require.Equal(t, "2025-03-01T12:00:00Z", local[0]["at"])
	require.Equal(t, local, w.jsonList(w.remote(testReadToken, "history", "--actions")...), "the same through the server")

	table := strings.Split(strings.TrimSpace(w.ok("history", "--actions", "--action", "pause")), "\n")
	require.Equal(t, []string{"AT", "BY", "ACTION", "TARGET", "ANSWER"}, strings.Fields(table[0]))
	require.Len(t, table, 2)
	require.Equal(t, []string{"2025-03-01T12:00:00Z", "cli:tester", "pause", "git",
		`{"paused_at":"2025-03-01T12:00:00Z","paused_by":"cli:tester"}`}, strings.Fields(table[1]))
	require.Equal(t, []string{want[0], want[3], want[5]},
		actionSummaries(w.jsonList(w.remote(testReadToken, "history", "--actions", "--by", "writer")...)))

	r := w.run("history", "--actions", "--limit", "3", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	token, ok := strings.CutPrefix(strings.TrimSpace(r.stderr), "revisit: more actions follow: --page-token ")
	require.True(t, ok, r.stderr)
	require.Equal(t, want[3:6], actionSummaries(w.jsonList(w.remote(testReadToken, "history", "--actions", "--limit", "3",
		"--page-token", token)...)), "the next page, through the server")
	require.Equal(t, want, actionSummaries(w.jsonList("history", "--actions", "--limit", "3", "--all")))

	for args, msg := range map[string]string{
		"--actions --minutes 5":     "--minutes: not with --actions",
		"--action pause":            "--action: only with --actions",
		"--all":                     "--all: only with --actions",
		"--actions --limit 0":       "--limit: must be between 1 and 1000, not 0",
		"--actions --action Pause!": `--action: "Pause!" is not an action name`,
		"--actions --page-token x":  "--page-token: ",
		"--actions --by " + "a\tb":  "--by: ",
		"--minutes 5 --by somebody": "--by: only with --actions",
	} {
		require.Contains(t, w.fails(ExitUsage, append([]string{"history"}, strings.Split(args, " ")...)...), msg, args)
	}
	require.Contains(t, w.fails(ExitUsage, w.remote(testReadToken, "history", "--actions", "--page-token", "x")...),
		"--page-token: ")
	require.Contains(t, w.fails(ExitUsage, "history"), "--server is required")
}
