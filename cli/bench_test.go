package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// Given the JSON output of a run on a smaller set, bench store reports P1g:
// each full case's grab p50 over the baseline's, against the target.
func TestBenchStoreReportsGrowthOverABaseline(t *testing.T) {
	h := newHarness(t)
	args := []string{"bench", "store", "--grabs", "2", "--count", "20", "--record-batches", "1"}
	base := h.ok(append(args, "--origins", "2000", "--format", "json")...)
	basePath := h.file("base.json", base)
	var baseRows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(base), &baseRows))
	baseP50 := map[string]float64{}
	for _, r := range baseRows {
		if p50, ok := r["p50_ms"].(float64); ok {
			baseP50[r["measure"].(string)] = p50
		}
	}

	h.url = "sqlite://" + filepath.Join(h.dir, "larger.db")
	rows := h.jsonList(append(args, "--origins", "4000", "--baseline", basePath)...)
	growth := 0
	for _, r := range rows {
		c, ok := strings.CutPrefix(r["measure"].(string), "growth from the baseline: ")
		if !ok {
			continue
		}
		growth++
		p50, was := r["p50_ms"].(float64), baseP50[c]
		require.Greater(t, was, 0.0, c)
		ratio := p50 / was
		require.Equal(t, fmt.Sprintf("P1g %.2f×", ratio), r["target"], c)
		require.Equal(t, ratio <= 1.5, r["met"], c)
	}
	require.NotZero(t, growth, "no growth rows in %v", rows)

	msg := h.fails(1, append(args, "--baseline", filepath.Join(h.dir, "missing.json"))...)
	require.Contains(t, msg, "--baseline")
	msg = h.fails(1, append(args, "--baseline", h.file("feedback.json", `[{"statuses": 10}]`))...)
	require.Contains(t, msg, "no grab rows")
	msg = h.fails(1, append(args, "--baseline", h.file("bad.json", `{"measure": `))...)
	require.Contains(t, msg, "bad.json")
}

// bench store and bench feedback say what recording and folding cost the
// database (its write-ahead log on PostgreSQL), and bench store what each
// grab cost in processor time, and the disk space of each table and index
// once the data set is loaded, on both stores.
func TestBenchReportsTheDatabasesCost(t *testing.T) {
	h := newHarness(t)
	pg := pgtest.URL(t)
	for engine, url := range map[string]string{"postgres": pg, "sqlite": "sqlite://" + filepath.Join(h.dir, "cost.db")} {
		h.url = url
		rows := h.jsonList("bench", "store", "--origins", "3000", "--grabs", "1", "--count", "10", "--record-batches", "2")
		var all, sum, recordWAL float64
		var listed, indexed bool
		for _, r := range rows {
			measure := r["measure"].(string)
			switch {
			case strings.HasPrefix(measure, "grab"):
				for _, col := range []string{"db_cpu_us", "revisit_cpu_us"} {
					require.GreaterOrEqual(t, r[col], 0.0, "%s: %s: %v", engine, col, r)
				}
				require.GreaterOrEqual(t, r["cores_busy"], 0.0, "%s: %v", engine, r)
				require.LessOrEqual(t, r["cores_busy"], float64(runtime.NumCPU()), "%s: %v", engine, r)
			case strings.HasPrefix(measure, "record 1000-origin batches"):
				if engine == "postgres" {
					require.Greater(t, r["wal_bytes"], 100.0, "an origin recorded writes to the log: %v", r)
				} else {
					require.EqualValues(t, 0, r["wal_bytes"], "no server log to measure: %v", r)
				}
				recordWAL = r["wal_bytes"].(float64)
			case measure == "record and index, in all (origins/s)":
				indexed = true
				require.Greater(t, r["wal_bytes"], recordWAL, "indexing the new URLs writes to the log too: %v", r)
			case measure == "footprint: all tables and indexes":
				all = r["bytes"].(float64)
				require.InDelta(t, all/3000, r["bytes_per_origin"], 0.1)
			case strings.HasPrefix(measure, "footprint: "):
				sum += r["bytes"].(float64)
				listed = listed || measure == "footprint: listed_origin (table)"
			}
		}
		require.True(t, listed, "%s: listed_origin's footprint in %v", engine, rows)
		require.Equal(t, engine == "postgres", indexed, "%s: only PostgreSQL indexes URLs after recording: %v", engine, rows)
		require.Positive(t, all, engine)
		require.Equal(t, all, sum, "%s: the total is the sum of the tables and indexes", engine)
	}
	h.url = pg
	rows := h.jsonList("bench", "feedback", "--origins", "3000", "--statuses", "500")
	require.Greater(t, rows[0]["wal_bytes"], 100.0, "a result folded writes to the log: %v", rows[0])
}

func TestBenchJournal(t *testing.T) {
	h := newHarness(t)
	rows := h.jsonList("bench", "journal", "--origins", "500", "--statuses", "400", "--batch", "50,200", "--partitions", "2")
	require.Len(t, rows, 2)
	for i, batch := range []int{50, 200} {
		require.EqualValues(t, 400, rows[i]["statuses"])
		require.EqualValues(t, batch, rows[i]["batch"])
		require.Positive(t, rows[i]["journal_per_s"])
		require.Positive(t, rows[i]["ingest_per_s"])
	}
	require.Contains(t, h.fails(2, "bench", "journal", "--batch", "0"), "--batch")
}

// bench drain: workers taking visits faster than the default jitter never
// find the queue empty while origins are due.
func TestBenchDrain(t *testing.T) {
	h := newHarness(t)
	rows := h.jsonList("bench", "drain", "--origins", "3000", "--workers", "4", "--rate", "100", "--queue", "50",
		"--duration", "4s")
	require.Len(t, rows, 1)
	r := rows[0]
	require.Positive(t, r["visits"])
	require.Positive(t, r["rounds"])
	require.Less(t, r["idle_percent"], 1.0, "%v", r)
	require.Equal(t, true, r["met"])
	require.Contains(t, h.fails(2, "bench", "drain", "--workers", "0"), "--workers")
}
