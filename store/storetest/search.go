package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/urlsearch"
)

// search runs OriginsSearch and requires success.
func (f *fixture) search(s revisit.OriginSearch) revisit.OriginSearchPage {
	f.t.Helper()
	page, err := f.s.OriginsSearch(f.ctx, s)
	require.NoError(f.t, err, "search %+v", s)
	return page
}

// searchAll follows the pages of a search to its end and returns the rows
// and how many pages it took.
func (f *fixture) searchAll(s revisit.OriginSearch) ([]revisit.OriginMatch, int) {
	f.t.Helper()
	var all []revisit.OriginMatch
	for pages := 1; ; pages++ {
		page := f.search(s)
		all = append(all, page.Origins...)
		if page.NextPageToken == "" {
			return all, pages
		}
		require.Less(f.t, pages, 10_000, "the pages never end")
		s.PageToken = page.NextPageToken
	}
}

// matchRows writes the rows found as "name visit_type lister".
func matchRows(ms []revisit.OriginMatch, listers map[uuid.UUID]string) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s %s %s", m.URL[len(url("")):], m.VisitType, listers[m.ListerID])
	}
	return out
}

func exerciseSearch(t *testing.T, newStore NewStore) {
	parallel(t, "OriginsSearch/PrefixSubstringAndFilters", func(t *testing.T) {
		f := newFixture(t, newStore)
		a, b := f.lister("gitlab", "a"), f.lister("gitlab", "b")
		// a lists a/x in git and hg, a/y, b/z and "100%25_\x", whose %, _
		// and \ are special to LIKE; b
		// lists a/x too (in git) and a/xyz, disabled.
		disabled := origin(b.ID, "a/xyz", "git")
		disabled.Enabled = false
		f.record(origin(a.ID, "a/x", "git"), origin(a.ID, "a/x", "hg"), origin(a.ID, "a/y", "git"),
			origin(a.ID, "b/z", "git"), origin(a.ID, `100%25_\x`, "git"))
		f.record(origin(b.ID, "a/x", "git"), disabled)
		listers := map[uuid.UUID]string{a.ID: "a", b.ID: "b"}
		find := func(s revisit.OriginSearch) []string {
			t.Helper()
			if s.Enabled == revisit.OnlyEnabled {
				s.Enabled = revisit.AnyEnabled
			}
			rows, _ := f.searchAll(s)
			return matchRows(rows, listers)
		}
		// Rows in (url, visit_type, lister) order; listers' ids may sort
		// either way.
		ax := []string{"a/x git a", "a/x git b"}
		if a.ID.String() > b.ID.String() {
			ax = []string{"a/x git b", "a/x git a"}
		}
		all := append([]string{`100%25_\x git a`}, append(ax, "a/x hg a", "a/xyz git b", "a/y git a", "b/z git a")...)
		require.Equal(t, all, find(revisit.OriginSearch{}), "an empty prefix finds every row")
		require.Equal(t, all[1:6], find(revisit.OriginSearch{Query: url("a/")}), "prefix")
		require.Equal(t, all[1:5], find(revisit.OriginSearch{Query: url("a/x")}), "prefix, the URL itself included")
		require.Equal(t, all[1:5], find(revisit.OriginSearch{Query: "a/x", Match: revisit.MatchSubstring}), "substring")
		require.Equal(t, []string{"a/xyz git b"}, find(revisit.OriginSearch{Query: "xyz", Match: revisit.MatchSubstring}))
		require.Equal(t, all[1:5], find(revisit.OriginSearch{Query: "forge.example/a/x", Match: revisit.MatchSubstring}),
			"a long substring")
		require.Empty(t, find(revisit.OriginSearch{Query: "zzforge.example/a/x", Match: revisit.MatchSubstring}),
			"a long substring whose end matches other URLs")
		require.Empty(t, find(revisit.OriginSearch{Query: "A/X", Match: revisit.MatchSubstring}), "case counts")
		require.Empty(t, find(revisit.OriginSearch{Query: "a/x"}), "a prefix starts the URL")
		// LIKE's wildcards and escape character match only themselves.
		require.Equal(t, all[:1], find(revisit.OriginSearch{Query: `%25_\`, Match: revisit.MatchSubstring}))
		require.Equal(t, all[:1], find(revisit.OriginSearch{Query: url(`100%`)}))
		require.Empty(t, find(revisit.OriginSearch{Query: "a_x", Match: revisit.MatchSubstring}), "_ is no wildcard")
		require.Empty(t, find(revisit.OriginSearch{Query: "a%x", Match: revisit.MatchSubstring}), "% is no wildcard")
		require.Empty(t, find(revisit.OriginSearch{Query: url("%")}), "% is no wildcard")

		// Filters.
		require.Equal(t, []string{"a/x git b", "a/xyz git b"},
			find(revisit.OriginSearch{Query: url("a/"), ListerID: &b.ID}), "lister")
		require.Equal(t, []string{"a/x hg a"}, find(revisit.OriginSearch{Query: url("a/"), VisitType: "hg"}), "visit type")
		require.Equal(t, []string{"a/xyz git b"},
			find(revisit.OriginSearch{Query: url("a/"), Enabled: revisit.OnlyDisabled}), "disabled")
		rows, _ := f.searchAll(revisit.OriginSearch{Query: url("a/x")})
		require.Equal(t, all[1:4], matchRows(rows, listers), "the zero filter: enabled only")
		require.Empty(t, find(revisit.OriginSearch{Query: url("a/"), VisitType: "svn"}))

		// Rows carry their listed fields and their origin's last visit.
		row := rows[0]
		require.Equal(t, url("a/x"), row.URL)
		require.True(t, row.Enabled)
		require.NotNil(t, row.ExtraLoaderArguments)
		requireTime(t, base, row.FirstSeen)
		require.Nil(t, row.LastVisit)
		require.Nil(t, row.LastVisitStatus)
		f.upsert(revisit.VisitStats{URL: url("a/x"), VisitType: "git", LastVisit: atp(-day),
			LastVisitStatus: stp(revisit.VisitFailed), NextPositionOffset: 4, SuccessiveVisits: 1})
		rows, _ = f.searchAll(revisit.OriginSearch{Query: url("a/x"), VisitType: "git"})
		require.Len(t, rows, 2, "both listers' rows")
		for _, r := range rows {
			requireTimePtr(t, atp(-day), r.LastVisit)
			require.Equal(t, stp(revisit.VisitFailed), r.LastVisitStatus)
		}
	})

	parallel(t, "OriginsSearch/Pages", func(t *testing.T) {
		f := newFixture(t, newStore)
		a, b := f.lister("gitlab", "a"), f.lister("gitlab", "b")
		var batch []revisit.ListedOrigin
		for i := range 25 {
			// Every third origin is listed by both listers, every fifth in
			// hg too: pages must cut between the rows of one URL.
			name := fmt.Sprintf("r%02d", i)
			batch = append(batch, origin(a.ID, name, "git"))
			if i%3 == 0 {
				batch = append(batch, origin(b.ID, name, "git"))
			}
			if i%5 == 0 {
				batch = append(batch, origin(a.ID, name, "hg"))
			}
		}
		f.record(batch...)
		listers := map[uuid.UUID]string{a.ID: "a", b.ID: "b"}
		whole, pages := f.searchAll(revisit.OriginSearch{Query: url("r"), Limit: 1000})
		require.Equal(t, 1, pages)
		require.Len(t, whole, len(batch))
		for _, limit := range []int{1, 2, 3, 7} {
			got, pages := f.searchAll(revisit.OriginSearch{Query: url("r"), Limit: limit})
			require.Equal(t, matchRows(whole, listers), matchRows(got, listers), "pages of %d", limit)
			require.Equal(t, (len(batch)+limit-1)/limit, pages, "full pages of %d", limit)
		}
		page := f.search(revisit.OriginSearch{Query: url("r"), Limit: len(batch)})
		require.Len(t, page.Origins, len(batch))
		require.Empty(t, page.NextPageToken, "no token when nothing follows")

		// A token resumes the search it came from; another listing's
		// token, or garbage, is refused naming page_token.
		page = f.search(revisit.OriginSearch{Query: url("r"), Limit: 4})
		next := f.search(revisit.OriginSearch{Query: url("r"), Limit: 4, PageToken: page.NextPageToken})
		require.Equal(t, matchRows(whole[4:8], listers), matchRows(next.Origins, listers))
		listing, err := f.s.ListedOriginsGet(f.ctx, revisit.ListedOriginFilter{Limit: 1})
		require.NoError(t, err)
		for _, bad := range []string{"garbage", listing.NextPageToken} {
			_, err := f.s.OriginsSearch(f.ctx, revisit.OriginSearch{PageToken: bad})
			requireInvalid(t, err, "page_token")
		}
	})

	// A page reads at most a budget of matching URLs: when the filters
	// leave those out, it ends early, with a token that resumes after them.
	parallel(t, "OriginsSearch/Budget", func(t *testing.T) {
		f := newFixture(t, newStore)
		a, b := f.lister("gitlab", "a"), f.lister("gitlab", "b")
		budget := urlsearch.Budget(1)
		batch := make([]revisit.ListedOrigin, 0, budget+10)
		for i := range budget + 10 {
			batch = append(batch, origin(a.ID, fmt.Sprintf("r%05d", i), "git"))
		}
		f.record(batch...)
		f.record(origin(b.ID, "s", "git"))
		s := revisit.OriginSearch{Query: url(""), ListerID: &b.ID, Limit: 1}
		page := f.search(s)
		require.Empty(t, page.Origins, "the first %d URLs are a's", budget)
		require.NotEmpty(t, page.NextPageToken)
		s.PageToken = page.NextPageToken
		page = f.search(s)
		require.Len(t, page.Origins, 1)
		require.Equal(t, url("s"), page.Origins[0].URL)
		require.Empty(t, page.NextPageToken)
	})

	// An origin grabbed, or in flight, is found all the same.
	parallel(t, "OriginsSearch/OriginsInFlight", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(4)
		f.dispatch(2, nil)
		f.grab(revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst})
		rows, _ := f.searchAll(revisit.OriginSearch{Query: "e/o", Match: revisit.MatchSubstring})
		require.Equal(t, []string{"o0", "o1", "o2", "o3"}, names(originsOf(rows)))
	})

	parallel(t, "OriginsSearch/BadInput", func(t *testing.T) {
		f := newFixture(t, newStore)
		for field, s := range map[string]revisit.OriginSearch{
			"q":          {Query: "ab", Match: revisit.MatchSubstring},
			"match":      {Match: "glob"},
			"visit_type": {VisitType: "Git!"},
			"limit":      {Limit: 10_001},
			"page_token": {PageToken: "x"},
		} {
			_, err := f.s.OriginsSearch(f.ctx, s)
			requireInvalid(t, err, field)
		}
		for _, q := range []string{"\xff", "a\x00b", "https://a b"} {
			_, err := f.s.OriginsSearch(f.ctx, revisit.OriginSearch{Query: q, Match: revisit.MatchSubstring})
			requireInvalid(t, err, "q")
		}
	})

	parallel(t, "VisitsOfOrigin", func(t *testing.T) {
		f := newFixture(t, newStore)
		f.gitOrigins(3)
		key := revisit.OriginKey{URL: url("o1"), VisitType: "git"}
		none, err := f.s.VisitsOfOrigin(f.ctx, key)
		require.NoError(t, err)
		require.Empty(t, none)
		first := f.dispatch(3, noCooldowns())
		_, err = f.s.VisitsSent(f.ctx, visitIDs(first), at(time.Minute))
		require.NoError(t, err)
		f.clock.Advance(day)
		second := f.dispatch(3, noCooldowns())
		got, err := f.s.VisitsOfOrigin(f.ctx, key)
		require.NoError(t, err)
		require.Len(t, got, 2, "the origin's two visits, of two dispatches")
		for i, want := range []revisit.Visit{first[1], second[1]} {
			require.Equal(t, want.ID, got[i].ID)
			require.Equal(t, key, got[i].Key())
			require.Equal(t, want.Origin.ListerID, got[i].Origin.ListerID)
			require.Equal(t, revisit.OldestScheduledFirst, got[i].Policy)
			require.Equal(t, "test", got[i].Owner)
			requireTime(t, want.ScheduledAt, got[i].ScheduledAt)
		}
		require.Equal(t, revisit.VisitSent, got[0].State)
		requireTimePtr(t, atp(time.Minute), got[0].SentAt)
		require.Equal(t, revisit.VisitPending, got[1].State)
		require.Nil(t, got[1].SentAt)
		other, err := f.s.VisitsOfOrigin(f.ctx, revisit.OriginKey{URL: url("o1"), VisitType: "hg"})
		require.NoError(t, err)
		require.Empty(t, other, "another visit type's")
	})
}

// originsOf returns the listed rows of matches.
func originsOf(ms []revisit.OriginMatch) []revisit.ListedOrigin {
	out := make([]revisit.ListedOrigin, len(ms))
	for i, m := range ms {
		out[i] = m.ListedOrigin
	}
	return out
}
