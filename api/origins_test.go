package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// urlsOf returns the URLs of a search page's rows, with their listers'
// ids replaced by the names in listers.
func urlsOf(page map[string]any, listers map[string]string) []string {
	var out []string
	for _, o := range page["origins"].([]any) {
		m := o.(map[string]any)
		out = append(out, fmt.Sprintf("%s %s %s", m["url"], m["visit_type"], listers[m["lister_id"].(string)]))
	}
	return out
}

func TestOriginSearch(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		h := newDataHarnessOn(t, st, time.Now)
		gh := h.json("POST", "/api/v1/listers", `{"name": "github", "instance_name": "github"}`, 200)["id"].(string)
		gl := h.json("POST", "/api/v1/listers", `{"name": "gitlab"}`, 200)["id"].(string)
		listers := map[string]string{gh: "github", gl: "gitlab"}
		row := func(lister, u, vt string, enabled bool) string {
			return fmt.Sprintf(`{"lister_id": %q, "url": %q, "visit_type": %q, "enabled": %t}`, lister, u, vt, enabled)
		}
		h.json("POST", "/api/v1/listed-origins", `{"origins": [`+strings.Join([]string{
			row(gh, "https://github.com/torvalds/linux", "git", true),
			row(gl, "https://github.com/torvalds/linux", "git", true),
			row(gh, "https://github.com/torvalds/subsurface", "git", false),
			row(gh, "https://gitlab.com/inkscape/inkscape", "git", true),
			row(gl, "https://gitlab.com/inkscape/inkscape", "hg", true),
		}, ", ")+`]}`, 200)
		search := func(query string) []string {
			t.Helper()
			return urlsOf(h.json("GET", "/api/v1/origins/search?"+query, "", 200), listers)
		}
		linux := []string{"https://github.com/torvalds/linux git github", "https://github.com/torvalds/linux git gitlab"}
		if gl < gh {
			linux[0], linux[1] = linux[1], linux[0]
		}
		torvalds := append(linux, "https://github.com/torvalds/subsurface git github")
		require.Equal(t, torvalds, search("q="+url.QueryEscape("https://github.com/torvalds/")),
			"prefix, disabled rows included by default")
		require.Equal(t, torvalds, search("q=torvalds&match=substring"))
		require.Equal(t, torvalds[:2], search("q=torvalds&match=substring&enabled=true"))
		require.Equal(t, torvalds[2:], search("q=torvalds&match=substring&enabled=false"))
		require.Equal(t, []string{"https://github.com/torvalds/linux git gitlab", "https://gitlab.com/inkscape/inkscape hg gitlab"},
			search("lister=gitlab"), "a lister without instance, every URL")
		require.Equal(t, []string{"https://gitlab.com/inkscape/inkscape hg gitlab"}, search("q=inkscape&match=substring&visit_type=hg"))
		require.Empty(t, search("q=Torvalds&match=substring"), "case counts")

		// Pages of one row, following next_page_token to its absence.
		var rows []string
		query := "q=torvalds&match=substring&limit=1"
		for pages := 1; ; pages++ {
			out := h.json("GET", "/api/v1/origins/search?"+query, "", 200)
			rows = append(rows, urlsOf(out, listers)...)
			token, more := out["next_page_token"].(string)
			if !more {
				require.Equal(t, 3, pages)
				break
			}
			query = "q=torvalds&match=substring&limit=1&page_token=" + url.QueryEscape(token)
		}
		require.Equal(t, torvalds, rows)

		// Rows carry the last visit of their origin.
		h.json("POST", "/api/v1/visit-statuses", `[{"origin": "https://github.com/torvalds/linux", "visit_type": "git",
			"status": "failed", "date": "2026-01-02T03:04:05Z"}]`, 200)
		out := h.json("GET", "/api/v1/origins/search?q=linux&match=substring&lister=github/github", "", 200)["origins"].([]any)
		require.Len(t, out, 1)
		require.Equal(t, "failed", out[0].(map[string]any)["last_visit_status"])
		require.Equal(t, "2026-01-02T03:04:05Z", out[0].(map[string]any)["last_visit"])

		for _, c := range []struct{ query, field, msg string }{
			{"q=ab&match=substring", "q", "at least 3 characters"},
			{"match=glob", "match", `"glob" is not one of prefix, substring`},
			{"lister=nobody", "lister", `no lister "nobody"`},
			{"lister=/github", "lister", "has no lister name"},
			{"visit_type=Git!", "visit_type", "not a visit type"},
			{"enabled=maybe", "enabled", "not one of"},
			{"limit=0", "limit", "must be between 1 and 10000, not 0"},
			{"page_token=garbage", "page_token", "not a page token"},
			{"q=%FF", "q", "not valid UTF-8"},
			{"q=a%00b&match=substring", "q", "control characters"},
			{"q=%20https://github.com/", "q", "white space"},
			{"lister=git%00hub", "lister", "control characters"},
			{"colour=red", "colour", "unknown query parameter"},
		} {
			h.fails("GET", "/api/v1/origins/search?"+c.query, "", 400, "invalid", c.field, c.msg)
		}
	})
}

