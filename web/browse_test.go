package web_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
)

// browseWorld records, beside seed's four github origins, 120 git origins
// of gitlab scheduled a minute apart, newest last: every tenth failed, the
// one after each of those found nothing, and o-007 is disabled. git is
// paused, so that no grab takes any in flight while the test reads.
func browseWorld(t *testing.T, ctx context.Context, st store.Store, now time.Time) {
	t.Helper()
	require.NoError(t, st.TaskTypeCreate(ctx, revisit.TaskType{Type: "load-hg", BackendName: "hg-queue", MaxQueueLength: 10}))
	_, err := st.VisitTypePauseSet(ctx, revisit.Pause{VisitType: "git", By: "test", At: now})
	require.NoError(t, err)
	l, err := st.ListerGetOrCreate(ctx, "gitlab", "gitlab.com")
	require.NoError(t, err)
	var (
		origins []revisit.ListedOrigin
		stats   []revisit.VisitStats
	)
	for i := range 120 {
		o := revisit.ListedOrigin{ListerID: l.ID, URL: browseURL(i), VisitType: "git", Enabled: i != 7}
		origins = append(origins, o)
		st := revisit.NewVisitStats(o.Key())
		scheduled := now.Add(time.Duration(i-200) * time.Minute)
		visited := scheduled.Add(30 * time.Second)
		status := revisit.VisitSuccessful
		switch i % 10 {
		case 0:
			status = revisit.VisitFailed
		case 1:
			status = revisit.VisitNotFound
		}
		st.LastScheduled, st.LastVisit, st.LastVisitStatus = &scheduled, &visited, &status
		stats = append(stats, st)
	}
	_, err = st.ListedOriginsRecord(ctx, origins)
	require.NoError(t, err)
	require.NoError(t, st.VisitStatsUpsert(ctx, stats))
}

func browseURL(i int) string { return fmt.Sprintf("https://gitlab.com/browse/o-%03d", i) }

