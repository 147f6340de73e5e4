package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
	"github.com/revisit-sched/revisit/store/internal/browse"
)

// browse runs OriginsBrowse and requires success.
func (f *fixture) browse(b revisit.OriginBrowse) revisit.OriginBrowsePage {
	f.t.Helper()
	page, err := f.s.OriginsBrowse(f.ctx, b)
	require.NoError(f.t, err, "browse %+v", b)
	return page
}

// browseNames follows a browse from its first page to its last, then
// back to its first, and returns the names of the rows in order; it
// requires the way back to give the same pages as the way there.
func (f *fixture) browseNames(b revisit.OriginBrowse) []string {
	f.t.Helper()
	var pages [][]string
	page := f.browse(b)
	require.Empty(f.t, page.PrevPageToken, "the first page has no previous one")
	for {
		pages = append(pages, browsedNames(page.Origins))
		if page.NextPageToken == "" {
			break
		}
		require.Less(f.t, len(pages), 1000, "the pages never end")
		b.PageToken = page.NextPageToken
		page = f.browse(b)
		require.NotEmpty(f.t, page.PrevPageToken, "page %d has a previous one", len(pages)+1)
	}
	for i := len(pages) - 2; i >= 0; i-- {
		b.PageToken = page.PrevPageToken
		page = f.browse(b)
		require.Equal(f.t, pages[i], browsedNames(page.Origins), "page %d on the way back", i+1)
		require.NotEmpty(f.t, page.NextPageToken, "page %d on the way back has a next one", i+1)
	}
	require.Empty(f.t, page.PrevPageToken, "back on the first page")
	return slices.Concat(pages...)
}

func browsedNames(os []revisit.BrowsedOrigin) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.URL[len(url("")):]
	}
	return out
}

// browseWorld is the origins of the browse tests: their lister, enabled
// flag and stats, recorded in name order.
type browseWorld struct {
	name      string
	lister    int
	enabled   bool
	scheduled *time.Time
	visit     *time.Time
	status    *revisit.VisitStatus
}

