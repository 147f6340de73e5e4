package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

func TestVisitStatusIngest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("origin", "record", h.file("o.jsonl",
		`{"url": "https://forge.example/gone", "visit_type": "git", "lister_name": "forge"}`+"\n"+
			`{"url": "https://forge.example/live", "visit_type": "git", "lister_name": "forge"}`+"\n"))
	var lines []string
	for day := 1; day <= 3; day++ {
		lines = append(lines, fmt.Sprintf(`{"origin": "https://forge.example/gone", "type": "git", "status": "not_found", "date": "2025-01-0%dT00:00:00Z"}`, day))
	}
	lines = append(lines,
		`{"origin": "https://forge.example/live", "visit_type": "git", "status": "full", "date": "2025-01-01T00:00:00Z", "snapshot": "0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b"}`,
		`{"origin": "https://forge.example/live", "visit_type": "git", "status": "full", "date": "2025-01-01T00:00:00Z", "snapshot": "0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b0a0b"}`,
		`{"origin": "https://forge.example/live", "visit_type": "git", "status": "ongoing", "date": "2025-01-05T00:00:00Z"}`)
	sum := h.jsonObject("visit-status", "ingest", h.file("s.jsonl", strings.Join(lines, "\n")+"\n"))
	require.EqualValues(t, 6, sum["processed"])
	require.EqualValues(t, 2, sum["ignored"], "the duplicate and the ongoing status")
	require.EqualValues(t, 1, sum["disabled"])

	gone := h.jsonObject("visit-stats", "show", "https://forge.example/gone", "git")
	require.EqualValues(t, 6, gone["next_position_offset"], "three not_found: 4 → 5 → 6 (semantics §7)")
	require.EqualValues(t, 3, gone["successive_visits"])
	require.Equal(t, "16 days", gone["revisit_interval"], "offset 6: 4^(6-4) days")
	planned, err := time.Parse(time.RFC3339, gone["next_visit_planned"].(string))
	require.NoError(t, err)
	require.True(t, planned.After(testNow), "the next visit is planned after now: %v", planned)
	disabled := h.jsonList("origin", "list", "--enabled", "false")
	require.Len(t, disabled, 1)
	require.Equal(t, "https://forge.example/gone", disabled[0]["url"])

	h.ok("origin", "record", h.file("again.jsonl", `{"url": "https://forge.example/gone", "visit_type": "git", "lister_name": "forge"}`+"\n"))
	require.Empty(t, h.jsonList("origin", "list", "--enabled", "false"), "a later listing re-enables it")
}

func TestVisitStatusIngestBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("db", "migrate") // creates the store the read-only commands below read
	bad := h.file("bad.jsonl",
		`{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "2025-01-01T00:00:00Z"}`+"\n"+
			`{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "2025-01-02"}`+"\n"+
			`{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "2025-01-03T00:00:00Z", "snapshot": "zz"}`+"\n")
	r := h.run("visit-status", "ingest", bad)
	require.Equal(t, ExitError, r.code)
	require.Contains(t, r.stderr, "line 2: date:")
	require.Contains(t, r.stderr, "line 3: snapshot:")
	require.Contains(t, r.stderr, "nothing written")
	require.Contains(t, h.fails(ExitError, "visit-stats", "show", "https://forge.example/a", "git"), "no visit stats")

	out := h.ok("visit-status", "ingest", "--skip-invalid", bad)
	require.Contains(t, out, "processed 1 status(es)")
}

// Several workers fold each origin's statuses in input order: none is
// taken for a late one, whatever batch and worker it lands in.
func TestVisitStatusIngestWorkers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const origins = 12
	var listed, lines []string
	for i := range origins {
		listed = append(listed, fmt.Sprintf(`{"url": "https://forge.example/%d", "visit_type": "git", "lister_name": "forge"}`, i))
	}
	h.ok("origin", "record", h.file("o.jsonl", strings.Join(listed, "\n")+"\n"))
	for day := 1; day <= 3; day++ {
		for i := range origins {
			lines = append(lines, fmt.Sprintf(`{"origin": "https://forge.example/%d", "visit_type": "git", "status": "failed", "date": "2025-01-0%dT00:00:00Z"}`, i, day))
		}
	}
	in := h.file("s.jsonl", strings.Join(lines, "\n")+"\n")
	sum := h.jsonObject("visit-status", "ingest", "--workers", "3", "--batch-size", "2", in)
	require.EqualValues(t, 3*origins, sum["processed"])
	require.EqualValues(t, 0, sum["ignored"], "no status overtook an earlier one of its origin")
	require.EqualValues(t, origins, sum["disabled"])
	for i := range origins {
		st := h.jsonObject("visit-stats", "show", fmt.Sprintf("https://forge.example/%d", i), "git")
		require.EqualValues(t, 3, st["successive_visits"], "origin %d", i)
	}
	require.Contains(t, h.fails(ExitUsage, "visit-status", "ingest", "--workers", "0", in), "--workers: must be positive")
}

