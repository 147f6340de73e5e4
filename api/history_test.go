package api_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/history"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
)

func TestHistory(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	hist := history.New(history.Config{Clock: clock})
	minute := func(n int) time.Time { return now.Truncate(time.Minute).Add(time.Duration(n) * time.Minute) }
	hist.Add(history.Key{VisitType: "git", Series: history.Scheduled, Label: "never_visited_oldest_update_first"}, minute(-2), 40)
	hist.Add(history.Key{VisitType: "git", Series: history.Scheduled}, minute(-90), 7)
	hist.Add(history.Key{VisitType: "git", Series: history.Results, Label: "failed"}, minute(-1), 3)
	hist.Add(history.Key{VisitType: "git", Series: history.Lost}, minute(-600), 5)
	hist.Set(history.Key{VisitType: "git", Series: history.QueueDepth}, minute(-1), 12)

	h := &dataHarness{t: t, token: readToken}
	h.api = api.New(api.Config{Store: teststore.SQLite(t), History: hist, Clock: clock,
		Tokens: []config.Token{{Name: "reader", Token: readToken, Scope: "read"}}})
	h.srv = httptest.NewServer(h.api)
	t.Cleanup(h.srv.Close)

	w := h.json("GET", "/api/v1/history?minutes=3", "", 200)
	require.Equal(t, "2026-03-01T11:57:00Z", w["start"], "three minutes up to the last whole one")
	require.EqualValues(t, 3, w["minutes"])
	require.EqualValues(t, 0, w["dropped_series"])
	vts := w["visit_types"].([]any)
	require.Len(t, vts, 1)
	git := vts[0].(map[string]any)
	require.Equal(t, "git", git["visit_type"])
	require.Equal(t, map[string]any{"never_visited_oldest_update_first": []any{nil, 40.0, nil}}, git["scheduled"])
	require.Equal(t, []any{nil, nil, nil}, git["scheduled_without_policy"], "90 minutes ago is outside the window")
	require.Equal(t, map[string]any{"failed": []any{nil, nil, 3.0}}, git["results"])
	require.Equal(t, []any{nil, nil, 12.0}, git["queue_depth"])
	for _, series := range []string{"lost", "free_slots", "grab_p95_seconds", "grab_mean_seconds"} {
		require.Equal(t, []any{nil, nil, nil}, git[series], series)
	}
	require.Equal(t, map[string]any{"scheduled": 47.0, "results": map[string]any{"failed": 3.0}, "lost": 5.0},
		git["last_24h"], "the totals of the day, whatever the window")

	w = h.json("GET", "/api/v1/history", "", 200)
	require.EqualValues(t, 60, w["minutes"], "an hour by default")
	require.Len(t, w["visit_types"].([]any)[0].(map[string]any)["lost"], 60)
	require.Len(t, h.json("GET", "/api/v1/history?minutes=1440", "", 200)["visit_types"].([]any)[0].(map[string]any)["lost"], 1440)

	for _, c := range []struct{ query, msg string }{
		{"minutes=0", "must be between 1 and 1440, not 0"},
		{"minutes=1441", "must be between 1 and 1440, not 1441"},
		{"minutes=-5", "must be between 1 and 1440, not -5"},
		{"minutes=hour", `want an integer between 1 and 1440, got "hour"`},
		{"minutes=1&minutes=2", "given 2 times, at most once"},
	} {
		h.fails("GET", "/api/v1/history?"+c.query, "", 400, "invalid", "minutes", c.msg)
	}
	h.fails("GET", "/api/v1/history?hours=1", "", 400, "invalid", "hours", "unknown query parameter")
	h.token = ""
	h.fails("GET", "/api/v1/history", "", 401, "unauthorized", "", "missing bearer token")
}

func TestHistoryWithoutOneIsEmpty(t *testing.T) {
	t.Parallel()
	h := newDataHarness(t)
	w := h.json("GET", "/api/v1/history?minutes=5", "", 200)
	require.EqualValues(t, 5, w["minutes"])
	require.Equal(t, []any{}, w["visit_types"])
}
