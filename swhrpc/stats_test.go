package swhrpc

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/swhwire"
)

var visitStatsFields = []string{"url", "visit_type", "last_successful", "last_visit", "last_visit_status", "last_scheduled",
	"last_snapshot", "next_visit_queue_position", "next_position_offset", "successive_visits"}

func visitStats(url string, more ...any) swhwire.Model {
	return swhwire.Model{Type: "OriginVisitStats", Fields: append(pairs("url", url, "visit_type", "git"), pairs(more...)...)}
}

func TestVisitStats(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
		snapshot := bytes.Repeat([]byte{1}, 20)
		require.Nil(t, c.ok("visit_stats/upsert", "origin_visit_stats", []any{
			visitStats("https://github.com/o/a", "last_successful", at, "last_visit", at,
				"last_visit_status", swhwire.VisitSuccessful, "last_snapshot", snapshot, "next_visit_queue_position", int64(79087)),
			visitStats("https://github.com/o/b", "last_visit", at, "last_visit_status", "failed", "successive_visits", int64(3)),
		}))
		got := list(t, c.ok("visit_stats/get", "ids", []any{
			[]any{"https://github.com/o/b", "git"}, []any{"https://github.com/o/none", "git"},
			[]any{"https://github.com/o/a", "git"}, []any{"https://github.com/o/b", "git"}}))
		require.Len(t, got, 3, "in the order asked, repeats included, missing ones left out")
		require.Equal(t, visitStatsFields, names(got[0].(swhwire.Model)))
		b, a := fields(t, got[0], "OriginVisitStats"), fields(t, got[1], "OriginVisitStats")
		require.Equal(t, got[0], got[2])
		require.Equal(t, swhwire.VisitFailed, b["last_visit_status"], "a str is read as the enum")
		require.Equal(t, int64(3), b["successive_visits"])
		require.Equal(t, int64(4), b["next_position_offset"], "the default offset")
		require.Nil(t, b["last_snapshot"])
		require.Equal(t, snapshot, a["last_snapshot"])
		require.Equal(t, swhwire.VisitSuccessful, a["last_visit_status"])
		require.Equal(t, at, a["last_successful"])
		require.Equal(t, int64(79087), a["next_visit_queue_position"])

		// None never overwrites a stored value.
		c.ok("visit_stats/upsert", "origin_visit_stats", []any{visitStats("https://github.com/o/a", "last_scheduled", at)})
		a = fields(t, list(t, c.ok("visit_stats/get", "ids", []any{[]any{"https://github.com/o/a", "git"}}))[0], "OriginVisitStats")
		require.Equal(t, snapshot, a["last_snapshot"])
		require.Equal(t, at, a["last_scheduled"])

		c.fails(http.StatusBadRequest, "SchedulerException", "origin_visit_stats[1].last_snapshot: want a snapshot id of 40 hex digits (20 bytes), got 3 bytes",
			"visit_stats/upsert", "origin_visit_stats", []any{visitStats("https://github.com/o/c"), visitStats("https://github.com/o/d", "last_snapshot", []byte("abc"))})
		c.fails(http.StatusBadRequest, "SchedulerException", `origin_visit_stats[0].last_visit_status: "done" is not successful, failed or not_found`,
			"visit_stats/upsert", "origin_visit_stats", []any{visitStats("https://github.com/o/c", "last_visit_status", "done")})
		c.fails(http.StatusBadRequest, "SchedulerException", "ids[0]: want a (url, visit_type) pair, got a str",
			"visit_stats/get", "ids", []any{"https://github.com/o/a"})
		require.Empty(t, list(t, c.ok("visit_stats/get", "ids", []any{[]any{"https://github.com/o/c", "git"}})), "nothing written")
	})
}