// TestOriginsBrowse browses the git origins in Chromium on both stores:
// the views as tabs, paging forward and back, a filter, the links between
// pages, and an origin disabled from its page showing in the disabled
// view.
func TestOriginsBrowse(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		seed(t, ctx, st)
		browseWorld(t, ctx, st, time.Now())
		s := newStack(t, ctx, st, nil)
		bctx := browser.New(t)
		problems := browser.Errors(t, bctx)

		// The overview's card links to its origins waiting longest.
		visit(t, bctx, s.srv.URL+"/")
		click(t, bctx, git+`[data-link="waiting"]`)
		waitLocation(t, bctx, "visit_type=git")
		// The four github origins, never scheduled, come first, then
		// gitlab's from the oldest scheduled on.
		waitText(t, bctx, "#summary", "50 listed rows, more on the next page.")
		first := rowsShown(t, bctx)
		require.Len(t, first, 50)
		for i := range 4 {
			require.Equal(t, fmt.Sprintf("https://github.com/o/r%d", i), first[i])
		}
		require.Equal(t, browseURL(0), first[4])
		require.NotContains(t, first, browseURL(7), "the disabled origin is not among the enabled")
		require.Equal(t, "never", mustText(t, bctx, `#results tr[data-url="https://github.com/o/r0"] [data-field="last_scheduled"]`))
		require.Equal(t, "failed, ", mustText(t, bctx, fmt.Sprintf(`#results tr[data-url=%q] [data-field="last_visit"]`, browseURL(0)))[:8])
		require.True(t, evaluate[bool](t, bctx, `document.querySelector('#views a.current').dataset.view === "scheduled"`))
		require.True(t, evaluate[bool](t, bctx, `document.getElementById("prev").hidden`), "no page before the first")

		// Forward two pages, then back: the same rows.
		click(t, bctx, "#next")
		waitLocation(t, bctx, "page_token=")
		waitTrue(t, bctx, `document.querySelectorAll("#results tbody tr").length === 50 && !document.getElementById("prev").hidden`)
		second := rowsShown(t, bctx)
		require.Equal(t, browseURL(47), second[0], "the next page goes on where the first ended")
		click(t, bctx, "#next")
		// The last page: 4 + 119 enabled in all.
		waitTrue(t, bctx, `document.querySelectorAll("#results tbody tr").length === 23 && document.getElementById("next").hidden`)
		click(t, bctx, "#prev")
		waitTrue(t, bctx, fmt.Sprintf(`document.querySelector("#results tbody tr")?.dataset.url === %q`, browseURL(47)))
		require.Equal(t, second, rowsShown(t, bctx))
		click(t, bctx, "#prev")
		waitTrue(t, bctx, fmt.Sprintf(`document.querySelector("#results tbody tr")?.dataset.url === %q`, "https://github.com/o/r0"))
		require.Equal(t, first, rowsShown(t, bctx))
		require.True(t, evaluate[bool](t, bctx, `document.getElementById("prev").hidden`))

		// The failures, newest first; then only those not found.
		click(t, bctx, `#views a[data-view="failures"]`)
		waitLocation(t, bctx, "view=failures", "visit_type=git")
		waitText(t, bctx, "#summary", "24 listed rows.")
		failures := rowsShown(t, bctx)
		require.Equal(t, []string{browseURL(111), browseURL(110), browseURL(101)}, failures[:3])
		screenshot(t, bctx, "origins-failures-"+t.Name()[len("TestOriginsBrowse/"):]+".png")
		require.NoError(t, chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#b-outcome"), "not_found")))
		click(t, bctx, "#browse-form button")
		waitLocation(t, bctx, "outcome=not_found")
		waitText(t, bctx, "#summary", "12 listed rows.")
		require.Equal(t, browseURL(111), rowsShown(t, bctx)[0])
		require.True(t, evaluate[bool](t, bctx, `document.querySelector('#b-outcome option[value="successful"]').disabled`),
			"the failures view offers only the outcomes it holds")

		// A row's lister links to that lister's origins of its visit type.
		click(t, bctx, fmt.Sprintf(`#results tr[data-url=%q] [data-field="lister"] a`, browseURL(111)))
		waitLocation(t, bctx, "lister="+url.QueryEscape("gitlab/gitlab.com"), "visit_type=git")
		waitText(t, bctx, "#summary", "50 listed rows, more on the next page.")
		require.Equal(t, browseURL(0), rowsShown(t, bctx)[0], "gitlab's only")

		// Disabled from its page, o-042 shows in the disabled view.
		visit(t, bctx, s.srv.URL+"/origin?"+url.Values{"url": {browseURL(42)}, "visit_type": {"git"}}.Encode())
		waitText(t, bctx, "#url", browseURL(42))
		waitText(t, bctx, "#queue-link", "queue "+queue)
		click(t, bctx, "#disable")
		answer(t, bctx, "Disable", "confirm")
		require.Eventually(t, func() bool {
			page, err := st.OriginsBrowse(ctx, revisit.OriginBrowse{VisitType: "git", Enabled: revisit.OnlyDisabled})
			require.NoError(t, err)
			return len(page.Origins) == 2
		}, 10*time.Second, 50*time.Millisecond, "the store holds o-042 disabled")
		// The page shows the change before its lister link is clicked: a
		// click aimed at the row the change is redrawing may miss.
		waitText(t, bctx, `#listed [data-field="enabled"]`, "no")
		click(t, bctx, `#listed [data-field="lister"] a`)
		waitLocation(t, bctx, "lister=")
		click(t, bctx, `#views a[data-view="disabled"]`)
		waitLocation(t, bctx, "enabled=false", "lister=")
		waitText(t, bctx, "#summary", "2 listed rows.")
		require.Equal(t, []string{browseURL(7), browseURL(42)}, rowsShown(t, bctx))
		screenshot(t, bctx, "origins-disabled-"+t.Name()[len("TestOriginsBrowse/"):]+".png")

		// hg has no origin: the page says so.
		visit(t, bctx, s.srv.URL+"/origins?visit_type=hg")
		waitText(t, bctx, "#summary", "No hg origin here.")
		require.Empty(t, problems(), "the console's errors")
	})
}
