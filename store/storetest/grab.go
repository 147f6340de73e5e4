package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// policyCase is a crafted data set and the exact order a policy must return
// it in. Listers: 0 is gitlab/gitlab.com, 1 is gitlab/framagit.org. The
// grab is of visit type git at base, without cooldowns.
type policyCase struct {
	policy revisit.Policy
	rows   []row
	want   []string
	// before runs after loading and before the grabs.
	before func(t *testing.T, f *fixture, ls []revisit.Lister)
	// filter sets the lister filter of the grabs.
	filter func(p *revisit.GrabParams, ls []revisit.Lister)
	// after runs after the grabs.
	after func(t *testing.T, f *fixture, ls []revisit.Lister)
}

// listingFinished is when lister 0 last finished listing in the
// first_visits_after_listing case.
var listingFinished = at(-day)

var policyCases = []policyCase{
	{
		policy: revisit.OldestScheduledFirst,
		rows: []row{
			{name: "tie-z", scheduled: atp(-10 * day)},
			{name: "null-y"},
			{name: "tie-a", scheduled: atp(-10 * day)},
			{name: "old", scheduled: atp(-20 * day)},
			{name: "null-b", visit: atp(-day), status: revisit.VisitSuccessful, successful: atp(-day)},
			{name: "recent", scheduled: atp(-time.Hour)},
			{name: "other-lister", lister: 1, scheduled: atp(-15 * day)},
			{name: "dis", disabled: true},
			{name: "hg", vt: "hg"},
		},
		want: []string{"null-y", "null-b", "old", "other-lister", "tie-z", "tie-a", "recent"},
	},
	{
		policy: revisit.NeverVisitedOldestUpdateFirst,
		rows: []row{
			{name: "late", update: atp(-5 * time.Hour)},
			{name: "tie-z", update: atp(-10 * time.Hour), visit: atp(-time.Hour), status: revisit.VisitFailed},
			{name: "visited", update: atp(-20 * time.Hour), successful: atp(-time.Hour), visit: atp(-time.Hour), status: revisit.VisitSuccessful},
			{name: "visited-behind", update: atp(-30 * time.Hour), successful: atp(-40 * time.Hour)},
			{name: "visited-nosnap", update: atp(-30 * time.Hour), successful: atp(-40 * time.Hour), noSnapshot: true},
			{name: "no-update"},
			{name: "tie-a", update: atp(-10 * time.Hour)},
			{name: "mid", update: atp(-7 * time.Hour), visit: atp(-2 * time.Hour), status: revisit.VisitNotFound},
			{name: "other-lister", lister: 1, update: atp(-6 * time.Hour), scheduled: atp(-time.Hour)},
			{name: "dis", disabled: true, update: atp(-50 * time.Hour)},
			{name: "hg", vt: "hg", update: atp(-50 * time.Hour)},
		},
		want: []string{"tie-z", "tie-a", "mid", "other-lister", "late"},
	},
	{
		policy: revisit.AlreadyVisitedOrderByLag,
		rows: []row{
			{name: "lag10-z", successful: atp(-20 * time.Hour), update: atp(-10 * time.Hour)},
			{name: "lag20", successful: atp(-30 * time.Hour), update: atp(-10 * time.Hour), status: revisit.VisitFailed, visit: atp(-time.Hour)},
			{name: "behind", successful: atp(-5 * time.Hour), update: atp(-10 * time.Hour)},
			{name: "no-update", successful: atp(-5 * time.Hour)},
			{name: "never", update: atp(-time.Hour), status: revisit.VisitFailed, visit: atp(-2 * time.Hour)},
			{name: "lag10-a", successful: atp(-15 * time.Hour), update: atp(-5 * time.Hour)},
			{name: "equal", successful: atp(-3 * time.Hour), update: atp(-3 * time.Hour)},
			{name: "lag5", successful: atp(-6 * time.Hour), update: atp(-time.Hour), scheduled: atp(-time.Minute)},
			{name: "nosnap", successful: atp(-50 * time.Hour), update: atp(-time.Hour), noSnapshot: true},
			{name: "dis", disabled: true, successful: atp(-100 * time.Hour), update: atp(-time.Hour)},
			{name: "hg", vt: "hg", successful: atp(-100 * time.Hour), update: atp(-time.Hour)},
		},
		want: []string{"nosnap", "lag20", "lag10-z", "lag10-a", "lag5"},
	},
	{
		policy: revisit.OriginsWithoutLastUpdate,
		rows: []row{
			{name: "null-late", seen: -time.Hour},
			{name: "null-early", seen: -2 * time.Hour},
			{name: "q100-late", seen: -time.Hour, qpos: ip(100)},
			{name: "q50", qpos: ip(50), successful: atp(-day), status: revisit.VisitSuccessful, visit: atp(-day)},
			{name: "updated", update: atp(-time.Hour)},
			{name: "q100-early", seen: -3 * time.Hour, qpos: ip(100)},
			{name: "q100-tie", seen: -time.Hour, qpos: ip(100)},
			{name: "q-neg", seen: -time.Hour, qpos: ip(-5)},
			{name: "dis", disabled: true, qpos: ip(1000)},
			{name: "hg", vt: "hg", qpos: ip(1000)},
		},
		want: []string{"null-early", "null-late", "q-neg", "q50", "q100-early", "q100-late", "q100-tie"},
		before: func(t *testing.T, f *fixture, _ []revisit.Lister) {
			require.NoError(t, f.s.QueuePositionSet(f.ctx, "git", 70))
		},
		after: func(t *testing.T, f *fixture, _ []revisit.Lister) {
			pos, err := f.s.QueuePositionGet(f.ctx, "git")
			require.NoError(t, err)
			require.Equal(t, int64(100), pos, "queue position raised to the largest selected")
			pos, err = f.s.QueuePositionGet(f.ctx, "hg")
			require.NoError(t, err)
			require.Zero(t, pos, "other visit types untouched")
		},
	},
	{
		policy: revisit.StopAfterSuccess,
		rows: []row{
			{name: "u2-late", update: atp(-2 * time.Hour), seen: -time.Hour},
			{name: "u3", update: atp(-3 * time.Hour), status: revisit.VisitFailed, visit: atp(-day)},
			{name: "success", update: atp(-10 * time.Hour), status: revisit.VisitSuccessful, visit: atp(-day), successful: atp(-day)},
			{name: "null-late", seen: -time.Hour},
			{name: "null-early", seen: -2 * time.Hour, status: revisit.VisitNotFound, visit: atp(-day)},
			{name: "u2-early", update: atp(-2 * time.Hour), seen: -3 * time.Hour},
			{name: "u2-tie", update: atp(-2 * time.Hour), seen: -time.Hour},
			{name: "ok-before", update: atp(-20 * time.Hour), successful: atp(-2 * day), status: revisit.VisitFailed, visit: atp(-day)},
			{name: "dis", disabled: true, update: atp(-50 * time.Hour)},
			{name: "hg", vt: "hg", update: atp(-50 * time.Hour)},
		},
		want: []string{"ok-before", "u3", "u2-early", "u2-late", "u2-tie", "null-early", "null-late"},
	},
	{
		policy: revisit.FirstVisitsAfterListing,
		rows: []row{
			{name: "null-z"},
			{name: "before1", scheduled: tp(listingFinished.Add(-time.Hour))},
			{name: "at-finish", scheduled: tp(listingFinished)},
			{name: "after", scheduled: tp(listingFinished.Add(time.Hour))},
			{name: "other-lister", lister: 1},
			{name: "before2", scheduled: tp(listingFinished.Add(-2 * time.Hour)), status: revisit.VisitSuccessful, visit: atp(-3 * day), successful: atp(-3 * day)},
			{name: "null-a", visit: atp(-day), status: revisit.VisitFailed},
			{name: "just-before", scheduled: tp(listingFinished.Add(-time.Microsecond))},
			{name: "dis", disabled: true},
			{name: "hg", vt: "hg"},
		},
		want: []string{"null-z", "null-a", "before2", "before1", "just-before"},
		before: func(t *testing.T, f *fixture, ls []revisit.Lister) {
			// Without a finished listing, only never scheduled origins.
			got := f.grabNames(revisit.GrabParams{VisitType: "git", Count: 100, Policy: revisit.FirstVisitsAfterListing,
				Now: base, Cooldowns: noCooldowns(), ListerID: &ls[0].ID, DryRun: true})
			require.Equal(t, []string{"null-z", "null-a"}, got, "no last_listing_finished_at")
			l := ls[0]
			l.LastListingFinishedAt = tp(listingFinished)
			_, err := f.s.ListerUpdate(f.ctx, l)
			require.NoError(t, err)
		},
		filter: func(p *revisit.GrabParams, ls []revisit.Lister) { p.ListerID = &ls[0].ID },
	},
}