func exerciseBrowse(t *testing.T, newStore NewStore) {
	parallel(t, "OriginsBrowse/ViewsFiltersAndPagingBothWays", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "a"), f.lister("gitlab", "b")}
		statuses := []*revisit.VisitStatus{nil, stp(revisit.VisitSuccessful), stp(revisit.VisitFailed), stp(revisit.VisitNotFound)}
		var world []browseWorld
		for i := range 30 {
			w := browseWorld{name: fmt.Sprintf("o%02d", i), lister: i % 2, enabled: i%7 != 3}
			if i%5 != 0 { // every fifth never scheduled
				// Distinct times, in an order that is not the names'.
				w.scheduled = atp(time.Duration((i*17)%30) * time.Minute)
				if w.status = statuses[i%4]; w.status != nil {
					w.visit = atp(time.Duration((i*13)%30)*time.Minute + time.Hour)
				}
			}
			world = append(world, w)
		}
		for _, w := range world {
			o := origin(ls[w.lister].ID, w.name, "git")
			o.Enabled = w.enabled
			f.record(o, origin(ls[w.lister].ID, w.name, "hg"))
			if w.scheduled != nil {
				st := revisit.NewVisitStats(revisit.OriginKey{URL: url(w.name), VisitType: "git"})
				st.LastScheduled, st.LastVisit, st.LastVisitStatus = w.scheduled, w.visit, w.status
				if w.status != nil && *w.status == revisit.VisitSuccessful {
					st.LastSuccessful = w.visit
				}
				f.upsert(st)
			}
		}

		// oracle returns the names a browse shows, from the world.
		oracle := func(b revisit.OriginBrowse) []string {
			var rows []browseWorld
			for _, w := range world {
				ok := b.ListerID == nil || ls[w.lister].ID == *b.ListerID
				switch b.Enabled {
				case revisit.OnlyEnabled:
					ok = ok && w.enabled
				case revisit.OnlyDisabled:
					ok = ok && !w.enabled
				}
				switch b.Outcome {
				case "":
				case revisit.OutcomeNever:
					ok = ok && w.status == nil
				default:
					ok = ok && w.status != nil && string(*w.status) == string(b.Outcome)
				}
				failing := w.status != nil && (*w.status == revisit.VisitFailed || *w.status == revisit.VisitNotFound)
				if ok && (b.View != revisit.ViewFailures || failing) {
					rows = append(rows, w)
				}
			}
			at := func(w browseWorld) *time.Time {
				if b.View == revisit.ViewFailures {
					return w.visit
				}
				return w.scheduled
			}
			// Names order the never scheduled as their ids do: each was
			// recorded after the one before it.
			slices.SortStableFunc(rows, func(x, y browseWorld) int {
				tx, ty := at(x), at(y)
				switch {
				case tx == nil && ty == nil:
					return 0
				case tx == nil:
					return -1
				case ty == nil:
					return 1
				}
				return tx.Compare(*ty)
			})
			if b.Descending {
				slices.Reverse(rows)
			}
			var out []string
			for _, w := range rows {
				out = append(out, w.name)
			}
			return out
		}

		for _, view := range []revisit.BrowseView{revisit.ViewScheduled, revisit.ViewFailures} {
			for _, desc := range []bool{false, true} {
				for _, lister := range []*uuid.UUID{nil, &ls[1].ID} {
					enableds := []revisit.EnabledFilter{revisit.OnlyEnabled, revisit.OnlyDisabled}
					outcomes := []revisit.OutcomeFilter{"", revisit.OutcomeNever, "successful", "failed", "not_found"}
					if view == revisit.ViewFailures {
						enableds = append(enableds, revisit.AnyEnabled)
						outcomes = []revisit.OutcomeFilter{"", "failed", "not_found"}
					}
					for _, enabled := range enableds {
						for _, outcome := range outcomes {
							b := revisit.OriginBrowse{VisitType: "git", View: view, Descending: desc, ListerID: lister,
								Enabled: enabled, Outcome: outcome, Limit: 4}
							require.Equal(t, oracle(b), f.browseNames(b), "%+v", b)
						}
					}
				}
			}
		}
		all := f.browseNames(revisit.OriginBrowse{VisitType: "hg", Limit: 7})
		require.Len(t, all, 30, "hg's origins, never scheduled, all enabled")

		// A row shows what its view orders by.
		page := f.browse(revisit.OriginBrowse{VisitType: "git", View: revisit.ViewFailures, Descending: true, Enabled: revisit.AnyEnabled, Limit: 1})
		require.Len(t, page.Origins, 1)
		o := page.Origins[0]
		w := world[slices.IndexFunc(world, func(w browseWorld) bool { return url(w.name) == o.URL })]
		requireTimePtr(t, w.visit, o.LastVisit)
		requireTimePtr(t, w.scheduled, o.LastScheduled)
		require.Equal(t, *w.status, *o.LastVisitStatus)
		require.Equal(t, ls[w.lister].ID, o.ListerID)

		// An origin with a visit in flight is not browsed.
		picked := f.grab(revisit.GrabParams{VisitType: "hg", Count: 1, Policy: revisit.OldestScheduledFirst, Now: base,
			Cooldowns: noCooldowns()})
		require.Len(t, picked, 1)
		left := f.browseNames(revisit.OriginBrowse{VisitType: "hg", Limit: 7})
		require.Len(t, left, 29)
		require.NotContains(t, left, picked[0].URL[len(url("")):])
	})

	parallel(t, "OriginsBrowse/BoundedRead", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "")
		// More never-visited origins than a page reads, then one that failed.
		n := browse.ScanLength + 100
		batch := make([]revisit.ListedOrigin, 0, n)
		stats := make([]revisit.VisitStats, 0, n)
		for i := range n {
			name := fmt.Sprintf("o%05d", i)
			batch = append(batch, origin(l.ID, name, "git"))
			st := revisit.NewVisitStats(revisit.OriginKey{URL: url(name), VisitType: "git"})
			st.LastScheduled = atp(time.Duration(i) * time.Second)
			if i == n-1 {
				st.LastVisit, st.LastVisitStatus = atp(time.Duration(i)*time.Second), stp(revisit.VisitFailed)
			}
			stats = append(stats, st)
		}
		f.record(batch...)
		f.upsert(stats...)
		b := revisit.OriginBrowse{VisitType: "git", Outcome: "failed", Limit: 10}
		first := f.browse(b)
		require.Empty(t, first.Origins, "the first page read ScanLength rows and found no failure")
		require.NotEmpty(t, first.NextPageToken, "and says the browse goes on")
		b.PageToken = first.NextPageToken
		second := f.browse(b)
		require.Equal(t, []string{fmt.Sprintf("o%05d", n-1)}, browsedNames(second.Origins))
		require.Empty(t, second.NextPageToken)
		require.NotEmpty(t, second.PrevPageToken)

		b.Descending = true
		_, err := f.s.OriginsBrowse(f.ctx, b)
		requireInvalid(t, err, "page_token", "a token of another order")
		require.Contains(t, err.Error(), "another view or order")
	})

	parallel(t, "OriginsBrowse/BadInput", func(t *testing.T) {
		f := newFixture(t, newStore)
		cases := []struct {
			b     revisit.OriginBrowse
			field string
		}{
			{revisit.OriginBrowse{}, "visit_type"},
			{revisit.OriginBrowse{VisitType: "git", View: "newest"}, "view"},
			{revisit.OriginBrowse{VisitType: "git", Outcome: "lost"}, "outcome"},
			{revisit.OriginBrowse{VisitType: "git", View: revisit.ViewFailures, Outcome: "successful"}, "outcome"},
			{revisit.OriginBrowse{VisitType: "git", Enabled: revisit.AnyEnabled}, "enabled"},
			{revisit.OriginBrowse{VisitType: "git", Limit: 1001}, "limit"},
			{revisit.OriginBrowse{VisitType: "git", PageToken: "nope"}, "page_token"},
		}
		for _, c := range cases {
			_, err := f.s.OriginsBrowse(f.ctx, c.b)
			requireInvalid(t, err, c.field, "%+v", c.b)
		}
	})
}
