package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/api"
	"github.com/revisit-sched/revisit/config"
	"github.com/revisit-sched/revisit/internal/testkit/browser"
	"github.com/revisit-sched/revisit/internal/testkit/teststore"
	"github.com/revisit-sched/revisit/store"
	"github.com/revisit-sched/revisit/web"
	"github.com/revisit-sched/revisit/worker"
)

// manyOrigins is how many origins the search finds one among.
const manyOrigins = 100_000

// forgeURL is the URL of the i-th of manyOrigins origins.
func forgeURL(i int) string {
	return fmt.Sprintf("https://git.example.org/team-%03d/project-%06d", i%997, i)
}

// recordMany records manyOrigins git origins of one lister, by batches
// of 10,000 (the most the API takes in one request).
func recordMany(t *testing.T, ctx context.Context, st store.Store) {
	t.Helper()
	l, err := st.ListerGetOrCreate(ctx, "forge", "git.example.org")
	require.NoError(t, err)
	for start := 0; start < manyOrigins; start += 10_000 {
		batch := make([]revisit.ListedOrigin, 10_000)
		for i := range batch {
			batch[i] = revisit.ListedOrigin{ListerID: l.ID, URL: forgeURL(start + i), VisitType: "git", Enabled: true}
		}
		_, err := st.ListedOriginsRecord(ctx, batch)
		require.NoError(t, err)
	}
}

// searchFor fills the origins page's form with q and match and submits it.
func searchFor(t *testing.T, bctx context.Context, q, match string) {
	t.Helper()
	require.NoError(t, chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#q"), q)))
	require.NoError(t, chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#match"), match)))
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#search button"))))
	waitLocation(t, bctx, "q="+url.QueryEscape(q), "match="+match)
}

// waitLocation waits until the page's query holds every one of parts, and
// its page has loaded.
func waitLocation(t *testing.T, bctx context.Context, parts ...string) {
	t.Helper()
	js, err := json.Marshal(parts)
	require.NoError(t, err)
	waitTrue(t, bctx, fmt.Sprintf(`%s.every((p) => location.search.includes(p)) && document.readyState === "complete"`, js))
}

// waitTrue waits until the expression js is true on the page.
func waitTrue(t *testing.T, bctx context.Context, js string) {
	t.Helper()
	require.Eventually(t, func() bool {
		ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](js))
		return err == nil && ok
	}, 30*time.Second, 100*time.Millisecond, "waiting for %s", js)
}

// rowsShown returns the URLs of the origins page's results.
func rowsShown(t *testing.T, bctx context.Context) []string {
	t.Helper()
	urls, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#results tbody tr")].map((r) => r.dataset.url)`))
	require.NoError(t, err)
	return urls
}

