package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestVisitStatusIngest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.ok("origin", "record", h.file("o.jsonl",
		`{"url": "https://forge.example/gone", "visit_type": "git", "lister_name": "forge"}`+"\n"+
			`{"url": "https://forge.example/live", "visit_type": "git", "lister_name": "forge"}`+"\n"))
	var lines []string
	for day := 1; day <= 3; day++ {
		lines = append(lines, fmt.Sprintf(`{"origin": "https://forge.example/gone", "type": "git", "status": "not_found", "date": "2026-01-0%dT00:00:00Z"}`, day))
	}
	lines = append(lines,
		`{"origin": "https://forge.example/live", "visit_type": "git", "status": "full", "date": "2026-01-01T00:00:00Z", "snapshot": "0a0b"}`,
		`{"origin": "https://forge.example/live", "visit_type": "git", "status": "full", "date": "2026-01-01T00:00:00Z", "snapshot": "0a0b"}`,
		`{"origin": "https://forge.example/live", "visit_type": "git", "status": "ongoing", "date": "2026-01-05T00:00:00Z"}`)
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
	bad := h.file("bad.jsonl",
		`{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "2026-01-01T00:00:00Z"}`+"\n"+
			`{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "2026-01-02"}`+"\n"+
			`{"origin": "https://forge.example/a", "visit_type": "git", "status": "full", "date": "2026-01-03T00:00:00Z", "snapshot": "zz"}`+"\n")
	r := h.run("visit-status", "ingest", bad)
	require.Equal(t, ExitError, r.code)
	require.Contains(t, r.stderr, "line 2: date:")
	require.Contains(t, r.stderr, "line 3: snapshot:")
	require.Contains(t, r.stderr, "nothing written")
	require.Contains(t, h.fails(ExitError, "visit-stats", "show", "https://forge.example/a", "git"), "no visit stats")

	out := h.ok("visit-status", "ingest", "--skip-invalid", bad)
	require.Contains(t, out, "processed 1 status(es)")
}