// TestOriginSearchWhileOff: with the PostgreSQL store's URL search off, a
// search answers 503 with the store's message, which says how to turn it
// on; an origin's page and browsing answer as before.
func TestOriginSearchWhileOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := teststore.Postgres(t)
	h := newDataHarnessOn(t, st, time.Now)
	l, err := st.ListerGetOrCreate(ctx, "github", "github")
	require.NoError(t, err)
	const linux = "https://github.com/torvalds/linux"
	_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: l.ID, URL: linux, VisitType: "git", Enabled: true}})
	require.NoError(t, err)
	_, err = st.(store.URLSearchSwitch).SetURLSearch(ctx, false)
	require.NoError(t, err)

	h.fails("GET", "/api/v1/origins/search?q=linux&match=substring", "", 503, "unavailable", "",
		"the search of origins by URL is off on this store: `revisit db search on` builds its index")
	require.Equal(t, linux, h.json("GET", "/api/v1/origins/detail?visit_type=git&url="+url.QueryEscape(linux), "", 200)["url"])
	require.Equal(t, []string{linux + " git github"},
		urlsOf(h.json("GET", "/api/v1/origins/browse?visit_type=git", "", 200), map[string]string{l.ID.String(): "github"}))
}

// TestOriginBrowse browses a visit type's origins through the API: the
// views, the filters by name, paging both ways, and bad queries named.
func TestOriginBrowse(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		h := newDataHarnessOn(t, st, time.Now)
		gh := h.json("POST", "/api/v1/listers", `{"name": "github", "instance_name": "github"}`, 200)["id"].(string)
		gl := h.json("POST", "/api/v1/listers", `{"name": "gitlab"}`, 200)["id"].(string)
		listers := map[string]string{gh: "github", gl: "gitlab"}
		var rows []string
		for i, name := range []string{"a", "b", "c", "d", "e"} {
			lister := gh
			if i%2 == 1 {
				lister = gl
			}
			rows = append(rows, fmt.Sprintf(`{"lister_id": %q, "url": "https://forge.example/%s", "visit_type": "git", "enabled": %t}`,
				lister, name, name != "e"))
		}
		h.json("POST", "/api/v1/listed-origins", `{"origins": [`+strings.Join(rows, ", ")+`]}`, 200)
		// c failed first, then a, then b found nothing; d succeeded.
		h.json("POST", "/api/v1/visit-statuses", `[
			{"origin": "https://forge.example/c", "visit_type": "git", "status": "failed", "date": "2026-01-02T03:00:00Z"},
			{"origin": "https://forge.example/a", "visit_type": "git", "status": "failed", "date": "2026-01-02T04:00:00Z"},
			{"origin": "https://forge.example/b", "visit_type": "git", "status": "not_found", "date": "2026-01-02T05:00:00Z"},
			{"origin": "https://forge.example/d", "visit_type": "git", "status": "full", "date": "2026-01-02T06:00:00Z",
			 "snapshot": "0123456789012345678901234567890123456789"}]`, 200)
		browse := func(query string) []string {
			t.Helper()
			var names []string
			for _, row := range urlsOf(h.json("GET", "/api/v1/origins/browse?visit_type=git&"+query, "", 200), listers) {
				names = append(names, strings.TrimPrefix(row, "https://forge.example/"))
			}
			return names
		}
		require.Equal(t, []string{"b git gitlab", "a git github", "c git github"}, browse("view=failures&order=desc"),
			"the failures, newest first")
		require.Equal(t, []string{"c git github", "a git github"}, browse("view=failures&outcome=failed"))
		require.Equal(t, []string{"b git gitlab"}, browse("view=failures&lister=gitlab"))
		require.Equal(t, []string{"e git github"}, browse("enabled=false"), "the disabled origins")
		require.Equal(t, []string{"d git gitlab"}, browse("outcome=successful"))

		// Pages of one row, forward then back.
		out := h.json("GET", "/api/v1/origins/browse?visit_type=git&view=failures&order=desc&limit=1", "", 200)
		require.NotContains(t, out, "prev_page_token")
		out = h.json("GET", "/api/v1/origins/browse?visit_type=git&view=failures&order=desc&limit=1&page_token="+
			url.QueryEscape(out["next_page_token"].(string)), "", 200)
		require.Equal(t, []string{"https://forge.example/a git github"}, urlsOf(out, listers))
		row := out["origins"].([]any)[0].(map[string]any)
		require.Equal(t, "failed", row["last_visit_status"])
		require.Equal(t, "2026-01-02T04:00:00Z", row["last_visit"])
		require.Contains(t, row, "last_scheduled")
		out = h.json("GET", "/api/v1/origins/browse?visit_type=git&view=failures&order=desc&limit=1&page_token="+
			url.QueryEscape(out["prev_page_token"].(string)), "", 200)
		require.Equal(t, []string{"https://forge.example/b git gitlab"}, urlsOf(out, listers))
		require.NotContains(t, out, "prev_page_token")

		for _, c := range []struct{ query, field, msg string }{
			{"", "visit_type", "missing"},
			{"visit_type=git&view=latest", "view", `"latest" is not one of scheduled, failures`},
			{"visit_type=git&order=up", "order", `"up" is not one of asc, desc`},
			{"visit_type=git&enabled=any", "enabled", "not any"},
			{"visit_type=git&outcome=lost", "outcome", "not one of"},
			{"visit_type=git&view=failures&outcome=successful", "outcome", "holds failed and not_found"},
			{"visit_type=git&lister=nobody", "lister", `no lister "nobody"`},
			{"visit_type=git&limit=1001", "limit", "must be between 1 and 1000"},
			{"visit_type=git&page_token=xyz", "page_token", "not a page token"},
		} {
			h.fails("GET", "/api/v1/origins/browse?"+c.query, "", 400, "invalid", c.field, c.msg)
		}
	})
}

