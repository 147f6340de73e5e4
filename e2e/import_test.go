package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/swhdb"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// TestImportKilledAndResumed kills `revisit import swh` with SIGKILL in
// the middle of the listed origins, twice, and runs the same command
// again: the store ends with every row of the source once, as an import
// never interrupted.
func TestImportKilledAndResumed(t *testing.T) {
	bin := revisitBinary(t)
	from := swhdb.New(t)
	const generated = 30000
	swhdb.Fill(t, from, generated)
	st, storeURL := teststore.Postgres(t)
	stateFile := filepath.Join(t.TempDir(), "import.json")
	args := []string{"import", "swh", "--from", from, "--store", storeURL, "--state", stateFile, "--batch", "200",
		"--progress=false"}

	for kill := 0; kill < 2; kill++ {
		cmd := exec.Command(bin, args...)
		cmd.Env = withoutRevisitVariables()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		// Kill it once it has copied some origins, a little further each time.
		deadline := time.Now().Add(60 * time.Second)
		for originsCopied(t, stateFile) < int64(2000*(kill+1)) {
			require.True(t, time.Now().Before(deadline), "the import did not get far: %s", stderr.String())
			time.Sleep(5 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		require.Error(t, err, "killed")
		require.Less(t, originsCopied(t, stateFile), int64(generated), "killed before the end of the origins")
	}
	final := exec.Command(bin, args...)
	final.Env = withoutRevisitVariables()
	out, err := final.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "imported: ")

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, from)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var want int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM listed_origins").Scan(&want))
	all := allOrigins(t, st)
	require.Len(t, all, want, "every origin once")
	seen := map[string]bool{}
	for _, o := range all {
		key := o.ListerID.String() + " " + o.URL + " " + o.VisitType
		require.False(t, seen[key], "%s twice", key)
		seen[key] = true
	}
	var stats int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM origin_visit_stats").Scan(&stats))
	tasks, err := st.TasksGet(ctx, revisit.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, tasks.Tasks, 4)
	positions, err := st.QueuePositions(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"git": 123456, "svn": 0}, positions)
}

// originsCopied is how many listed origins the state file says were
// copied (0 before it exists).
func originsCopied(t *testing.T, stateFile string) int64 {
	b, err := os.ReadFile(stateFile)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	var state struct {
		Tables map[string]struct{ Rows int64 } `json:"tables"`
	}
	require.NoError(t, json.Unmarshal(b, &state))
	return state.Tables["listed_origins"].Rows
}

func allOrigins(t *testing.T, st store.Store) []revisit.ListedOrigin {
	var out []revisit.ListedOrigin
	f := revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled, Limit: revisit.PageSize.Max}
	for {
		page, err := st.ListedOriginsGet(context.Background(), f)
		require.NoError(t, err)
		out = append(out, page.Origins...)
		if page.NextPageToken == "" {
			return out
		}
		f.PageToken = page.NextPageToken
	}
}

// withoutRevisitVariables is the environment without the REVISIT_
// variables of the test harness, which revisit refuses.
func withoutRevisitVariables() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REVISIT_") {
			env = append(env, kv)
		}
	}
	return env
}