// A status dated beyond now + results.max_future, a snapshot id that is not
// 40 hex digits, a key given twice and invalid UTF-8 are refused, each on
// its line and naming its field, and nothing is written.
func TestVisitStatusIngestRefusesFutureAndMalformed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("db", "migrate") // creates the store the read-only commands below read
	status := func(date, extra string) string {
		return `{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "` + date + `"` + extra + `}`
	}
	inTwoHours := testNow.Add(2 * time.Hour).Format(time.RFC3339)
	in := h.file("s.jsonl", strings.Join([]string{
		status("2025-01-01T00:00:00Z", ""),
		status("2999-01-01T00:00:00Z", ""),
		status("2025-01-02T00:00:00Z", `, "snapshot": "00"`),
		status("2025-01-03T00:00:00Z", `, "status": "failed"`),
		"{\"origin\": \"https://forge.example/\xff\xfe\", \"visit_type\": \"git\", \"status\": \"full\", \"date\": \"2025-01-04T00:00:00Z\"}",
		status(inTwoHours, ""),
	}, "\n")+"\n")
	r := h.run("visit-status", "ingest", in)
	require.Equal(t, ExitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "line 2: date: 2999-01-01T00:00:00Z is in the future: the latest date accepted now is 2025-03-01T13:00:00Z")
	require.Contains(t, r.stderr, `line 3: snapshot: want a snapshot id of 40 hex digits (20 bytes), got "00"`)
	require.Contains(t, r.stderr, "line 4: status: given twice in one object")
	require.Contains(t, r.stderr, "line 5: origin: not valid UTF-8")
	require.Contains(t, r.stderr, "line 6: date: "+inTwoHours+" is in the future")
	require.Contains(t, r.stderr, "nothing written")
	require.Contains(t, h.fails(ExitError, "visit-stats", "show", "https://forge.example/a", "git"), "no visit stats")

	h.environ = append(h.environ, "REVISIT_RESULTS_MAX_FUTURE=3h")
	r = h.run("visit-status", "ingest", "--skip-invalid", in)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "line 6:", "results.max_future: 3h accepts a status dated in two hours")
	require.Contains(t, r.stdout, "processed 2 status(es)")
}

// Statuses ingested close the visits in flight of their origins, on both
// stores: those sent before the status's date, as a result through the
// API or a worker would.
func TestVisitStatusIngestClosesVisitsInFlight(t *testing.T) {
	engines(t, func(t *testing.T, h *harness) {
		h.ok("task-type", "add", "load-git", "--backend-name", gitTask, "--max-queue-length", "10")
		h.ok("origin", "record", h.file("o.jsonl", originLines(2, "git")))
		h.ok("origin", "send-to-celery", "git")
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 2}}, h.inFlight(), "sent at testNow")

		status := func(n int, date time.Time) string {
			return fmt.Sprintf(`{"origin": "https://example.org/r%d", "visit_type": "git", "status": "failed", "date": %q}`,
				n, date.Format(time.RFC3339Nano))
		}
		sum := h.jsonObject("visit-status", "ingest", h.file("s.jsonl",
			status(0, testNow.Add(-time.Second))+"\n"+status(1, testNow.Add(time.Minute))+"\n"))
		require.EqualValues(t, 2, sum["processed"])
		require.EqualValues(t, 1, sum["closed"], "r0's status predates its visit")
		require.Equal(t, []revisit.VisitCounts{{VisitType: "git", Sent: 1}}, h.inFlight())

		out := h.ok("visit-status", "ingest", h.file("again.jsonl", status(0, testNow.Add(time.Minute))+"\n"))
		require.Contains(t, out, "1 visit(s) in flight closed")
		require.Empty(t, h.inFlight())
	})
}