// TestOriginsPages finds an origin among 100,000 by a part of its URL and
// by its start, on both stores, opens its page from the results, and
// follows a search to its next page; then a worker completes a visit
// through the embedded broker's worker protocol (package worker), and the
// page of the origin visited shows its outcome and date.
func TestOriginsPages(t *testing.T) {
	teststore.Engines(t, func(t *testing.T, st store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		seed(t, ctx, st)
		s := newStack(t, ctx, st, nil)
		recordMany(t, ctx, st)
		bctx := browser.New(t)
		problems := browser.Errors(t, bctx)
		engine := filepath.Base(t.Name())

		const target = 42_424
		require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/origins")))
		waitTrue(t, bctx, `document.querySelector('#lister option[value="forge/git.example.org"]') !== null`)
		searchFor(t, bctx, "project-042424", "substring")
		row := fmt.Sprintf(`#results tr[data-url=%q] `, forgeURL(target))
		waitText(t, bctx, row+`[data-field="lister"]`, "forge/git.example.org")
		require.Equal(t, []string{forgeURL(target)}, rowsShown(t, bctx))
		waitText(t, bctx, row+`[data-field="last_visit"]`, "never")
		require.Contains(t, mustText(t, bctx, "#summary"), "1 listed row.")
		screenshot(t, bctx, "origins-substring-"+engine+".png")

		// The search is the page's URL: the form came back filled.
		loc, err := chromedp.Run(bctx, chromedp.Evaluate[string](`location.pathname + location.search`))
		require.NoError(t, err)
		require.Equal(t, "/origins?"+url.Values{"q": {"project-042424"}, "match": {"substring"}, "lister": {""},
			"visit_type": {""}, "enabled": {""}}.Encode(), normalizeQuery(t, loc))

		searchFor(t, bctx, forgeURL(target)[:len(forgeURL(target))-1], "prefix")
		waitText(t, bctx, row+`[data-field="url"]`, forgeURL(target))
		require.Equal(t, []string{forgeURL(target)}, rowsShown(t, bctx), "one origin of that team starts so")

		// The result links to the origin's page.
		require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(row+`a`))))
		waitText(t, bctx, "#url", forgeURL(target))
		waitText(t, bctx, `#visits [data-field="last_visit_status"]`, "never visited")
		waitTrue(t, bctx, `!document.getElementById("no-recent").hidden && document.getElementById("recent").hidden`)
		waitText(t, bctx, `#listed tr[data-lister="forge/git.example.org"] [data-field="enabled"]`, "yes")
		require.Contains(t, mustText(t, bctx, `#listed tr[data-lister="forge/git.example.org"] [data-field="policies"]`),
			"oldest scheduled first, ", "policies in words")
		waitPrefix(t, bctx, "#cooldowns-from", "With the lengths the orchestrator of this server uses")
		waitText(t, bctx, `#next-visit [data-field="ahead_seconds"]`, "at its first visit's place (no position before it)")

		// A search of more than a page: 101 origins of team 7, 50 a page.
		require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/origins?q="+
			url.QueryEscape("https://git.example.org/team-007/"))))
		waitText(t, bctx, "#summary", "50 listed rows, more on the next page.")
		first := rowsShown(t, bctx)
		require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#next"))))
		waitLocation(t, bctx, "page_token=")
		waitText(t, bctx, "#summary", "50 listed rows, more on the next page.")
		second := rowsShown(t, bctx)
		require.Less(t, first[len(first)-1], second[0], "the next page goes on in URL order")

		// A worker leases a visit, reports it eventful, and holds the next
		// ones until the test ends.
		visited := make(chan string, 1)
		var once sync.Once
		wctx, stopWorker := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			err := worker.Run(wctx, worker.Config{Server: s.srv.URL, Queue: queue, Name: "w-" + engine, Wait: time.Second,
				Handler: func(hctx context.Context, task worker.Task) (worker.Result, error) {
					u := kwargURL(task)
					done := false
					once.Do(func() { visited <- u; done = true })
					if !done {
						<-hctx.Done()
						return worker.Result{}, hctx.Err()
					}
					return worker.Result{Status: "eventful", Snapshot: "0123456789abcdef0123456789abcdef01234567"}, nil
				}})
			require.NoError(t, err)
		})
		defer func() { stopWorker(); wg.Wait() }()
		var origin string
		select {
		case origin = <-visited:
		case <-ctx.Done():
			t.Fatal("no visit leased")
		}
		key := revisit.OriginKey{URL: origin, VisitType: "git"}
		var stats revisit.VisitStats
		require.Eventually(t, func() bool {
			got, err := st.VisitStatsGet(ctx, []revisit.OriginKey{key})
			require.NoError(t, err)
			if len(got) == 1 && got[0].LastVisit != nil {
				stats = got[0]
				return true
			}
			return false
		}, time.Minute, 100*time.Millisecond, "the result is folded")
		require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(s.srv.URL+"/origin?"+
			url.Values{"url": {origin}, "visit_type": {"git"}}.Encode())))
		waitText(t, bctx, "#url", origin)
		waitText(t, bctx, `#visits [data-field="last_visit_status"]`, "successful")
		ended := mustText(t, bctx, `#visits [data-field="last_visit"]`)
		require.True(t, strings.HasPrefix(ended, stats.LastVisit.UTC().Format("2006-01-02 15:04:05")+" UTC"),
			"the page shows the visit's date, %s: %q", stats.LastVisit, ended)
		waitText(t, bctx, `#visits [data-field="last_snapshot"]`, "0123456789abcdef0123456789abcdef01234567")
		// Its recent results: this one, the first snapshot, so eventful.
		waitText(t, bctx, `#recent tbody tr:first-child [data-field="status"]`, "successful")
		require.Equal(t, "yes", mustText(t, bctx, `#recent tbody tr:first-child [data-field="eventful"]`))
		date := mustText(t, bctx, `#recent tbody tr:first-child [data-field="date"]`)
		require.True(t, strings.HasPrefix(date, stats.LastVisit.UTC().Format("2006-01-02 15:04:05")+" UTC ("),
			"the result's date, written as the last visit's, %s: %q", stats.LastVisit, date)
		require.Equal(t, 1, evaluate[int](t, bctx, `document.querySelectorAll("#recent tbody tr").length`))
		require.True(t, evaluate[bool](t, bctx, `document.getElementById("no-recent").hidden`))
		waitText(t, bctx, `#cooldowns [data-cooldown="absolute"] [data-field="holds"]`, "holds")
		require.Contains(t, mustText(t, bctx, "#next-explanation"), "Next visit at position")
		screenshot(t, bctx, "origin-"+engine+".png")

		// The button that applies: an enabled origin is disabled, then
		// enabled again.
		require.True(t, evaluate[bool](t, bctx, `document.getElementById("enable").hidden`))
		click(t, bctx, "#disable")
		answer(t, bctx, "Disable "+origin+" (git)", "confirm")
		waitText(t, bctx, `#listed tbody tr:first-child [data-field="enabled"]`, "no")
		require.True(t, evaluate[bool](t, bctx, `document.getElementById("disable").hidden`))
		click(t, bctx, "#enable")
		answer(t, bctx, "Enable "+origin+" (git)", "confirm")
		waitText(t, bctx, `#listed tbody tr:first-child [data-field="enabled"]`, "yes")
		require.True(t, evaluate[bool](t, bctx, `document.getElementById("enable").hidden`))
		require.Empty(t, problems(), "the pages log no error")
	})
}