func TestOriginDetail(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		h := newDataHarnessOn(t, st, func() time.Time { return now })
		gh, err := st.ListerGetOrCreate(ctx, "github", "github")
		require.NoError(t, err)
		sh, err := st.ListerGetOrCreate(ctx, "heptapod", "")
		require.NoError(t, err)
		const linux = "https://github.com/torvalds/linux"
		update := now.Add(-time.Hour)
		_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{
			{ListerID: gh.ID, URL: linux, VisitType: "git", Enabled: true, LastUpdate: &update},
			{ListerID: sh.ID, URL: linux, VisitType: "git", Enabled: true}})
		require.NoError(t, err)
		detail := func() map[string]any {
			t.Helper()
			return h.json("GET", "/api/v1/origins/detail?visit_type=git&url="+url.QueryEscape(linux), "", 200)
		}

		// Never visited: both rows, no stats, no cooldown, eligible.
		d := detail()
		require.Equal(t, linux, d["url"])
		require.Equal(t, "2026-03-01T12:00:00Z", d["now"])
		listed := d["listed"].([]any)
		require.Len(t, listed, 2)
		byLister := map[string]map[string]any{}
		for _, r := range listed {
			byLister[r.(map[string]any)["lister"].(string)] = r.(map[string]any)
		}
		require.Equal(t, []any{"oldest_scheduled_first", "never_visited_oldest_update_first", "stop_after_success",
			"first_visits_after_listing"}, byLister["github/github"]["policies"])
		require.Equal(t, []any{"oldest_scheduled_first", "origins_without_last_update", "stop_after_success",
			"first_visits_after_listing"}, byLister["heptapod"]["policies"])
		require.Nil(t, d["visit_stats"])
		require.Equal(t, []any{}, d["recent_results"])
		require.Equal(t, true, d["eligible"])
		require.Empty(t, d["in_flight"])
		next := d["next_visit"].(map[string]any)
		require.Nil(t, next["next_visit_queue_position"])
		require.Equal(t, true, next["without_last_update"], "heptapod gives no last_update")
		require.Contains(t, next["explanation"], "No next position yet")
		cooldowns := d["cooldowns"].([]any)
		require.Len(t, cooldowns, 4)
		for _, c := range cooldowns {
			require.Equal(t, false, c.(map[string]any)["holds"])
		}
		require.Equal(t, "12h", cooldowns[0].(map[string]any)["length"])
		require.Equal(t, "Passes: never scheduled.", cooldowns[0].(map[string]any)["explanation"])

		// A failed visit, then a dispatch: the visit in flight, the
		// cooldowns that hold it and until when, the position on the clock.
		h.json("POST", "/api/v1/visit-statuses", `[{"origin": "`+linux+`", "visit_type": "git", "status": "failed",
			"date": "2026-03-01T10:00:00Z"}]`, 200)
		vs, err := st.VisitsDispatch(ctx, revisit.DispatchParams{Owner: "orchestrator@host", Grab: revisit.GrabParams{
			VisitType: "git", Count: 1, Policy: revisit.StopAfterSuccess, Now: now.Add(-30 * time.Minute),
			Cooldowns: &revisit.Cooldowns{}}})
		require.NoError(t, err)
		require.Len(t, vs, 1)
		d = detail()
		stats := d["visit_stats"].(map[string]any)
		require.Equal(t, "failed", stats["last_visit_status"])
		require.Equal(t, "2026-03-01T11:30:00Z", stats["last_scheduled"])
		require.Equal(t, []any{map[string]any{"date": "2026-03-01T10:00:00Z", "status": "failed", "eventful": false}},
			d["recent_results"])
		inFlight := d["in_flight"].([]any)
		require.Len(t, inFlight, 1)
		v := inFlight[0].(map[string]any)
		require.Equal(t, vs[0].ID, v["id"])
		require.Equal(t, "pending", v["state"])
		require.Equal(t, "stop_after_success", v["policy"])
		require.Equal(t, "orchestrator@host", v["owner"])
		require.Equal(t, "2026-03-01T11:30:00Z", v["scheduled_at"])
		require.Equal(t, false, d["eligible"])
		want := map[string]string{
			"absolute":  "2026-03-01T23:30:00Z",
			"scheduled": "2026-03-08T11:30:00Z",
			"failed":    "2026-03-15T10:00:00Z",
		}
		for _, c := range d["cooldowns"].([]any) {
			c := c.(map[string]any)
			name := c["cooldown"].(string)
			if until, holds := want[name]; holds {
				require.Equal(t, true, c["holds"], name)
				require.Equal(t, until, c["until"], name)
				require.Contains(t, c["explanation"], "held until "+until, name)
			} else {
				require.Equal(t, false, c["holds"], name)
				require.Equal(t, "Passes: the last visit's status is not not_found.", c["explanation"])
			}
		}
		next = d["next_visit"].(map[string]any)
		position := next["next_visit_queue_position"].(float64)
		require.Greater(t, position, 0.0, "the failed visit placed it")
		require.Equal(t, position-next["queue_position"].(float64), next["ahead_seconds"])
		require.Contains(t, next["explanation"], "ahead")

		// Six results more, one late: the five newest, newest first.
		snapshot := func(c string) string { return strings.Repeat(c, 40) }
		h.json("POST", "/api/v1/visit-statuses", `[
			{"origin": "`+linux+`", "visit_type": "git", "status": "full", "date": "2026-03-01T10:10:00Z", "snapshot": "`+snapshot("a")+`"},
			{"origin": "`+linux+`", "visit_type": "git", "status": "full", "date": "2026-03-01T10:20:00Z", "snapshot": "`+snapshot("a")+`"},
			{"origin": "`+linux+`", "visit_type": "git", "status": "not_found", "date": "2026-03-01T10:30:00Z"},
			{"origin": "`+linux+`", "visit_type": "git", "status": "partial", "date": "2026-03-01T10:40:00Z", "eventful": true},
			{"origin": "`+linux+`", "visit_type": "git", "status": "failed", "date": "2026-03-01T10:50:00Z"},
			{"origin": "`+linux+`", "visit_type": "git", "status": "failed", "date": "2026-03-01T10:05:00Z"},
			{"origin": "`+linux+`", "visit_type": "git", "status": "full", "date": "2026-03-01T11:00:00Z", "snapshot": "`+snapshot("b")+`"}]`, 200)
		result := func(date, status string, eventful bool) any {
			return map[string]any{"date": "2026-03-01T" + date + ":00Z", "status": status, "eventful": eventful}
		}
		require.Equal(t, []any{result("11:00", "successful", true), result("10:50", "failed", false),
			result("10:40", "successful", true), result("10:30", "not_found", false), result("10:20", "successful", false)},
			detail()["recent_results"])
		schemas := h.json("GET", "/api/v1/openapi.json", "", 200)["components"].(map[string]any)["schemas"].(map[string]any)
		recent := schemas["OriginDetail"].(map[string]any)["properties"].(map[string]any)["recent_results"]
		require.Equal(t, map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/RecentResult"}}, recent)
		require.Equal(t, map[string]any{"date": map[string]any{"type": "string", "format": "date-time"},
			"status": map[string]any{"type": "string"}, "eventful": map[string]any{"type": "boolean"}},
			schemas["RecentResult"].(map[string]any)["properties"], "the OpenAPI document describes them")

		h.fails("GET", "/api/v1/origins/detail?visit_type=git&url=https://nowhere.example/x", "", 404, "not_found", "", "no origin")
		h.fails("GET", "/api/v1/origins/detail?visit_type=git", "", 400, "invalid", "url", "missing")
		h.fails("GET", "/api/v1/origins/detail?url=https://a/b", "", 400, "invalid", "visit_type", "not a visit type")
		h.fails("GET", "/api/v1/origins/detail?visit_type=git&url=https://a/%00", "", 400, "invalid", "url", "NUL")
		h.fails("GET", "/api/v1/origins/detail?visit_type=git&url=a/b", "", 404, "not_found", "", "no origin")
		h.fails("GET", "/api/v1/origins/detail?url=https://a/b&visit_type=git&url=https://a/c", "", 400, "invalid", "url", "at most once")
	})
}