// TestVisitStatsKeepRecentResults: the RPC's stats carry no recent results
// (the model has no such field), so its upsert leaves those stored and
// its get does not return them.
func TestVisitStatsKeepRecentResults(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		c := serve(t, st, Config{})
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		key := revisit.OriginKey{URL: "https://github.com/o/a", VisitType: "git"}
		stats := revisit.NewVisitStats(key)
		stats.LastVisit, stats.LastVisitStatus = &at, new(revisit.VisitFailed)
		recent := []revisit.RecentResult{{Date: at, Status: revisit.VisitFailed}}
		stats.Recent = recent
		require.NoError(t, st.VisitStatsUpsert(ctx, []revisit.VisitStats{stats}))

		later := at.Add(time.Hour)
		c.ok("visit_stats/upsert", "origin_visit_stats", []any{visitStats(key.URL, "last_visit", later,
			"last_visit_status", swhwire.VisitSuccessful, "last_scheduled", later)})
		got, err := st.VisitStatsGet(ctx, []revisit.OriginKey{key})
		require.NoError(t, err)
		require.Equal(t, later, *got[0].LastVisit, "the RPC's upsert is written")
		require.Equal(t, recent, got[0].Recent, "and leaves the recent results")
		rpc := list(t, c.ok("visit_stats/get", "ids", []any{[]any{key.URL, "git"}}))
		require.Equal(t, visitStatsFields, names(rpc[0].(swhwire.Model)), "the RPC's model, without them")
	})
}

func TestVisitScheduler(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		require.Equal(t, swhwire.Map{}, c.ok("visit_scheduler/get"))
		require.Nil(t, c.ok("visit_scheduler/set", "visit_type", "git", "position", int64(42)))
		require.Nil(t, c.ok("visit_scheduler/set", "visit_type", "hg", "position", int64(-7)))
		require.ElementsMatch(t, swhwire.Map{{Key: "git", Value: int64(42)}, {Key: "hg", Value: int64(-7)}}, c.ok("visit_scheduler/get"))
		c.fails(http.StatusBadRequest, "SchedulerException", "position: want an int, got a str",
			"visit_scheduler/set", "visit_type", "git", "position", "42")
		c.fails(http.StatusBadRequest, "SchedulerException", "position: missing", "visit_scheduler/set", "visit_type", "git")
	})
}

var metricsFields = []string{"lister_id", "visit_type", "last_update", "origins_known", "origins_enabled",
	"origins_never_visited", "origins_with_pending_changes"}

func TestSchedulerMetrics(t *testing.T) {
	engines(t, func(t *testing.T, c *client) {
		gh, gl := c.newLister("github"), c.newLister("gitlab")
		c.ok("origins/record", "listed_origins", []any{
			origin(gh, "https://github.com/o/a", "git"), origin(gh, "https://github.com/o/b", "git", "enabled", false),
			origin(gh, "https://github.com/o/a", "hg"), origin(gl, "https://gitlab.com/o/a", "git")})
		at := time.Date(2026, 3, 1, 12, 0, 0, 5000, time.UTC)
		updated := list(t, c.ok("scheduler_metrics/update", "lister_id", gh, "timestamp", at))
		require.Len(t, updated, 2)
		require.Equal(t, metricsFields, names(updated[0].(swhwire.Model)))
		git := fields(t, updated[0], "SchedulerMetrics")
		require.Equal(t, "git", git["visit_type"])
		require.Equal(t, at, git["last_update"])
		require.Equal(t, int64(2), git["origins_known"])
		require.Equal(t, int64(1), git["origins_enabled"])
		require.Equal(t, int64(1), git["origins_never_visited"])

		require.Len(t, list(t, c.ok("scheduler_metrics/get", "lister_id", nil, "visit_type", nil)), 2, "only github's were computed")
		all := list(t, c.ok("scheduler_metrics/update", "lister_id", nil, "timestamp", nil))
		require.Len(t, all, 3)
		require.WithinDuration(t, time.Now(), fields(t, all[0], "SchedulerMetrics")["last_update"].(time.Time), time.Minute,
			"timestamp None is now")
		require.Len(t, list(t, c.ok("scheduler_metrics/get", "visit_type", "git")), 2)
		require.Len(t, list(t, c.ok("scheduler_metrics/get", "lister_id", gl.String(), "visit_type", "git")), 1)
	})
}