// kwargURL returns the url keyword argument of a visit's task ("" when it
// has none: the test then finds no such origin).
func kwargURL(task worker.Task) string {
	var kwargs struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(task.Kwargs, &kwargs)
	return kwargs.URL
}

// mustText returns the text of the element sel, which must exist.
func mustText(t *testing.T, bctx context.Context, sel string) string {
	t.Helper()
	got, err := text(bctx, sel)
	require.NoError(t, err)
	return got
}

// normalizeQuery sorts the query of a path, as url.Values.Encode does.
func normalizeQuery(t *testing.T, pathAndQuery string) string {
	t.Helper()
	path, query, _ := strings.Cut(pathAndQuery, "?")
	v, err := url.ParseQuery(query)
	require.NoError(t, err)
	return path + "?" + v.Encode()
}

// TestConsoleAsksForAToken: with tokens, the pages show the token form;
// once given a read token, the origins page searches with it.
func TestConsoleAsksForAToken(t *testing.T) {
	ctx := context.Background()
	st := teststore.SQLite(t)
	l, err := st.ListerGetOrCreate(ctx, "forge", "")
	require.NoError(t, err)
	_, err = st.ListedOriginsRecord(ctx, []revisit.ListedOrigin{{ListerID: l.ID, URL: forgeURL(1), VisitType: "git", Enabled: true}})
	require.NoError(t, err)
	const token = "read-token-0123456789"
	srv := httptest.NewServer(web.Handler(api.New(api.Config{Store: st,
		Tokens: []config.Token{{Name: "reader", Token: token, Scope: "read"}}}), ""))
	defer srv.Close()
	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)

	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/")))
	waitTrue(t, bctx, `!document.getElementById("login").hidden`)
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/origins?q=project&match=substring")))
	waitTrue(t, bctx, `!document.getElementById("login").hidden`)
	waitText(t, bctx, "#status", "a token is needed")
	require.NoError(t, chromedp.Do(bctx, chromedp.SetValue(chromedp.CSS("#token"), token)))
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#login button"))))
	waitText(t, bctx, fmt.Sprintf(`#results tr[data-url=%q] [data-field="lister"]`, forgeURL(1)), "forge")
	waitTrue(t, bctx, `document.getElementById("login").hidden`)
	// The browser reports the 401 answers as failed loads; nothing else.
	for _, p := range problems() {
		require.Contains(t, p, "401", "the pages log no other error")
	}
}

// TestConsoleSearchWhileOff: with the store's URL search off, the origins
// page's search shows the server's reason, which says how to turn it on.
func TestConsoleSearchWhileOff(t *testing.T) {
	ctx := context.Background()
	st, _ := teststore.Postgres(t)
	_, err := st.(store.URLSearchSwitch).SetURLSearch(ctx, false)
	require.NoError(t, err)
	srv := httptest.NewServer(web.Handler(api.New(api.Config{Store: st}), ""))
	defer srv.Close()
	bctx := browser.New(t)
	problems := browser.Errors(t, bctx)

	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/origins?q=project&match=substring")))
	waitText(t, bctx, "#status", "the search of origins by URL is off on this store: `revisit db search on` builds its index")
	waitTrue(t, bctx, `document.getElementById("status").classList.contains("error")`)
	// The browser reports the 503 answer as a failed load; nothing else.
	for _, p := range problems() {
		require.Contains(t, p, "503", "the page logs no other error")
	}
}
