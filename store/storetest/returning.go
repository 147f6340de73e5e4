package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/revisit-sched/revisit"
)

// ListedOriginsRecordReturning records as ListedOriginsRecord does and
// returns the rows as a later read finds them.
func exerciseRecordReturning(t *testing.T, newStore NewStore) {
	parallel(t, "ListedOrigins/RecordReturning", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "gitlab.com")
		b := f.lister("github", "github.com")
		t0 := base.Add(1500 * time.Nanosecond)
		f.clock.Set(t0)
		f.record(origin(a.ID, "old", "git"))

		t1 := t0.Add(time.Hour)
		f.clock.Set(t1)
		first := origin(a.ID, "c", "git")
		last := origin(a.ID, "c", "git")
		last.Enabled = false
		last.ExtraLoaderArguments = map[string]any{"n": 1, "deep": map[string]any{"x": []any{"y", 2.5}}}
		last.LastUpdate = atp(-day + 3500*time.Nanosecond)
		last.IsFork = bp(true)
		last.ForkedFromURL = sp(url("up"))
		old := origin(a.ID, "old", "git")
		old.ExtraLoaderArguments = map[string]any{"again": true}
		got := f.recordReturning(first, old, origin(b.ID, "c", "git"), origin(a.ID, "c", "hg"), last,
			origin(a.ID, "new", "git"), old)

		require.Equal(t, []okey{{a.ID, url("c"), "git"}, {a.ID, url("old"), "git"}, {b.ID, url("c"), "git"},
			{a.ID, url("c"), "hg"}, {a.ID, url("new"), "git"}}, keys(got),
			"one row per key, in the order of the keys' first occurrence")
		for _, o := range got {
			require.Equal(t, f.get(o.ListerID, strings.TrimPrefix(o.URL, url("")), o.VisitType), o,
				"%s %s: the row as stored", o.URL, o.VisitType)
		}
		c := got[0]
		require.False(t, c.Enabled, "the last duplicate wins")
		require.Equal(t, map[string]any{"n": 1.0, "deep": map[string]any{"x": []any{"y", 2.5}}}, c.ExtraLoaderArguments,
			"extra loader arguments as a read decodes them")
		requireTimePtr(t, last.LastUpdate, c.LastUpdate)
		require.Equal(t, bp(true), c.IsFork)
		require.Equal(t, sp(url("up")), c.ForkedFromURL)
		requireTime(t, t0, got[1].FirstSeen, "an existing row keeps first_seen")
		requireTime(t, t1, got[1].LastSeen)
		require.Equal(t, map[string]any{"again": true}, got[1].ExtraLoaderArguments)
		for _, o := range append(got[:1:1], got[2:]...) {
			requireTime(t, t1, o.FirstSeen, "%s %s: new", o.URL, o.VisitType)
			requireTime(t, t1, o.LastSeen, "%s %s: new", o.URL, o.VisitType)
			require.NotNil(t, o.ExtraLoaderArguments)
		}

		none, err := f.s.ListedOriginsRecordReturning(f.ctx, nil)
		require.NoError(t, err, "an empty batch is fine")
		require.Empty(t, none)
	})

	parallel(t, "ListedOrigins/RecordReturningInvalidWritesNothing", func(t *testing.T) {
		f := newFixture(t, newStore)
		l := f.lister("gitlab", "gitlab.com")
		f.record(origin(l.ID, "existing", "git"))
		before := f.get(l.ID, "existing", "git")
		f.clock.Advance(time.Hour)

		bad := origin(l.ID, "bad", "git")
		bad.URL = ""
		_, err := f.s.ListedOriginsRecordReturning(f.ctx, []revisit.ListedOrigin{origin(l.ID, "new", "git"),
			origin(l.ID, "existing", "git"), bad})
		requireInvalid(t, err, "origins[2].url")
		_, err = f.s.ListedOriginsRecordReturning(f.ctx, []revisit.ListedOrigin{origin(l.ID, "new", "git"),
			origin(uuid.New(), "existing", "git")})
		requireInvalid(t, err, "origins[1].lister_id")

		require.Equal(t, []revisit.ListedOrigin{before}, f.all(revisit.ListedOriginFilter{Enabled: revisit.AnyEnabled}),
			"nothing of the invalid batches was written")
	})

	// Origins waiting for their visit (dispatched, or grabbed) are recorded
	// where they wait, and a new row of such an origin is not offered again.
	parallel(t, "ListedOrigins/RecordReturningPendingOrigins", func(t *testing.T) {
		f := newFixture(t, newStore)
		a := f.lister("gitlab", "a")
		b := f.lister("gitlab", "b")
		f.clock.Set(base.Add(1500 * time.Nanosecond))
		f.record(origin(a.ID, "dispatched", "git"))
		f.record(origin(a.ID, "grabbed", "git"))
		require.Len(t, f.dispatch(1, nil), 1)
		require.Equal(t, []string{"grabbed"}, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10,
			Policy: revisit.OldestScheduledFirst}))

		f.clock.Advance(time.Hour)
		again := origin(a.ID, "dispatched", "git")
		again.ExtraLoaderArguments = map[string]any{"again": true}
		got := f.recordReturning(again, origin(a.ID, "grabbed", "git"), origin(b.ID, "grabbed", "git"))
		require.Len(t, got, 3)
		for _, o := range got {
			require.Equal(t, f.get(o.ListerID, strings.TrimPrefix(o.URL, url("")), o.VisitType), o,
				"%s of %s: the row as stored", o.URL, o.ListerID)
			requireTime(t, f.clock.Now(), o.LastSeen)
		}
		require.Equal(t, map[string]any{"again": true}, got[0].ExtraLoaderArguments)
		requireTime(t, base.Add(1500*time.Nanosecond), got[0].FirstSeen, "pending rows keep first_seen")
		requireTime(t, base.Add(1500*time.Nanosecond), got[1].FirstSeen)
		requireTime(t, f.clock.Now(), got[2].FirstSeen, "another lister's new row")
		require.Empty(t, f.grabNames(revisit.GrabParams{VisitType: "git", Count: 10, Policy: revisit.OldestScheduledFirst}),
			"no row of a pending origin is offered again")
	})
}
