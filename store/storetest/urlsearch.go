package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store"
)

// urlSearch returns the store's switch of its search of origins by URL.
func (f *fixture) urlSearch() store.URLSearchSwitch {
	f.t.Helper()
	sw, ok := f.s.(store.URLSearchSwitch)
	require.True(f.t, ok, "the store has a switch of its URL search")
	return sw
}

// setURLSearch turns the search on or off, requires success and returns
// whether it changed anything.
func (f *fixture) setURLSearch(on bool) bool {
	f.t.Helper()
	changed, err := f.urlSearch().SetURLSearch(f.ctx, on)
	require.NoError(f.t, err, "turn the URL search on: %t", on)
	return changed
}

// urlSearchStatus returns the state of the search, requiring success.
func (f *fixture) urlSearchStatus() store.URLSearchStatus {
	f.t.Helper()
	st, err := f.urlSearch().URLSearchStatus(f.ctx)
	require.NoError(f.t, err)
	return st
}

// searchNames returns the names of the rows a search finds, every page.
func (f *fixture) searchNames(s revisit.OriginSearch) []string {
	f.t.Helper()
	rows, _ := f.searchAll(s)
	return names(originsOf(rows))
}

func exerciseURLSearchSwitch(t *testing.T, newStore NewStore) {
	parallel(t, "URLSearch/OnByDefault", func(t *testing.T) {
		f := newFixture(t, newStore)
		require.Equal(t, store.URLSearchOn, f.urlSearchStatus().State)
		require.False(t, f.setURLSearch(true), "on when on changes nothing")
		require.Equal(t, store.URLSearchOn, f.urlSearchStatus().State)
	})

	// Off, a search is refused, saying how to turn it on; what is
	// recorded meanwhile, pending origins included, is found once it is
	// on again. Origins are looked up and browsed all along. A store whose
	// search has no index of its own refuses to turn it off.
	parallel(t, "URLSearch/OffRefusesSearchesUntilOn", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.gitOrigins(2)
		if !f.urlSearchStatus().Own {
			_, err := f.urlSearch().SetURLSearch(f.ctx, false)
			requireCode(t, err, revisit.ErrInvalid, "")
			require.Contains(t, err.Error(), "no search index to turn off")
			require.Equal(t, store.URLSearchOn, f.urlSearchStatus().State)
			require.Equal(t, []string{"o0", "o1"}, f.searchNames(revisit.OriginSearch{Query: url("o")}))
			return
		}
		require.True(t, f.setURLSearch(false))
		require.False(t, f.setURLSearch(false), "off when off changes nothing")
		require.Equal(t, store.URLSearchOff, f.urlSearchStatus().State)
		_, err := f.s.OriginsSearch(f.ctx, revisit.OriginSearch{Query: url("o")})
		requireCode(t, err, revisit.ErrUnavailable, "")
		require.Contains(t, err.Error(), "search of origins by URL is off on this store")
		require.Contains(t, err.Error(), "`revisit db search on` builds its index")

		// Recorded while off: o2, and o3, grabbed (pending).
		f.record(origin(l.ID, "o2", "git"), origin(l.ID, "o3", "hg"))
		require.Equal(t, []string{"o3"}, f.grabNames(revisit.GrabParams{VisitType: "hg", Count: 1,
			Policy: revisit.OldestScheduledFirst}))
		require.Equal(t, url("o2"), f.get(l.ID, "o2", "git").URL)
		require.Equal(t, []string{"o0", "o1", "o2"}, f.browseNames(revisit.OriginBrowse{VisitType: "git"}))

		require.True(t, f.setURLSearch(true))
		require.False(t, f.setURLSearch(true), "on when on changes nothing")
		require.Equal(t, store.URLSearchOn, f.urlSearchStatus().State)
		require.Equal(t, []string{"o0", "o1", "o2", "o3"}, f.searchNames(revisit.OriginSearch{Query: url("o")}), "prefix")
		require.Equal(t, []string{"o2"}, f.searchNames(revisit.OriginSearch{Query: "ple/o2", Match: revisit.MatchSubstring}))
		require.Equal(t, []string{"o3"}, f.searchNames(revisit.OriginSearch{Query: "ple/o3", Match: revisit.MatchSubstring}),
			"substring, pending")
	})
}