func exerciseGrab(t *testing.T, newStore NewStore) {
	for _, pc := range policyCases {
		bothStatsOrders(t, newStore, "Grab/Policy/"+string(pc.policy), func(t *testing.T, f *fixture, statsFirst bool) {
			ls := []revisit.Lister{f.lister("gitlab", "gitlab.com"), f.lister("gitlab", "framagit.org")}
			f.load(ls, statsFirst, pc.rows...)
			if pc.before != nil {
				pc.before(t, f, ls)
			}
			p := revisit.GrabParams{VisitType: "git", Count: 100, Policy: pc.policy, Now: base,
				Cooldowns: noCooldowns(), DryRun: true}
			if pc.filter != nil {
				pc.filter(&p, ls)
			}
			require.Equal(t, pc.want, f.grabNames(p), "dry run")
			if pc.policy == revisit.OriginsWithoutLastUpdate {
				pos, err := f.s.QueuePositionGet(f.ctx, "git")
				require.NoError(t, err)
				require.Equal(t, int64(70), pos, "a dry run leaves the queue position")
			}
			require.Equal(t, pc.want, f.grabNames(p), "a dry run marks nothing")

			// A smaller count gives the top of the same order.
			p.Count = 3
			require.Equal(t, pc.want[:3], f.grabNames(p), "count 3")

			p.Count = 100
			p.DryRun = false
			require.Equal(t, pc.want, f.grabNames(p), "grab")
			for _, n := range pc.want {
				s := f.stats(n, "git")
				require.NotNil(t, s, "%s has stats after its grab", n)
				requireTimePtr(t, &base, s.LastScheduled, "%s marked scheduled at now", n)
			}
			for _, r := range pc.rows {
				if !slices.Contains(pc.want, r.name) {
					s := f.stats(r.name, r.visitType())
					if r.scheduled == nil {
						require.True(t, s == nil || s.LastScheduled == nil, "%s not selected, not marked", r.name)
					} else {
						requireTimePtr(t, r.scheduled, s.LastScheduled, "%s not selected, not marked", r.name)
					}
				}
			}
			if pc.after != nil {
				pc.after(t, f, ls)
			}
			// Marked: under the default cooldowns, none comes back.
			p.Cooldowns = nil
			p.Now = base.Add(time.Hour)
			got := f.grabNames(p)
			for _, n := range got {
				require.NotContains(t, pc.want, n, "grabbed again within the cooldowns")
			}
		})
	}

	parallel(t, "Grab/FirstVisitsAfterListing/ListerByName", func(t *testing.T) {
		f := newFixture(t, newStore)
		pc := policyCases[len(policyCases)-1]
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com"), f.lister("gitlab", "framagit.org")}
		f.load(ls, false, pc.rows...)
		pc.before(t, f, ls)
		p := revisit.GrabParams{VisitType: "git", Count: 100, Policy: revisit.FirstVisitsAfterListing, Now: base,
			Cooldowns: noCooldowns(), ListerName: "gitlab", ListerInstanceName: "gitlab.com"}
		require.Equal(t, pc.want, f.grabNames(p))
		p.ListerInstanceName = "framagit.org"
		p.Now = base.Add(time.Hour)
		require.Equal(t, []string{"other-lister"}, f.grabNames(p))
	})

	parallel(t, "Grab/FirstVisitsAfterListing/NeedsLister", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.record(origin(l.ID, "a", "git"))
		_, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.FirstVisitsAfterListing, Now: base})
		requireInvalid(t, err, "lister")
		require.Nil(t, f.stats("a", "git"), "nothing marked")
	})

	parallel(t, "Grab/Marking", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		f.load(ls, false, row{name: "a"}, row{name: "b"}, row{name: "c"}, row{name: "a", vt: "hg"})
		p := revisit.GrabParams{VisitType: "git", Count: 2, Policy: revisit.OldestScheduledFirst, Now: base}
		require.Equal(t, []string{"a", "b"}, f.grabNames(p))
		requireTimePtr(t, &base, f.stats("a", "git").LastScheduled)
		requireTimePtr(t, &base, f.stats("b", "git").LastScheduled)
		if s := f.stats("c", "git"); s != nil {
			require.Nil(t, s.LastScheduled, "c not marked")
		}
		if s := f.stats("a", "hg"); s != nil {
			require.Nil(t, s.LastScheduled, "a/hg not marked")
		}
		p.Count = 10
		p.Now = base.Add(time.Hour)
		require.Equal(t, []string{"c"}, f.grabNames(p), "a and b are in their cooldown")
		requireTimePtr(t, tp(base.Add(time.Hour)), f.stats("c", "git").LastScheduled)
		require.Empty(t, f.grabNames(p))

		// Now zero: the store's clock.
		f.clock.Set(at(13*time.Hour + 1500*time.Nanosecond))
		got := f.grabNames(revisit.GrabParams{VisitType: "git", Count: 1, Policy: revisit.OldestScheduledFirst,
			Cooldowns: noCooldowns()})
		require.Equal(t, []string{"a"}, got)
		requireTimePtr(t, tp(f.clock.Now()), f.stats("a", "git").LastScheduled, "marked at the store's clock")
	})

	parallel(t, "Grab/MarkingNeverGoesBackwards", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		future := at(time.Hour)
		f.load(ls, false, row{name: "a", scheduled: &future})
		require.Equal(t, []string{"a"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst, Now: base, Cooldowns: noCooldowns()}))
		requireTimePtr(t, &future, f.stats("a", "git").LastScheduled, "max(existing, now)")
		// The grab's own copy kept the later time too: the absolute cooldown
		// counts from it.
		abs := &revisit.Cooldowns{Absolute: 12 * time.Hour}
		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst,
			Now: future.Add(12 * time.Hour), Cooldowns: abs, DryRun: true}
		require.Empty(t, f.grabNames(p), "last_scheduled is still the later time")
		p.Now = p.Now.Add(time.Microsecond)
		require.Equal(t, []string{"a"}, f.grabNames(p))
	})

	parallel(t, "Grab/DryRunMarksNothing", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		f.load(ls, false, row{name: "a"}, row{name: "b", visit: atp(-day), status: revisit.VisitSuccessful})
		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: base, DryRun: true}
		require.Equal(t, []string{"a", "b"}, f.grabNames(p))
		if s := f.stats("a", "git"); s != nil {
			require.Nil(t, s.LastScheduled)
		}
		require.Nil(t, f.stats("b", "git").LastScheduled)
		require.Equal(t, []string{"a", "b"}, f.grabNames(p))
		p.DryRun = false
		require.Equal(t, []string{"a", "b"}, f.grabNames(p))
		require.Empty(t, f.grabNames(p))
	})

	parallel(t, "Grab/QueuePositionNeverLowered", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		f.load(ls, true, row{name: "p10", qpos: ip(10)}, row{name: "p20", qpos: ip(20)}, row{name: "p300", qpos: ip(300)},
			row{name: "hgnull", vt: "hg"})
		qp := func(vt string) int64 {
			pos, err := f.s.QueuePositionGet(f.ctx, vt)
			require.NoError(t, err)
			return pos
		}
		p := revisit.GrabParams{VisitType: "git", Count: 2, Policy: revisit.OriginsWithoutLastUpdate, Now: base}
		require.Equal(t, []string{"p10", "p20"}, f.grabNames(p))
		require.Equal(t, int64(20), qp("git"), "the largest selected, not the largest eligible")

		require.NoError(t, f.s.QueuePositionSet(f.ctx, "git", 500))
		p.Count = 10
		require.Equal(t, []string{"p300"}, f.grabNames(p))
		require.Equal(t, int64(500), qp("git"), "never lowered")

		require.NoError(t, f.s.QueuePositionSet(f.ctx, "hg", 70))
		p.VisitType = "hg"
		require.Equal(t, []string{"hgnull"}, f.grabNames(p))
		require.Equal(t, int64(70), qp("hg"), "no selected position: unchanged")
	})

	parallel(t, "Grab/ListerFilter", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com"), f.lister("gitlab", "framagit.org")}
		f.load(ls, false,
			row{name: "a", update: atp(-time.Hour)}, row{name: "c", lister: 1, update: atp(-3 * time.Hour)},
			row{name: "b", update: atp(-2 * time.Hour)}, row{name: "d", lister: 1, update: atp(-4 * time.Hour)})
		for _, pol := range []revisit.Policy{revisit.OldestScheduledFirst, revisit.NeverVisitedOldestUpdateFirst} {
			want0, want1 := []string{"a", "b"}, []string{"c", "d"}
			if pol == revisit.NeverVisitedOldestUpdateFirst {
				want0, want1 = []string{"b", "a"}, []string{"d", "c"}
			}
			p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: pol, Now: base, DryRun: true, ListerID: &ls[0].ID}
			require.Equal(t, want0, f.grabNames(p), "%s by id", pol)
			p.ListerID = &ls[1].ID
			require.Equal(t, want1, f.grabNames(p), "%s by id", pol)
			p.ListerID = nil
			p.ListerName, p.ListerInstanceName = "gitlab", "gitlab.com"
			require.Equal(t, want0, f.grabNames(p), "%s by name", pol)
			p.ListerInstanceName = "framagit.org"
			require.Equal(t, want1, f.grabNames(p), "%s by name", pol)
		}
		bad := []revisit.GrabParams{
			{ListerID: ptrUUID(uuid.New())},
			{ListerName: "gitlab", ListerInstanceName: "nowhere"},
			{ListerName: "github"},
			{ListerName: "gitlab"},
		}
		for _, p := range bad {
			p.VisitType, p.Count, p.Policy, p.Now = "git", 10, revisit.OldestScheduledFirst, base
			_, err := f.s.GrabNextVisits(f.ctx, p)
			requireCode(t, err, revisit.ErrNotFound, "", "lister %+v", p)
		}
		_, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst, Now: base, ListerInstanceName: "gitlab.com"})
		requireInvalid(t, err, "lister_name", "an instance name without a lister name")
		require.Nil(t, f.stats("a", "git"), "failed grabs mark nothing")
		// Grabbing one lister marks only its origins.
		f.grab(revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: base, ListerID: &ls[1].ID})
		require.Equal(t, []string{"a", "b"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst, Now: base}))
	})

	parallel(t, "Grab/Disabled", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		f.load(ls, false, row{name: "a"}, row{name: "b", disabled: true}, row{name: "c", disabled: true}, row{name: "d"})
		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: base, DryRun: true}
		require.Equal(t, []string{"a", "d"}, f.grabNames(p))
		p.Disabled = true
		require.Equal(t, []string{"b", "c"}, f.grabNames(p))
		p.DryRun = false
		got := f.grab(p)
		require.Equal(t, []string{"b", "c"}, names(got))
		require.False(t, got[0].Enabled)
		requireTimePtr(t, &base, f.stats("b", "git").LastScheduled, "grabbing disabled origins marks them")
		require.Empty(t, f.grabNames(p))
	})

	parallel(t, "Grab/CountTop", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		var rows []row
		for i, h := range []int{5, 1, 4, 2, 6, 3} {
			rows = append(rows, row{name: fmt.Sprint("o", i), update: atp(time.Duration(-h) * time.Hour)})
		}
		f.load(ls, false, rows...)
		p := revisit.GrabParams{VisitType: "git", Count: 2, Policy: revisit.NeverVisitedOldestUpdateFirst, Now: base}
		require.Equal(t, []string{"o4", "o0"}, f.grabNames(p))
		require.Equal(t, []string{"o2", "o5"}, f.grabNames(p))
		require.Equal(t, []string{"o3", "o1"}, f.grabNames(p))
		require.Empty(t, f.grabNames(p))
	})

	parallel(t, "Grab/Sample", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com")}
		var rows []row
		for i := range 24 {
			rows = append(rows, row{name: fmt.Sprintf("o%02d", i), scheduled: atp(time.Duration(-i-1) * day)},
				row{name: fmt.Sprintf("ineligible%02d", i), scheduled: atp(-time.Hour)})
		}
		f.load(ls, false, rows...)
		p := revisit.GrabParams{VisitType: "git", Count: 100, Policy: revisit.OldestScheduledFirst, Now: base,
			DryRun: true, Cooldowns: &revisit.Cooldowns{Absolute: 12 * time.Hour}}
		full := f.grabNames(p)
		require.Len(t, full, 24)
		p.Sample = 0.5
		strict := false
		for range 6 {
			got := f.grabNames(p)
			require.True(t, isSubsequence(got, full), "a sample is a subset of the eligible set in policy order: %v", got)
			strict = strict || len(got) < len(full)
		}
		require.True(t, strict, "six samples at 0.5 of 24 origins all returned everything")
	})

	parallel(t, "Grab/InvalidParams", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.record(origin(l.ID, "a", "git"))
		for _, pol := range []revisit.Policy{"nope", "", "OLDEST_SCHEDULED_FIRST"} {
			_, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: 10, Policy: pol, Now: base})
			requireCode(t, err, revisit.ErrUnknownPolicy, "policy", "policy %q", pol)
		}
		for _, n := range []int{0, -1} {
			_, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: n,
				Policy: revisit.OldestScheduledFirst, Now: base})
			requireInvalid(t, err, "count", "count %d", n)
		}
		_, err := f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "Git!", Count: 10,
			Policy: revisit.OldestScheduledFirst, Now: base})
		requireInvalid(t, err, "visit_type")
		_, err = f.s.GrabNextVisits(f.ctx, revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst, Now: base, Cooldowns: &revisit.Cooldowns{Absolute: -time.Hour}})
		requireInvalid(t, err, "cooldowns", "negative cooldown")
		require.Nil(t, f.stats("a", "git"), "nothing marked")
	})

	parallel(t, "Grab/ReturnsListedFields", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		o := origin(l.ID, "a", "git")
		o.ExtraLoaderArguments = map[string]any{"branch": "main", "nested": map[string]any{"x": "y"}}
		o.LastUpdate = atp(-day)
		o.IsFork = bp(true)
		o.ForkedFromURL = sp(url("up"))
		f.clock.Set(at(-2 * day))
		f.record(o)
		want := f.get(l.ID, "a", "git")
		got := f.grab(revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.NeverVisitedOldestUpdateFirst, Now: base})
		require.Len(t, got, 1)
		g := got[0]
		require.Equal(t, want.ListerID, g.ListerID)
		require.Equal(t, want.URL, g.URL)
		require.Equal(t, want.VisitType, g.VisitType)
		require.Equal(t, want.ExtraLoaderArguments, g.ExtraLoaderArguments)
		require.True(t, g.Enabled)
		requireTime(t, want.FirstSeen, g.FirstSeen)
		requireTime(t, want.LastSeen, g.LastSeen)
		requireTimePtr(t, want.LastUpdate, g.LastUpdate)
		require.Equal(t, want.IsFork, g.IsFork)
		require.Equal(t, want.ForkedFromURL, g.ForkedFromURL)
	})

	parallel(t, "Grab/SeveralListersOneResult", func(t *testing.T) {
		f := newFixture(t, newStore)
		ls := []revisit.Lister{f.lister("gitlab", "gitlab.com"), f.lister("gitlab", "framagit.org")}
		// shared is listed by lister 1 first, then by lister 0 with an older
		// last_update: the policy's order, not the listing order, picks.
		f.load(ls, false,
			row{name: "shared", lister: 1, update: atp(-time.Hour)},
			row{name: "solo", update: atp(-2 * time.Hour)},
			row{name: "shared", lister: 0, update: atp(-3 * time.Hour)},
			row{name: "solo2", lister: 1, update: atp(-30 * time.Minute)})
		p := revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.NeverVisitedOldestUpdateFirst, Now: base, DryRun: true}
		got := f.grab(p)
		require.Equal(t, []string{"shared", "solo", "solo2"}, names(got))
		require.Equal(t, ls[0].ID, got[0].ListerID, "the row first in the policy's order")
		p.Count = 2
		require.Equal(t, []string{"shared", "solo"}, f.grabNames(p), "a duplicate does not use up the count")

		// Ties (oldest_scheduled_first, all never scheduled) go to the row
		// listed first.
		p = revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst, Now: base}
		got = f.grab(p)
		require.Equal(t, []string{"shared", "solo", "solo2"}, names(got))
		require.Equal(t, ls[1].ID, got[0].ListerID, "the row listed first")
		requireTimePtr(t, &base, f.stats("shared", "git").LastScheduled)

		// Both rows are marked: neither lister's filter returns it again.
		for i := range ls {
			p.ListerID = &ls[i].ID
			p.Now = base.Add(time.Hour)
			require.Empty(t, f.grabNames(p), "lister %d", i)
		}
		p.ListerID = &ls[0].ID
		p.Cooldowns = noCooldowns()
		p.DryRun = true
		require.Equal(t, []string{"solo", "shared"}, f.grabNames(p), "without cooldowns, by lister: both at now, then id")
	})
}

func ptrUUID(u uuid.UUID) *uuid.UUID { return &u }

// isSubsequence reports whether sub is sub-sequence of full.
func isSubsequence(sub, full []string) bool {
	i := 0
	for _, s := range sub {
		for i < len(full) && full[i] != s {
			i++
		}
		if i == len(full) {
			return false
		}
		i++
	}
	return true
}
