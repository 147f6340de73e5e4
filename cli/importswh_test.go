package cli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/internal/testkit/swhdb"
)

func TestImportSWH(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	from := swhdb.New(t)
	swhdb.Fill(t, from, 120)
	state := filepath.Join(h.dir, "state.json")

	require.Contains(t, h.fails(ExitUsage, "import", "swh"), "--from: missing")
	require.Contains(t, h.fails(ExitUsage, "import", "swh", "--from", from, "--batch", "0"), "--batch: 0 is not between 1 and 10000")
	require.Contains(t, h.fails(ExitUsage, "import", "swh", "--from", from, "--runs-since", "yesterday"), "--runs-since")

	r := h.run("import", "swh", "--from", from, "--state", state, "--batch", "50", "--progress=false")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "imported: task_type 3, listers 3, origin_visit_stats 65, listed_origins 126, "+
		"visit_scheduler_queue_position 2, task 4, task_run 7\n", r.stdout)
	require.Contains(t, r.stderr, "revisit: listed_origins: 126 rows in ")
	got := h.jsonList("lister", "list")
	require.Len(t, got, 3)
	again := h.run("import", "swh", "--from", from, "--state", state)
	require.Equal(t, 0, again.code)
	require.Equal(t, "revisit: "+state+" says the import is complete: nothing copied (remove it to import again)\n", again.stderr)
	require.Equal(t, r.stdout, again.stdout)

	caught := h.run("import", "swh", "--from", from, "--state", state, "--catch-up", "--progress=false")
	require.Equal(t, 0, caught.code, caught.stderr)
	require.Contains(t, caught.stdout, "origin_visit_stats 0, listed_origins 0, visit_scheduler_queue_position 2, task 0, task_run 0",
		"nothing listed or visited since")
	require.Contains(t, h.fails(ExitError, "import", "swh", "--from", from, "--state", filepath.Join(h.dir, "none.json"), "--catch-up"),
		"a catch-up follows a complete import")

	verified := h.ok("import", "swh", "--from", from, "--verify")
	require.Contains(t, verified, "listed_origins")
	require.Regexp(t, `listed_origins\s+126\s+126\s+0`, verified)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, from)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "UPDATE listers SET current_state = '{\"changed\": 1}' WHERE name = 'mirror'")
	require.NoError(t, err)
	r = h.run("import", "swh", "--from", from, "--verify")
	require.Equal(t, ExitError, r.code)
	require.Regexp(t, `listers\s+3\s+3\s+1\s+`+swhdb.Mirror, r.stdout)
	require.Contains(t, r.stderr, "1 of 7 tables differ between the source and the store")

	_, err = conn.Exec(ctx, "UPDATE dbversion SET version = 37")
	require.NoError(t, err)
	require.Contains(t, h.fails(ExitError, "import", "swh", "--from", from, "--state", filepath.Join(h.dir, "other.json")),
		"the source database's scheduler schema is version 37; this import reads version 38")
}
